// Lowering one collective call for the algorithm tests: a case, its description,
// the schedule with the buffers the call needs, and the checks every step must pass.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "collscope/run.h"
#include "collscope/scenario.h"
#include "collscope/verify.h"

namespace collscope::testing {

struct AlgoCase {
  Collective coll = Collective::allreduce;
  std::string algo;
  std::int32_t ranks = 1;
  std::uint64_t count = 0;
  std::int32_t root = 0;
  bool in_place = false;
  std::vector<std::int32_t> world_rank;          // empty: the group is the whole world
  std::int32_t world = 0;                        // world size when world_rank is used
  std::int32_t ranks_per_node = 0;               // node boundaries (Schedule::ranks_per_node); 0: one node
  std::uint64_t slice_bytes = kCacheSliceBytes;  // Schedule::slice_bytes (0: a backend that does not slice)
};

inline std::string describe(const AlgoCase& c) {
  std::string s = std::string(name_of(c.coll)) + " " + c.algo + " ranks=" + std::to_string(c.ranks) +
                  " count=" + std::to_string(c.count) + " root=" + std::to_string(c.root) +
                  (c.in_place ? " in place" : " out of place");
  if (!c.world_rank.empty()) s += " on a group of a world of " + std::to_string(c.world);
  if (c.ranks_per_node > 0) s += ", nodes of " + std::to_string(c.ranks_per_node);
  return s;
}

// A schedule with the user buffers the call needs ("in" and "out" sized by shape_of,
// or one buffer big enough for both in place) and the call lowered into it.
inline Schedule lower(const AlgoCase& c) {
  const std::int32_t world = c.world_rank.empty() ? c.ranks : c.world;
  Schedule s;
  s.ranks = world;
  s.dtype = DType::float32;
  s.ranks_per_node = c.ranks_per_node;
  s.slice_bytes = c.slice_bytes;
  BufferDecl in{"in", std::vector<std::uint64_t>(static_cast<std::size_t>(world), 0), false};
  BufferDecl out{"out", std::vector<std::uint64_t>(static_cast<std::size_t>(world), 0), false};
  for (std::int32_t g = 0; g < c.ranks; ++g) {
    const auto w = static_cast<std::size_t>(c.world_rank.empty() ? g : c.world_rank[static_cast<std::size_t>(g)]);
    const CollectiveShape sh = shape_of(c.coll, c.ranks, g, c.root, c.count);
    if (c.in_place) {
      in.count[w] = std::max(sh.in_count, sh.out_count);
    } else {
      in.count[w] = sh.in_count;
      out.count[w] = sh.out_count;
    }
  }
  s.buffers.push_back(in);
  if (!c.in_place) s.buffers.push_back(out);

  CollArgs a;
  a.coll = c.coll;
  a.ranks = c.ranks;
  a.count = c.count;
  a.root = c.root;
  a.op = ReduceOp::sum;
  a.dtype = DType::float32;
  a.in_buf = 0;
  a.out_buf = c.in_place ? 0 : 1;
  a.in_place = c.in_place;
  a.world_rank = c.world_rank;
  const Status st = lower_call(s, a, c.algo);
  REQUIRE_MESSAGE(st.ok(), describe(c) << ": " << (st.ok() ? "" : st.error().format()));
  return s;
}

inline void check_captions(const Schedule& s, const AlgoCase& c) {
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    INFO(describe(c) << " step " << i << ": " << st.caption);
    CHECK(!st.phase.empty());
    CHECK(!st.caption.empty());
    CHECK(st.caption.size() < 140);
    CHECK(!st.transfers.empty());
  }
}

inline void check_verified(const Schedule& s, const AlgoCase& c) {
  const Status st = verify_symbolic(s);
  CHECK_MESSAGE(st.ok(), describe(c) << ": " << (st.ok() ? "" : st.error().format()));
}

// A scenario's schedule run in fast mode and in observable mode (no snapshots), each
// from the scenario's own inputs and verified; both runs must complete.
struct BothModes {
  RunOutcome fast, observable;
};
inline BothModes run_both_modes(const Scenario& sc, const Schedule& s) {
  auto init = [&sc](std::int32_t b, std::int32_t r, std::uint64_t i) {
    return b < static_cast<std::int32_t>(sc.buffers.size())
               ? initial_value(sc.buffers[static_cast<std::size_t>(b)], r, i)
               : 0.0;
  };
  RunOptions fast, obs;
  obs.mode = RunMode::observable;
  obs.snapshot_budget = 0;
  auto x = execute(s, init, fast);
  auto y = execute(s, init, obs);
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  return {std::move(*x), std::move(*y)};
}

}  // namespace collscope::testing
