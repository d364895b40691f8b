// Program order in fast mode: a rank's ops complete in the order MPI defines. A
// blocking op holds back everything after it on its rank; a non-blocking one may
// overlap what follows, until its wait. Checked on the dependencies themselves (every
// transfer of a later op knows, through the chain of waits, that the earlier op's
// transfers are done) and on measured per-op times, over random programs.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "collscope/program.h"
#include "ir/deps.h"
#include "program_helpers.h"
#include "program_order_checks.h"

using namespace collscope;
using namespace collscope::testing;

namespace {

// A random program that cannot deadlock: events in one global order, each appended
// to the programs of the ranks it involves (so every rank's first pending event can
// always complete). Messages (blocking, or non-blocking with a wait a few events
// later), compute spans, local copies and all-reduces (blocking, or with a request
// every rank waits for a few events later); every event has its own elements, and an
// all-reduce with a request has buffer d to itself until every rank has waited, so no
// non-blocking op races with another op.
std::string random_program(std::mt19937& rng, int ranks, int events, bool collectives) {
  std::string ops;
  auto add = [&](const std::string& op) { ops += (ops.empty() ? "" : ",\n") + op; };
  auto on = [](int r) { return R"("ranks": [)" + std::to_string(r) + "]"; };
  struct Wait {
    int rank, due;
    std::string request;
  };
  std::vector<Wait> waits;
  int d_free = 0;  // the first event at which buffer d is no longer pending
  auto flush = [&](int now) {
    for (auto it = waits.begin(); it != waits.end();)
      if (it->due <= now) {
        add(R"({"op": "wait", )" + on(it->rank) + R"(, "request": ")" + it->request + R"("})");
        it = waits.erase(it);
      } else {
        ++it;
      }
  };
  for (int e = 0; e < events; ++e) {
    flush(e);
    const std::string at = std::to_string(e);
    const int a = static_cast<int>(rng() % static_cast<unsigned>(ranks));
    int b = static_cast<int>(rng() % static_cast<unsigned>(ranks - 1));
    if (b >= a) ++b;
    unsigned kind = rng() % (collectives ? 8 : 6);
    if (kind == 7 && e < d_free) kind = 3;
    const int later = e + 1 + static_cast<int>(rng() % 4);
    if (kind <= 1) {  // a blocking message
      add(R"({"op": "send", )" + on(a) + R"(, "buffer": "x", "offset": )" + at + R"(, "count": 1, "to": )" +
          std::to_string(b) + "}");
      add(R"({"op": "recv", )" + on(b) + R"(, "buffer": "y", "offset": )" + at + R"(, "count": 1, "from": )" +
          std::to_string(a) + "}");
    } else if (kind == 2) {  // non-blocking on both ends
      add(R"({"op": "isend", )" + on(a) + R"(, "buffer": "x", "offset": )" + at + R"(, "count": 1, "to": )" +
          std::to_string(b) + R"(, "request": "s)" + at + R"("})");
      add(R"({"op": "irecv", )" + on(b) + R"(, "buffer": "y", "offset": )" + at + R"(, "count": 1, "from": )" +
          std::to_string(a) + R"(, "request": "q)" + at + R"("})");
      waits.push_back({a, later, "s" + at});
      waits.push_back({b, e + 1 + static_cast<int>(rng() % 4), "q" + at});
    } else if (kind == 3 || kind == 4) {  // a compute span, writing or not
      const std::string us = std::to_string(rng() % 300);
      add(R"({"op": "compute", )" + on(a) + R"(, "duration_us": )" + us +
          (kind == 3 ? R"(, "writes": {"buffer": "z", "offset": )" + at + R"(, "count": 1})" : std::string()) + "}");
    } else if (kind == 5) {  // a local copy
      add(R"({"op": "copy", )" + on(a) + R"(, "src": {"buffer": "w", "offset": )" + at +
          R"(, "count": 1}, "dst": {"buffer": "z", "offset": )" + at + R"(, "count": 1}})");
    } else if (kind == 6) {  // every rank: a blocking all-reduce
      add(R"({"op": "allreduce", "buffer": "c", "algorithm": ")" + std::string(rng() % 2 ? "ring" : "flat") + R"("})");
    } else {  // every rank: an all-reduce with a request, waited for later
      add(R"({"op": "allreduce", "buffer": "d", "algorithm": ")" + std::string(rng() % 2 ? "ring" : "tree") +
          R"(", "request": "h)" + at + R"("})");
      for (int r = 0; r < ranks; ++r) {
        const int due = e + 1 + static_cast<int>(rng() % 4);
        waits.push_back({r, due, "h" + at});
        d_free = std::max(d_free, due);
      }
    }
  }
  flush(1 << 30);
  return ops;
}

std::string random_buffers(int events) {
  const std::string n = std::to_string(events);
  return R"("x": {"count": )" + n + R"(, "init": "rank_index"}, "y": {"count": )" + n + R"(}, "z": {"count": )" + n +
         R"(}, "w": {"count": )" + n +
         R"(, "init": "index"}, "c": {"count": 6, "init": "rank"}, "d": {"count": 5, "init": "rank"})";
}

}  // namespace

TEST_CASE("program order: a blocking recv holds back the send after it, in fast mode") {
  // The user's case: rank 0 receives from rank 1, which computes 2 ms first, then sends
  // to rank 2. The send must not complete before the recv has returned.
  const std::string text = program_text(3, R"("a": {"count": 4, "init": "rank"}, "b": {"count": 4})", R"(
    {"op": "compute", "ranks": [1], "duration_us": 2000},
    {"op": "send", "ranks": [1], "buffer": "a", "to": 0},
    {"op": "recv", "ranks": [0], "buffer": "b", "from": 1},
    {"op": "send", "ranks": [0], "buffer": "a", "to": 2},
    {"op": "recv", "ranks": [2], "buffer": "b", "from": 0})");
  const ProgramRun p = run_program(text);
  CHECK(p.outcome.verified());
  const auto times = op_timings(p.schedule, p.outcome.record);
  std::size_t recv = 0, send = 0;
  for (std::size_t i = 0; i < p.schedule.ops.size(); ++i) {
    const OpRecord& op = p.schedule.ops[i];
    if (op.rank == 0 && op.op == "recv") recv = i;
    if (op.rank == 0 && op.op == "send") send = i;
  }
  REQUIRE(times[recv].timed);
  REQUIRE(times[send].timed);
  CHECK(times[recv].t1_us - times[recv].t0_us < 1000);  // the recv itself is quick...
  CHECK(times[send].t0_us >= times[recv].t1_us);        // ...and the send comes after it
  CHECK(check_order_in_deps(p.schedule) > 0);
}

TEST_CASE("program order: a blocking collective holds back the compute after it, and copies wait for compute") {
  const std::string text =
      program_text(2, R"("a": {"count": 4, "init": "rank"}, "b": {"count": 4, "init": "rank"})", R"(
    {"op": "compute", "duration_us": 300, "writes": "a"},
    {"op": "allreduce", "buffer": "a", "algorithm": "ring"},
    {"op": "compute", "duration_us": 300, "writes": "b"},
    {"op": "copy", "src": "a", "dst": "b"})");
  const Schedule s = lower_program_ok(text);
  CHECK(check_order_in_deps(s) > 0);
  const ProgramRun p = run_program(text);
  CHECK(p.outcome.verified());
  CHECK(check_order_in_times(p.schedule, p.outcome.record) > 0);
}

TEST_CASE("program order (property): random programs keep every rank's program order in the dependencies") {
  std::mt19937 rng(2026'12'01);
  std::size_t checked = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const int ranks = 2 + static_cast<int>(rng() % 5);
    const int events = 4 + static_cast<int>(rng() % 20);
    const std::string text = program_text(ranks, random_buffers(events), random_program(rng, ranks, events, true));
    CAPTURE(text);
    checked += check_order_in_deps(lower_program_ok(text));
  }
  CHECK(checked > 2000);
}

TEST_CASE("program order (property): measured per-op times of random programs respect program order") {
  std::mt19937 rng(1'12'2026);
  std::size_t checked = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const int ranks = 2 + static_cast<int>(rng() % 4);
    const int events = 6 + static_cast<int>(rng() % 14);
    const std::string text =
        program_text(ranks, random_buffers(events), random_program(rng, ranks, events, trial % 2 == 0));
    CAPTURE(text);
    const ProgramRun p = run_program(text);
    CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
    checked += check_order_in_times(p.schedule, p.outcome.record);
  }
  CHECK(checked > 200);
}

TEST_CASE("program order: calls of a program of collectives only follow each other on every member") {
  // Two all-reduces on different buffers: without program order, a rank could finish
  // the second before the first.
  const std::string text =
      program_text(4, R"("a": {"count": 8, "init": "rank"}, "b": {"count": 8, "init": "rank"})", R"(
    {"op": "allreduce", "buffer": "a", "algorithm": "ring"},
    {"op": "allreduce", "buffer": "b", "algorithm": "ring"})");
  const Schedule s = lower_program_ok(text);
  REQUIRE(s.ops.empty());  // lowered call by call
  REQUIRE(s.calls.size() == 2);
  const Known known = happens_before(s);
  const Call& first = s.calls[0];
  const Call& second = s.calls[1];
  for (std::int32_t r = 0; r < s.ranks; ++r)
    for (std::int32_t ka = first.first_step; ka < first.first_step + first.num_steps; ++ka)
      for (const auto& ta : s.steps[static_cast<std::size_t>(ka)].transfers) {
        if (ta.src.rank != r && ta.dst.rank != r) continue;
        for (std::int32_t kb = second.first_step; kb < second.first_step + second.num_steps; ++kb)
          for (const auto& tb : s.steps[static_cast<std::size_t>(kb)].transfers) {
            if (tb.src.rank != r && tb.dst.rank != r) continue;
            const auto la = dataflow::lane_of(s, ta), lb = dataflow::lane_of(s, tb);
            CHECK((la == lb ||
                   known[static_cast<std::size_t>(lb)][static_cast<std::size_t>(kb)][static_cast<std::size_t>(la)] >=
                       ka));
          }
      }
}
