// The mpi backend's session (session.h): setting up, the data plane, fast and observable
// mode, and what the report gathers on rank 0. Failures are in failure.cpp.
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
#include "kernels/host_kernels.h"

namespace collscope::mpi {

namespace {

using kernels::op_kind;

constexpr std::uint64_t kChunk = 1ull << 30;  // the largest message: counts are ints in MPI
constexpr int kGather = 14;                   // read_buffer's messages to rank 0 (control)

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// A segment of the board window: the process's slot, then its two lanes'.
constexpr std::size_t kBoardBytes = sizeof(ProcSlot) + 2 * sizeof(LaneSlot);

ProcSlot* proc_of(std::uint8_t* board) { return reinterpret_cast<ProcSlot*>(board); }
LaneSlot* lanes_of(std::uint8_t* board) { return reinterpret_cast<LaneSlot*>(board + sizeof(ProcSlot)); }

std::string range_text(const std::vector<std::int32_t>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(ranks[i]) + (j > i ? "-" + std::to_string(ranks[j]) : "");
    i = j + 1;
  }
  return out;
}

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
                      "the run has " + std::to_string(s_.ranks) + " ranks but the job " + std::to_string(job_.size) +
                          " processes: the mpi backend runs one rank per process",
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
  const bool own_core = job_.node_size <= cores;
  spins_ = own_core ? 2000u : 0u;
  yields_ = own_core ? 16u : 64u;
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

// --- waiting ----------------------------------------------------------------------------

bool MpiSession::aborted() const {
  return local_abort_.load(std::memory_order_relaxed) ||
         (node_abort_ && node_abort_->abort.load(std::memory_order_relaxed) != 0);
}

void MpiSession::poll_mpi() {
  // Each call into the library may poll its network too, which costs microseconds: sends
  // in flight are moved on at every call, notices looked for every 200 us.
  const double now = steady_us();
  if (pending_.empty() && now - last_poll_ < 200) return;
  last_poll_ = now;
  for (std::size_t i = 0; i < pending_.size();) {
    int done = 0;
    MPI_Testall(static_cast<int>(pending_[i].requests.size()), pending_[i].requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done) {
      pending_[i] = std::move(pending_.back());
      pending_.pop_back();
    } else {
      ++i;
    }
  }
  int flag = 0;
  MPI_Status st;
  if (MPI_Iprobe(MPI_ANY_SOURCE, kNotice, job_.control, &flag, &st) == MPI_SUCCESS && flag) {
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    std::string text(static_cast<std::size_t>(std::max(0, n)), '\0');
    MPI_Recv(text.data(), n, MPI_CHAR, st.MPI_SOURCE, kNotice, job_.control, MPI_STATUS_IGNORE);
    // "timeout: ...": the kind of failure the sender saw comes first.
    const auto colon = text.find(':');
    const std::string kind = colon == std::string::npos ? "notice" : text.substr(0, colon);
    raise_failure(kind == "timeout" ? kind : "notice", st.MPI_SOURCE, -1, text);
  }
}

// One round of waiting: spin, then yield, then sleep on `word` (while it still holds
// `value`). The main thread keeps MPI moving (sends in flight, notices) between rounds;
// with sends in flight it sleeps only briefly, since nothing else progresses them.
void MpiSession::idle(std::uint32_t& rounds, std::atomic<std::uint32_t>* word, std::uint32_t value, bool main) {
  const std::uint32_t r = rounds++;
  if (r < spins_) {
    if (main && r % 256 == 255) poll_mpi();
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    return;
  }
  if (main) poll_mpi();
  if (r < spins_ + yields_) {
    sched_yield();
    return;
  }
  const std::int64_t us = main && !pending_.empty() ? 100 : 20000;
  if (word) {
    sleep_on(word, value, us);
  } else {
    // A request: nothing to sleep on. Libraries move a request on only while they are
    // called, so the sleeps grow slowly: 10 us for the first millisecond or so, up to
    // 500 us for waits that are long anyway.
    const std::uint32_t n = r - spins_ - yields_;
    const std::int64_t back = n < 100 ? 10 : n < 1000 ? 50 : 500;
    timespec ts{0, back * 1000};
    nanosleep(&ts, nullptr);
  }
}

bool MpiSession::wait_lane(std::int32_t me_lane, std::int32_t lane, std::uint64_t target, bool main) {
  LaneSlot& l = slot(lane);
  if (l.done.load(std::memory_order_acquire) >= target) return true;
  LaneSlot& mine = slot(me_lane);
  mine.waiting_on.store(lane, std::memory_order_relaxed);
  mine.state.store(static_cast<std::uint32_t>(LaneState::waiting), std::memory_order_relaxed);
  std::uint32_t rounds = 0;
  bool ok = true;
  for (;;) {
    const std::uint32_t seq = l.seq.load(std::memory_order_seq_cst);
    if (l.done.load(std::memory_order_seq_cst) >= target) break;
    if (aborted()) {
      ok = false;
      break;
    }
    const bool sleeps = rounds >= spins_ + yields_;
    if (sleeps) l.waiters.fetch_add(1, std::memory_order_seq_cst);
    idle(rounds, &l.seq, seq, main);
    if (sleeps) l.waiters.fetch_sub(1, std::memory_order_relaxed);
  }
  // (An aborted wait leaves the lane's state as it was: the flight record shows whom it waited for.)
  if (ok) {
    mine.waiting_on.store(-1, std::memory_order_relaxed);
    mine.state.store(static_cast<std::uint32_t>(LaneState::running), std::memory_order_relaxed);
  }
  return ok;
}

bool MpiSession::wait_request(MPI_Request& r, bool main) {
  std::uint32_t rounds = 0;
  for (;;) {
    int done = 0;
    if (MPI_Test(&r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      raise_failure("mpi", -1, -1, "a message between the processes failed (a process of the job may have died)");
      return false;
    }
    if (done) return true;
    if (aborted()) return false;
    idle(rounds, nullptr, 0, main);
  }
}

bool MpiSession::wait_all_sends() {
  while (!pending_.empty()) {
    Pending& p = pending_.back();
    for (MPI_Request& r : p.requests)
      if (!wait_request(r, true)) return false;
    pending_.pop_back();
  }
  return true;
}

bool MpiSession::pause_us(double us, bool main) {
  const double until = steady_us() + us;
  for (;;) {
    if (aborted()) return false;
    const double left = until - steady_us();
    if (left <= 0) return true;
    if (main) poll_mpi();
    sleep_on(&node_abort_->abort, 0,
             std::min<std::int64_t>(static_cast<std::int64_t>(left) + 1, main ? 20000 : 1000000));
  }
}

Status MpiSession::collective(MPI_Request& r) {
  if (error_) return *error_;
  const int before = armed_.load();
  if (before == 0) armed_.store(1);
  const bool ok = wait_request(r, true);
  armed_.store(before);
  if (!ok) return coordinate();
  return ok_status();
}

Result<std::vector<std::string>> MpiSession::share(const std::string& mine) {
  if (error_) return *error_;
  const auto n = static_cast<std::size_t>(job_.size);
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(n), at(n, 0);
  MPI_Request r;
  COLLSCOPE_MPI_CALL(MPI_Iallgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, job_.world, &r));
  if (auto st = collective(r); !st) return st.error();
  int total = 0;
  for (std::size_t p = 0; p < n; ++p) at[p] = total, total += lens[p];
  std::string all(static_cast<std::size_t>(total), '\0');
  COLLSCOPE_MPI_CALL(
      MPI_Iallgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, job_.world, &r));
  if (auto st = collective(r); !st) return st.error();
  std::vector<std::string> out;
  for (std::size_t p = 0; p < n; ++p)
    out.push_back(all.substr(static_cast<std::size_t>(at[p]), static_cast<std::size_t>(lens[p])));
  return out;
}

// --- the lanes' work --------------------------------------------------------------------

bool MpiSession::arrive(std::int32_t lane, std::int32_t step) {
  LaneSlot& me = slot(lane);
  me.step.store(step, std::memory_order_relaxed);
  me.state.store(static_cast<std::uint32_t>(LaneState::running), std::memory_order_relaxed);
  recorder_.reach(lane, step, now_us());
  if (lane == me_)
    for (const Fault& f : opts_.faults) {
      if (f.rank != me_ || f.step != step) continue;
      switch (f.kind) {
        case Fault::Kind::delay:
          if (!pause_us(f.ms * 1000.0, true)) return false;
          break;
        case Fault::Kind::hang:
          // The rank never arrives; its process stays, and answers when the others ask.
          me.state.store(static_cast<std::uint32_t>(LaneState::hung), std::memory_order_seq_cst);
          while (!aborted()) {
            poll_mpi();
            sleep_on(&node_abort_->abort, 0, 20000);
          }
          return false;
        case Fault::Kind::crash:
          // The process really dies here, as a segfault would end it: nothing is written,
          // its state on the node's board is all the others learn.
          me.state.store(static_cast<std::uint32_t>(LaneState::crashed), std::memory_order_seq_cst);
          std::fflush(stdout);
          _exit(static_cast<int>(ExitCode::backend_failure));
        case Fault::Kind::corrupt:
          break;
      }
    }
  recorder_.begin(lane, step, now_us());
  return true;
}

bool MpiSession::execute_op(std::int32_t lane, std::int32_t k, const Op& op, bool fast) {
  (void)fast;
  const double t0 = opts_.record_events ? now_us() : 0.0;
  const ReduceOp rop = s_.calls[static_cast<std::size_t>(s_.steps[static_cast<std::size_t>(k)].call)].args.op;
  const std::uint8_t* src =
      op.into_staging ? reinterpret_cast<const std::uint8_t*>(staging_.data()) + op.staging : op.src;
  switch (op.action) {
    case Action::copy:
      if (op.count && op.src) std::memcpy(op.dst, op.src, op.count * esize_);
      break;
    case Action::reduce:
      kernels::reduce_bytes(s_.dtype, op_kind(rop), op.dst, src, op.count);
      break;
    case Action::reduce_copy:
      kernels::reduce_copy_bytes(s_.dtype, op_kind(rop), op.dst, op.aux, src, op.count);
      break;
    case Action::scale:
      kernels::scale_bytes(s_.dtype, op.dst, op.count, op.divisor);
      break;
    case Action::compute:
      if (!pause_us(op.duration_us, lane == me_)) return false;
      break;
  }
  // A corrupting rank's outgoing data arrives with one bit flipped (as on the cpu backend).
  const Transfer& t = s_.steps[static_cast<std::size_t>(k)].transfers[static_cast<std::size_t>(op.transfer)];
  for (const Fault& f : opts_.faults)
    if (f.kind == Fault::Kind::corrupt && f.step == k && t.src.rank == f.rank && t.dst.rank != f.rank && t.count &&
        t.action != Action::compute)
      op.dst[esize_ - 1] ^= 0x40;
  if (opts_.record_events) events_[lane >= R_ ? 1 : 0].push_back({k, op.transfer, me_, t0, now_us()});
  return true;
}

bool MpiSession::run_comm_step(std::int32_t k, std::int64_t base, bool fast) {
  const StepPlan& p = plans_[static_cast<std::size_t>(k)];
  // 1. What other nodes read from this rank goes out first, packed (see session.h).
  for (const Send& snd : p.sends) {
    if (fast && snd.need_compute != kNone) {
      const std::int64_t need = base + snd.need_compute + 1;
      if (need > 0 && !wait_lane(me_, R_ + me_, static_cast<std::uint64_t>(need), true)) return false;
    }
    Pending out;
    if (snd.bytes) {
      out.bytes.reset(new std::uint8_t[snd.bytes]);
      std::memcpy(out.bytes.get(), snd.src, snd.bytes);
    }
    if (auto st = send_bytes(out.bytes.get(), snd.bytes, snd.to, tag_of(k, snd.transfer), out, job_.world); !st) {
      raise_failure("mpi", snd.to, k, st.error().message);
      return false;
    }
    pending_.push_back(std::move(out));
  }
  // 2. Peers on this node (and this rank's other lane) this lane depends on.
  if (fast)
    for (const Wait& w : p.comm_waits) {
      const std::int64_t need = base + w.step + 1;
      if (need > 0 && !wait_lane(me_, w.lane, static_cast<std::uint64_t>(need), true)) return false;
    }
  // 3. Messages from other nodes: into place for a copy, into staging for a reduction.
  std::vector<std::vector<MPI_Request>> recvs(p.comm.size());
  for (std::size_t i = 0; i < p.comm.size(); ++i) {
    const Op& op = p.comm[i];
    if (op.from < 0) continue;
    std::uint8_t* into = op.into_staging ? reinterpret_cast<std::uint8_t*>(staging_.data()) + op.staging : op.dst;
    const std::uint64_t bytes = op.count && op.action != Action::compute ? op.count * esize_ : 0;
    if (auto st = recv_bytes(into, bytes, op.from, tag_of(k, op.transfer), recvs[i], job_.world); !st) {
      raise_failure("mpi", op.from, k, st.error().message);
      return false;
    }
  }
  // 4. The rank's transfers, in order.
  for (std::size_t i = 0; i < p.comm.size(); ++i) {
    const Op& op = p.comm[i];
    for (MPI_Request& r : recvs[i]) {
      LaneSlot& me = slot(me_);
      me.waiting_on.store(op.from, std::memory_order_relaxed);
      me.state.store(static_cast<std::uint32_t>(LaneState::waiting), std::memory_order_relaxed);
      if (!wait_request(r, true)) return false;
      me.waiting_on.store(-1, std::memory_order_relaxed);
      me.state.store(static_cast<std::uint32_t>(LaneState::running), std::memory_order_relaxed);
    }
    if (!execute_op(me_, k, op, fast)) return false;
  }
  return true;
}

bool MpiSession::run_native_step(std::int32_t k, std::int64_t base, bool fast) {
  const CollArgs& a = s_.calls[static_cast<std::size_t>(call_of(s_, k, me_))].args;
  // Around a native step among ours, a barrier: the library orders its own call, but not
  // our direct reads of a peer's memory before and after it.
  auto barrier = [&]() {
    MPI_Request r;
    if (MPI_Ibarrier(job_.world, &r) != MPI_SUCCESS) return false;
    LaneSlot& me = slot(me_);
    me.state.store(static_cast<std::uint32_t>(LaneState::waiting), std::memory_order_relaxed);
    const bool ok = wait_request(r, true);
    me.state.store(static_cast<std::uint32_t>(LaneState::running), std::memory_order_relaxed);
    return ok;
  };
  if (fast && compute_lane_ && base + k > 0 && !wait_lane(me_, R_ + me_, static_cast<std::uint64_t>(base + k), true))
    return false;
  if (fast && mixed_native_ && !barrier()) return false;
  const std::int32_t g = native_rank_[static_cast<std::size_t>(k)];
  if (g >= 0) {
    std::uint8_t* in = a.in_buf >= 0 && s_.buffer_count(a.in_buf, me_) ? ptr({me_, a.in_buf, 0}) : nullptr;
    std::uint8_t* out = a.out_buf >= 0 && s_.buffer_count(a.out_buf, me_) ? ptr({me_, a.out_buf, 0}) : nullptr;
    // A corrupting rank hands MPI its input with one bit flipped: what it sends is wrong.
    for (const Fault& f : opts_.faults)
      if (f.kind == Fault::Kind::corrupt && f.step == k && f.rank == me_ && in && a.count)
        in[a.in_offset(g) * esize_ + esize_ - 1] ^= 0x40;
    const double t0 = now_us();
    if (auto r = run_native(a, s_.dtype, g, in, out, native_comms_[static_cast<std::size_t>(k)]); !r) {
      raise_failure("mpi", me_, k, r.error().message);
      return false;
    }
    if (opts_.record_events) events_[0].push_back({k, 0, me_, t0, now_us()});
  }
  if (fast && mixed_native_ && !barrier()) return false;
  return true;
}

bool MpiSession::fast_comm(std::int32_t iterations) {
  const auto S = static_cast<std::int32_t>(s_.steps.size());
  LaneSlot& me = slot(me_);
  for (std::int32_t it = 0; it < iterations; ++it) {
    const std::int64_t base = fast_base_ + static_cast<std::int64_t>(it) * S;
    for (std::int32_t k = 0; k < S; ++k) {
      if (aborted() || !arrive(me_, k)) return false;
      const bool ok =
          s_.steps[static_cast<std::size_t>(k)].native ? run_native_step(k, base, true) : run_comm_step(k, base, true);
      if (!ok) return false;
      recorder_.end(me_, k, now_us());
      publish(me, static_cast<std::uint64_t>(base + k + 1));
      me.beat.fetch_add(1, std::memory_order_relaxed);
      // Sends that have arrived free their packed bytes as we go.
      if (pending_.size() > 64) poll_mpi();
    }
  }
  return wait_all_sends();
}

bool MpiSession::fast_compute(std::int32_t iterations) {
  const auto S = static_cast<std::int32_t>(s_.steps.size());
  const std::int32_t lane = R_ + me_;
  LaneSlot& me = slot(lane);
  for (std::int32_t it = 0; it < iterations; ++it) {
    const std::int64_t base = fast_base_ + static_cast<std::int64_t>(it) * S;
    for (std::int32_t k = 0; k < S; ++k) {
      if (aborted() || !arrive(lane, k)) return false;
      const StepPlan& p = plans_[static_cast<std::size_t>(k)];
      // Nothing of ours runs next to the library's own call (run_native_step).
      if (s_.steps[static_cast<std::size_t>(k)].native &&
          !wait_lane(lane, me_, static_cast<std::uint64_t>(base + k + 1), false))
        return false;
      for (const Wait& w : p.compute_waits) {
        const std::int64_t need = base + w.step + 1;
        if (need > 0 && !wait_lane(lane, w.lane, static_cast<std::uint64_t>(need), false)) return false;
      }
      for (const Op& op : p.compute)
        if (!execute_op(lane, k, op, true)) return false;
      recorder_.end(lane, k, now_us());
      publish(me, static_cast<std::uint64_t>(base + k + 1));
      me.beat.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return true;
}

void MpiSession::compute_thread() {
  std::uint64_t seen = 0;
  for (;;) {
    std::int32_t n = 0;
    {
      std::unique_lock<std::mutex> lock(m_);
      cv_.wait(lock, [&] { return quit_ || compute_epoch_ != seen; });
      if (quit_) return;
      seen = compute_epoch_;
      n = compute_iterations_;
      compute_busy_.store(true);
    }
    compute_busy_.store(true);
    const bool ok = fast_compute(n);
    compute_busy_.store(false);
    const double end = now_us();
    slot(R_ + me_).state.store(static_cast<std::uint32_t>(ok ? LaneState::finished : LaneState::idle));
    std::lock_guard<std::mutex> lock(m_);
    compute_ok_ = ok;
    compute_end_ = end;
  }
}

Status MpiSession::run_all(std::int32_t iterations) {
  if (error_) return *error_;
  if (auto st = settle(); !st) return st;
  mode_ = "fast";
  armed_.store(2);
  const double t0 = now_us();
  if (compute_lane_) {
    std::lock_guard<std::mutex> lock(m_);
    compute_iterations_ = iterations;
    ++compute_epoch_;
  }
  cv_.notify_all();
  bool ok = fast_comm(iterations);
  double t1 = now_us();
  const auto S = static_cast<std::int64_t>(s_.steps.size());
  if (ok && compute_lane_) {
    ok = wait_lane(me_, R_ + me_, static_cast<std::uint64_t>(fast_base_ + iterations * S), true);
    std::lock_guard<std::mutex> lock(m_);
    t1 = std::max(t1, compute_end_);
  }
  if (ok) slot(me_).state.store(static_cast<std::uint32_t>(LaneState::finished), std::memory_order_relaxed);
  fast_base_ += iterations * S;
  if (!ok) {
    armed_.store(0);
    return coordinate();
  }
  // The run as the ranks saw it: from the last one's start to the last one's end.
  double window[2] = {t0, t1}, latest[2] = {0, 0};
  MPI_Request r;
  COLLSCOPE_MPI_CALL(MPI_Iallreduce(window, latest, 2, MPI_DOUBLE, MPI_MAX, job_.world, &r));
  const bool met = wait_request(r, true);
  armed_.store(0);
  if (!met) return coordinate();
  last_us_ = std::max(0.0, latest[1] - latest[0]);
  return ok_status();
}

Status MpiSession::run_step(std::int32_t k) {
  if (error_) return *error_;
  if (auto st = settle(); !st) return st;
  mode_ = "observable";
  armed_.store(2);
  bool ok = arrive(me_, k);
  if (ok) {
    if (s_.steps[static_cast<std::size_t>(k)].native) {
      ok = run_native_step(k, 0, false);
    } else {
      ok = run_comm_step(k, 0, false);
      if (ok && compute_lane_) {
        const std::int32_t lane = R_ + me_;
        ok = arrive(lane, k);
        for (const Op& op : plans_[static_cast<std::size_t>(k)].compute)
          if (ok) ok = execute_op(lane, k, op, false);
        if (ok) recorder_.end(lane, k, now_us());
      }
    }
    if (ok) ok = wait_all_sends();
    if (ok) recorder_.end(me_, k, now_us());
  }
  if (ok) {
    LaneSlot& me = slot(me_);
    me.beat.fetch_add(1, std::memory_order_relaxed);
    me.state.store(static_cast<std::uint32_t>(LaneState::waiting), std::memory_order_relaxed);
    // The step's barrier: every rank has finished it before anyone starts the next.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    MPI_Request r;
    ok = MPI_Ibarrier(job_.world, &r) == MPI_SUCCESS && wait_request(r, true);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    me.state.store(static_cast<std::uint32_t>(LaneState::idle), std::memory_order_relaxed);
  }
  armed_.store(0);
  if (!ok) return coordinate();
  return ok_status();
}

// --- what rank 0 reports ----------------------------------------------------------------

std::vector<TransferTiming> MpiSession::take_events() {
  std::vector<TransferTiming> mine = std::move(events_[0]);
  mine.insert(mine.end(), events_[1].begin(), events_[1].end());
  events_[0].clear();
  events_[1].clear();
  if (error_) return mine;
  // Every process's events go to rank 0; they are on one clock already (origin_).
  const auto n = static_cast<std::size_t>(job_.size);
  int bytes = static_cast<int>(mine.size() * sizeof(TransferTiming));
  std::vector<int> lens(n), at(n, 0);
  MPI_Request r;
  if (MPI_Igather(&bytes, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, job_.world, &r) != MPI_SUCCESS || !collective(r))
    return mine;
  int total = 0;
  for (std::size_t p = 0; p < n; ++p) at[p] = total, total += lens[p];
  std::vector<TransferTiming> all(me_ == 0 ? static_cast<std::size_t>(total) / sizeof(TransferTiming) : 0);
  if (MPI_Igatherv(mine.data(), bytes, MPI_BYTE, all.data(), lens.data(), at.data(), MPI_BYTE, 0, job_.world, &r) !=
          MPI_SUCCESS ||
      !collective(r))
    return mine;
  return me_ == 0 ? all : mine;
}

std::string MpiSession::detail() const {
  std::string d = job_.version + "; " + std::to_string(job_.size) + " process" + (job_.size == 1 ? "" : "es") + " on " +
                  std::to_string(job_.node_names.size()) + " node" + (job_.node_names.size() == 1 ? "" : "s") + " (";
  if (job_.separate_nodes) {
    // Forced apart on one machine: a node per rank, named host#rank.
    d += "each rank a node of its own on " + job_.node_names[0].substr(0, job_.node_names[0].rfind('#')) +
         ", COLLSCOPE_MPI_SEPARATE_NODES";
  } else {
    for (std::size_t n = 0; n < job_.node_names.size(); ++n) {
      std::vector<std::int32_t> ranks;
      for (std::int32_t r = 0; r < job_.size; ++r)
        if (job_.node_of[static_cast<std::size_t>(r)] == static_cast<int>(n)) ranks.push_back(r);
      d += (n ? "; " : "") + job_.node_names[n] + ": rank" + (ranks.size() == 1 ? " " : "s ") + range_text(ranks);
    }
  }
  char clock[96];
  std::snprintf(clock, sizeof clock, "); clocks aligned to rank 0 within %.1f us", job_.clock_uncertainty_us);
  d += clock;
  if (job_.node_names.size() > 1) d += "; messages between nodes";
  if (job_.size > static_cast<int>(job_.node_names.size())) d += "; shared memory within a node";
  return d;
}

FlightRecord MpiSession::record_header() const {
  FlightRecord rec;
  rec.backend = "mpi";
  rec.mode = mode_;
  rec.world = s_.ranks;
  rec.steps = static_cast<std::int32_t>(s_.steps.size());
  rec.timeout_s = opts_.timeout_s;
  rec.capacity = std::max(1, opts_.flight_capacity);
  return rec;
}

FlightRecord MpiSession::flight_record() const {
  if (error_) return merged_;
  FlightRecord rec = record_header();
  FlightRecord one = rec;
  one.ranks.push_back(my_flight_rank());
  // Every process's part, merged on rank 0 (a collective: every process asks for it).
  auto all = const_cast<MpiSession*>(this)->share(me_ == 0 ? std::string() : flight_record_json(one));
  if (!all || me_ != 0) return one;
  for (std::int32_t r = 0; r < s_.ranks; ++r) {
    if (r == 0) {
      rec.ranks.push_back(one.ranks[0]);
      continue;
    }
    auto part = parse_flight_record((*all)[static_cast<std::size_t>(r)], "rank " + std::to_string(r));
    if (part && !part->ranks.empty()) rec.ranks.push_back(part->ranks[0]);
    else rec.ranks.push_back(FlightRank{r, "unknown", -1, -1, 0, {}});
  }
  return rec;
}

FlightRank MpiSession::my_flight_rank() const {
  FlightRank fr = recorder_.ranks()[static_cast<std::size_t>(me_)];
  const LaneSlot& comm = slot(me_);
  fr.state = name_of(static_cast<LaneState>(comm.state.load()));
  fr.step = comm.step.load();
  const std::int32_t w = comm.waiting_on.load();
  fr.waiting_for = w >= 0 ? w % R_ : -1;
  if (compute_lane_) {
    const LaneSlot& c = slot(R_ + me_);
    const auto cs = static_cast<LaneState>(c.state.load());
    if (cs == LaneState::hung || cs == LaneState::crashed) fr.state = name_of(cs), fr.step = c.step.load();
  }
  return fr;
}

}  // namespace collscope::mpi
