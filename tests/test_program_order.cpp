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

using namespace collscope;
using namespace collscope::testing;

namespace {

// Every (step, transfer) an op owns: its own transfers, or for a collective or a
// written step every transfer of its steps that touches its rank.
std::vector<std::pair<std::int32_t, std::int32_t>> owned(const Schedule& s, const OpRecord& op) {
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
// completed before b starts: a is blocking, or a wait between them completed a.
std::vector<std::pair<std::size_t, std::size_t>> ordered_pairs(const Schedule& s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::int32_t r = 0; r < s.ranks; ++r) {
    std::vector<std::size_t> mine;  // top-level ops of rank r, in program order
    for (std::size_t i = 0; i < s.ops.size(); ++i)
      if (s.ops[i].rank == r && s.ops[i].parent < 0) mine.push_back(i);
    for (std::size_t x = 0; x < mine.size(); ++x)
      for (std::size_t y = x + 1; y < mine.size(); ++y) {
        const OpRecord& a = s.ops[mine[x]];
        bool before = a.order == OpOrder::blocking;
        for (std::size_t w = x + 1; w < y && !before; ++w) {
          const auto& c = s.ops[mine[w]].completes;
          before = std::find(c.begin(), c.end(), static_cast<std::int32_t>(mine[x])) != c.end();
        }
        if (before) out.emplace_back(mine[x], mine[y]);
      }
  }
  return out;
}

// known[lane][step][other]: the latest step of `other` that `lane` knows has finished
// when it starts `step`, through the chain of what it waited for (one iteration).
using Known = std::vector<std::vector<std::vector<std::int32_t>>>;
Known happens_before(const Schedule& s) {
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
std::size_t check_order_in_deps(const Schedule& s) {
  const Known known = happens_before(s);
  std::size_t checked = 0;
  for (const auto& [ia, ib] : ordered_pairs(s))
    for (const auto& [ka, ta] : owned(s, s.ops[ia]))
      for (const auto& [kb, tb] : owned(s, s.ops[ib])) {
        const auto la = dataflow::lane_of(s, s.steps[static_cast<std::size_t>(ka)].transfers[static_cast<std::size_t>(ta)]);
        const auto lb = dataflow::lane_of(s, s.steps[static_cast<std::size_t>(kb)].transfers[static_cast<std::size_t>(tb)]);
        ++checked;
        REQUIRE_MESSAGE(kb > ka, "rank " << s.ops[ia].rank << ": " << s.ops[ib].text << " shares or precedes the steps of "
                                          << s.ops[ia].text);
        const bool seen = la == lb || known[static_cast<std::size_t>(lb)][static_cast<std::size_t>(kb)][static_cast<std::size_t>(la)] >= ka;
        CHECK_MESSAGE(seen, "rank " << s.ops[ia].rank << ": " << s.ops[ib].text << " (step " << kb << ", lane " << lb
                                    << ") may start before " << s.ops[ia].text << " (step " << ka << ", lane " << la
                                    << ") has completed");
      }
  return checked;
}

// Measured: every ordered pair's times do not overlap. Returns the pairs checked.
std::size_t check_order_in_times(const Schedule& s, const RunRecord& rec) {
  const auto times = op_timings(s, rec);
  std::size_t checked = 0;
  for (const auto& [a, b] : ordered_pairs(s)) {
    if (!times[a].timed || !times[b].timed) continue;
    ++checked;
    CHECK_MESSAGE(times[b].t0_us >= times[a].t1_us,
                  "rank " << s.ops[a].rank << ": " << s.ops[b].text << " started at " << times[b].t0_us << " us, before "
                          << s.ops[a].text << " completed at " << times[a].t1_us << " us");
  }
  return checked;
}

// A random program that cannot deadlock: events in one global order, each appended
// to the programs of the ranks it involves (so every rank's first pending event can
// always complete). Messages (blocking, or non-blocking with a wait a few events
// later), compute spans, local copies and all-reduces; every event has its own
// elements, so no non-blocking op races with another op.
std::string random_program(std::mt19937& rng, int ranks, int events, bool collectives) {
  std::string ops;
  auto add = [&](const std::string& op) { ops += (ops.empty() ? "" : ",\n") + op; };
  auto on = [](int r) { return R"("ranks": [)" + std::to_string(r) + "]"; };
  struct Wait {
    int rank, due;
    std::string request;
  };
  std::vector<Wait> waits;
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
    const unsigned kind = rng() % (collectives ? 7 : 6);
    const int later = e + 1 + static_cast<int>(rng() % 4);
    if (kind <= 1) {  // a blocking message
      add(R"({"op": "send", )" + on(a) + R"(, "buffer": "x", "offset": )" + at + R"(, "count": 1, "to": )" + std::to_string(b) + "}");
      add(R"({"op": "recv", )" + on(b) + R"(, "buffer": "y", "offset": )" + at + R"(, "count": 1, "from": )" + std::to_string(a) + "}");
    } else if (kind == 2) {  // non-blocking on both ends
      add(R"({"op": "isend", )" + on(a) + R"(, "buffer": "x", "offset": )" + at + R"(, "count": 1, "to": )" + std::to_string(b) +
          R"(, "request": "s)" + at + R"("})");
      add(R"({"op": "irecv", )" + on(b) + R"(, "buffer": "y", "offset": )" + at + R"(, "count": 1, "from": )" + std::to_string(a) +
          R"(, "request": "q)" + at + R"("})");
      waits.push_back({a, later, "s" + at});
      waits.push_back({b, e + 1 + static_cast<int>(rng() % 4), "q" + at});
    } else if (kind == 3 || kind == 4) {  // a compute span, writing or not
      const std::string us = std::to_string(rng() % 300);
      add(R"({"op": "compute", )" + on(a) + R"(, "duration_us": )" + us +
          (kind == 3 ? R"(, "writes": {"buffer": "z", "offset": )" + at + R"(, "count": 1})" : std::string()) + "}");
    } else if (kind == 5) {  // a local copy
      add(R"({"op": "copy", )" + on(a) + R"(, "src": {"buffer": "w", "offset": )" + at +
          R"(, "count": 1}, "dst": {"buffer": "z", "offset": )" + at + R"(, "count": 1}})");
    } else {  // every rank: a blocking all-reduce
      add(R"({"op": "allreduce", "buffer": "c", "algorithm": ")" +
          std::string(rng() % 2 ? "ring" : "flat") + R"("})");
    }
  }
  flush(1 << 30);
  return ops;
}

std::string random_buffers(int events) {
  const std::string n = std::to_string(events);
  return R"("x": {"count": )" + n + R"(, "init": "rank_index"}, "y": {"count": )" + n + R"(}, "z": {"count": )" + n +
         R"(}, "w": {"count": )" + n + R"(, "init": "index"}, "c": {"count": 6, "init": "rank"})";
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
  const std::string text = program_text(2, R"("a": {"count": 4, "init": "rank"}, "b": {"count": 4, "init": "rank"})", R"(
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
    const std::string text = program_text(ranks, random_buffers(events), random_program(rng, ranks, events, trial % 2 == 0));
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
  const std::string text = program_text(4, R"("a": {"count": 8, "init": "rank"}, "b": {"count": 8, "init": "rank"})", R"(
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
            CHECK((la == lb || known[static_cast<std::size_t>(lb)][static_cast<std::size_t>(kb)][static_cast<std::size_t>(la)] >= ka));
          }
      }
}
