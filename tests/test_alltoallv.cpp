// alltoallv: counts per pair of ranks (MoE token routing). Property tests over ranks,
// count tables (zeros, skew, explicit offsets with gaps), dtypes, every registered
// algorithm and both modes on the cpu backend, checked against the definition computed
// here; the symbolic and the numeric check each catching a wrong schedule on their own;
// the scenario syntax, its errors, groups and repeats, and the quick flags path.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "collscope/run.h"
#include "collscope/scenario.h"
#include "collscope/verify.h"
#include "hand_schedules.h"
#include "shell.h"

using namespace collscope;

namespace {

using Table = std::vector<std::vector<std::uint64_t>>;

std::string table_json(const Table& t) {
  std::string s = "[";
  for (std::size_t r = 0; r < t.size(); ++r) {
    s += r ? ", [" : "[";
    for (std::size_t p = 0; p < t[r].size(); ++p) s += (p ? ", " : "") + std::to_string(t[r][p]);
    s += "]";
  }
  return s + "]";
}

std::string counts_json(const std::vector<std::uint64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// One alltoallv case: the count table and, optionally, explicit offsets.
struct Case {
  std::int32_t n = 1;
  Table counts;
  Table send_off, recv_off;  // empty: packed
  std::string algo;
  DType dtype = DType::float32;
};

// Where block (s -> d) starts on each side, packed when no table is given.
std::uint64_t send_at(const Case& c, std::int32_t s, std::int32_t d) {
  if (!c.send_off.empty()) return c.send_off[s][d];
  std::uint64_t at = 0;
  for (std::int32_t q = 0; q < d; ++q) at += c.counts[s][q];
  return at;
}
std::uint64_t recv_at(const Case& c, std::int32_t d, std::int32_t s) {
  if (!c.recv_off.empty()) return c.recv_off[d][s];
  std::uint64_t at = 0;
  for (std::int32_t q = 0; q < s; ++q) at += c.counts[q][d];
  return at;
}

std::string scenario_text(const Case& c, std::uint64_t slack = 0) {
  std::vector<std::uint64_t> in(c.n, 0), out(c.n, 0);
  for (std::int32_t s = 0; s < c.n; ++s)
    for (std::int32_t d = 0; d < c.n; ++d) {
      if (!c.counts[s][d]) continue;
      in[s] = std::max(in[s], send_at(c, s, d) + c.counts[s][d]);
      out[d] = std::max(out[d], recv_at(c, d, s) + c.counts[s][d]);
    }
  for (auto& v : in) v += slack;
  for (auto& v : out) v += slack;
  std::string call = "{\"op\": \"alltoallv\", \"send\": \"x\", \"recv\": \"y\", \"counts\": " + table_json(c.counts);
  if (!c.send_off.empty()) call += ", \"send_offsets\": " + table_json(c.send_off);
  if (!c.recv_off.empty()) call += ", \"recv_offsets\": " + table_json(c.recv_off);
  call += ", \"algorithm\": \"" + c.algo + "\", \"caption\": \"route\"}";
  return "{\"version\": 1, \"ranks\": " + std::to_string(c.n) + ", \"dtype\": \"" + std::string(name_of(c.dtype)) +
         "\", \"buffers\": {\"x\": {\"counts\": " + counts_json(in) +
         ", \"init\": {\"random\": {\"seed\": 3, \"min\": 1, \"max\": 99}}}, \"y\": {\"counts\": " + counts_json(out) +
         ", \"init\": {\"random\": {\"seed\": 5, \"min\": 0, \"max\": 99}}}}, \"program\": [" + call + "]}";
}

std::string describe(const Case& c) {
  return "alltoallv " + c.algo + " ranks=" + std::to_string(c.n) + " " + std::string(name_of(c.dtype)) +
         " counts=" + table_json(c.counts) + (c.send_off.empty() ? "" : " send_offsets=" + table_json(c.send_off)) +
         (c.recv_off.empty() ? "" : " recv_offsets=" + table_json(c.recv_off));
}

InitFn init_of(const Scenario& s) {
  return [&s](std::int32_t b, std::int32_t r, std::uint64_t i) {
    return b < static_cast<std::int32_t>(s.buffers.size()) ? initial_value(s.buffers[static_cast<std::size_t>(b)], r, i)
                                                           : 0.0;
  };
}

// Random tables: many zeros, a few large entries (a popular expert).
Table random_table(std::mt19937& rng, std::int32_t n, std::uint64_t most) {
  Table t(n, std::vector<std::uint64_t>(n, 0));
  std::uniform_int_distribution<int> kind(0, 5);
  std::uniform_int_distribution<std::uint64_t> small(1, most / 4 + 1), large(most / 2, most);
  for (auto& row : t)
    for (auto& x : row) {
      const int k = kind(rng);
      x = k <= 1 ? 0 : k == 5 ? large(rng) : small(rng);
    }
  return t;
}

// Explicit offsets: blocks in reverse peer order with a gap of one element between them.
Table reversed_with_gaps(const Table& counts, bool by_sender) {
  const auto n = static_cast<std::int32_t>(counts.size());
  Table off(n, std::vector<std::uint64_t>(n, 0));
  for (std::int32_t r = 0; r < n; ++r) {
    std::uint64_t at = 1;
    for (std::int32_t q = n - 1; q >= 0; --q) {
      off[r][q] = at;
      at += (by_sender ? counts[r][q] : counts[q][r]) + 1;
    }
  }
  return off;
}

// Lowers, runs both modes, and checks every element of every rank's output against the
// definition evaluated here from the tables.
void check_case(const Case& c) {
  INFO(describe(c));
  auto sc = parse_scenario(scenario_text(c, 2), "case.json");
  if (!sc) FAIL(sc.error().format());
  auto s = lower_scenario(*sc);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  REQUIRE(s->calls.size() == 1);
  CHECK(s->calls[0].algorithm == c.algo);
  for (const Step& st : s->steps) {
    CHECK(!st.caption.empty());
    CHECK(!st.transfers.empty());
  }
  const Status sym = verify_symbolic(*s);
  CHECK_MESSAGE(sym.ok(), (sym.ok() ? "" : sym.error().format()));
  const InitFn init = init_of(*sc);
  const HostMemory inputs = make_inputs(*s, init);
  std::vector<std::vector<std::vector<std::uint8_t>>> results;
  for (RunMode mode : {RunMode::fast, RunMode::observable}) {
    RunOptions o;
    o.mode = mode;
    o.snapshot_budget = 0;
    auto r = execute(*s, init, o);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().format()));
    CHECK_MESSAGE(r->verified(), r->numeric.message());
    CHECK(r->numeric.wrong == 0);
    results.push_back(r->result[1]);
    // The definition, byte for byte: y on rank d holds s's block at recv_at(d, s);
    // elements no block covers keep their initial value.
    const std::size_t e = size_of(c.dtype);
    for (std::int32_t d = 0; d < c.n; ++d) {
      std::vector<std::uint8_t> want = inputs[1][static_cast<std::size_t>(d)];
      for (std::int32_t src = 0; src < c.n; ++src)
        if (c.counts[src][d])
          std::memcpy(want.data() + recv_at(c, d, src) * e,
                      inputs[0][static_cast<std::size_t>(src)].data() + send_at(c, src, d) * e, c.counts[src][d] * e);
      CAPTURE(d);
      CHECK(r->result[1][static_cast<std::size_t>(d)] == want);
    }
  }
  CHECK(results[0] == results[1]);  // fast and observable give the same bytes
}

const std::vector<std::string>& algorithms() {
  static const std::vector<std::string> names = algorithm_names(Collective::alltoallv);
  return names;
}

}  // namespace

TEST_CASE("alltoallv: the registry has pairwise, linear and scattered, and the descriptor says what it is") {
  const auto& names = algorithms();
  for (const char* a : {"pairwise", "linear", "scattered"})
    CHECK(std::find(names.begin(), names.end(), a) != names.end());
  const CollectiveDescriptor& d = collective_descriptor(Collective::alltoallv);
  CHECK(d.per_peer);
  CHECK_FALSE(d.in_place);
  CHECK(d.out_of_place);
  CHECK_FALSE(has_native(Collective::alltoallv));  // NCCL has none
  CHECK(mpi_call(Collective::alltoallv).function == "MPI_Alltoallv");
  CHECK(mpi_call(Collective::alltoallv).args.size() == 9);
  CHECK(parse_collective("alltoallv") == Collective::alltoallv);
}

TEST_CASE("alltoallv: the default pattern of a count is the scenario expression the flags write") {
  for (std::int32_t n : {1, 2, 3, 5, 9})
    for (std::uint64_t count : {0u, 1u, 3u}) {
      QuickSpec q;
      q.coll = Collective::alltoallv;
      q.ranks = n;
      q.count = count;
      q.algorithm = "pairwise";
      auto sc = scenario_from_spec(q);
      REQUIRE(sc.ok());
      CHECK(sc->program[0].peer_counts.expr == alltoallv_default_counts_text(count));
      auto s = lower_scenario(*sc);
      REQUIRE(s.ok());
      const CollArgs& a = s->calls[0].args;
      REQUIRE(a.peers);
      CollArgs bare;
      bare.coll = Collective::alltoallv;
      bare.ranks = n;
      bare.count = count;
      const auto def = peers_of(bare);
      CHECK(*a.peers == *def);
      for (std::int32_t r = 0; r < n; ++r)
        for (std::int32_t p = 0; p < n; ++p) CHECK(a.peers->count(r, p) == count * ((r + p + 1) % 3));
      // Skewed, with empty blocks from two ranks on.
      if (n >= 2 && count > 0) CHECK(a.peers->count(1, 1) == 0);
    }
}

TEST_CASE("alltoallv: random skewed tables with zeros, every algorithm, ranks 1..9, both modes, exact") {
  std::mt19937 rng(20261202);
  for (std::int32_t n = 1; n <= 9; ++n)
    for (const std::string& algo : algorithms())
      for (int k = 0; k < 2; ++k) {
        Case c;
        c.n = n;
        c.algo = algo;
        c.counts = random_table(rng, n, k == 0 ? 5 : 40);
        check_case(c);
      }
}

TEST_CASE("alltoallv: all-zero tables, a single sender, and a single receiver") {
  for (std::int32_t n : {1, 2, 5})
    for (const std::string& algo : algorithms()) {
      Case zero{n, Table(n, std::vector<std::uint64_t>(n, 0)), {}, {}, algo};
      check_case(zero);
      Case one_sender{n, Table(n, std::vector<std::uint64_t>(n, 0)), {}, {}, algo};
      for (auto& x : one_sender.counts[n - 1]) x = 3;
      check_case(one_sender);
      Case hot_expert{n, Table(n, std::vector<std::uint64_t>(n, 0)), {}, {}, algo};
      for (auto& row : hot_expert.counts) row[0] = 7;
      check_case(hot_expert);
    }
}

TEST_CASE("alltoallv: explicit send and receive offsets, out of order and with gaps, keep the gaps untouched") {
  std::mt19937 rng(7);
  for (std::int32_t n : {1, 2, 3, 4, 7})
    for (const std::string& algo : algorithms()) {
      Case c;
      c.n = n;
      c.algo = algo;
      c.counts = random_table(rng, n, 6);
      c.send_off = reversed_with_gaps(c.counts, true);
      c.recv_off = reversed_with_gaps(c.counts, false);
      check_case(c);
    }
}

TEST_CASE("alltoallv: every dtype moves bit for bit") {
  std::mt19937 rng(11);
  for (DType t : kAllDTypes)
    for (const std::string& algo : algorithms()) {
      Case c;
      c.n = 4;
      c.algo = algo;
      c.dtype = t;
      c.counts = random_table(rng, 4, 9);
      check_case(c);
    }
}

TEST_CASE("alltoallv: pairwise drops rounds whose blocks are all empty and names the largest block") {
  // Only round 2 (rank r to r+2) moves anything on 4 ranks.
  Case c{4, Table(4, std::vector<std::uint64_t>(4, 0)), {}, {}, "pairwise"};
  for (std::int32_t r = 0; r < 4; ++r) c.counts[r][(r + 2) % 4] = static_cast<std::uint64_t>(r + 1);
  auto sc = parse_scenario(scenario_text(c), "x.json");
  REQUIRE(sc.ok());
  auto s = lower_scenario(*sc);
  REQUIRE(s.ok());
  REQUIRE(s->steps.size() == 1);
  CHECK(s->steps[0].caption.find("round 2 of 3") != std::string::npos);
  CHECK(s->steps[0].caption.find("the largest 4 elements") != std::string::npos);
  // linear: one step; scattered on 9 ranks: two windows of four rounds.
  c.algo = "linear";
  auto lin = lower_scenario(*parse_scenario(scenario_text(c), "x.json"));
  REQUIRE(lin.ok());
  CHECK(lin->steps.size() == 1);
  Case wide{9, Table(9, std::vector<std::uint64_t>(9, 1)), {}, {}, "scattered"};
  auto sca = lower_scenario(*parse_scenario(scenario_text(wide), "x.json"));
  REQUIRE(sca.ok());
  CHECK(sca->steps.size() == 2);
  for (const Step& st : sca->steps) CHECK(st.transfers.size() <= 9 * 5);
}

namespace {

// Three ranks, counts[s][d] = s + d, packed; wrong: rank 2's block for rank 1 lands at
// the place of rank 0's block (offset 0 instead of 1).
Schedule hand_alltoallv(bool wrong) {
  constexpr std::int32_t n = 3;
  auto p = std::make_shared<PeerCounts>();
  p->ranks = n;
  p->counts.resize(9);
  for (std::int32_t s = 0; s < n; ++s)
    for (std::int32_t d = 0; d < n; ++d) p->counts[p->at(s, d)] = static_cast<std::uint64_t>(s + d);
  p->finish();
  Schedule sc;
  sc.ranks = n;
  sc.dtype = DType::float32;
  sc.buffers.push_back({"send", {p->in_need[0], p->in_need[1], p->in_need[2]}, false});
  sc.buffers.push_back({"recv", {p->out_need[0], p->out_need[1], p->out_need[2]}, false});
  Call call;
  call.args.coll = Collective::alltoallv;
  call.args.ranks = n;
  call.args.count = 4;
  call.args.in_buf = 0;
  call.args.out_buf = 1;
  call.args.peers = p;
  call.algorithm = "by hand";
  sc.calls.push_back(call);
  std::vector<Transfer> ts;
  for (std::int32_t s = 0; s < n; ++s)
    for (std::int32_t d = 0; d < n; ++d) {
      if (!p->count(s, d)) continue;
      const std::uint64_t at = wrong && s == 2 && d == 1 ? 0 : p->recv_at(d, s);
      ts.push_back(testing::copy(s, 0, p->send_at(s, d), d, 1, at, p->count(s, d)));
    }
  // The wrong schedule's two blocks into rank 1 overlap: run them in separate steps.
  if (wrong) {
    std::vector<Transfer> late;
    for (auto it = ts.begin(); it != ts.end();)
      if (it->src.rank == 2 && it->dst.rank == 1) late.push_back(*it), it = ts.erase(it);
      else ++it;
    testing::add_step(sc, ts);
    testing::add_step(sc, late);
  } else {
    testing::add_step(sc, ts);
  }
  return sc;
}

ExpectedElement nothing_postcondition(const CollArgs&, std::int32_t, std::uint64_t) {
  ExpectedElement e;
  e.keeps = true;
  return e;
}
void nothing_reference(const CollArgs&, ReferenceBuilder&) {}

RunOutcome run_on_cpu(const Schedule& s) {
  auto r = execute(
      s, [](std::int32_t b, std::int32_t rank, std::uint64_t i) { return (b + 1) * 100.0 + rank * 10.0 + i; },
      RunOptions{});
  REQUIRE(r);
  return std::move(*r);
}

}  // namespace

TEST_CASE("alltoallv: the symbolic check catches a block that lands in the wrong place") {
  CHECK(verify_symbolic(hand_alltoallv(false)).ok());
  const Status st = verify_symbolic(hand_alltoallv(true));
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.find("rank 1 recv[") != std::string::npos);
}

TEST_CASE("alltoallv: with a broken postcondition the numeric check still catches the wrong schedule") {
  CollectiveDescriptor broken = collective_descriptor(Collective::alltoallv);
  broken.postcondition = nothing_postcondition;
  const Schedule right = hand_alltoallv(false), wrong = hand_alltoallv(true);
  CHECK(run_on_cpu(right).numeric.wrong == 0);
  // "every element keeps its value" is fooled by nothing but rejects the right schedule...
  CHECK_FALSE(verify_symbolic(right, broken).ok());
  // ...and the numeric definition, which never reads it, counts the misplaced elements.
  const RunOutcome out = run_on_cpu(wrong);
  CHECK(out.numeric.wrong > 0);
}

TEST_CASE("alltoallv: with a broken numeric definition the symbolic check still catches the wrong schedule") {
  CollectiveDescriptor broken = collective_descriptor(Collective::alltoallv);
  broken.reference = nothing_reference;
  const Schedule wrong = hand_alltoallv(true);
  const RunOutcome out = run_on_cpu(wrong);
  const HostMemory inputs = make_inputs(
      wrong, [](std::int32_t b, std::int32_t rank, std::uint64_t i) { return (b + 1) * 100.0 + rank * 10.0 + i; });
  // The empty definition expects the receive buffers unchanged: it flags the right
  // schedule's outputs too, so it cannot tell right from wrong...
  CHECK(compare_numeric(wrong, out.result, compute_reference(wrong, inputs, broken)).wrong > 0);
  // ...while the postcondition, which never reads the definition, rejects the schedule.
  const Status st = verify_symbolic(wrong);
  REQUIRE_FALSE(st.ok());
  CHECK((st.error().id == "verify.wrong_data" || st.error().id == "verify.missing_contribution"));
}

// --- the scenario syntax ------------------------------------------------------------

namespace {

// A scenario of 4 ranks with buffers x (16 each) and y (16 each) and one call on line 6.
std::string with_call(const std::string& call, const std::string& groups = "") {
  return "{\n"
         "  \"version\": 1, \"ranks\": 4,\n"
         "  \"buffers\": {\"x\": {\"count\": 16, \"init\": \"rank_index\"}, \"y\": {\"count\": 16}}," +
         groups +
         "\n"
         "  \"program\": [\n"
         "    " +
         call +
         "\n"
         "  ]\n"
         "}\n";
}

Error parse_error(const std::string& text) {
  auto r = parse_scenario(text, "x.json");
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace

TEST_CASE("alltoallv: counts as an expression in rank, peer and size, with loop variables in a repeat") {
  auto s = parse_scenario(with_call("{\"op\": \"alltoallv\", \"send\": \"x\", \"recv\": \"y\", "
                                    "\"counts\": \"(rank + 2 * peer) % size\", \"caption\": \"c\"}"),
                          "x.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  auto l = lower_scenario(*s);
  REQUIRE(l.ok());
  const auto& p = *l->calls[0].args.peers;
  for (std::int32_t r = 0; r < 4; ++r)
    for (std::int32_t q = 0; q < 4; ++q) CHECK(p.count(r, q) == static_cast<std::uint64_t>((r + 2 * q) % 4));
  CHECK(l->calls[0].args.count == 3);  // the largest block
  auto run = execute(
      *l, [&](std::int32_t b, std::int32_t r, std::uint64_t i) { return initial_value(s->buffers[b], r, i); },
      RunOptions{});
  REQUIRE(run.ok());
  CHECK(run->verified());

  // In a repeat, the loop variable changes the routing from one iteration to the next.
  auto rep = parse_scenario(with_call("{\"op\": \"repeat\", \"times\": 2, \"var\": \"layer\", \"body\": ["
                                      "{\"op\": \"alltoallv\", \"send\": \"x\", \"recv\": \"y\", "
                                      "\"counts\": \"(rank + peer + layer) % 3\", \"caption\": \"layer {layer}\"}]}"),
                            "x.json");
  REQUIRE_MESSAGE(rep.ok(), (rep.ok() ? "" : rep.error().format()));
  auto lr = lower_scenario(*rep);
  REQUIRE_MESSAGE(lr.ok(), (lr.ok() ? "" : lr.error().format()));
  REQUIRE(lr->calls.size() == 2);
  CHECK(lr->calls[0].args.peers->count(0, 0) == 0);  // layer 0
  CHECK(lr->calls[1].args.peers->count(0, 0) == 1);  // layer 1
  CHECK(lr->calls[1].args.peers->count(1, 1) == 0);
  auto rr = execute(
      *lr, [&](std::int32_t b, std::int32_t r, std::uint64_t i) { return initial_value(rep->buffers[b], r, i); },
      RunOptions{});
  REQUIRE(rr.ok());
  CHECK(rr->verified());
}

TEST_CASE("alltoallv: on a split group, rank, peer and size are the group's") {
  const std::string groups = "\n  \"groups\": {\"pairs\": {\"split\": \"rank / 2\"}},";
  auto s = parse_scenario(with_call("{\"op\": \"alltoallv\", \"send\": \"x\", \"recv\": \"y\", \"group\": \"pairs\", "
                                    "\"counts\": \"1 + rank + 2 * peer + size\", \"algorithm\": \"pairwise\", "
                                    "\"caption\": \"c\"}",
                                    groups),
                          "x.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  auto l = lower_scenario(*s);
  REQUIRE_MESSAGE(l.ok(), (l.ok() ? "" : l.error().format()));
  REQUIRE(l->calls.size() == 2);
  for (const Call& c : l->calls) {
    REQUIRE(c.args.peers);
    CHECK(c.args.peers->ranks == 2);
    CHECK(c.args.peers->count(1, 0) == 4);  // 1 + 1 + 0 + 2
    CHECK(c.args.peers->count(0, 1) == 5);
  }
  for (RunMode mode : {RunMode::fast, RunMode::observable}) {
    RunOptions o;
    o.mode = mode;
    auto run = execute(
        *l, [&](std::int32_t b, std::int32_t r, std::uint64_t i) { return initial_value(s->buffers[b], r, i); }, o);
    REQUIRE(run.ok());
    CHECK_MESSAGE(run->verified(), run->numeric.message());
  }
}

TEST_CASE("alltoallv: the call survives the round trip through to_json, tables and expressions") {
  const std::string text = with_call(
      "{\"op\": \"alltoallv\", \"send\": \"x\", \"recv\": \"y\", \"counts\": [[1, 0, 2, 0], [0, 0, 0, 3], "
      "[1, 1, 1, 1], [0, 2, 0, 0]], \"recv_offsets\": \"4 * peer\", \"algorithm\": \"linear\", \"caption\": \"c\"}");
  auto s = parse_scenario(text, "x.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  const std::string back = to_json(*s);
  CHECK(back.find("\"counts\"") != std::string::npos);
  CHECK(back.find("\"recv_offsets\": \"4 * peer\"") != std::string::npos);
  auto again = parse_scenario(back, "back.json");
  REQUIRE_MESSAGE(again.ok(), (again.ok() ? "" : again.error().format()));
  CHECK(to_json(*again) == back);
  auto a = lower_scenario(*s), b = lower_scenario(*again);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a->calls[0].args.peers == *b->calls[0].args.peers);
  CHECK(a->calls[0].args.peers->recv_at(1, 2) == 8);
}

TEST_CASE("alltoallv: bad calls get one clear error with id, place and hint") {
  struct Bad {
    std::string call, id, message_part, pointer;
  };
  const std::vector<Bad> bad = {
      {R"j({"op": "alltoallv", "send": "x", "recv": "y"})j", "scenario.missing_key", "alltoallv is missing \"counts\"",
       "/program/0"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": 1, "count": 4})j", "scenario.unknown_key",
       "does not apply to alltoallv", "/program/0"},
      {R"j({"op": "allreduce", "buffer": "x", "counts": 2})j", "scenario.unknown_key", "does not apply to allreduce",
       "/program/0"},
      {R"j({"op": "alltoallv", "buffer": "x", "counts": 1})j", "scenario.in_place_unsupported",
       "alltoallv cannot run in place", "/program/0/buffer"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": [[1, 1, 1, 1], [1, 1, 1, 1]]})j",
       "scenario.out_of_range", "\"counts\" has 2 rows, but alltoallv runs on 4 ranks", "/program/0/counts"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": [[1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]})j",
       "scenario.out_of_range", "row 0 of \"counts\" has 3 numbers", "/program/0/counts"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": [[1, -1, 1, 1]]})j", "scenario.out_of_range",
       "is negative", "/program/0/counts/0/1"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": "rank - peer"})j", "scenario.out_of_range",
       "\"counts\" \"rank - peer\" is -1 for rank 0 and peer 1", "/program/0/counts"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": "rank + peers"})j", "scenario.bad_expression",
       "unknown name \"peers\" (did you mean \"peer\"?)", "/program/0/counts"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": "rank / (peer - 1)"})j", "program.bad_value",
       "\"counts\" for rank 0 and peer 1", "/program/0/counts"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": "12 * (rank == 1)"})j", "scenario.buffer_too_small",
       "send buffer \"x\" is too small for alltoallv on rank 1: needs 48 elements, has 16", "/program/0/send"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": "peer", "recv_offsets": 0})j", "scenario.bad_call",
       "on rank 1 the block from rank 0 (elements 0..1) overlaps the block from rank 1", "/program/0/recv_offsets"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": {"a": 1}})j", "scenario.wrong_type",
       "counts must be an integer or an expression", "/program/0/counts"},
      {R"j({"op": "alltoallv", "send": "x", "recv": "y", "counts": [3]})j", "scenario.wrong_type",
       "a row of \"counts\" must be an array", "/program/0/counts/0"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.call);
    const Error e = parse_error(with_call(b.call));
    CHECK(e.id == b.id);
    CHECK_MESSAGE(e.message.find(b.message_part) != std::string::npos, e.message);
    CHECK(e.where.file == "x.json");
    CHECK(e.where.line >= 5);
    CHECK(e.where.col > 0);
    CHECK(e.where.pointer == b.pointer);
    CHECK(!e.hint.empty());
    CHECK(e.exit == ExitCode::bad_input);
  }
}

TEST_CASE("alltoallv: the command line runs the default pattern and refuses what it cannot run") {
  using test_shell::shell;
  const std::string bin = COLLSCOPE_BINARY;
  auto ok = shell(bin + " run --coll alltoallv --ranks 5 --count 3 --algo pairwise 2>&1");
  CHECK_MESSAGE(ok.code == 0, ok.out);
  CHECK(ok.out.find("alltoallv") != std::string::npos);
  for (const char* algo : {"linear", "scattered", "auto"}) {
    auto r = shell(bin + " run --coll alltoallv --ranks 6 --count 2 --mode observable --algo " + algo + " 2>&1");
    CHECK_MESSAGE(r.code == 0, r.out);
  }
  auto in_place = shell(bin + " run --coll alltoallv --in-place 2>&1");
  CHECK(in_place.code == 2);
  CHECK(in_place.out.find("scenario.in_place_unsupported") != std::string::npos);
  auto nccl = shell(bin + " run --coll alltoallv --algo nccl 2>&1");
  CHECK(nccl.code == 2);
  CHECK(nccl.out.find("valid algorithms for alltoallv: auto, pairwise, linear, scattered") != std::string::npos);
}
