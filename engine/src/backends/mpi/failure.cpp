// When a run of the mpi backend fails (session.h): the watchdog, the notice to the other
// processes, and the merged flight record.
//
//   1. A watchdog thread per process sees a peer on its node crash (its state on the
//      board) or die (its pid is gone), nothing on the node move for --timeout, or the
//      launcher's SIGTERM (which it sends to every process once one has failed). It
//      raises the node's abort word, which releases every wait on the node.
//   2. The main thread, back from its wait, tells every other process (a notice on the
//      control communicator: processes on other nodes learn it from there) and hands its
//      flight record to the leader: rank 0, or the lowest rank not known to be dead.
//   3. The leader waits briefly for the records, merges them, names the rank the others
//      waited for and returns the error: the report and the merged record are written by
//      the usual code. processes::finish() then tells the others to go, and exits.
//   4. A process that hears nothing from the leader writes its own record
//      (PATH.rankN.json), says so, and exits. One stuck inside a library call that never
//      returns (the library's own collective with a dead peer) is ended by its watchdog.
// Every path ends in _exit: after a failure the processes cannot meet in MPI_Finalize,
// and the launcher ends the job when its processes exit with status 3.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "backends/mpi/session.h"
#include "collscope/processes.h"

namespace collscope::mpi {

namespace {

// A lane's state as another process reports it: LaneState, or kSilent for a rank whose
// process said nothing.
constexpr std::int32_t kSilent = 100;

bool pid_gone(int pid) { return pid > 0 && kill(pid, 0) == -1 && errno == ESRCH; }

void sleep_us(std::int64_t us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

}  // namespace

void MpiSession::raise_failure(std::string kind, std::int32_t rank, std::int32_t step, std::string text) {
  const bool timeout = kind == "timeout";
  {
    std::lock_guard<std::mutex> lock(fail_m_);
    if (!failure_) failure_ = Failure{std::move(kind), rank, step, std::move(text)};
  }
  local_abort_.store(true, std::memory_order_seq_cst);
  if (node_abort_) {
    // 2: nothing moved within the timeout, 1: any other failure (the first one raised wins).
    std::uint32_t none = 0;
    node_abort_->abort.compare_exchange_strong(none, timeout ? 2u : 1u, std::memory_order_seq_cst);
    wake_all(&node_abort_->abort);
  }
  for (std::int32_t l = 0; l < L_; ++l)
    if (local(l % R_)) nudge(slot(l));
  wd_word_.fetch_add(1);
  wake_all(&wd_word_);
}

std::vector<std::array<std::int32_t, 3>> MpiSession::my_lanes() const {
  std::vector<std::array<std::int32_t, 3>> out;
  for (const std::int32_t lane : {me_, R_ + me_}) {
    if (lane >= L_) break;
    const LaneSlot& l = slot(lane);
    out.push_back({static_cast<std::int32_t>(l.state.load()), l.step.load(), l.waiting_on.load()});
  }
  return out;
}

std::string MpiSession::record_blob() const {
  FlightRecord one = record_header();
  one.ranks.push_back(my_flight_rank());
  nlohmann::json j;
  j["rank"] = me_;
  j["lanes"] = my_lanes();
  {
    std::lock_guard<std::mutex> lock(fail_m_);
    j["kind"] = failure_ ? failure_->kind : "";
  }
  j["flight"] = flight_record_json(one);
  return j.dump();
}

std::string MpiSession::failure_text(bool timed_out, const std::vector<std::array<std::int32_t, 3>>& lanes,
                                     const std::vector<int>& dead) const {
  const auto L = static_cast<std::int32_t>(lanes.size());
  auto state = [&](std::int32_t l) { return lanes[static_cast<std::size_t>(l)][0]; };
  auto is = [&](std::int32_t l, LaneState s) { return state(l) == static_cast<std::int32_t>(s); };
  // Follow who waits for whom to the end of each chain (as the cpu backend's watchdog does).
  std::vector<std::int32_t> end_of(static_cast<std::size_t>(L));
  for (std::int32_t l = 0; l < L; ++l) {
    std::int32_t x = l;
    for (std::int32_t hops = 0; hops <= L && is(x, LaneState::waiting) && lanes[static_cast<std::size_t>(x)][2] >= 0 &&
                                lanes[static_cast<std::size_t>(x)][2] < L;
         ++hops)
      x = lanes[static_cast<std::size_t>(x)][2];
    end_of[static_cast<std::size_t>(l)] = x;
  }
  std::int32_t culprit = -1;
  for (const LaneState want : {LaneState::crashed, LaneState::hung})
    for (std::int32_t l = 0; l < L && culprit < 0; ++l)
      if (is(l, want)) culprit = l;
  for (std::int32_t r = 0; r < R_ && culprit < 0; ++r)
    if (dead[static_cast<std::size_t>(r)]) culprit = r;
  if (culprit < 0) {
    std::vector<std::int32_t> votes(static_cast<std::size_t>(L), 0);
    for (std::int32_t l = 0; l < L; ++l)
      if (is(l, LaneState::waiting) && end_of[static_cast<std::size_t>(l)] != l)
        ++votes[static_cast<std::size_t>(end_of[static_cast<std::size_t>(l)])];
    const auto most = std::max_element(votes.begin(), votes.end());
    if (most != votes.end() && *most > 0) culprit = static_cast<std::int32_t>(most - votes.begin());
  }
  for (std::int32_t l = 0; l < L && culprit < 0; ++l)
    if (is(l, LaneState::running) || state(l) == kSilent) culprit = l;
  const std::string secs = flight::seconds_text(opts_.timeout_s);
  if (culprit < 0) return "no rank finished a step within " + secs;

  const std::int32_t rank = culprit % R_;
  std::int32_t step = lanes[static_cast<std::size_t>(culprit)][1];
  std::vector<std::int32_t> waiting;
  for (std::int32_t l = 0; l < L; ++l) {
    const std::int32_t r = l % R_;
    if (r == rank || std::find(waiting.begin(), waiting.end(), r) != waiting.end()) continue;
    // In a step's barrier (observable mode) a lane waits for no one in particular.
    const bool at_barrier = is(l, LaneState::waiting) && lanes[static_cast<std::size_t>(l)][2] < 0;
    if ((is(l, LaneState::waiting) && end_of[static_cast<std::size_t>(l)] % R_ == rank) || at_barrier) {
      waiting.push_back(r);
      if (step < 0) step = lanes[static_cast<std::size_t>(l)][1];
    }
  }
  std::sort(waiting.begin(), waiting.end());
  const std::string where = step >= 0 ? flight::position_text(s_, recorder_.ops(), rank, step) : "an unknown step";
  const std::string tail = flight::waiting_for_it(waiting);
  const std::string host = job_.node_names[static_cast<std::size_t>(job_.node_of[static_cast<std::size_t>(rank)])];
  const std::string who = "rank " + std::to_string(rank) + " (pid " +
                          std::to_string(job_.pid_of[static_cast<std::size_t>(rank)]) + " on " + host + ")";
  const int how = dead[static_cast<std::size_t>(rank)];
  if (is(culprit, LaneState::crashed) || how == 1)
    return "rank " + std::to_string(rank) + " crashed at " + where + tail;
  if (how == 2) return who + " died at " + where + ": its process ended before the run did" + tail;
  if (state(culprit) == kSilent) return who + " stopped answering at " + where + tail;
  if (is(culprit, LaneState::running) && !timed_out) return who + " stopped at " + where + tail;
  if (is(culprit, LaneState::running))
    return "rank " + std::to_string(rank) + " did not finish " + where + " within " + secs + tail;
  return "rank " + std::to_string(rank) + " did not arrive at " + where + " within " + secs + tail;
}

void MpiSession::watchdog() {
  const double timeout_us = opts_.timeout_s > 0 ? opts_.timeout_s * 1e6 : 0.0;
  const auto slice = static_cast<std::int64_t>(timeout_us > 0 ? std::clamp(timeout_us / 20, 1000.0, 50000.0) : 50000.0);
  std::uint64_t last = 0;
  double since = 0, raised = -1;
  bool was_armed = false;
  auto beats = [&]() {
    std::uint64_t n = 0;
    for (std::int32_t l = 0; l < L_; ++l)
      if (local(l % R_)) n += slot(l).beat.load(std::memory_order_relaxed);
    return n;
  };
  while (!stop_.load()) {
    sleep_on(&wd_word_, wd_word_.load(), slice);
    if (stop_.load()) break;
    const double now = steady_us();
    if (local_abort_.load()) {
      // A failure was raised; the main thread normally comes to coordinate() at once. One
      // that does not is inside a call that will not return (a library collective whose
      // peer died): this process writes what it knows and ends.
      if (coordinating_.load()) continue;
      if (raised < 0) raised = now;
      if (now - raised < 3e6) continue;
      const std::string text = failure_text(
          failure_ && failure_->kind == "timeout",
          [&] {
            std::vector<std::array<std::int32_t, 3>> lanes;
            for (std::int32_t l = 0; l < L_; ++l) {
              if (!local(l % R_)) lanes.push_back({kSilent, -1, -1});
              else {
                const LaneSlot& x = slot(l);
                lanes.push_back({static_cast<std::int32_t>(x.state.load()), x.step.load(), x.waiting_on.load()});
              }
            }
            return lanes;
          }(),
          std::vector<int>(static_cast<std::size_t>(R_), 0));
      FlightRecord one = record_header();
      one.reason = text;
      one.ranks.push_back(my_flight_rank());
      const std::string path = own_record_path();
      const bool written = write_flight_record(path, one).ok();
      processes::own_error("error[backend.rank_failed] rank " + std::to_string(me_) + ": " + text +
                           (written ? "; flight record of rank " + std::to_string(me_) + ": " + path : ""));
      _exit(static_cast<int>(ExitCode::backend_failure));
    }
    const int a = armed_.load();
    if (a == 0) {
      was_armed = false;
      continue;
    }
    if (!was_armed) was_armed = true, last = beats(), since = now;
    if (terminate_requested.load()) {
      raise_failure("terminated", -1, -1, "the launcher ended the job (a process of it failed)");
      continue;
    }
    for (std::int32_t q = 0; q < R_; ++q) {
      if (q == me_ || !local(q)) continue;
      for (const std::int32_t lane : {q, R_ + q}) {
        if (lane >= L_) break;
        const LaneSlot& x = slot(lane);
        if (x.state.load() == static_cast<std::uint32_t>(LaneState::crashed))
          raise_failure("crashed", q, x.step.load(), "");
      }
      if (pid_gone(proc_of_rank(q)->pid.load())) raise_failure("died", q, slot(q).step.load(), "");
    }
    if (a == 2 && timeout_us > 0 && !local_abort_.load()) {
      const std::uint64_t b = beats();
      if (b != last) last = b, since = now;
      else if (now - since >= timeout_us) raise_failure("timeout", -1, -1, "");
    }
  }
}

std::string MpiSession::own_record_path() const {
  std::string base = opts_.flight_record_path;
  if (base.empty()) {
    const char* dir = std::getenv("TMPDIR");
    std::string d = dir && *dir ? dir : "/tmp";
    if (d.back() != '/') d += '/';
    const auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    base = d + "collscope-flight-" + std::to_string(getpid()) + "-" + std::to_string(ns);
  } else if (base.size() > 5 && base.substr(base.size() - 5) == ".json") {
    base.resize(base.size() - 5);
  }
  return base + ".rank" + std::to_string(me_) + ".json";
}

// Who is dead: 1 crashed (an injected fault), 2 died (its process ended), from the
// board and from the failure itself.
std::vector<int> MpiSession::find_dead(const Failure& f) const {
  std::vector<int> dead(static_cast<std::size_t>(R_), 0);
  for (std::int32_t q = 0; q < R_; ++q) {
    if (q == me_ || !local(q)) continue;
    if (slot(q).state.load() == static_cast<std::uint32_t>(LaneState::crashed)) dead[static_cast<std::size_t>(q)] = 1;
    else if (pid_gone(proc_of_rank(q)->pid.load())) dead[static_cast<std::size_t>(q)] = 2;
  }
  if ((f.kind == "crashed" || f.kind == "died") && f.rank >= 0 && f.rank != me_ &&
      !dead[static_cast<std::size_t>(f.rank)])
    dead[static_cast<std::size_t>(f.rank)] = f.kind == "crashed" ? 1 : 2;
  return dead;
}

// Tells every live process (those on other nodes have no board to see it on).
void MpiSession::send_notices(const Failure& f, const std::vector<int>& dead) {
  static std::vector<MPI_Request> notices;  // never waited for: the process exits soon
  static std::string notice_text;
  notice_text = f.kind + ": " + f.text;
  for (std::int32_t q = 0; q < R_; ++q) {
    if (q == me_ || dead[static_cast<std::size_t>(q)]) continue;
    MPI_Request r;
    if (MPI_Isend(notice_text.data(), static_cast<int>(notice_text.size()), MPI_CHAR, q, kNotice, job_.control, &r) ==
        MPI_SUCCESS)
      notices.push_back(r);
  }
}

// Receives every waiting message of `tag`; records (kRecord) are kept in records_.
void MpiSession::drain(int tag) {
  int flag = 0;
  MPI_Status st;
  while (MPI_Iprobe(MPI_ANY_SOURCE, tag, job_.control, &flag, &st) == MPI_SUCCESS && flag) {
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    std::string text(static_cast<std::size_t>(std::max(0, n)), '\0');
    MPI_Recv(text.data(), n, MPI_CHAR, st.MPI_SOURCE, tag, job_.control, MPI_STATUS_IGNORE);
    if (tag != kRecord) continue;
    try {
      auto j = nlohmann::json::parse(text);
      const auto from = j.at("rank").get<std::int32_t>();
      records_[from] = std::move(j);
    } catch (const std::exception&) {  // a damaged record counts as none
    }
  }
}

// Every lane's {state, step, waiting on}: from the board for this node, from the
// records received for the others (kSilent where there is none).
std::vector<std::array<std::int32_t, 3>> MpiSession::lanes_now() const {
  std::vector<std::array<std::int32_t, 3>> lanes(static_cast<std::size_t>(L_), {kSilent, -1, -1});
  for (std::int32_t l = 0; l < L_; ++l) {
    const std::int32_t r = l % R_;
    const std::size_t i = l >= R_ ? 1 : 0;
    if (local(r)) {
      const LaneSlot& x = slot(l);
      lanes[static_cast<std::size_t>(l)] = {static_cast<std::int32_t>(x.state.load()), x.step.load(),
                                            x.waiting_on.load()};
    } else if (auto it = records_.find(r); it != records_.end() && it->second["lanes"].size() > i) {
      lanes[static_cast<std::size_t>(l)] = it->second["lanes"][i].get<std::array<std::int32_t, 3>>();
    }
  }
  return lanes;
}

// A timeout, unless a rank crashed or died: what this process, its node or a record saw.
bool MpiSession::timed_out_now(const Failure& f, const std::vector<int>& dead) const {
  bool timeout = f.kind == "timeout" || (node_abort_ && node_abort_->abort.load() == 2);
  for (const auto& [r, rec] : records_) timeout = timeout || rec.value("kind", std::string()) == "timeout";
  for (int d : dead) timeout = timeout && d == 0;
  return timeout;
}

// Not the leader: hand the record to the leader and wait until it has reported, then
// exit. Without word from the leader this process writes its own record and says so.
void MpiSession::follow(const Failure& f, const std::vector<int>& dead, std::int32_t leader, bool terminating) {
  const std::string blob = record_blob();
  MPI_Request sent = MPI_REQUEST_NULL;
  MPI_Isend(blob.data(), static_cast<int>(blob.size()), MPI_CHAR, leader, kRecord, job_.control, &sent);
  const double until = steady_us() + (terminating ? 600e3 : 4e6);
  double gave_up = -1;
  while (steady_us() < until) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(leader, kDone, job_.control, &flag, &st) == MPI_SUCCESS && flag) {
      std::fflush(stdout);
      _exit(static_cast<int>(ExitCode::backend_failure));
    }
    drain(kNotice);
    drain(kRecord);
    int done = 0;
    MPI_Test(&sent, &done, MPI_STATUS_IGNORE);
    // The launcher is ending the job: the leader's word may still be on its way.
    if (terminate_requested.load() && !terminating) {
      if (gave_up < 0) gave_up = steady_us() + 300e3;
      else if (steady_us() > gave_up) break;
    }
    sleep_us(500);
  }
  const bool timed_out = timed_out_now(f, dead);
  const std::string text = failure_text(timed_out, lanes_now(), dead);
  FlightRecord one = record_header();
  one.reason = text;
  one.ranks.push_back(my_flight_rank());
  const std::string path = own_record_path();
  const bool written = write_flight_record(path, one).ok();
  processes::own_error(std::string(timed_out ? "error[backend.timeout] " : "error[backend.rank_failed] ") + "rank " +
                       std::to_string(me_) + ": " + text +
                       (written ? "; flight record of rank " + std::to_string(me_) + ": " + path : "") + " (rank " +
                       std::to_string(leader) + ", which merges the records, did not answer)");
  _exit(static_cast<int>(ExitCode::backend_failure));
}

// The leader: the others' records, briefly, merged into one flight record and one error.
Error MpiSession::lead(const Failure& f, const std::vector<int>& dead, bool terminating) {
  if (job_.saved_stderr >= 0) dup2(job_.saved_stderr, STDERR_FILENO);  // it reports now
  const double until = steady_us() + (terminating ? 400e3 : 1.5e6);
  auto missing = [&]() {
    for (std::int32_t q = 0; q < R_; ++q)
      if (q != me_ && !dead[static_cast<std::size_t>(q)] && !records_.count(q)) return true;
    return false;
  };
  while (missing() && steady_us() < until) {
    drain(kRecord);
    drain(kNotice);
    if (terminate_requested.load() && !terminating) break;
    sleep_us(300);
  }
  const auto lanes = lanes_now();
  bool timed_out = timed_out_now(f, dead);
  for (const auto& l : lanes) timed_out = timed_out && l[0] != static_cast<std::int32_t>(LaneState::crashed);
  merged_ = record_header();
  std::vector<std::int32_t> without;
  for (std::int32_t r = 0; r < R_; ++r) {
    if (r == me_) {
      merged_.ranks.push_back(my_flight_rank());
      continue;
    }
    FlightRank fr{r, "unknown", -1, -1, 0, {}};
    if (auto it = records_.find(r); it != records_.end()) {
      auto part = parse_flight_record(it->second.value("flight", std::string()), "rank " + std::to_string(r));
      if (part && !part->ranks.empty()) fr = part->ranks[0];
    } else {
      without.push_back(r);
      const auto& l = lanes[static_cast<std::size_t>(r)];
      if (l[0] != kSilent) fr.state = name_of(static_cast<LaneState>(l[0])), fr.step = l[1];
      if (dead[static_cast<std::size_t>(r)]) fr.state = "crashed";
    }
    merged_.ranks.push_back(fr);
  }
  std::string text = failure_text(timed_out, lanes, dead);
  if (f.kind == "mpi" && !f.text.empty()) text += " (" + f.text + ")";
  if (!without.empty()) text += " (" + ranks_text(without) + " left no flight record)";
  merged_.reason = text;
  error_ = timed_out ? make_error("backend.timeout", text,
                                  "the run was aborted; a rank that is only slow needs a longer --timeout", {},
                                  ExitCode::backend_failure)
                     : make_error("backend.rank_failed", text, "the run was aborted; the other processes were stopped",
                                  {}, ExitCode::backend_failure);
  job_.failed = true;
  // finish() says goodbye only to those that answered: the others may be dead.
  job_.alive.clear();
  for (const auto& [r, rec] : records_) job_.alive.push_back(r);
  // For the launching collscope (app/mpi_launch.cpp): the job has reported its failure.
  if (const char* dir = std::getenv("COLLSCOPE_JOB_DIR"); dir && *dir) {
    std::ofstream out(std::string(dir) + "/outcome");
    out << static_cast<int>(ExitCode::backend_failure) << "\n";
  }
  return *error_;
}

// After a failure every live process comes here: the first live rank leads (merges
// the records and reports), the others follow (hand it their record, then exit).
Error MpiSession::coordinate() {
  if (error_) return *error_;
  coordinating_.store(true);
  armed_.store(0);
  Failure f;
  {
    std::lock_guard<std::mutex> lock(fail_m_);
    f = failure_ ? *failure_ : Failure{"peer", -1, -1, "a process on this node stopped the run"};
  }
  raise_failure(f.kind, f.rank, f.step, f.text);  // (again: releases this node's lanes, if not yet)
  const bool terminating = terminate_requested.load() != 0;
  // The compute lane returns from its wait at once; its flight ring is read only after.
  for (int i = 0; i < 2000 && compute_busy_.load(); ++i) sleep_us(100);

  const std::vector<int> dead = find_dead(f);
  std::int32_t leader = 0;
  while (leader < R_ && dead[static_cast<std::size_t>(leader)]) ++leader;
  // Unless the launcher is ending the job: then every process has its SIGTERM already,
  // and a message to a process that died may stall in the library (a TCP connection
  // to a dead peer).
  if (!terminating) send_notices(f, dead);
  if (leader != me_) follow(f, dead, leader, terminating);  // does not return
  return lead(f, dead, terminating);
}

}  // namespace collscope::mpi
