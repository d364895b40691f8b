// Checks of program order shared by the tests: which ops of a rank must complete
// before which, and whether the dependencies and the measured times respect that.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "collscope/program.h"
#include "collscope/run.h"
#include "ir/deps.h"

namespace collscope::testing {

// Every (step, transfer) an op owns: its own transfers, or for a collective or a
// written step every transfer of its steps that touches its rank.
inline std::vector<std::pair<std::int32_t, std::int32_t>> owned(const Schedule& s, const OpRecord& op) {
  if (!op.spans_steps) return op.transfers;
  std::vector<std::pair<std::int32_t, std::int32_t>> out;
  for (std::int32_t k = op.first_step; k >= 0 && k <= op.last_step; ++k) {
    const auto& ts = s.steps[static_cast<std::size_t>(k)].transfers;
    for (std::size_t t = 0; t < ts.size(); ++t)
      if (ts[t].src.rank == op.rank || ts[t].dst.rank == op.rank) out.emplace_back(k, static_cast<std::int32_t>(t));
  }
  return out;
}

// Pairs (a, b) of one rank's records, a before b in program order, where a must have
// completed before b starts: a is blocking, or a wait between them completed a. The
// ops of a custom algorithm's body stand in its call's place; towards the ops after
// the call, they complete with the call.
inline std::vector<std::pair<std::size_t, std::size_t>> ordered_pairs(const Schedule& s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::vector<std::vector<std::size_t>> kids(s.ops.size());
  for (std::size_t i = 0; i < s.ops.size(); ++i)
    if (s.ops[i].parent >= 0) kids[static_cast<std::size_t>(s.ops[i].parent)].push_back(i);
  for (std::int32_t r = 0; r < s.ranks; ++r) {
    std::vector<std::size_t> seq;  // rank r's ops in program order, bodies in their calls' place
    for (std::size_t i = 0; i < s.ops.size(); ++i) {
      if (s.ops[i].rank != r || s.ops[i].parent >= 0) continue;
      if (kids[i].empty()) seq.push_back(i);
      else seq.insert(seq.end(), kids[i].begin(), kids[i].end());
    }
    auto completed_between = [&](std::size_t rec, std::size_t x, std::size_t y) {
      for (std::size_t w = x + 1; w < y; ++w) {
        const auto& c = s.ops[seq[w]].completes;
        if (std::find(c.begin(), c.end(), static_cast<std::int32_t>(rec)) != c.end()) return true;
      }
      return false;
    };
    for (std::size_t x = 0; x < seq.size(); ++x)
      for (std::size_t y = x + 1; y < seq.size(); ++y) {
        const OpRecord& a = s.ops[seq[x]];
        const OpRecord& b = s.ops[seq[y]];
        // Leaving a call's body: the call decides.
        const std::size_t judge = a.parent >= 0 && a.parent != b.parent ? static_cast<std::size_t>(a.parent) : seq[x];
        const bool before = s.ops[judge].order == OpOrder::blocking || completed_between(judge, x, y);
        if (before) out.emplace_back(seq[x], seq[y]);
      }
  }
  return out;
}

// known[lane][step][other]: the latest step of `other` that `lane` knows has finished
// when it starts `step`, through the chain of what it waited for (one iteration).
using Known = std::vector<std::vector<std::vector<std::int32_t>>>;
inline Known happens_before(const Schedule& s) {
  const auto deps = dataflow::compute_deps(s);
  const std::size_t lanes = deps.size(), S = s.steps.size();
  Known known(lanes, std::vector<std::vector<std::int32_t>>(S, std::vector<std::int32_t>(lanes, -1)));
  for (std::size_t k = 0; k < S; ++k)
    for (std::size_t l = 0; l < lanes; ++l) {
      auto& kn = known[l][k];
      if (k > 0) {
        kn = known[l][k - 1];
        kn[l] = static_cast<std::int32_t>(k - 1);
      }
      for (const auto& d : deps[l][k]) {
        if (d.step < 0) continue;
        const auto q = static_cast<std::size_t>(d.rank);
        kn[q] = std::max(kn[q], d.step);
        const auto& theirs = known[q][static_cast<std::size_t>(d.step)];
        for (std::size_t o = 0; o < lanes; ++o) kn[o] = std::max(kn[o], theirs[o]);
      }
    }
  return known;
}

// The dependencies order every transfer of b after every transfer of a, for every
// ordered pair. Returns the number of transfer pairs checked.
inline std::size_t check_order_in_deps(const Schedule& s) {
  const Known known = happens_before(s);
  std::size_t checked = 0;
  for (const auto& [ia, ib] : ordered_pairs(s))
    for (const auto& [ka, ta] : owned(s, s.ops[ia]))
      for (const auto& [kb, tb] : owned(s, s.ops[ib])) {
        const auto la =
            dataflow::lane_of(s, s.steps[static_cast<std::size_t>(ka)].transfers[static_cast<std::size_t>(ta)]);
        const auto lb =
            dataflow::lane_of(s, s.steps[static_cast<std::size_t>(kb)].transfers[static_cast<std::size_t>(tb)]);
        ++checked;
        REQUIRE_MESSAGE(kb > ka, "rank " << s.ops[ia].rank << ": " << s.ops[ib].text
                                         << " shares or precedes the steps of " << s.ops[ia].text);
        const bool seen =
            la == lb ||
            known[static_cast<std::size_t>(lb)][static_cast<std::size_t>(kb)][static_cast<std::size_t>(la)] >= ka;
        CHECK_MESSAGE(seen, "rank " << s.ops[ia].rank << ": " << s.ops[ib].text << " (step " << kb << ", lane " << lb
                                    << ") may start before " << s.ops[ia].text << " (step " << ka << ", lane " << la
                                    << ") has completed");
      }
  return checked;
}

// Measured: every ordered pair's times do not overlap. Returns the pairs checked.
inline std::size_t check_order_in_times(const Schedule& s, const RunRecord& rec) {
  const auto times = op_timings(s, rec);
  std::size_t checked = 0;
  for (const auto& [a, b] : ordered_pairs(s)) {
    if (!times[a].timed || !times[b].timed) continue;
    ++checked;
    CHECK_MESSAGE(times[b].t0_us >= times[a].t1_us, "rank " << s.ops[a].rank << ": " << s.ops[b].text << " started at "
                                                            << times[b].t0_us << " us, before " << s.ops[a].text
                                                            << " completed at " << times[a].t1_us << " us");
  }
  return checked;
}

}  // namespace collscope::testing
