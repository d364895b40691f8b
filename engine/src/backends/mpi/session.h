// The mpi backend's session: one rank per process (docs/ARCHITECTURE.md, "Processes").
//
// Every process of the job opens the same session on the same Schedule (SPMD; the
// digests are compared first) and executes only the transfers its rank runs: as on the
// cpu backend, a transfer is executed by its receiver.
//
// Data plane
//   same node    the buffers of every rank live in an MPI-3 shared window
//                (MPI_Win_allocate_shared over the node's communicator): the receiver reads
//                the sender's buffer directly, one copy, as the cpu backend's threads do;
//   other nodes  the sender packs the slice and sends it (MPI_Isend, one message per
//                transfer, tagged by step and transfer) when its rank reaches the step;
//                the receiver receives it (MPI_Irecv) into place or into staging and
//                reduces from there with the engine's own kernels.
// Packing on the sender means that once a rank has passed a step, nothing another node
// reads of its memory is still pending: a rank that overwrites a slice after a remote
// reader only has to have passed the step the reader read it in.
//
// Fast mode is the dataflow graph of ir/deps.h: before its part of a step a lane waits
// for the lanes it depends on: through their progress counters in a shared window when
// they are on its node (board.h), through the messages themselves when they are not.
// Sends go out before the lane waits for anything, so no two ranks can wait for each
// other's messages. Observable mode runs one step, then a barrier.
//
// Failures: a watchdog thread per process looks at its node (peers' pids and states,
// their progress) and at SIGTERM from the launcher. When something failed it releases
// every wait on the node; the main thread then tells the other processes, and they hand
// their flight records to one process (rank 0, or the lowest rank still alive), which
// writes the merged record, reports the error and lets everyone exit (failure.cpp).
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/plan.h"
#include "backends/flight.h"
#include "backends/mpi/board.h"
#include "backends/mpi/job.h"
#include "collscope/backend.h"
#include "ir/deps.h"

namespace collscope::mpi {

class MpiSession final : public Session {
 public:
  MpiSession(const Schedule& s, const SessionOptions& o);
  ~MpiSession() override;
  Status start();

  std::string device_label(std::int32_t rank) const override;
  Status write_buffer(std::int32_t rank, std::int32_t buf, const void* data, std::uint64_t bytes) override;
  Status read_buffer(std::int32_t rank, std::int32_t buf, void* data, std::uint64_t bytes) override;
  Status run_step(std::int32_t step) override;
  Status run_all(std::int32_t iterations) override;
  double last_run_us() const override { return last_us_; }
  std::vector<TransferTiming> take_events() override;
  double now_us() const override { return steady_us() - origin_; }
  std::string detail() const override;
  FlightRecord flight_record() const override;
  bool hosts(std::int32_t rank) const override { return rank == me_; }
  bool reporting() const override { return me_ == 0; }
  Result<std::vector<std::string>> share(const std::string& mine) override;

 private:
  // A transfer this rank executes.
  struct Op {
    Action action;
    const std::uint8_t* src;  // nullptr when it arrives as a message
    std::uint8_t* dst;
    const std::uint8_t* aux;
    std::uint64_t count;
    std::uint32_t divisor;
    std::int32_t transfer;
    std::uint32_t duration_us;
    std::int32_t from = -1;     // the sender, when the data comes as a message
    std::uint64_t staging = 0;  // where a received reduction lands in staging
    bool into_staging = false;
  };
  // A transfer another node's rank executes with data from this rank.
  struct Send {
    std::int32_t transfer;
    std::int32_t to;
    const std::uint8_t* src;
    std::uint64_t bytes;        // 0 for a signal
    std::int32_t need_compute;  // this rank's compute lane must have completed this step (relative), or kNone
  };
  // Wait for a lane on this node to have completed a step (relative to the iteration).
  struct Wait {
    std::int32_t lane;
    std::int32_t step;
  };
  struct StepPlan {
    std::vector<Op> comm, compute;
    std::vector<Send> sends;
    std::vector<Wait> comm_waits, compute_waits;
  };
  struct Pending {  // a send in flight, with the packed bytes it reads
    std::vector<MPI_Request> requests;
    std::unique_ptr<std::uint8_t[]> bytes;
  };
  static constexpr std::int32_t kNone = INT32_MIN;

  // Layout of rank r's buffers in its segment of the buffer window.
  std::uint64_t buffer_offset(std::int32_t rank, std::int32_t buf) const;
  std::uint8_t* ptr(const Loc& l) const;
  LaneSlot& slot(std::int32_t lane) const;
  bool local(std::int32_t rank) const;  // on this node: its memory is mapped here
  void plan();
  int tag_of(std::int32_t step, std::int32_t transfer) const;

  // The lanes' work.
  bool arrive(std::int32_t lane, std::int32_t step);
  bool run_comm_step(std::int32_t k, std::int64_t base, bool fast);
  bool run_compute_step(std::int32_t k, std::int64_t base);
  bool execute_op(std::int32_t lane, std::int32_t k, const Op& op, bool fast);
  bool run_native_step(std::int32_t k, std::int64_t base, bool fast);
  bool fast_comm(std::int32_t iterations);
  bool fast_compute(std::int32_t iterations);
  void compute_thread();

  // Waiting. Every wait returns false once the run is aborted.
  bool aborted() const;
  bool wait_lane(std::int32_t me_lane, std::int32_t lane, std::uint64_t target, bool main);
  bool wait_request(MPI_Request& r, bool main);
  bool wait_all_sends();
  bool pause_us(double us, bool main);
  void poll_mpi();
  // One wait in progress: its stage by time (cpu/wait.h) and its looks so far.
  struct Waiting {
    explicit Waiting(const cpu::WaitTuning& t) : stages(t) {}
    cpu::WaitStages stages;
    std::uint32_t rounds = 0, slept = 0;
  };
  void idle(Waiting& w, cpu::WaitStages::Stage stage, std::atomic<std::uint32_t>* word, std::uint32_t value, bool main);
  Status send_bytes(const std::uint8_t* p, std::uint64_t bytes, int to, int tag, Pending& into, MPI_Comm comm);
  Status recv_bytes(std::uint8_t* p, std::uint64_t bytes, int from, int tag, std::vector<MPI_Request>& into,
                    MPI_Comm comm);
  Status collective(MPI_Request& r);  // waits for a session collective (deaths are failures)

  // Failures (failure.cpp).
  void watchdog();
  void raise_failure(std::string kind, std::int32_t rank, std::int32_t step, std::string text);
  Error coordinate();
  std::string record_blob() const;
  std::string failure_text(bool timed_out, const std::vector<std::array<std::int32_t, 3>>& lanes,
                           const std::vector<int>& dead) const;
  std::string own_record_path() const;
  ProcSlot* proc_of_rank(std::int32_t rank) const {
    return reinterpret_cast<ProcSlot*>(board_of_[static_cast<std::size_t>(rank)]);
  }
  std::vector<std::array<std::int32_t, 3>> my_lanes() const;
  std::atomic<bool> coordinating_{false};
  FlightRank my_flight_rank() const;
  FlightRecord record_header() const;  // backend, mode, world, ... without ranks

  const Schedule& s_;
  SessionOptions opts_;
  Job& job_;
  std::int32_t me_ = 0, R_ = 1, L_ = 1;  // my rank, ranks, lanes
  bool compute_lane_ = false;
  std::size_t esize_ = 1;
  double origin_ = 0;
  std::vector<std::vector<std::vector<dataflow::Dep>>> deps_;
  std::vector<StepPlan> plans_;
  std::vector<std::uint64_t> staging_;     // received reductions of one step
  std::vector<MPI_Comm> native_comms_;     // per step: the communicator of a native step's call
  std::vector<std::int32_t> native_rank_;  // per step: this rank's rank in it (-1: not a member)
  bool mixed_native_ = false;              // native steps next to ours: barriers around them
  bool started_ = false;                   // the windows exist
  bool written_ = false;                   // write_buffer since the last run: a barrier first
  Status settle();

  MPI_Win board_win_ = MPI_WIN_NULL, data_win_ = MPI_WIN_NULL;
  std::vector<std::uint8_t*> board_of_;  // per world rank on this node: its board segment
  std::vector<std::uint8_t*> data_of_;   // per world rank on this node: its buffers
  std::uint8_t* my_data_ = nullptr;
  ProcSlot* node_abort_ = nullptr;  // the node's abort word (its first process's slot)

  std::vector<Pending> pending_;
  cpu::WaitTuning waits_;       // how long a wait spins, then yields, before it sleeps
  double last_poll_ = 0;        // when poll_mpi last looked for notices
  std::int64_t fast_base_ = 0;  // steps completed by earlier run_all calls (per lane)
  double last_us_ = 0;
  std::vector<TransferTiming> events_[2];  // per lane (comm, compute)
  std::string mode_ = "fast";

  flight::Recorder recorder_;

  // The compute lane's thread.
  std::thread compute_;
  std::mutex m_;
  std::condition_variable cv_;
  std::int32_t compute_iterations_ = 0;
  std::uint64_t compute_epoch_ = 0, compute_done_ = 0;
  bool quit_ = false;
  bool compute_ok_ = true;
  double compute_end_ = 0;
  std::atomic<bool> compute_busy_{false};  // the compute lane is in a run (its flight ring is being written)

  // The watchdog.
  std::thread watchdog_;
  std::atomic<int> armed_{0};  // 0 idle, 1 waiting in a session collective, 2 in a run
  std::atomic<bool> stop_{false};
  std::atomic<std::uint32_t> wd_word_{0};
  std::atomic<bool> local_abort_{false};
  mutable std::mutex fail_m_;
  struct Failure {
    std::string kind;  // "crashed", "died", "timeout", "terminated", "notice", "mpi"
    std::int32_t rank = -1, step = -1;
    std::string text;
  };
  std::optional<Failure> failure_;
  std::optional<Error> error_;                      // every call after a failure returns it
  FlightRecord merged_;                             // the leader's merged record after a failure
  std::map<std::int32_t, nlohmann::json> records_;  // the leader: the others' records
  // coordinate()'s parts (failure.cpp).
  std::vector<int> find_dead(const Failure& f) const;
  void send_notices(const Failure& f, const std::vector<int>& dead);
  void drain(int tag);
  std::vector<std::array<std::int32_t, 3>> lanes_now() const;
  bool timed_out_now(const Failure& f, const std::vector<int>& dead) const;
  [[noreturn]] void follow(const Failure& f, const std::vector<int>& dead, std::int32_t leader, bool terminating);
  Error lead(const Failure& f, const std::vector<int>& dead, bool terminating);
};

}  // namespace collscope::mpi
