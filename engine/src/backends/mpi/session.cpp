// The mpi backend's session (session.h): setting up and the buffers. Waiting is in
// session_wait.cpp, the lanes' work (fast and observable mode) in session_run.cpp, what
// rank 0 reports in session_report.cpp, failures in failure.cpp.
#include "backends/mpi/session.h"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backends/mpi/native.h"
#include "collscope/processes.h"
#include "ir/digest.h"

namespace collscope::mpi {

namespace {

constexpr std::uint64_t kChunk = 1ull << 30;  // the largest message: counts are ints in MPI
constexpr int kGather = 14;                   // read_buffer's messages to rank 0 (control)

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// A segment of the board window: the process's slot, then its two lanes'.
constexpr std::size_t kBoardBytes = sizeof(ProcSlot) + 2 * sizeof(LaneSlot);

ProcSlot* proc_of(std::uint8_t* board) { return reinterpret_cast<ProcSlot*>(board); }
LaneSlot* lanes_of(std::uint8_t* board) { return reinterpret_cast<LaneSlot*>(board + sizeof(ProcSlot)); }

}  // namespace

MpiSession::MpiSession(const Schedule& s, const SessionOptions& o)
    : s_(s), opts_(o), job_(job()), recorder_(s, dataflow::lane_count(s), o.flight_capacity) {}

MpiSession::~MpiSession() {
  stop_.store(true);
  wd_word_.fetch_add(1);
  wake_all(&wd_word_);
  if (watchdog_.joinable()) watchdog_.join();
  {
    std::lock_guard<std::mutex> g(m_);
    quit_ = true;
  }
  cv_.notify_all();
  if (compute_.joinable()) compute_.join();
  session_active.fetch_sub(started_ ? 1 : 0);
  // After a failure the processes cannot meet again: freeing a window is collective, so
  // it is left to the process's exit.
  if (error_ || job_.failed || !started_) return;
  // Freeing is collective: meet first without spinning (a library may spin in
  // MPI_Win_free while a peer still has work to do on the same core).
  MPI_Request all_here;
  if (MPI_Ibarrier(job_.world, &all_here) == MPI_SUCCESS) (void)wait_politely(all_here, "the end of the session");
  for (MPI_Comm& c : native_comms_)
    if (c != MPI_COMM_NULL && c != job_.world) MPI_Comm_free(&c);
  for (MPI_Win* w : {&board_win_, &data_win_})
    if (*w != MPI_WIN_NULL) {
      MPI_Win_unlock_all(*w);
      MPI_Win_free(w);
    }
}

// --- setting up -------------------------------------------------------------------------

std::uint64_t MpiSession::buffer_offset(std::int32_t rank, std::int32_t buf) const {
  std::uint64_t at = 0;
  for (std::int32_t b = 0; b < buf; ++b) {
    const std::uint64_t bytes = s_.buffers[static_cast<std::size_t>(b)].count[static_cast<std::size_t>(rank)] * esize_;
    // Large buffers start on a page, small ones on a cache line.
    at = align_up(at + bytes, bytes >= (1u << 20) ? 4096 : 64);
  }
  return at;
}

bool MpiSession::local(std::int32_t rank) const {
  return job_.node_of[static_cast<std::size_t>(rank)] == job_.node_of[static_cast<std::size_t>(me_)];
}

std::uint8_t* MpiSession::ptr(const Loc& l) const {
  return data_of_[static_cast<std::size_t>(l.rank)] + buffer_offset(l.rank, l.buf) + l.offset * esize_;
}

LaneSlot& MpiSession::slot(std::int32_t lane) const {
  return lanes_of(board_of_[static_cast<std::size_t>(lane % R_)])[lane >= R_ ? 1 : 0];
}

int MpiSession::tag_of(std::int32_t step, std::int32_t transfer) const {
  const std::uint64_t t = static_cast<std::uint64_t>(step) * 1024 + static_cast<std::uint64_t>(transfer % 1024);
  return static_cast<int>(t % (static_cast<std::uint64_t>(job_.tag_ub) + 1));
}

Status MpiSession::start() {
  if (auto st = join(); !st) return st;
  // The processes agree on what they run before anything else: a process that lowered
  // another schedule would wait for messages that never come.
  std::string options = "collscope 0.1.0; timeout " + std::to_string(opts_.timeout_s) + "; events " +
                        std::to_string(opts_.record_events) + "; faults";
  for (const Fault& f : opts_.faults) options += " " + fault_text(f);
  std::string summary = schedule_summary(s_);
  if (!opts_.faults.empty()) summary += options.substr(options.find("; faults"));
  if (auto st = processes::agree(digest_more(schedule_digest(s_), options), "schedule \"" + summary + "\""); !st)
    return st;
  if (s_.ranks != job_.size)
    return make_error("processes.size",
                      "the run has " + std::to_string(s_.ranks) + " ranks but the job has " +
                          std::to_string(job_.size) + " processes: the mpi backend runs one rank per process",
                      "start the job with as many processes as ranks (mpirun -np " + std::to_string(s_.ranks) +
                          " ...), or let collscope start it: run without a launcher");
  me_ = job_.rank;
  R_ = s_.ranks;
  L_ = dataflow::lane_count(s_);
  compute_lane_ = L_ > R_;
  esize_ = size_of(s_.dtype);

  // The board and the buffers, each an MPI-3 shared window over the node.
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  std::uint8_t* board = nullptr;
  COLLSCOPE_MPI_CALL(
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(kBoardBytes), 64, info, job_.node, &board, &board_win_));
  const std::uint64_t mine = buffer_offset(me_, static_cast<std::int32_t>(s_.buffers.size()));
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(mine), 64, info, job_.node, &my_data_, &data_win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS)
    return make_error("backend.out_of_memory",
                      "mpi backend: rank " + std::to_string(me_) + " cannot allocate " + std::to_string(mine) +
                          " bytes of shared memory",
                      "use fewer ranks or a smaller count", {}, ExitCode::backend_failure);
  new (board) ProcSlot{};
  new (board + sizeof(ProcSlot)) LaneSlot[2]{};
  proc_of(board)->pid.store(static_cast<std::int32_t>(getpid()));
  if (mine) std::memset(my_data_, 0, mine);  // scratch space starts as zeros on every backend
  COLLSCOPE_MPI_CALL(MPI_Win_lock_all(MPI_MODE_NOCHECK, board_win_));
  COLLSCOPE_MPI_CALL(MPI_Win_lock_all(MPI_MODE_NOCHECK, data_win_));
  started_ = true;
  session_active.fetch_add(1);
  board_of_.assign(static_cast<std::size_t>(R_), nullptr);
  data_of_.assign(static_cast<std::size_t>(R_), nullptr);
  for (std::int32_t q = 0; q < R_; ++q) {
    if (!local(q)) continue;
    const int nr = job_.node_rank_of[static_cast<std::size_t>(q)];
    MPI_Aint size = 0;
    int disp = 0;
    void* base = nullptr;
    COLLSCOPE_MPI_CALL(MPI_Win_shared_query(board_win_, nr, &size, &disp, &base));
    board_of_[static_cast<std::size_t>(q)] = static_cast<std::uint8_t*>(base);
    COLLSCOPE_MPI_CALL(MPI_Win_shared_query(data_win_, nr, &size, &disp, &base));
    data_of_[static_cast<std::size_t>(q)] = static_cast<std::uint8_t*>(base);
    if (nr == 0) node_abort_ = proc_of(board_of_[static_cast<std::size_t>(q)]);
  }
  // Every slot is constructed before anyone looks at a peer's.
  MPI_Request ready;
  COLLSCOPE_MPI_CALL(MPI_Ibarrier(job_.node, &ready));
  if (auto st = wait_politely(ready, "the node"); !st) return st;

  // One clock: every session's origin is the same instant on every process.
  if (auto st = estimate_clocks(); !st) return st;
  double origin0 = steady_us();
  MPI_Request clock;
  COLLSCOPE_MPI_CALL(MPI_Ibcast(&origin0, 1, MPI_DOUBLE, 0, job_.world, &clock));
  if (auto st = wait_politely(clock, "the clock"); !st) return st;
  origin_ = origin0 + job_.clock_offset_us;

  // Communicators of the library's own collectives on groups.
  native_comms_.assign(s_.steps.size(), MPI_COMM_NULL);
  native_rank_.assign(s_.steps.size(), -1);
  bool ours = false, natives = false;
  for (std::size_t k = 0; k < s_.steps.size(); ++k) {
    const Step& st = s_.steps[k];
    if (!st.native) {
      ours = true;
      continue;
    }
    natives = true;
    const std::int32_t my_call = call_of(s_, static_cast<std::int32_t>(k), me_);  // a shared step: my part's call
    const CollArgs& a = s_.calls[static_cast<std::size_t>(my_call)].args;
    if (auto ok = check_native(a, s_.dtype); !ok) return ok;
    if (a.world_rank.empty()) {
      native_comms_[k] = job_.world;
      native_rank_[k] = me_;
      continue;
    }
    const auto at = std::find(a.world_rank.begin(), a.world_rank.end(), me_);
    const int g = at == a.world_rank.end() ? -1 : static_cast<int>(at - a.world_rank.begin());
    COLLSCOPE_MPI_CALL(MPI_Comm_split(job_.world, g >= 0 ? my_call : MPI_UNDEFINED, g, &native_comms_[k]));
    native_rank_[k] = g;
  }
  mixed_native_ = ours && natives;

  plan();
  // Spin only while every process of the node can have a core (as the cpu backend does).
  const int cores = opts_.cores > 0 ? opts_.cores : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  waits_ = cpu::wait_tuning(job_.node_size, cores);
  watchdog_ = std::thread([this] { watchdog(); });
  if (compute_lane_) compute_ = std::thread([this] { compute_thread(); });
  return ok_status();
}

void MpiSession::plan() {
  deps_ = dataflow::compute_deps(s_);
  const auto S = s_.steps.size();
  plans_.assign(S, {});
  std::uint64_t most = 0;
  const std::int32_t my_compute = R_ + me_;
  for (std::size_t k = 0; k < S; ++k) {
    StepPlan& p = plans_[k];
    const Step& st = s_.steps[k];
    std::uint64_t staged = 0;
    for (std::size_t i = 0; i < st.transfers.size(); ++i) {
      const Transfer& x = st.transfers[i];
      const std::int32_t lane = dataflow::lane_of(s_, x);
      const bool data = x.count && x.action != Action::compute;
      const bool reads = data && reads_source(x);
      if (lane % R_ == me_) {
        Op op{x.action, nullptr,   data ? ptr(x.dst) : nullptr,  nullptr,
              x.count,  x.divisor, static_cast<std::int32_t>(i), x.duration_us};
        if (data && x.action == Action::reduce_copy) op.aux = ptr(x.aux);
        const bool remote = (reads || is_signal(x)) && !local(x.src.rank);
        if (remote) {
          op.from = x.src.rank;
          if (reads && x.action != Action::copy) {
            op.into_staging = true;
            op.staging = staged;
            staged += x.count * esize_;
          }
        } else if (reads) {
          op.src = ptr(x.src);
        }
        (lane >= R_ ? p.compute : p.comm).push_back(op);
      } else if (x.src.rank == me_ && (reads || is_signal(x)) && !local(lane % R_)) {
        // Another node's rank reads from this one: a message, once the data is final.
        Send snd{static_cast<std::int32_t>(i), x.dst.rank, reads ? ptr(x.src) : nullptr, reads ? x.count * esize_ : 0,
                 kNone};
        for (const dataflow::Dep& d : deps_[static_cast<std::size_t>(lane)][k])
          if (d.rank == my_compute) snd.need_compute = std::max(snd.need_compute, d.step);
        p.sends.push_back(snd);
      }
    }
    most = std::max(most, staged);
    for (const std::int32_t lane : {me_, my_compute}) {
      if (lane == my_compute && !compute_lane_) continue;
      auto& waits = lane == me_ ? p.comm_waits : p.compute_waits;
      for (const dataflow::Dep& d : deps_[static_cast<std::size_t>(lane)][k]) {
        const std::int32_t owner = d.rank % R_;
        if (owner == me_ || local(owner)) waits.push_back({d.rank, d.step});
        // On another node: the communication lane learns it from the messages of the
        // step; the compute lane waits for its own rank's communication lane to have
        // passed the step that packed what the remote reader read (see session.h).
        else if (lane == my_compute) waits.push_back({me_, d.step});
      }
    }
  }
  staging_.assign(most / 8 + 1, 0);
}

// --- the buffers ------------------------------------------------------------------------

std::string MpiSession::device_label(std::int32_t rank) const {
  const auto r = static_cast<std::size_t>(rank);
  return job_.node_names[static_cast<std::size_t>(job_.node_of[r])] + " · pid " + std::to_string(job_.pid_of[r]);
}

Status MpiSession::write_buffer(std::int32_t rank, std::int32_t buf, const void* data, std::uint64_t bytes) {
  if (rank == me_ && bytes) std::memcpy(ptr({rank, buf, 0}), data, bytes);
  written_ = true;  // (every process calls this for every rank: all of them know)
  return ok_status();
}

Status MpiSession::settle() {
  if (!written_) return ok_status();
  // What the processes wrote into their buffers is there before any peer reads it.
  written_ = false;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  MPI_Request r;
  COLLSCOPE_MPI_CALL(MPI_Ibarrier(job_.world, &r));
  if (auto st = collective(r); !st) return st;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return ok_status();
}

Status MpiSession::read_buffer(std::int32_t rank, std::int32_t buf, void* data, std::uint64_t bytes) {
  if (error_) return *error_;
  if (rank == me_) {
    if (bytes) std::memcpy(data, ptr({rank, buf, 0}), bytes);
    if (me_ == 0 || !bytes) return ok_status();
    Pending p;
    if (auto st = send_bytes(static_cast<const std::uint8_t*>(data), bytes, 0, kGather, p, job_.control); !st)
      return st;
    for (MPI_Request& r : p.requests)
      if (auto st = collective(r); !st) return st;
    return ok_status();
  }
  if (me_ != 0 || !bytes) return ok_status();
  std::vector<MPI_Request> reqs;
  if (auto st = recv_bytes(static_cast<std::uint8_t*>(data), bytes, rank, kGather, reqs, job_.control); !st) return st;
  for (MPI_Request& r : reqs)
    if (auto st = collective(r); !st) return st;
  return ok_status();
}

Status MpiSession::send_bytes(const std::uint8_t* p, std::uint64_t bytes, int to, int tag, Pending& into,
                              MPI_Comm comm) {
  std::uint64_t at = 0;
  do {
    const auto n = static_cast<int>(std::min(kChunk, bytes - at));
    MPI_Request r;
    COLLSCOPE_MPI_CALL(MPI_Isend(p ? p + at : nullptr, n, MPI_BYTE, to, tag, comm, &r));
    into.requests.push_back(r);
    at += static_cast<std::uint64_t>(n);
  } while (at < bytes);
  return ok_status();
}

Status MpiSession::recv_bytes(std::uint8_t* p, std::uint64_t bytes, int from, int tag, std::vector<MPI_Request>& into,
                              MPI_Comm comm) {
  std::uint64_t at = 0;
  do {
    const auto n = static_cast<int>(std::min(kChunk, bytes - at));
    MPI_Request r;
    COLLSCOPE_MPI_CALL(MPI_Irecv(p ? p + at : nullptr, n, MPI_BYTE, from, tag, comm, &r));
    into.push_back(r);
    at += static_cast<std::uint64_t>(n);
  } while (at < bytes);
  return ok_status();
}

}  // namespace collscope::mpi
