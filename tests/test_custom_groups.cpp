// Custom algorithms called on a group: inside the body, rank and size are the group's,
// the body runs only on the group's members (once per part of a split), and peers and
// written ranks map onto world ranks. Splits and lists, in fast and observable mode.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "program_helpers.h"

using namespace collscope;
using namespace collscope::testing;

namespace {

// A ring all-reduce with one element per rank of the group, written with isend, recv,
// accumulate and wait in the group's own terms, as a student writes it for the world.
const char* kRingBody = R"([
  {"op": "repeat", "times": "size - 1", "var": "i", "body": [
    {"op": "isend", "buffer": "x", "offset": "(rank - i) % size", "count": 1, "to": "(rank + 1) % size", "request": "o"},
    {"op": "recv", "buffer": "t", "count": 1, "from": "(rank - 1) % size"},
    {"op": "accumulate", "src": {"buffer": "t", "count": 1}, "dst": {"buffer": "x", "offset": "(rank - i - 1) % size", "count": 1}},
    {"op": "wait", "request": "o"}]},
  {"op": "repeat", "times": "size - 1", "var": "i", "body": [
    {"op": "isend", "buffer": "x", "offset": "(rank + 1 - i) % size", "count": 1, "to": "(rank + 1) % size", "request": "o"},
    {"op": "recv", "buffer": "x", "offset": "(rank - i) % size", "count": 1, "from": "(rank - 1) % size"},
    {"op": "wait", "request": "o"}]}])";

// The same all-reduce as written steps: everyone copies x into t, then everyone adds
// the copies of every other rank of the group, one partner per step.
const char* kStepBody = R"([
  {"op": "step", "phase": "copy", "caption": "keep a copy",
   "transfers": [{"ranks": "all", "from": {"rank": "rank", "buffer": "x"}, "to": {"rank": "rank", "buffer": "t"}}]},
  {"op": "repeat", "times": "size - 1", "var": "k", "body": [
    {"op": "step", "phase": "add", "caption": "add a partner's copy",
     "transfers": [{"ranks": "all", "from": {"rank": "(rank + k + 1) % size", "buffer": "t"},
                    "to": {"rank": "rank", "buffer": "x"}, "action": "reduce"}]}]}])";

std::string custom_call(const std::string& group, const char* body) {
  return R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "group": ")" + group + R"(", "body": )" + body +
         "}";
}

// Runs an all-reduce of x on every part of `groups` (JSON) through `body`, checks it in
// both modes against the sums every part must hold, and that the body ran on members only.
void check_parts(int world, const std::string& groups_json, const std::vector<std::vector<int>>& parts,
                 std::uint64_t count, const char* body) {
  const std::string bufs = R"("x": {"count": )" + std::to_string(count) +
                           R"(, "init": "rank_index"}, "t": {"count": )" + std::to_string(count) +
                           R"(, "scratch": true})";
  const std::string text =
      program_text(world, bufs, custom_call("g", body), R"(, "groups": {"g": )" + groups_json + "}");
  CAPTURE(text);
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    CAPTURE(static_cast<int>(mode));
    const ProgramRun p = run_program(text, mode);
    CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
    std::set<int> in_a_part;
    for (const auto& part : parts)
      for (std::uint64_t i = 0; i < count; ++i) {
        int sum = 0;
        for (int r : part) sum += 100 * r + static_cast<int>(i);
        for (int r : part) {
          in_a_part.insert(r);
          CHECK(int_at(p.outcome, 0, r, i) == sum);
        }
      }
    for (int r = 0; r < world; ++r)
      if (!in_a_part.count(r))
        for (std::uint64_t i = 0; i < count; ++i) CHECK(int_at(p.outcome, 0, r, i) == 100 * r + static_cast<int>(i));
    // The body's ops ran on members only, each once: one record per op per member and
    // iteration, and every one of them belongs to a member of exactly one part.
    std::map<int, int> body_ops;
    for (const auto& op : p.schedule.ops)
      if (op.pointer.find("/body") != std::string::npos) ++body_ops[op.rank];
    for (const auto& [rank, n] : body_ops) {
      CHECK(in_a_part.count(rank) == 1);
      CHECK(n > 0);
    }
    std::set<int> seen_ranks;
    for (const auto& [rank, n] : body_ops) seen_ranks.insert(rank);
    CHECK(seen_ranks == in_a_part);
    // Every transfer of the schedule stays inside one part.
    for (const auto& st : p.schedule.steps)
      for (const auto& t : st.transfers) {
        bool inside = false;
        for (const auto& part : parts)
          inside = inside || (std::count(part.begin(), part.end(), t.src.rank) &&
                              std::count(part.begin(), part.end(), t.dst.rank));
        CHECK(inside);
      }
  }
}

}  // namespace

TEST_CASE("custom algorithms on a split group: every part runs the body with its own rank and size") {
  // Two parts of four (tensor parallel), then four parts of two (data parallel).
  check_parts(8, R"({"split": "rank / 4"})", {{0, 1, 2, 3}, {4, 5, 6, 7}}, 4, kRingBody);
  check_parts(8, R"({"split": "rank % 4"})", {{0, 4}, {1, 5}, {2, 6}, {3, 7}}, 2, kRingBody);
  check_parts(6, R"({"split": "rank / 3"})", {{0, 1, 2}, {3, 4, 5}}, 3, kStepBody);
  check_parts(8, R"({"split": "rank % 2"})", {{0, 2, 4, 6}, {1, 3, 5, 7}}, 4, kStepBody);
}

TEST_CASE("custom algorithms on a list group: ranks in group order, the others untouched") {
  // Group order is not world order: group rank 0 is world rank 5.
  check_parts(8, "[5, 2, 7]", {{5, 2, 7}}, 3, kRingBody);
  check_parts(8, "[5, 2, 7]", {{5, 2, 7}}, 3, kStepBody);
  check_parts(4, "[1, 3]", {{1, 3}}, 2, kRingBody);
}

TEST_CASE("custom algorithms on a group: peers outside the group are the body's error, in the group's terms") {
  const std::string bufs = R"("x": {"count": 4, "init": "rank"}, "t": {"count": 4, "scratch": true})";
  const Error e = parse_fails(program_text(8, bufs, custom_call("g", R"([
    {"op": "send", "buffer": "x", "to": "rank + 1"},
    {"op": "recv", "buffer": "x", "from": "(rank - 1) % size"}])"),
                                           R"(, "groups": {"g": {"split": "rank / 4"}})"));
  CHECK(e.id == "program.bad_value");
  // Group rank 3 of the first part (world rank 3) sends to group rank 4, which does not exist.
  CHECK_MESSAGE(e.message.find("send on rank 3 (g rank 3) goes to g rank 4, outside 0..3") != std::string::npos,
                e.message);
  CHECK(e.where.pointer == "/program/0/body/0/to");

  const Error w = parse_fails(program_text(4, bufs, custom_call("g", R"([
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "rank + 2", "buffer": "x"}, "to": {"rank": "rank", "buffer": "t"}}]}])"),
                                           R"(, "groups": {"g": [2, 3]})"));
  CHECK(w.id == "program.bad_value");
  CHECK_MESSAGE(w.message.find("transfer from g rank 2 is outside 0..1 (for rank 2 (g rank 0))") != std::string::npos,
                w.message);
}

TEST_CASE("custom algorithms on a group: the records name world ranks and group ranks") {
  const std::string bufs = R"("x": {"count": 2, "init": "rank_index"}, "t": {"count": 2, "scratch": true})";
  const Schedule s =
      lower_program_ok(program_text(4, bufs, custom_call("g", kRingBody), R"(, "groups": {"g": [3, 1]})"));
  bool found = false;
  for (const auto& op : s.ops)
    if (op.rank == 3 && op.op == "isend") {
      found = true;
      CHECK_MESSAGE(op.text.find("to rank 1 (g rank 1)") != std::string::npos, op.text);
    }
  CHECK(found);
}
