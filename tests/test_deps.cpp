// The dataflow dependencies of fast mode (backends/cpu/deps.h), checked for sufficiency:
// whenever two accesses to the same memory conflict (at least one writes), the later
// one's lane must know, through the chain of what it waited for, that the earlier one's
// lane has finished that step. Random schedules over every algorithm's shapes would be
// slow to enumerate, so the property runs on random hand-made schedules and on real
// algorithms at a few sizes.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "ir/deps.h"

using namespace collscope;

namespace {

struct Access {
  std::int32_t step, lane, rank, buf;
  std::uint64_t a, b;
  bool write;
};

std::vector<Access> accesses(const Schedule& s) {
  std::vector<Access> out;
  for (std::int32_t k = 0; k < static_cast<std::int32_t>(s.steps.size()); ++k)
    for (const auto& t : s.steps[static_cast<std::size_t>(k)].transfers) {
      if (t.count == 0) continue;
      const std::int32_t lane = dataflow::lane_of(s, t);
      for_each_read(t, [&](const Loc& l) {
        out.push_back({k, lane, l.rank, l.buf, l.offset, l.offset + t.count, false});
      });
      out.push_back({k, lane, t.dst.rank, t.dst.buf, t.dst.offset, t.dst.offset + t.count, true});
    }
  return out;
}

// known[lane][step][other]: the latest step of `other` that `lane` is sure has finished
// when it starts `step` (within one iteration; -1: none).
using Known = std::vector<std::vector<std::vector<std::int32_t>>>;

Known happens_before(const Schedule& s, const std::vector<std::vector<std::vector<dataflow::Dep>>>& deps) {
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
        // What q knew when it started d.step, it still knew when it finished it.
        const auto& theirs = known[q][static_cast<std::size_t>(d.step)];
        for (std::size_t o = 0; o < lanes; ++o) kn[o] = std::max(kn[o], theirs[o]);
      }
    }
  return known;
}

// Every conflicting pair (earlier step, other lane) is ordered. Returns the number of
// pairs checked.
std::size_t check_sufficient(const Schedule& s) {
  const auto deps = dataflow::compute_deps(s);
  const auto known = happens_before(s, deps);
  const auto acc = accesses(s);
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < acc.size(); ++i)
    for (std::size_t j = 0; j < acc.size(); ++j) {
      const auto &x = acc[i], &y = acc[j];
      if (x.step >= y.step || x.lane == y.lane || x.rank != y.rank || x.buf != y.buf) continue;
      if (!(x.write || y.write) || x.b <= y.a || y.b <= x.a) continue;
      ++pairs;
      const auto seen =
          known[static_cast<std::size_t>(y.lane)][static_cast<std::size_t>(y.step)][static_cast<std::size_t>(x.lane)];
      CHECK_MESSAGE(seen >= x.step, "lane " << y.lane << " at step " << y.step << " may run before lane " << x.lane
                                            << " finished step " << x.step << " (rank " << x.rank << ", elements "
                                            << std::max(x.a, y.a) << "..)");
    }
  return pairs;
}

// Repeated runs (benchmarks): between two iterations every rank writes its inputs (what
// the schedule reads before writing) afresh. Unrolls two iterations and checks, through
// the chain of waits, that the owner's rewrite comes after every read of the old values
// in iteration 1, that every read of an input in iteration 2 comes after the rewrite, and
// that every conflicting pair of accesses across the two iterations is ordered. Returns
// the number of pairs checked.
std::size_t check_repeated(const Schedule& s, const std::vector<std::vector<std::vector<dataflow::Dep>>>& deps) {
  const std::size_t lanes = deps.size(), S = s.steps.size();
  if (S == 0) return 0;
  // known[lane][K][other] over the absolute steps K of two iterations.
  Known known(lanes, std::vector<std::vector<std::int32_t>>(2 * S, std::vector<std::int32_t>(lanes, -1)));
  for (std::size_t K = 0; K < 2 * S; ++K)
    for (std::size_t l = 0; l < lanes; ++l) {
      auto& kn = known[l][K];
      if (K > 0) {
        kn = known[l][K - 1];
        kn[l] = static_cast<std::int32_t>(K - 1);
      }
      for (const auto& d : deps[l][K % S]) {
        const std::int64_t at = static_cast<std::int64_t>(K / S * S) + d.step;
        if (at < 0) continue;
        const auto q = static_cast<std::size_t>(d.rank);
        kn[q] = std::max(kn[q], static_cast<std::int32_t>(at));
        const auto& theirs = known[q][static_cast<std::size_t>(at)];
        for (std::size_t o = 0; o < lanes; ++o) kn[o] = std::max(kn[o], theirs[o]);
      }
    }
  // The inputs: elements read before any write in one iteration.
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<bool>> written;
  std::vector<Access> acc = accesses(s), inputs;
  for (const auto& x : acc) {
    auto& w = written[{x.rank, x.buf}];
    if (w.size() < x.b) w.resize(x.b, false);
    for (std::uint64_t e = x.a; e < x.b; ++e) {
      if (!x.write && !w[e]) inputs.push_back({x.step, x.lane, x.rank, x.buf, e, e + 1, false});
      if (x.write) w[e] = true;
    }
  }
  std::size_t pairs = 0;
  const auto last = static_cast<std::int32_t>(S - 1);
  for (const auto& in : inputs) {
    const auto owner = static_cast<std::size_t>(in.rank);
    if (static_cast<std::size_t>(in.lane) == owner) continue;
    ++pairs;
    // The owner rewrites the input after this read of iteration 1...
    CHECK_MESSAGE(
        known[owner][S][static_cast<std::size_t>(in.lane)] >= in.step,
        "rank " << in.rank << " may rewrite its input before lane " << in.lane << " read it at step " << in.step);
    // ...and this read of iteration 2 comes after the rewrite (the owner finished iteration 1).
    CHECK_MESSAGE(known[static_cast<std::size_t>(in.lane)][S + static_cast<std::size_t>(in.step)][owner] >= last,
                  "lane " << in.lane << " may read rank " << in.rank << "'s input at step " << in.step
                          << " of the second run before it was written afresh");
  }
  // Conflicting pairs across the iterations: x in iteration 1, y in iteration 2.
  for (const auto& x : acc)
    for (const auto& y : acc) {
      if (x.lane == y.lane || x.rank != y.rank || x.buf != y.buf) continue;
      if (!(x.write || y.write) || x.b <= y.a || y.b <= x.a) continue;
      ++pairs;
      CHECK_MESSAGE(known[static_cast<std::size_t>(y.lane)][S + static_cast<std::size_t>(y.step)]
                         [static_cast<std::size_t>(x.lane)] >= x.step,
                    "lane " << y.lane << " at step " << y.step << " of the second run may run before lane " << x.lane
                            << " finished step " << x.step << " of the first");
    }
  return pairs;
}

}  // namespace

TEST_CASE("deps: random schedules: every conflicting access waits, directly or through others") {
  std::mt19937 rng(20261130);
  std::size_t pairs = 0, repeated = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Schedule s;
    s.ranks = 2 + static_cast<std::int32_t>(rng() % 5);
    const std::uint64_t n = 16;
    s.buffers.push_back({"x", std::vector<std::uint64_t>(static_cast<std::size_t>(s.ranks), n), false});
    s.buffers.push_back({"y", std::vector<std::uint64_t>(static_cast<std::size_t>(s.ranks), n), false});
    const int steps = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < steps; ++k) {
      Step st;
      // A few transfers with random slices, none in conflict with another of its step
      // (a step that races is refused by the verifier before anything runs).
      const int m = 1 + static_cast<int>(rng() % 4);
      auto clash = [](const Loc& p, std::uint64_t pn, bool pw, const Loc& q, std::uint64_t qn, bool qw) {
        return (pw || qw) && p.rank == q.rank && p.buf == q.buf && p.offset < q.offset + qn && q.offset < p.offset + pn;
      };
      for (int t = 0; t < m; ++t) {
        const std::uint64_t count = 1 + rng() % 8;
        Transfer tr;
        tr.src = {static_cast<std::int32_t>(rng() % static_cast<unsigned>(s.ranks)),
                  static_cast<std::int32_t>(rng() % 2), rng() % (n - count + 1)};
        tr.dst = {static_cast<std::int32_t>(rng() % static_cast<unsigned>(s.ranks)),
                  static_cast<std::int32_t>(rng() % 2), rng() % (n - count + 1)};
        tr.count = count;
        const unsigned kind = rng() % 3;
        tr.action = kind == 0 ? Action::copy : kind == 1 ? Action::reduce : Action::reduce_copy;
        // A reduce-copy's second operand: on the destination rank, the other buffer.
        tr.aux = tr.action == Action::reduce_copy ? Loc{tr.dst.rank, 1 - tr.dst.buf, rng() % (n - count + 1)} : tr.dst;
        bool ok = !clash(tr.src, count, false, tr.dst, count, true);
        for (const auto& o : st.transfers)
          ok = ok && !clash(tr.dst, count, true, o.dst, o.count, true) &&
               !clash(tr.dst, count, true, o.src, o.count, false) &&
               !clash(tr.src, count, false, o.dst, o.count, true) &&
               !clash(tr.dst, count, true, o.aux, o.count, false) && !clash(tr.aux, count, false, o.dst, o.count, true);
        if (ok) st.transfers.push_back(tr);
      }
      s.steps.push_back(std::move(st));
    }
    pairs += check_sufficient(s);
    repeated += check_repeated(s, dataflow::compute_deps(s));
  }
  CHECK(pairs > 1000);  // the property was exercised, not vacuous
  CHECK(repeated > 1000);
}

TEST_CASE("deps: every allreduce, reduce_scatter and allgather algorithm, odd and even rank counts") {
  std::size_t pairs = 0, repeated = 0;
  for (Collective c : {Collective::allreduce, Collective::reduce_scatter, Collective::allgather})
    for (const auto& name : algorithm_names(c))
      for (std::int32_t ranks : {3, 4, 6})
        for (bool in_place : {true, false}) {
          CAPTURE(name);
          CAPTURE(ranks);
          CAPTURE(in_place);
          CollArgs a;
          a.coll = c;
          a.ranks = ranks;
          a.count = 10;
          a.in_place = in_place;
          const auto sh = shape_of(c, ranks, 0, 0, a.count);
          const std::uint64_t n = std::max(sh.in_count, sh.out_count) * static_cast<std::uint64_t>(ranks);
          Schedule s;
          s.ranks = ranks;
          s.buffers.push_back({"in", std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), n), false});
          s.buffers.push_back({"out", std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), n), false});
          a.in_buf = 0;
          a.out_buf = in_place ? 0 : 1;
          REQUIRE(lower_call(s, a, name).ok());
          pairs += check_sufficient(s);  // some (pairwise) have no conflicting pairs at all
          repeated += check_repeated(s, dataflow::compute_deps(s));
        }
  CHECK(pairs > 1000);
  CHECK(repeated > 1000);
}

TEST_CASE("deps: repeated runs of a 2-rank recursive doubling synchronise at every iteration") {
  // Out of place with 2 ranks, each rank only reads its partner's input and writes its
  // own output: one step. Unless inputs count as written afresh between iterations,
  // repeating it would need no waiting at all, and a benchmark would time no exchange.
  CollArgs a;
  a.coll = Collective::allreduce;
  a.ranks = 2;
  a.count = 4;
  Schedule s;
  s.ranks = 2;
  s.buffers.push_back({"in", {4, 4}, false});
  s.buffers.push_back({"out", {4, 4}, false});
  a.in_buf = 0;
  a.out_buf = 1;
  REQUIRE(lower_call(s, a, "recursive_doubling").ok());
  REQUIRE(s.steps.size() == 1);
  const auto deps = dataflow::compute_deps(s);
  for (std::int32_t r = 0; r < 2; ++r) {
    const auto& d = deps[static_cast<std::size_t>(r)][0];
    // Rank r waits for its partner to have finished the previous iteration (its inputs
    // are then new) -- and that partner, before rewriting, for rank r's read.
    REQUIRE(d.size() == 1);
    CHECK(d[0].rank == 1 - r);
    CHECK(d[0].step == -1);
  }
}
