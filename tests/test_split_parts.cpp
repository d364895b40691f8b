// The parts of a collective on a split group run at once, in shared steps: step k of
// every part is one step of the schedule. Over random partitions of the ranks,
// collectives, algorithms and counts, a split gives the bytes of the same parts written
// one after another (one list group per part), each part keeps its own transfers, the
// call takes as many steps as its longest part, and program order still holds.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "collscope/trace.h"
#include "collscope/verify.h"
#include "program_helpers.h"
#include "program_order_checks.h"

using namespace collscope;
using namespace collscope::testing;

namespace {

// One collective entry on `group`, out of place where the collective allows it.
std::string call_entry(Collective c, const std::string& algorithm, std::uint64_t count, const std::string& group) {
  const CollectiveDescriptor& d = collective_descriptor(c);
  std::string e = R"({"op": ")" + std::string(d.name) + R"(", "group": ")" + group + R"(", "algorithm": ")" +
                  algorithm + R"(", "caption": "c")";
  if (d.moves_data) {
    e += d.out_of_place ? R"(, "send": "x", "recv": "y")" : R"(, "buffer": "y")";
    e += R"(, "count": )" + std::to_string(count);
  }
  if (d.rooted) e += R"(, "root": 0)";
  return e + "}";
}

// "(rank == 0) * 2 + (rank == 1) * 0 + ...": the split of `color`, as an expression.
std::string split_expression(const std::vector<int>& color) {
  std::string e;
  for (std::size_t r = 0; r < color.size(); ++r)
    e += (r ? " + " : "") + std::string("(rank == ") + std::to_string(r) + ") * " + std::to_string(color[r]);
  return e;
}

// The parts of a split, in the order of their lowest ranks (as the schedule numbers them).
std::vector<std::vector<int>> parts_of(const std::vector<int>& color) {
  std::vector<int> order;
  for (int c : color)
    if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
  std::vector<std::vector<int>> parts(order.size());
  for (std::size_t r = 0; r < color.size(); ++r)
    parts[static_cast<std::size_t>(std::find(order.begin(), order.end(), color[r]) - order.begin())].push_back(
        static_cast<int>(r));
  return parts;
}

std::string list_text(const std::vector<int>& ranks) {
  std::string t = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) t += (i ? ", " : "") + std::to_string(ranks[i]);
  return t + "]";
}

struct Pair {
  std::string split, sequential;  // the same calls on a split group, and as one list group per part
};

// `calls` collectives on one random split, twice.
Pair texts(const std::vector<int>& color, const std::vector<std::pair<Collective, std::string>>& calls,
           std::uint64_t count) {
  const auto parts = parts_of(color);
  std::size_t largest = 0;
  for (const auto& p : parts) largest = std::max(largest, p.size());
  const std::string n = std::to_string(count * largest);
  const std::string buffers = R"("x": {"count": )" + n + R"(, "init": "rank_index"}, "y": {"count": )" + n +
                              R"(, "init": {"random": {"seed": 5, "min": 0, "max": 9}}})";
  std::string split, sequential, lists;
  for (const auto& [c, algorithm] : calls) {
    split += (split.empty() ? "" : ",\n") + call_entry(c, algorithm, count, "g");
    for (std::size_t p = 0; p < parts.size(); ++p)
      sequential += (sequential.empty() ? "" : ",\n") + call_entry(c, algorithm, count, "g" + std::to_string(p));
  }
  for (std::size_t p = 0; p < parts.size(); ++p)
    lists += (p ? ", " : "") + std::string("\"g") + std::to_string(p) + "\": " + list_text(parts[p]);
  const int R = static_cast<int>(color.size());
  return {program_text(R, buffers, split, R"(, "groups": {"g": {"split": ")" + split_expression(color) + "\"}}"),
          program_text(R, buffers, sequential, R"(, "groups": {)" + lists + "}")};
}

// The transfers of one call whose receivers are its members, step by step.
std::vector<std::vector<Transfer>> transfers_of(const Schedule& s, const Call& c) {
  std::vector<std::vector<Transfer>> out;
  for (std::int32_t k = c.first_step; k < c.first_step + c.num_steps; ++k) {
    out.emplace_back();
    for (const Transfer& t : s.steps[static_cast<std::size_t>(k)].transfers)
      if (takes_part(c, t.dst.rank)) out.back().push_back(t);
  }
  return out;
}

bool same(const Transfer& a, const Transfer& b) {
  return a.src.rank == b.src.rank && a.src.buf == b.src.buf && a.src.offset == b.src.offset &&
         a.dst.rank == b.dst.rank && a.dst.buf == b.dst.buf && a.dst.offset == b.dst.offset && a.count == b.count &&
         a.action == b.action && a.divisor == b.divisor;
}

// The algorithms of c that the cpu backend runs, and auto.
std::vector<std::string> algorithms_of(Collective c) {
  std::vector<std::string> out{"auto"};
  for (const auto& a : all_algorithms())
    if (a.coll == c) out.emplace_back(a.name);
  return out;
}

}  // namespace

TEST_CASE("split groups (property): parts run side by side with the bytes and transfers they have alone") {
  std::mt19937 rng(2026);
  std::vector<Collective> colls;
  for (Collective c : kAllCollectives)
    if (!collective_descriptor(c).per_peer) colls.push_back(c);
  int checked = 0;
  for (int round = 0; round < 60; ++round) {
    const int R = 2 + static_cast<int>(rng() % 11);
    const int colors = 1 + static_cast<int>(rng() % std::min(R, 4));
    std::vector<int> color(static_cast<std::size_t>(R));
    for (int& c : color) c = static_cast<int>(rng() % static_cast<unsigned>(colors)) * 3;  // not 0, 1, ...
    std::vector<std::pair<Collective, std::string>> calls;
    for (int i = 0, n = 1 + static_cast<int>(rng() % 2); i < n; ++i) {
      const Collective c = colls[rng() % colls.size()];
      const auto algorithms = algorithms_of(c);
      calls.emplace_back(c, algorithms[rng() % algorithms.size()]);
    }
    const std::uint64_t count = 1 + rng() % 9;
    const Pair p = texts(color, calls, count);
    CAPTURE(p.split);
    const Scenario split_sc = parse_ok(p.split);
    const Scenario seq_sc = parse_ok(p.sequential);
    auto split = lower_scenario(split_sc);
    auto seq = lower_scenario(seq_sc);
    // An algorithm that refuses a part's size refuses it either way.
    REQUIRE(split.ok() == seq.ok());
    if (!split.ok()) {
      CHECK(split.error().id == seq.error().id);
      continue;
    }
    ++checked;
    const auto parts = parts_of(color);
    REQUIRE(split->calls.size() == seq->calls.size());
    REQUIRE(split->calls.size() == calls.size() * parts.size());
    // Each entry: its parts start together and the entry lasts as long as its longest part.
    std::int32_t expected_steps = 0;
    for (std::size_t e = 0; e < calls.size(); ++e) {
      std::int32_t longest = 0;
      for (std::size_t q = 0; q < parts.size(); ++q) {
        const Call& a = split->calls[e * parts.size() + q];
        const Call& b = seq->calls[e * parts.size() + q];
        CHECK(a.part == static_cast<std::int32_t>(q));
        CHECK(a.args.world_rank == b.args.world_rank);
        CHECK(a.algorithm == b.algorithm);
        CHECK(a.first_step == split->calls[e * parts.size()].first_step);
        CHECK(a.num_steps == b.num_steps);
        longest = std::max(longest, b.num_steps);
        // The part's own transfers, in the same order, in the same steps of its own.
        const auto mine = transfers_of(*split, a);
        const auto alone = transfers_of(*seq, b);
        REQUIRE(mine.size() == alone.size());
        for (std::size_t k = 0; k < mine.size(); ++k) {
          REQUIRE(mine[k].size() == alone[k].size());
          for (std::size_t t = 0; t < mine[k].size(); ++t) CHECK(same(mine[k][t], alone[k][t]));
        }
      }
      expected_steps += longest;
    }
    CHECK(static_cast<std::int32_t>(split->steps.size()) == expected_steps);
    CHECK(split->total_transfers() == seq->total_transfers());
    CHECK(verify_symbolic(*split).ok());
    // The same bytes, in both modes.
    RunOptions fast;
    RunOptions obs;
    obs.mode = RunMode::observable;
    auto a = execute(*split, init_of(split_sc), fast);
    auto b = execute(*seq, init_of(seq_sc), fast);
    auto o = execute(*split, init_of(split_sc), obs);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(o.ok());
    CHECK_MESSAGE(a->verified(), verdict_text(*a));
    CHECK(b->verified());
    CHECK(o->verified());
    CHECK(a->result == b->result);
    CHECK(o->result == b->result);
    // Every rank's ops still complete in program order in the dependencies.
    check_order_in_deps(*split);
  }
  CHECK(checked > 30);
}

TEST_CASE("split groups: the hybrid-parallel lesson runs both tp copies and the four dp pairs side by side") {
  auto sc = load_scenario(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/21-hybrid-parallel.json");
  REQUIRE(sc.ok());
  auto s = lower_scenario(*sc);
  REQUIRE(s.ok());
  // allgather on tp (2 parts), compute, reduce_scatter on tp (2 parts), allreduce on dp (4 parts).
  std::vector<const Call*> gather, scatter, dp;
  for (const Call& c : s->calls) {
    if (c.kind != CallKind::collective) continue;
    (c.args.coll == Collective::allgather        ? gather
     : c.args.coll == Collective::reduce_scatter ? scatter
                                                 : dp)
        .push_back(&c);
  }
  REQUIRE(gather.size() == 2);
  REQUIRE(scatter.size() == 2);
  REQUIRE(dp.size() == 4);
  for (const auto* parts : {&gather, &scatter, &dp}) {
    const Call& first = *parts->front();
    for (const Call* c : *parts) {
      CHECK(c->first_step == first.first_step);
      CHECK(c->num_steps == first.num_steps);
    }
    // Every step of the call holds every part, each on its own ranks.
    for (std::int32_t k = first.first_step; k < first.first_step + first.num_steps; ++k) {
      const Step& st = s->steps[static_cast<std::size_t>(k)];
      CHECK(calls_of(st).size() == parts->size());
      const auto by_rank = calls_by_rank(*s, k);
      for (const Transfer& t : st.transfers) {
        const Call& mine = s->calls[static_cast<std::size_t>(by_rank[static_cast<std::size_t>(t.dst.rank)])];
        CHECK(takes_part(mine, t.src.rank));
        CHECK(call_of(*s, k, t.dst.rank) == by_rank[static_cast<std::size_t>(t.dst.rank)]);
      }
    }
  }
  const Step& g0 = s->steps[static_cast<std::size_t>(gather.front()->first_step)];
  CHECK_MESSAGE(g0.caption.rfind("tp groups {0-3} and {4-7}: ", 0) == 0, g0.caption);
  const Step& d0 = s->steps[static_cast<std::size_t>(dp.front()->first_step)];
  CHECK_MESSAGE(d0.caption.rfind("dp groups {0,4}, {1,5}, {2,6} and {3,7}: ", 0) == 0, d0.caption);
  CHECK(parts_text(*s, d0) == "group dp, parts 0, 1, 2 and 3 at once: {0,4}, {1,5}, {2,6} and {3,7}");
  // The steps: each call as long as one part, and the compute step between them.
  CHECK(static_cast<std::int32_t>(s->steps.size()) ==
        gather.front()->num_steps + 1 + scatter.front()->num_steps + dp.front()->num_steps);
  const auto last_dp = static_cast<std::int32_t>(dp.back() - s->calls.data());
  CHECK(shared_span(*s, last_dp) ==
        std::pair<std::int32_t, std::int32_t>{dp.front()->first_step, dp.front()->first_step + dp.front()->num_steps});
}

TEST_CASE("split groups: parts of different sizes share steps until the shorter ones end") {
  // Parts {0, 1} and {2, 3, 4, 5, 6, 7, 8}: a ring all-gather takes 1 and 6 steps.
  const std::string text = program_text(9, R"("x": {"count": 1, "init": "rank"}, "y": {"count": 7})",
                                        R"({"op": "allgather", "send": "x", "recv": "y", "count": 1, "group": "g",
                                            "algorithm": "ring", "caption": "gather"})",
                                        R"(, "groups": {"g": {"split": "rank >= 2"}})");
  const ProgramRun p = run_program(text);
  CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
  const Schedule& s = p.schedule;
  REQUIRE(s.calls.size() == 2);
  CHECK(s.calls[0].num_steps == 1);
  CHECK(s.calls[1].num_steps == 6);
  REQUIRE(s.steps.size() == 6);
  CHECK(s.steps[0].shared == std::vector<std::int32_t>{1});
  CHECK(s.steps[0].caption.find("g group {0,1}: ") == 0);
  CHECK(s.steps[0].caption.find("; g group {2-8}: ") != std::string::npos);
  // After the short part has ended, the long one goes on alone, and says so.
  CHECK(s.steps[1].call == 1);
  CHECK(s.steps[1].shared.empty());
  CHECK(s.steps[1].caption.find("g group {2-8}: ") == 0);
  for (int r = 0; r < 9; ++r) {
    const int first = r < 2 ? 0 : 2;
    const int n = r < 2 ? 2 : 7;
    for (int i = 0; i < n; ++i) CHECK(int_at(p.outcome, 1, r, static_cast<std::size_t>(i)) == first + i);
  }
  // Each rank's record of the call spans its own part's steps.
  for (const OpRecord& op : s.ops) {
    CHECK(op.first_step == 0);
    CHECK(op.last_step == (op.rank < 2 ? 0 : 5));
    CHECK(op.call == (op.rank < 2 ? 0 : 1));
  }
}

TEST_CASE("split groups: custom algorithms run their parts side by side, and the trace names each rank's part") {
  // A ring all-reduce written with messages, on each half of eight ranks.
  const std::string body = R"([
    {"op": "repeat", "times": "size - 1", "var": "i", "body": [
      {"op": "isend", "buffer": "x", "offset": "(rank - i) % size", "count": 1, "to": "(rank + 1) % size", "request": "o"},
      {"op": "recv", "buffer": "t", "count": 1, "from": "(rank - 1) % size"},
      {"op": "accumulate", "src": {"buffer": "t", "count": 1}, "dst": {"buffer": "x", "offset": "(rank - i - 1) % size", "count": 1}},
      {"op": "wait", "request": "o"}]},
    {"op": "repeat", "times": "size - 1", "var": "i", "body": [
      {"op": "isend", "buffer": "x", "offset": "(rank + 1 - i) % size", "count": 1, "to": "(rank + 1) % size", "request": "o"},
      {"op": "recv", "buffer": "x", "offset": "(rank - i) % size", "count": 1, "from": "(rank - 1) % size"},
      {"op": "wait", "request": "o"}]}])";
  const std::string text = program_text(
      8, R"("x": {"count": 4, "init": "rank_index"}, "t": {"count": 1, "scratch": true})",
      R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "group": "half", "caption": "mine", "body": )" +
          body + "}",
      R"(, "groups": {"half": {"split": "rank / 4"}})");
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    const ProgramRun p = run_program(text, mode);
    CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
    const Schedule& s = p.schedule;
    REQUIRE(s.calls.size() == 2);
    CHECK(s.calls[0].custom);
    CHECK(s.calls[0].first_step == s.calls[1].first_step);
    CHECK(s.calls[0].num_steps == s.calls[1].num_steps);
    CHECK(static_cast<std::int32_t>(s.steps.size()) == s.calls[0].num_steps);
    for (int r = 0; r < 8; ++r) {
      const int base = r < 4 ? 0 : 4;
      for (int i = 0; i < 4; ++i) {
        int sum = 0;
        for (int q = base; q < base + 4; ++q) sum += 100 * q + i;
        CHECK(int_at(p.outcome, 0, r, static_cast<std::size_t>(i)) == sum);
      }
    }
    // The body's ops own transfers of their own rank.
    for (const OpRecord& op : s.ops)
      for (const auto& [k, t] : op.transfers) {
        const Transfer& x = s.steps[static_cast<std::size_t>(k)].transfers[static_cast<std::size_t>(t)];
        CHECK((x.src.rank == op.rank || x.dst.rank == op.rank));
      }
    check_order_in_deps(s);
    // The trace: each rank's collective slice is its own part's call.
    const auto j = nlohmann::json::parse(trace_json(s, p.outcome.record));
    int calls_seen = 0;
    for (const auto& ev : j["traceEvents"])
      if (ev.value("cat", "") == "collective") {
        ++calls_seen;
        CHECK(ev["args"]["call"] == (ev["pid"].get<int>() < 4 ? 0 : 1));
      }
    CHECK(calls_seen >= 8);
  }
}

namespace {

// A random program that cannot deadlock (events in one global order, appended to the
// programs of the ranks they involve): blocking and non-blocking messages, compute
// spans, and all-reduces on a random split, blocking or with a request every rank waits
// for two events later (buffer d is left alone until then).
std::string random_split_program(std::mt19937& rng, int ranks, int events) {
  std::string ops;
  auto add = [&](const std::string& op) { ops += (ops.empty() ? "" : ",\n") + op; };
  auto on = [](int r) { return R"("ranks": [)" + std::to_string(r) + "]"; };
  int pending_until = -1;  // the event at which every rank waits for the all-reduce on d
  std::string pending;
  for (int e = 0; e < events; ++e) {
    if (e == pending_until) {
      add(R"({"op": "wait", "request": ")" + pending + R"("})");
      pending_until = -1;
    }
    const std::string at = std::to_string(e);
    const int a = static_cast<int>(rng() % static_cast<unsigned>(ranks));
    int b = static_cast<int>(rng() % static_cast<unsigned>(ranks - 1));
    if (b >= a) ++b;
    unsigned kind = rng() % 6;
    if (kind == 5 && pending_until >= 0) kind = 4;
    const std::string algorithm = rng() % 2 ? "ring" : "flat";
    if (kind == 0) {
      add(R"({"op": "send", )" + on(a) + R"(, "buffer": "x", "offset": )" + at + R"(, "count": 1, "to": )" +
          std::to_string(b) + "}");
      add(R"({"op": "recv", )" + on(b) + R"(, "buffer": "y", "offset": )" + at + R"(, "count": 1, "from": )" +
          std::to_string(a) + "}");
    } else if (kind == 1) {
      add(R"({"op": "isend", )" + on(a) + R"(, "buffer": "x", "offset": )" + at + R"(, "count": 1, "to": )" +
          std::to_string(b) + R"(, "request": "s)" + at + R"("})");
      add(R"({"op": "recv", )" + on(b) + R"(, "buffer": "y", "offset": )" + at + R"(, "count": 1, "from": )" +
          std::to_string(a) + "}");
      add(R"({"op": "wait", )" + on(a) + R"(, "request": "s)" + at + R"("})");
    } else if (kind == 2 || kind == 3) {
      add(R"({"op": "compute", )" + on(a) + R"(, "duration_us": )" + std::to_string(rng() % 200) +
          R"(, "writes": {"buffer": "z", "offset": )" + at + R"(, "count": 1}})");
    } else if (kind == 4) {
      add(R"({"op": "allreduce", "buffer": "c", "group": "g", "algorithm": ")" + algorithm + R"("})");
    } else {
      pending = "h" + at;
      pending_until = e + 2;
      add(R"({"op": "allreduce", "buffer": "d", "group": "g", "algorithm": ")" + algorithm + R"(", "request": ")" +
          pending + R"("})");
    }
  }
  if (pending_until >= 0) add(R"({"op": "wait", "request": ")" + pending + R"("})");
  return ops;
}

}  // namespace

TEST_CASE("split groups (property): random programs with split collectives keep program order, in both modes") {
  std::mt19937 rng(6'12'2026);
  std::size_t in_deps = 0, in_times = 0;
  int shared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int R = 3 + static_cast<int>(rng() % 6);
    const int events = 4 + static_cast<int>(rng() % 14);
    std::vector<int> color(static_cast<std::size_t>(R));
    for (int& c : color) c = static_cast<int>(rng() % 3);
    const std::string n = std::to_string(events);
    const std::string buffers = R"("x": {"count": )" + n + R"(, "init": "rank_index"}, "y": {"count": )" + n +
                                R"(}, "z": {"count": )" + n +
                                R"(}, "c": {"count": 6, "init": "rank"}, "d": {"count": 5, "init": "rank"})";
    const std::string text = program_text(R, buffers, random_split_program(rng, R, events),
                                          R"(, "groups": {"g": {"split": ")" + split_expression(color) + "\"}}");
    CAPTURE(text);
    const ProgramRun fast = run_program(text);
    const ProgramRun obs = run_program(text, RunMode::observable);
    CHECK_MESSAGE(fast.outcome.verified(), verdict_text(fast.outcome));
    CHECK(obs.outcome.verified());
    CHECK(fast.outcome.result == obs.outcome.result);
    for (const Step& st : fast.schedule.steps) shared += !st.shared.empty();
    in_deps += check_order_in_deps(fast.schedule);
    in_times += check_order_in_times(fast.schedule, fast.outcome.record);
  }
  CHECK(shared > 20);
  CHECK(in_deps > 500);
  CHECK(in_times > 100);
}
