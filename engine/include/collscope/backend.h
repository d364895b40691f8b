// Backends execute a Schedule on real memory (docs/ARCHITECTURE.md, "Backends"). The CLI and the GUI only
// ever see this interface; backends register by name in make_backends().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collscope/defaults.h"
#include "collscope/flight_record.h"
#include "collscope/result.h"
#include "collscope/schedule.h"

namespace collscope {

// What a backend can do. Shared code (lowering, execution, reports, the window) asks
// these questions and never compares a backend's name.
struct BackendCapabilities {
  // The algorithm name under which the backend runs a communication library's own
  // collectives on the call's buffers ("nccl": ncclAllReduce, ...); empty: none.
  std::string native_algorithm;
  // Wants long transfers cut into cache-sized slices: ranks share one host memory
  // system, so a slice that stays in the cache is read again from there. A device
  // backend launches a kernel per transfer and wants them whole.
  bool cache_slices = false;
  // Ranks live on accelerators (GPU memory and kernels), not on host cores.
  bool devices = false;
  // Ranks are separate processes, possibly on other machines.
  bool multi_process = false;
  // One host thread enqueues every rank's transfers, a kernel launch each (the cuda
  // backend): the launches of a step follow one another, so a step of many small
  // transfers costs a launch per transfer. Otherwise a device starts its part of a step
  // as one launch, as NCCL groups its sends and receives (model.h, TopologyPricer).
  bool serial_launches = false;
};

struct BackendInfo {
  std::string name;         // what --backend takes: "cpu", "cuda", "nccl"
  std::string description;  // one line
  bool available = false;
  std::string reason;  // why not available ("not built", "no CUDA driver", ...)
  BackendCapabilities caps;
  int devices_found = 0;  // accelerators on this machine the backend can use (GPUs)
};

// A fault injected on purpose, for teaching what failures look like. Every backend
// reads the same list; what a kind means does not depend on the backend.
struct Fault {
  enum class Kind : std::uint8_t {
    delay,    // the rank stalls `ms` milliseconds before the step (a straggler)
    corrupt,  // the rank flips a bit in what it sends in the step
    crash,    // the rank dies at the step: it does nothing more
    hang,     // the rank never arrives at the step: it blocks until the run is aborted
  };
  std::int32_t rank = 0;
  std::int32_t step = 0;
  Kind kind = Kind::delay;
  std::int32_t ms = 0;  // delay only
};

// "delay", "corrupt", "crash", "hang"; parse_fault_kind is the inverse.
const char* name_of(Fault::Kind k);
std::optional<Fault::Kind> parse_fault_kind(std::string_view name);
// "1:2:delay:50", the command line's spelling.
std::string fault_text(const Fault& f);

// Where a fault was given, so that the error of one the schedule cannot fire keeps the
// id and the place of what gave it.
struct FaultSource {
  std::string id = "run.bad_fault";  // cli.bad_fault (a flag), scenario.out_of_range (a file), ...
  std::string name;                  // how the message names it; "" = "fault RANK:STEP:KIND"
  Location where;                    // its place in a file, empty for a flag
};
// The one check of a fault against a schedule (the command line, scenario files and
// execute() all use it): it must name a rank of the world and a step of the schedule,
// since one that never fires would make a lesson silently pass. Exit 2.
Status check_fault(const Schedule& s, const Fault& f, const FaultSource& from = {});

struct SessionOptions {
  std::vector<Fault> faults;
  bool record_events = true;  // time every transfer (off for benchmarks)
  int cores = 0;              // CPU cores to plan the wait strategy for; 0 = detect
  // A run in which no rank finishes a step for this long is aborted (backend.timeout,
  // exit 3): a hung or dead rank never makes a run wait forever. 0 = wait forever.
  double timeout_s = kDefaultTimeoutSeconds;
  std::int32_t flight_capacity = kDefaultFlightCapacity;  // ops kept per rank in the flight record
  // Multi-process backends: where a process that cannot hand its flight record to
  // process 0 after a failure writes its own (PATH.rankN.json); empty: $TMPDIR.
  std::string flight_record_path;
};

// One timed transfer, measured by the rank that executed it (the receiver).
struct TransferTiming {
  std::int32_t step = 0;
  std::int32_t transfer = 0;    // index inside the step
  std::int32_t rank = 0;        // executing rank
  double t0_us = 0, t1_us = 0;  // microseconds since the session's clock origin
};

class Session {
 public:
  virtual ~Session() = default;
  // "cpu", "GPU 1": where a rank's memory lives.
  virtual std::string device_label(std::int32_t rank) const = 0;
  virtual Status write_buffer(std::int32_t rank, std::int32_t buf, const void* data, std::uint64_t bytes) = 0;
  virtual Status read_buffer(std::int32_t rank, std::int32_t buf, void* data, std::uint64_t bytes) = 0;
  // Observable mode: runs one step on every rank and returns when all are done.
  // Fast mode: runs the whole schedule `iterations` times as a dataflow graph,
  // without global barriers.
  // Both fail (exit 3) instead of waiting forever when a rank crashes
  // (backend.rank_failed) or nothing moves for timeout_s (backend.timeout): the run is
  // aborted, every rank's thread or stream is back under the session's control, and
  // every later call fails with the same error.
  virtual Status run_step(std::int32_t step) = 0;
  virtual Status run_all(std::int32_t iterations) = 0;
  // Wall time of the last run_all as the ranks saw it: from the moment the last rank
  // started to the moment the last rank finished (launch overhead excluded).
  virtual double last_run_us() const = 0;
  // Marks inside the next run_all calls, so that one run can be timed in parts without
  // stopping between them (run.h, time_calls): the moment rank 0 has completed
  // iteration every, 2*every, ... (session clock, us; none at the run's last iteration).
  // 0 = no marks. False when the backend keeps none (time_calls then runs the parts
  // one after the other).
  virtual bool mark_every(std::int32_t every) {
    (void)every;
    return false;
  }
  virtual std::vector<double> last_run_marks_us() const { return {}; }
  // The session clock's moment at which the last run_all began (the last rank's start),
  // the first part's start.
  virtual double last_run_start_us() const { return 0; }
  // Timings recorded since the last call (empty when record_events is off).
  virtual std::vector<TransferTiming> take_events() = 0;
  // Microseconds on the session's clock (the origin of TransferTiming).
  virtual double now_us() const = 0;
  // What else a report should say about the backend that ran ("NCCL 2.28.9,
  // NCCL_ALGO=Ring"); empty when nothing.
  virtual std::string detail() const { return {}; }
  // The last ops of every rank and where each rank stands (flight_record.h). After a
  // failed run_step/run_all it says what every rank was doing when the run was aborted.
  // A backend that keeps none returns an empty record (no ranks).
  virtual FlightRecord flight_record() const { return {}; }

  // --- several processes (BackendCapabilities::multi_process) ----------------------
  // Every process of the job opens the session and makes the same calls in the same
  // order (SPMD); each holds only its own rank's memory. write_buffer keeps the data of
  // the ranks this process hosts and ignores the others (every process has the same
  // inputs); read_buffer of a rank in another process fills `data` on the reporting
  // process (process 0) and leaves it alone elsewhere. take_events and flight_record
  // return every rank's on the reporting process, on one clock.
  virtual bool hosts(std::int32_t /*rank*/) const { return true; }
  virtual bool reporting() const { return true; }
  // Every process's `mine`, in process order, on every process ({mine} for one process).
  virtual Result<std::vector<std::string>> share(const std::string& mine) { return std::vector<std::string>{mine}; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendInfo info() const = 0;
  virtual Result<std::unique_ptr<Session>> open(const Schedule& s, const SessionOptions& o) const = 0;
};

// Every backend this build knows, available or not (cpu first).
std::vector<std::unique_ptr<Backend>> make_backends();
// The backend of that name if it exists and is available; otherwise an error
// (id "backend.unknown" exit 2, or "backend.unavailable" exit 3) saying why.
Result<std::unique_ptr<Backend>> find_backend(const std::string& name);
// Ok if this build knows a backend of that name, available or not; else the error
// "backend.unknown" (exit 2) with the names it knows. For pricing what a backend would run.
Status known_backend(const std::string& name);
// What the backend of that name can do, available or not (a default-constructed set for
// an unknown name); for planning before a backend is opened.
BackendCapabilities capabilities_of(const std::string& name);
// The devices (GPUs) the backend of that name finds on this machine; 0 where it finds
// none or is not a device backend (BackendInfo::devices_found).
int devices_found(const std::string& name);

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace collscope
