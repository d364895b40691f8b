// Running a schedule end to end: allocate, load inputs, execute on a backend,
// read back, check against the numeric reference; keep a run record for reports,
// traces and views.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collscope/backend.h"
#include "collscope/collective.h"
#include "collscope/defaults.h"
#include "collscope/result.h"
#include "collscope/schedule.h"

namespace collscope {

enum class RunMode : std::uint8_t {
  observable,  // a barrier after every step, buffer snapshots
  fast,        // dataflow, no global barrier
};

// Every user buffer of every rank as raw bytes: host[buf][rank]. Scratch buffers are empty.
using HostMemory = std::vector<std::vector<std::vector<std::uint8_t>>>;

// Initial value of element `index` of buffer `buf` on `rank`.
// Called from several threads at once for large inputs: it must depend on its
// arguments alone.
using InitFn = std::function<double(std::int32_t buf, std::int32_t rank, std::uint64_t index)>;

HostMemory make_inputs(const Schedule& s, const InitFn& init);

// Writes the inputs into a session: of every rank, or (a process of a multi-process
// session) of the ranks this process hosts, generating only those.
Status load_inputs(Session& session, const Schedule& s, const InitFn& init);

// The time of `iterations` fast-mode calls of an open session, as `collscope bench`
// reports it. The calls are cut into up to `batches` batches of equal size (the last
// takes the remainder): one run, cut where rank 0 completed each batch, on a backend
// that marks its runs (Session::mark_every), else a run_all per batch. A call's time is
// the median batch's time per call, so that one pause of the machine (a host taking
// the core away for a millisecond) moves one batch and not the result; the mean over
// every call and the slowest batch are kept beside it.
inline constexpr std::int32_t kTimingBatches = 10;
struct CallTiming {
  double median_us = 0;   // per call, in the median batch (the mean of the middle two for an even count)
  double mean_us = 0;     // per call, over every call of every batch
  double slowest_us = 0;  // per call, in the slowest batch
  std::int32_t batches = 0;
};
Result<CallTiming> time_calls(Session& session, std::int32_t iterations, std::int32_t batches = kTimingBatches);
// The same statistic over batch times already measured: batch k took batch_us[k] for
// calls[k] calls.
CallTiming call_timing(const std::vector<double>& batch_us, const std::vector<std::int32_t>& calls);
// time_calls's measurement without the statistic, after `warmup` untimed calls: appends
// each batch's time and calls. On a backend that marks its runs the warm-up leads the
// timed calls in one run, rounded up to whole batches.
Status time_batches(Session& session, std::int32_t warmup, std::int32_t iterations, std::int32_t batches,
                    std::vector<double>& batch_us, std::vector<std::int32_t>& calls);

// Several measurements taken in turns (`collscope bench`'s algorithms, out of place and
// in place, at one size): `rounds` rounds, in each of which every measurement runs its
// share of the warm-up calls (untimed) and of the timed calls and batches, every other
// round in the order of the one before run backwards and each pair of rounds starting
// one measurement further on, so that all of them sample the same stretch of the
// machine's time. Taken one after another, whichever ran first in a process measured
// 1.2-1.4x slower than the same schedule run again a few milliseconds later on the
// machine of bench/RESULTS.md ("Algorithms measured in turns"), and the algorithms
// listed last gained most. plan_turns(...)[r] is round r, in its order; over the rounds
// a measurement gets every timed call and batch (batches at most `iterations`, rounds
// at most the batches, and each turn at least `min_calls` calls, min_turn_calls of the
// size in bench: a turn starts with the other measurements' bytes in the caches and its ranks
// settling, which its first calls pay; 4-rank all-reduces of 2 MiB measured 1.4-1.9x
// their steady time in turns of 2 calls after a warm-up call, 1.0-1.2x in turns of 10,
// and runs of a call or two without a warm-up are timed from their last rank's start),
// and each round's warm-up is the whole warm-up over the rounds, rounded up (none for
// none). With one round each measurement is taken as time_calls takes it, after its
// warm-up run.
inline constexpr std::int32_t kTurnRounds = 5;
inline constexpr std::int32_t kMinTurnCalls = 20;
// Messages of kShortTurnBytes and more are long enough to time one call at a time, and
// their bytes push the other measurements' out of every cache within the first call: their
// turns need only kMinShortTurnCalls calls (after the turn's warm-up). Timed in two calls
// after one warm-up, one algorithm after another, 4-rank all-gathers of 64 MiB measured
// no slower than in runs of 20 calls (bench/RESULTS.md, "Turns for the largest sizes").
inline constexpr std::uint64_t kShortTurnBytes = 32ull << 20;
inline constexpr std::int32_t kMinShortTurnCalls = 2;
// The least calls a turn takes for a message of `message_bytes` (bench's size).
std::int32_t min_turn_calls(std::uint64_t message_bytes);
struct Turn {
  std::size_t measurement = 0;
  std::int32_t warmup = 0, iterations = 0, batches = 0;
};
std::vector<std::vector<Turn>> plan_turns(std::size_t measurements, std::int32_t iterations, std::int32_t warmup,
                                          std::int32_t batches = kTimingBatches, std::int32_t rounds = kTurnRounds,
                                          std::int32_t min_calls = kMinTurnCalls);
// The measurements timed as plan_turns lays them out: `take(k)` gives measurement k's
// session for its turn (opened then, or held open throughout), `done(k)` says the turn
// is over. Each measurement's CallTiming over all its batches; the first error stops it.
Result<std::vector<CallTiming>> time_in_turns(std::size_t measurements,
                                              const std::function<Result<Session*>(std::size_t)>& take,
                                              const std::function<void(std::size_t)>& done, std::int32_t iterations,
                                              std::int32_t warmup, std::int32_t batches = kTimingBatches,
                                              std::int32_t rounds = kTurnRounds,
                                              std::int32_t min_calls = kMinTurnCalls);

// The numeric reference: every call's definition (not its schedule) applied to the
// inputs, in the dtype's own arithmetic, folding ranks in order. Where the inputs
// make every order of evaluation exact (integers whose partial results fit the
// mantissa) the comparison is exact; elsewhere a tolerance per element is kept.
struct Reference {
  HostMemory want;
  // tolerance[buf][rank][i]; an empty vector means exact for that buffer and rank.
  std::vector<std::vector<std::vector<double>>> tolerance;
};
Reference compute_reference(const Schedule& s, const HostMemory& inputs);
// The same, with `d` standing in for the definition of d.coll: lets a test break the
// reference on purpose and show that the symbolic check still catches a wrong schedule.
Reference compute_reference(const Schedule& s, const HostMemory& inputs, const CollectiveDescriptor& d);

struct NumericReport {
  std::uint64_t wrong = 0;
  std::uint64_t checked = 0;
  // The first wrong element (meaningful when wrong > 0).
  std::int32_t rank = 0, buf = 0;
  std::string buffer_name;
  std::uint64_t index = 0;
  double expected = 0, got = 0;
  std::int32_t last_step = -1;  // the last step that wrote that element, -1 = none
  std::string message() const;  // "" when wrong == 0
};

// Compares a backend's buffers with the reference, element by element.
NumericReport compare_numeric(const Schedule& s, const HostMemory& got, const Reference& ref);

struct StepTiming {
  std::int32_t step = 0;
  double t0_us = 0, t1_us = 0;
};

struct Snapshot {
  std::int32_t after_step = -1;  // -1 = the inputs
  HostMemory memory;
};

struct RunRecord {
  std::string backend;
  std::string backend_detail;  // Session::detail(): library versions, settings passed through
  RunMode mode = RunMode::fast;
  std::vector<std::string> device_labels;  // per rank
  double time_us = 0;                      // wall time of the execution
  std::vector<TransferTiming> transfers;
  std::vector<StepTiming> steps;    // observable mode only
  std::vector<Snapshot> snapshots;  // observable mode only, bounded
  FlightRecord flight;              // every rank's last ops (empty when the backend keeps none)
};

struct RunOptions {
  std::string backend = "cpu";
  std::vector<Fault> faults;
  RunMode mode = RunMode::fast;
  bool record_events = true;
  std::uint64_t snapshot_budget = kDefaultSnapshotBudget;  // bytes of snapshots kept (beyond: every k-th step)
  // A run in which no rank finishes a step for this long is aborted (exit 3); 0 = never.
  double timeout_s = kDefaultTimeoutSeconds;
  std::int32_t flight_capacity = kDefaultFlightCapacity;  // ops kept per rank in the flight record
  // Where the flight record is written: after every run when set; when a run is aborted,
  // here or, when empty, to $TMPDIR (else /tmp) as collscope-flight-PID-TIME.json. The
  // error then names the file.
  std::string flight_record_path;
  // Where an aborted run writes its record when flight_record_path is empty (the
  // command line's TRACE.flight.json); "" = $TMPDIR as above. A completed run writes nothing here.
  std::string failure_record_path;
  bool dump_on_failure = true;
};

struct RunOutcome {
  Status symbolic = ok_status();
  NumericReport numeric;
  RunRecord record;
  HostMemory result;
  bool verified() const { return symbolic.ok() && numeric.wrong == 0; }
};

// Verifies symbolically, executes, reads back and checks numerically. Errors for
// backend failures (exit 3: backend.timeout, backend.rank_failed, ...) and for faults
// that name a rank or step the schedule does not have (run.bad_fault, exit 2); a wrong
// result is reported in the outcome.
Result<RunOutcome> execute(const Schedule& s, const InitFn& init, const RunOptions& o);

}  // namespace collscope
