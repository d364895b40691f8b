// The cpu watchdog's verdict (blame.h).
#include "backends/cpu/blame.h"

#include <algorithm>

#include "backends/flight.h"

namespace collscope::cpu {

namespace {

bool inside_a_step(const LaneSnapshot& x) {
  return x.state != LaneState::idle && x.state != LaneState::finished && x.state != LaneState::waiting;
}

std::int32_t first_in(const std::vector<LaneSnapshot>& lanes, LaneState want) {
  for (std::size_t l = 0; l < lanes.size(); ++l)
    if (lanes[l].state == want) return static_cast<std::int32_t>(l);
  return -1;
}

// Fast mode: the lane at the end of most wait-for chains, -1 when no lane waits.
std::int32_t most_waited_for(const std::vector<LaneSnapshot>& lanes, const std::vector<std::int32_t>& ends) {
  std::vector<std::int32_t> votes(lanes.size(), 0);
  for (std::size_t l = 0; l < lanes.size(); ++l)
    if (lanes[l].state == LaneState::waiting) ++votes[static_cast<std::size_t>(ends[l])];
  const auto most = std::max_element(votes.begin(), votes.end());
  return most != votes.end() && *most > 0 ? static_cast<std::int32_t>(most - votes.begin()) : -1;
}

Conduct conduct_of(LaneState s) {
  switch (s) {
    case LaneState::crashed:
      return Conduct::crashed;
    case LaneState::hung:
      return Conduct::hung;
    case LaneState::running:
      return Conduct::late;
    default:
      return Conduct::absent;
  }
}

}  // namespace

const char* name_of(Conduct c) {
  switch (c) {
    case Conduct::nobody:
      return "nobody";
    case Conduct::crashed:
      return "crashed";
    case Conduct::hung:
      return "hung";
    case Conduct::late:
      return "late";
    case Conduct::absent:
      return "absent";
  }
  return "nobody";
}

std::vector<std::int32_t> chain_ends(const std::vector<LaneSnapshot>& lanes) {
  const auto L = static_cast<std::int32_t>(lanes.size());
  std::vector<std::int32_t> ends(lanes.size(), -1);
  auto waits = [&](std::int32_t x) {
    const LaneSnapshot& s = lanes[static_cast<std::size_t>(x)];
    return s.state == LaneState::waiting && s.waiting_on >= 0 && s.waiting_on < L;
  };
  for (std::int32_t l = 0; l < L; ++l) {
    std::int32_t x = l;
    for (std::int32_t hops = 0; hops <= L && waits(x); ++hops) x = lanes[static_cast<std::size_t>(x)].waiting_on;
    ends[static_cast<std::size_t>(l)] = x;
  }
  return ends;
}

Blame find_blame(const std::vector<LaneSnapshot>& lanes, std::int32_t ranks, bool fast) {
  Blame b;
  if (lanes.empty() || ranks <= 0) return b;
  const std::vector<std::int32_t> ends = chain_ends(lanes);
  std::int32_t culprit = first_in(lanes, LaneState::crashed);
  if (culprit < 0) culprit = first_in(lanes, LaneState::hung);
  if (culprit < 0 && fast) culprit = most_waited_for(lanes, ends);
  for (std::size_t l = 0; l < lanes.size() && culprit < 0; ++l)
    if (inside_a_step(lanes[l])) culprit = static_cast<std::int32_t>(l);
  if (culprit < 0) return b;

  const LaneSnapshot& c = lanes[static_cast<std::size_t>(culprit)];
  b.lane = culprit;
  b.rank = culprit % ranks;
  b.step = std::max(0, c.step);
  b.conduct = conduct_of(c.state);
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    const std::int32_t r = static_cast<std::int32_t>(l) % ranks;
    if (r == b.rank || std::find(b.waiting.begin(), b.waiting.end(), r) != b.waiting.end()) continue;
    const LaneSnapshot& x = lanes[l];
    // Observable mode: the others wait at the step's barrier. Fast mode: those whose
    // wait-for chain ends at the culprit.
    const bool waits = fast ? x.state == LaneState::waiting && ends[l] % ranks == b.rank : x.state == LaneState::idle;
    if (waits) b.waiting.push_back(r);
  }
  std::sort(b.waiting.begin(), b.waiting.end());
  return b;
}

std::string blame_message(const Blame& b, const std::string& where, double timeout_s) {
  const std::string secs = flight::seconds_text(timeout_s);
  if (b.conduct == Conduct::nobody) return "no rank finished a step within " + secs;
  const std::string who = "rank " + std::to_string(b.rank);
  const std::string tail = flight::waiting_for_it(b.waiting);
  switch (b.conduct) {
    case Conduct::crashed:
      return who + " crashed at " + where + tail;
    case Conduct::late:
      return who + " did not finish " + where + " within " + secs + tail;
    default:
      return who + " did not arrive at " + where + " within " + secs + tail;
  }
}

}  // namespace collscope::cpu
