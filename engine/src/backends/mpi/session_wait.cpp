// The mpi backend's session, waiting (session.h): for a lane, a request, the sends, a
// pause, while polling MPI and watching for an abort; and the job-wide collectives of
// the control plane.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backends/mpi/session.h"

namespace collscope::mpi {

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

// One round of waiting, in the stage the wait has reached (cpu/wait.h): spin, yield,
// then sleep on `word` (while it still holds `value`). The main thread keeps MPI moving
// (sends in flight, notices) between rounds; with sends in flight it sleeps only
// briefly, since nothing else progresses them.
void MpiSession::idle(Waiting& w, cpu::WaitStages::Stage stage, std::atomic<std::uint32_t>* word, std::uint32_t value,
                      bool main) {
  const std::uint32_t r = w.rounds++;
  if (stage == cpu::WaitStages::Stage::spin) {
    if (main && r % 256 == 255) poll_mpi();
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    return;
  }
  if (main) poll_mpi();
  if (stage == cpu::WaitStages::Stage::yield) {
    sched_yield();
    return;
  }
  const std::uint32_t n = w.slept++;
  const std::int64_t us = main && !pending_.empty() ? 100 : 20000;
  if (word) {
    sleep_on(word, value, us);
  } else {
    // A request: nothing to sleep on. Libraries move a request on only while they are
    // called, so the sleeps grow slowly: 10 us for the first millisecond or so, up to
    // 500 us for waits that are long anyway.
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
  Waiting w(waits_);
  bool ok = true;
  for (;;) {
    const std::uint32_t seq = l.seq.load(std::memory_order_seq_cst);
    if (l.done.load(std::memory_order_seq_cst) >= target) break;
    if (aborted()) {
      ok = false;
      break;
    }
    const auto stage = w.stages.next();
    const bool sleeps = stage == cpu::WaitStages::Stage::sleep;
    if (sleeps) l.waiters.fetch_add(1, std::memory_order_seq_cst);
    idle(w, stage, &l.seq, seq, main);
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
  Waiting w(waits_);
  for (;;) {
    int done = 0;
    if (MPI_Test(&r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      raise_failure("mpi", -1, -1, "a message between the processes failed (a process of the job may have died)");
      return false;
    }
    if (done) return true;
    if (aborted()) return false;
    idle(w, w.stages.next(), nullptr, 0, main);
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

}  // namespace collscope::mpi
