// The IR checker on hand-made schedules: correct ones pass, broken ones are caught
// with messages that name the step, the rank and the element.
#include <doctest/doctest.h>

#include "collscope/algorithms.h"
#include "collscope/verify.h"
#include "hand_schedules.h"

using namespace collscope;
using namespace collscope::testing;

TEST_CASE("verify: a correct hand-made allreduce passes") {
  auto s = two_rank_allreduce(4);
  // Both ranks receive the other's vector into scratch, then add it.
  add_step(s, {copy(0, 0, 0, 1, 1, 0, 4), copy(1, 0, 0, 0, 1, 0, 4)});
  add_step(s, {reduce(0, 1, 0, 0, 0, 0, 4), reduce(1, 1, 0, 1, 0, 0, 4)});
  auto st = verify_symbolic(s);
  CHECK_MESSAGE(st.ok(), (st.ok() ? "" : st.error().format()));
}

TEST_CASE("verify: a race inside one step is caught and names both transfers") {
  auto s = two_rank_allreduce(4);
  // Each rank adds the other's x straight into its own x in the same step: rank 0
  // writes x while rank 1 reads it.
  add_step(s, {reduce(1, 0, 0, 0, 0, 0, 4), reduce(0, 0, 0, 1, 0, 0, 4)});
  auto st = verify_symbolic(s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().id == "verify.conflict");
  const auto msg = st.error().format();
  CHECK(msg.find("step 0") != std::string::npos);
  CHECK(msg.find("transfer 0") != std::string::npos);
  CHECK(msg.find("transfer 1") != std::string::npos);
  CHECK(msg.find("rank 0 x[0]") != std::string::npos);
}

TEST_CASE("verify: a conflict between two ops' transfers points at one op and names the other") {
  auto s = two_rank_allreduce(8);
  add_step(s, {copy(0, 0, 0, 1, 1, 0, 4), copy(0, 0, 4, 1, 1, 3, 4)});  // writes [0,4) and [3,7)
  OpRecord a, b;
  a.op = b.op = "recv";
  a.rank = b.rank = 1;
  a.pointer = "/program/1";
  a.transfers = {{0, 0}};
  b.pointer = "/program/2";
  b.transfers = {{0, 1}};
  s.ops = {a, b};
  auto st = check_conflicts(s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().id == "verify.conflict");
  CHECK(st.error().where.pointer == "/program/2");  // the transfer that runs into the other
  CHECK(st.error().message.find("transfer 0 comes from /program/1") != std::string::npos);
  // One op's own transfers: nothing more to name.
  s.ops = {a};
  s.ops[0].transfers = {{0, 0}, {0, 1}};
  st = check_conflicts(s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().where.pointer == "/program/1");
  CHECK(st.error().message.find("comes from") == std::string::npos);
}

TEST_CASE("verify: a partial overlap is a conflict, disjoint slices are not") {
  auto s = two_rank_allreduce(8);
  add_step(s, {copy(0, 0, 0, 1, 1, 0, 4), copy(0, 0, 4, 1, 1, 3, 4)});  // writes [0,4) and [3,7)
  auto st = check_conflicts(s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.find("rank 1 ~tmp[3]") != std::string::npos);

  auto ok = two_rank_allreduce(8);
  add_step(ok, {copy(0, 0, 0, 1, 1, 0, 4), copy(0, 0, 0, 1, 1, 4, 4)});  // two readers of one slice: fine
  CHECK(check_conflicts(ok).ok());
}

TEST_CASE("verify: a double count names the step, rank and element") {
  auto s = two_rank_allreduce(4);
  add_step(s, {copy(0, 0, 0, 1, 1, 0, 4), copy(1, 0, 0, 0, 1, 0, 4)});
  add_step(s, {reduce(0, 1, 0, 0, 0, 0, 4), reduce(1, 1, 0, 1, 0, 0, 4)});
  // Rank 0 adds rank 1's data a second time.
  add_step(s, {reduce(0, 1, 2, 0, 0, 2, 2)});
  auto st = verify_symbolic(s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().id == "verify.double_count");
  const auto msg = st.error().message;
  CHECK(msg.find("step 2") != std::string::npos);
  CHECK(msg.find("rank 0 x[2]") != std::string::npos);
  CHECK(msg.find("rank 1's x[2] twice") != std::string::npos);
}

TEST_CASE("verify: a missing contribution and a wrong destination are reported") {
  auto s = two_rank_allreduce(4);
  // Only rank 1 learns rank 0's data.
  add_step(s, {copy(0, 0, 0, 1, 1, 0, 4)});
  add_step(s, {reduce(1, 1, 0, 1, 0, 0, 4)});
  auto st = verify_symbolic(s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().id == "verify.missing_contribution");
  CHECK(st.error().message.find("rank 0 x[0] lacks the contribution of rank 1's x[0]") != std::string::npos);

  auto w = two_rank_allreduce(4);
  add_step(w, {copy(0, 0, 0, 1, 1, 0, 4), copy(1, 0, 0, 0, 1, 0, 4)});
  // Rank 1 adds rank 0's elements shifted by one: a wrong destination.
  add_step(w, {reduce(0, 1, 0, 0, 0, 0, 4), reduce(1, 1, 0, 1, 0, 1, 3), reduce(1, 1, 3, 1, 0, 0, 1)});
  auto st2 = verify_symbolic(w);
  REQUIRE_FALSE(st2.ok());
  CHECK(st2.error().id == "verify.missing_contribution");
  CHECK(st2.error().message.find("rank 1 x[0]") != std::string::npos);
}

TEST_CASE("verify: out-of-bounds transfers are rejected before anything runs") {
  auto s = two_rank_allreduce(4);
  add_step(s, {copy(0, 0, 2, 1, 1, 0, 4)});
  auto st = verify_symbolic(s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().id == "verify.out_of_bounds");
}

TEST_CASE("verify: average must divide exactly once, after the full sum") {
  auto s = two_rank_allreduce(2);
  s.calls.back().args.op = ReduceOp::avg;
  add_step(s, {copy(0, 0, 0, 1, 1, 0, 2), copy(1, 0, 0, 0, 1, 0, 2)});
  add_step(s, {reduce(0, 1, 0, 0, 0, 0, 2), reduce(1, 1, 0, 1, 0, 0, 2)});
  auto no_div = verify_symbolic(s);
  REQUIRE_FALSE(no_div.ok());
  CHECK(no_div.error().message.find("never divided") != std::string::npos);
  add_step(s,
           {Transfer{{0, 0, 0}, {0, 0, 0}, 2, Action::scale, 2}, Transfer{{1, 0, 0}, {1, 0, 0}, 2, Action::scale, 2}});
  auto ok = verify_symbolic(s);
  CHECK_MESSAGE(ok.ok(), (ok.ok() ? "" : ok.error().format()));
}

TEST_CASE("verify: a reduce-copy adds the receiver's own piece, and its misuses are caught") {
  // Each rank writes (its own x) + (the other's x) into its scratch, then copies it back.
  auto s = two_rank_allreduce(4);
  add_step(s, {reduce_copy(1, 0, 0, 0, 0, 0, 0, 1, 0, 4), reduce_copy(0, 0, 0, 1, 0, 0, 1, 1, 0, 4)});
  add_step(s, {copy(0, 1, 0, 0, 0, 0, 4), copy(1, 1, 0, 1, 0, 0, 4)});
  auto st = verify_symbolic(s);
  CHECK_MESSAGE(st.ok(), (st.ok() ? "" : st.error().format()));

  // Its second operand must live on the receiving rank.
  auto far = two_rank_allreduce(4);
  add_step(far, {reduce_copy(1, 0, 0, 1, 0, 0, 0, 1, 0, 4)});
  auto f = verify_symbolic(far);
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().id == "verify.out_of_bounds");
  CHECK(f.error().message.find("rank 1 x[0:4] + rank 1 x[0:4] -> rank 0 ~tmp[0:4]") != std::string::npos);
  CHECK(f.error().message.find("receiving rank's own memory (rank 0), not of rank 1") != std::string::npos);

  // Its second operand may not overlap what it writes.
  auto self = two_rank_allreduce(4);
  add_step(self, {reduce_copy(1, 0, 0, 0, 1, 0, 0, 1, 1, 2)});
  auto o = check_conflicts(self);
  REQUIRE_FALSE(o.ok());
  CHECK(o.error().message.find("reads and writes overlapping memory at rank 0 ~tmp[1]") != std::string::npos);

  // Another transfer of the step may not write it: a race on the second operand.
  auto race = two_rank_allreduce(4);
  add_step(race, {reduce_copy(1, 0, 0, 0, 0, 0, 0, 1, 0, 4), copy(1, 0, 0, 0, 0, 0, 4)});
  auto r = check_conflicts(race);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().id == "verify.conflict");
  CHECK(r.error().message.find("transfer 1 (rank 1 x[0:4] -> rank 0 x[0:4]) writes rank 0 x[0] which transfer 0") !=
        std::string::npos);

  // Adding a sum that already holds the source counts the source twice.
  auto twice = two_rank_allreduce(4);
  add_step(twice, {reduce_copy(1, 0, 0, 0, 0, 0, 0, 1, 0, 4)});
  add_step(twice, {reduce_copy(1, 0, 0, 0, 1, 0, 0, 0, 0, 4)});
  auto t = verify_symbolic(twice);
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().id == "verify.double_count");
  CHECK(t.error().message.find("step 1") != std::string::npos);
  CHECK(t.error().message.find("rank 1's x[0] twice") != std::string::npos);
}

TEST_CASE("verify: symbolic state exposes the contribution sets step by step") {
  auto s = two_rank_allreduce(3);
  add_step(s, {copy(0, 0, 0, 1, 1, 0, 3), copy(1, 0, 0, 0, 1, 0, 3)});
  add_step(s, {reduce(0, 1, 0, 0, 0, 0, 3), reduce(1, 1, 0, 1, 0, 0, 3)});
  SymbolicState st(s, 0);
  auto c0 = st.contents(0, 0, 2);
  REQUIRE(c0.size() == 1);
  CHECK(c0[0].ranks == std::vector<std::int32_t>{0});
  CHECK(c0[0].index == 2);
  REQUIRE(st.advance().ok());
  REQUIRE(st.advance().ok());
  CHECK(st.done());
  auto c1 = st.contents(1, 0, 2);
  REQUIRE(c1.size() == 1);
  CHECK(c1[0].ranks == std::vector<std::int32_t>{0, 1});
  CHECK(st.check_postcondition().ok());
}
