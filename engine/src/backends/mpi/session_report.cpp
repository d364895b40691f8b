// The mpi backend's session, what rank 0 reports (session.h): the transfers' timings,
// the job's description, and the flight record.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backends/mpi/session.h"
#include "collscope/processes.h"

namespace collscope::mpi {

namespace {

// "0-3, 8, 10-11": ranks as ranges.
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
  if (job_.size > 1 && std::all_of(job_.core_of.begin(), job_.core_of.end(), [](int c) { return c >= 0; }))
    d += "; each process kept on one core";
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
