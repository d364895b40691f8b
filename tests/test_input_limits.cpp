// Limits on what a scenario may ask for, and the ways hostile input used to get past
// them: expressions nested or chained without end, programs that unroll to millions of
// ops or iterations, schedules of hundreds of millions of transfers. Each must fail
// quickly with its error; the programs just inside a limit must still work.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "collscope/scenario.h"
#include "scenario/expr.h"

using namespace collscope;

namespace {

using Clock = std::chrono::steady_clock;

// Time bounds below are for a busy machine; sanitizers slow lowering about ten times.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr double kSlowdown = 10;
#else
constexpr double kSlowdown = 1;
#endif

std::string scenario_text(int ranks, const std::string& program, const std::string& extra = "") {
  return R"({"version": 1, "ranks": )" + std::to_string(ranks) + R"(, "buffers": {"x": {"count": 8}})" + extra +
         R"(, "program": [)" + program + "]}";
}

// Parses (which also lowers programs) and returns the error id, or "" when it parsed.
std::string parse_error(const std::string& text, double* seconds = nullptr) {
  const auto t0 = Clock::now();
  auto s = parse_scenario(text, "t.json");
  if (seconds) *seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return s ? std::string() : s.error().id + ": " + s.error().message;
}

std::string repeated(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

TEST_CASE("input limits: expressions are bounded in length, nesting and height") {
  using collscope::scenario::Expression;
  CHECK(Expression::parse(repeated("(", 60) + "1" + repeated(")", 60)).ok());
  CHECK_FALSE(Expression::parse(repeated("(", 65) + "1" + repeated(")", 65)).ok());
  CHECK(Expression::parse(repeated("not ", 60) + "rank").ok());
  auto nots = Expression::parse(repeated("not ", 200) + "rank");
  REQUIRE_FALSE(nots.ok());
  CHECK(nots.error().message.find("nested too deeply") != std::string::npos);
  CHECK_FALSE(Expression::parse(repeated("!", 5000) + "1").ok());
  // A chain of additions nests to the left: its evaluation would recurse once per "+".
  auto chain = Expression::parse("1" + repeated("+1", 200));
  REQUIRE(chain.ok());
  CHECK(*chain->eval({}) == 201);
  auto long_chain = Expression::parse("1" + repeated("+1", 300));
  REQUIRE_FALSE(long_chain.ok());
  CHECK(long_chain.error().id == "scenario.bad_expression");
  auto too_long = Expression::parse(repeated(" ", 1001) + "1");
  REQUIRE_FALSE(too_long.ok());
  CHECK(too_long.error().message.find("longer than 1000") != std::string::npos);
  // Error messages quote a long expression cut short, not whole.
  CHECK(too_long.error().message.size() < 300);
}

TEST_CASE("input limits: rank ranges are read by hand, whatever their length") {
  long a = -1, b = -1;
  CHECK(collscope::scenario::parse_rank_range(" 1 .. 3 ", a, b));
  CHECK(a == 1);
  CHECK(b == 3);
  CHECK_FALSE(collscope::scenario::parse_rank_range("1..", a, b));
  CHECK_FALSE(collscope::scenario::parse_rank_range("..3", a, b));
  CHECK_FALSE(collscope::scenario::parse_rank_range("1..3 + rank", a, b));
  CHECK_FALSE(collscope::scenario::parse_rank_range("1234567890..1", a, b));  // ten digits
  CHECK_FALSE(collscope::scenario::parse_rank_range(std::string(200000, ' ') + "1..x", a, b));
  // Names (requests, groups, repeat variables) of any length are checked without recursion.
  const std::string long_name(300000, 'r');
  const auto err = parse_error(
      scenario_text(2, R"({"op": "isend", "ranks": "rank == 0", "buffer": "x", "to": 1, "request": ")" + long_name +
                           R"(-"}, {"op": "recv", "ranks": "rank == 1", "buffer": "x", "from": 0})"));
  CHECK(err.rfind("scenario.bad_name", 0) == 0);
}

TEST_CASE("input limits: programs that unroll too far fail at once, before building anything") {
  double seconds = 0;
  // 2 ranks x 600,000 copies: over the 1,000,000 ops of the unrolled program.
  auto err = parse_error(
      scenario_text(2, R"({"op": "repeat", "times": 600000, "body": [{"op": "copy", "src": "x", "dst": "x"}]})"),
      &seconds);
  CHECK(err.rfind("scenario.out_of_range: the program unrolls to more than 1000000 ops", 0) == 0);
  CHECK(seconds < 10 * kSlowdown);
  // Repeats that run nothing on any rank still cost their iterations.
  err = parse_error(scenario_text(2, R"({"op": "repeat", "times": 1000000, "body": [{"op": "repeat", "times": 1000000,
                                   "body": [{"op": "copy", "ranks": "rank > 5", "src": "x", "dst": "x"}]}]})"),
                    &seconds);
  CHECK(err.rfind("scenario.out_of_range: the program takes more than", 0) == 0);
  CHECK(seconds < 10 * kSlowdown);
  // Just inside: 100,000 iterations of a copy on 2 ranks unroll and lower.
  err = parse_error(scenario_text(2, R"({"op": "repeat", "times": 100000, "body": [
                                     {"op": "copy", "src": {"buffer": "x", "count": 4}, "dst": {"buffer": "x", "offset": 4}}]})"),
                    &seconds);
  CHECK(err == "");
}

TEST_CASE("input limits: schedules are bounded in transfers") {
  double seconds = 0;
  // A written step of 80 lines of 1024 transfers, 101 times: 8,273,920 transfers.
  std::string lines;
  for (int i = 0; i < 80; ++i)
    lines += std::string(i ? ", " : "") + R"({"ranks": "all", "from": {"rank": "rank", "buffer": "x", "offset": )" +
             std::to_string(i % 8) + R"(}, "to": {"rank": "(rank + 1) % size", "buffer": "x", "offset": )" +
             std::to_string(i % 8) + R"(}, "count": 1})";
  auto err = parse_error(
      scenario_text(1024, R"({"op": "repeat", "times": 101, "body": [{"op": "step", "transfers": [)" + lines + "]}]}"),
      &seconds);
  CHECK(err.rfind("scenario.out_of_range: the program lowers to more than 8000000 transfers", 0) == 0);
  CHECK(seconds < 60 * kSlowdown);
  // Collective calls only: checked while lowering, call by call.
  std::string calls;
  for (int i = 0; i < 10; ++i)
    calls += std::string(i ? ", " : "") + R"({"op": "alltoall", "send": "x", "recv": "y", "algorithm": "pairwise"})";
  auto s = parse_scenario(R"({"version": 1, "ranks": 1024, "buffers": {"x": {"count": 1024}, "y": {"count": 1024}},
                              "program": [)" +
                              calls + "]}",
                          "t.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  auto lowered = lower_scenario(*s);
  REQUIRE_FALSE(lowered.ok());
  CHECK(lowered.error().id == "scenario.out_of_range");
  CHECK(lowered.error().where.pointer == "/program/7");  // 8 calls of 1,047,552 transfers
}

TEST_CASE("input limits: an expression that starts with a number is written back as an expression") {
  auto s = parse_scenario(scenario_text(4, R"({"op": "send", "ranks": "rank == 0", "buffer": "x", "to": "5-4"},
                                         {"op": "recv", "ranks": "rank == 1", "buffer": "x", "from": "0"})"),
                          "t.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  const std::string text = to_json(*s);
  CHECK(text.find(R"("to": "5-4")") != std::string::npos);
  CHECK(text.find(R"("from": 0)") != std::string::npos);
  auto again = parse_scenario(text, "t.json");
  REQUIRE(again.ok());
  CHECK(to_json(*again) == text);
}
