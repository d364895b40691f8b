// Hand-written schedules for tests: small, exact, and easy to break on purpose.
#pragma once

#include <vector>

#include "collscope/schedule.h"

namespace collscope::testing {

// Two ranks, one buffer "x" of `n` elements each, one in-place allreduce call whose
// steps the test writes by hand.
inline Schedule two_rank_allreduce(std::uint64_t n) {
  Schedule s;
  s.ranks = 2;
  s.buffers.push_back({"x", {n, n}, false});
  s.buffers.push_back({"~tmp", {n, n}, true});
  Call c;
  c.args.coll = Collective::allreduce;
  c.args.ranks = 2;
  c.args.count = n;
  c.args.in_buf = c.args.out_buf = 0;
  c.args.in_place = true;
  c.algorithm = "by hand";
  s.calls.push_back(c);
  return s;
}

// `ranks` ranks, one buffer "x" of `n` elements each, and no calls: what the cost model
// needs of a schedule (its steps are added with add_plain_step).
inline Schedule model_world(std::int32_t ranks, std::uint64_t n) {
  Schedule s;
  s.ranks = ranks;
  s.buffers.push_back({"x", std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), n), false});
  return s;
}

// A step of `ts` with no phase or caption, and no call to count it in.
inline void add_plain_step(Schedule& s, std::vector<Transfer> ts) {
  Step st;
  st.transfers = std::move(ts);
  s.steps.push_back(std::move(st));
}

inline void add_step(Schedule& s, std::vector<Transfer> ts) {
  Step st;
  st.phase = "hand";
  st.caption = "hand-written";
  st.transfers = std::move(ts);
  s.steps.push_back(std::move(st));
  s.calls.back().num_steps = static_cast<std::int32_t>(s.steps.size());
}

inline Transfer copy(std::int32_t sr, std::int32_t sb, std::uint64_t so, std::int32_t dr, std::int32_t db,
                     std::uint64_t dof, std::uint64_t n) {
  return Transfer{{sr, sb, so}, {dr, db, dof}, n, Action::copy, 1};
}
inline Transfer reduce(std::int32_t sr, std::int32_t sb, std::uint64_t so, std::int32_t dr, std::int32_t db,
                       std::uint64_t dof, std::uint64_t n) {
  return Transfer{{sr, sb, so}, {dr, db, dof}, n, Action::reduce, 1};
}

// dst = aux (op) src.
inline Transfer reduce_copy(std::int32_t sr, std::int32_t sb, std::uint64_t so, std::int32_t ar, std::int32_t ab,
                            std::uint64_t ao, std::int32_t dr, std::int32_t db, std::uint64_t dof, std::uint64_t n) {
  Transfer t{{sr, sb, so}, {dr, db, dof}, n, Action::reduce_copy, 1};
  t.aux = {ar, ab, ao};
  return t;
}

}  // namespace collscope::testing
