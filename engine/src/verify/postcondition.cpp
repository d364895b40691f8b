// The postcondition of one call, checked on the symbolic state at its end: every
// output element holds exactly what the collective's definition says, averages are
// divided once, and every other element of a user buffer still holds its own input
// (docs/ARCHITECTURE.md, "Verification").
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "verify/symbolic_state.h"

namespace collscope {

// ---------------------------------------------------------------------------
// Postconditions

namespace {

// True when the content, seen at `shift`, holds exactly the terms `want` (same
// buffers, bases and rank sets). A quick yes for the common case; on "no" the caller
// falls back to compare_terms, which also words the difference.
bool holds_exactly(const Content& c, std::uint64_t shift, const std::vector<SymTerm>& want, std::size_t words) {
  if (c.nterms != want.size()) return false;
  for (const SymTerm& w : want) {
    std::uint32_t i = 0;
    while (i < c.nterms && !(c.buf(i) == w.buf && c.base(i) + shift == w.base)) ++i;
    if (i == c.nterms || !std::equal(w.ranks.begin(), w.ranks.begin() + static_cast<std::ptrdiff_t>(words), c.ranks(i)))
      return false;
  }
  return true;
}

}  // namespace

// A barrier: every rank has heard, directly or through others, from every rank.
Status SymbolicState::Impl::barrier_postcondition() const {
  const CollArgs& a = s.calls[static_cast<std::size_t>(call)].args;
  for (std::int32_t g = 0; g < a.ranks; ++g) {
    const std::int32_t r = a.world_rank.empty() ? g : a.world_rank[static_cast<std::size_t>(g)];
    for (std::int32_t h = 0; h < a.ranks; ++h) {
      const std::int32_t q = a.world_rank.empty() ? h : a.world_rank[static_cast<std::size_t>(h)];
      if (!(heard[static_cast<std::size_t>(r)][static_cast<std::size_t>(q) / 64] >> (q % 64) & 1))
        return make_error("verify.missing_contribution",
                          "barrier: rank " + std::to_string(r) + " may leave before rank " + std::to_string(q) +
                              " has arrived (no chain of signals from " + std::to_string(q) + " to " +
                              std::to_string(r) + ")",
                          "every rank must hear, directly or through others, from every rank");
    }
  }
  return ok_status();
}

// Output elements of group rank g: expected runs against segments. An expectation
// holds for `run` elements with its bases advancing by one per element, so it is
// computed once per run and then advanced, not recomputed for every segment.
Status SymbolicState::Impl::output_postcondition(const ExpectedContents& expect, std::int32_t g, bool want_scaled) {
  const CollArgs& a = s.calls[static_cast<std::size_t>(call)].args;
  const std::uint64_t n = expect.output_count(g);
  const std::int32_t r = expect.world(g);
  const std::uint64_t off = a.out_offset(g);
  const SegList& m = maps[map_index(r, a.out_buf)];
  std::vector<SymTerm> want;
  std::uint64_t want_at = 0, want_end = 0;  // want is the rule for element want_at; it holds until want_end
  std::uint64_t i = 0;
  while (i < n) {
    if (i >= want_end) {
      std::uint64_t run = 0;
      want = expect.at(g, i, run);
      want_end = i + run;
    } else {
      for (auto& t : want) t.base += i - want_at;
    }
    want_at = i;
    const Seg* seg = m.find(off + i);
    // The segment covers [.., seg_end); the expectation holds until want_end.
    const std::uint64_t seg_end = seg ? seg->end - off : n;
    const std::uint64_t stop = std::min({n, want_end, seg_end});
    auto where = [&] {
      return "rank " + std::to_string(r) + " " + s.buffers[static_cast<std::size_t>(a.out_buf)].name + "[" +
             std::to_string(off + i) + "]";
    };
    auto when = [&] {
      return seg && seg->last_step >= 0 ? " (last written in step " + std::to_string(seg->last_step) + ")"
                                        : std::string(" (never written by the call)");
    };
    if (seg && !seg->content) {
      return make_error("verify.missing_contribution", where() + " holds uninitialised scratch data" + when(),
                        "copy real data into scratch space before using it");
    }
    if (!(seg && holds_exactly(*seg->content.get(), seg->shift + (off + i - seg->start), want, words))) {
      const Seg* ignored = nullptr;
      std::string diff = compare_terms(s, terms_at(r, a.out_buf, off + i, &ignored), want, words);
      if (!diff.empty()) {
        const bool missing = diff.rfind("lacks", 0) == 0;
        return make_error(missing ? "verify.missing_contribution" : "verify.wrong_data", where() + " " + diff + when(),
                          "the " + std::string(name_of(a.coll)) +
                              " postcondition does not hold: check the steps "
                              "that write this element");
      }
    }
    const std::uint32_t scaled = seg && seg->content ? seg->content->scaled : 0;
    if (scaled != (want_scaled ? 1u : 0u)) {
      return make_error("verify.wrong_data",
                        where() +
                            (scaled ? " was divided " + std::to_string(scaled) + " time(s)"
                                    : " was never divided to form the average") +
                            when(),
                        "an average divides the complete sum exactly once");
    }
    i = stop;
  }
  return ok_status();
}

// Every element of a user buffer outside the call's outputs still holds its own input
// (a program's own collective may use its other buffers as workspace).
Status SymbolicState::Impl::inputs_kept(Regions& out_regions) const {
  const Call& cl = s.calls[static_cast<std::size_t>(call)];
  const CollArgs& a = cl.args;
  for (std::int32_t r = 0; r < s.ranks; ++r)
    for (std::size_t b = 0; b < s.buffers.size(); ++b) {
      if (s.buffers[b].scratch) continue;
      if (cl.custom && static_cast<std::int32_t>(b) != a.in_buf && static_cast<std::int32_t>(b) != a.out_buf) continue;
      const SegList& m = maps[map_index(r, static_cast<std::int32_t>(b))];
      auto& regions = out_regions[map_index(r, static_cast<std::int32_t>(b))];
      std::sort(regions.begin(), regions.end());
      for (const Seg& seg : m.segs) {
        const std::uint64_t start = seg.start;
        if (seg.last_step < 0) continue;  // untouched
        // Check the parts of this segment outside the output regions.
        std::uint64_t p = start;
        while (p < seg.end) {
          bool inside = false;
          std::uint64_t upto = seg.end;
          for (const auto& [ra, rb] : regions) {
            if (p >= ra && p < rb) {
              inside = true;
              upto = std::min(upto, rb);
              break;
            }
            if (ra > p) upto = std::min(upto, ra);
          }
          if (!inside) {
            const Content* c = seg.content.get();
            const bool ok = c && c->scaled == 0 && c->nterms == 1 && c->buf(0) == static_cast<std::int32_t>(b) &&
                            c->base(0) + seg.shift == start &&
                            only_rank(std::vector<std::uint64_t>(c->ranks(0), c->ranks(0) + words), r);
            if (!ok)
              return make_error("verify.input_modified",
                                "rank " + std::to_string(r) + " " + s.buffers[b].name + "[" + std::to_string(p) +
                                    "] is not an output of " + std::string(name_of(a.coll)) + " but step " +
                                    std::to_string(seg.last_step) + " overwrote it",
                                "keep temporaries in scratch buffers; inputs must survive the call");
          }
          p = upto;
        }
      }
    }
  return ok_status();
}

Status SymbolicState::Impl::postcondition() {
  const Call& cl = s.calls[static_cast<std::size_t>(call)];
  const CollArgs& a = cl.args;
  const bool want_scaled = a.op == ReduceOp::avg && desc->reducing;

  if (desc->synchronizes)
    if (auto st = barrier_postcondition(); !st) return st;

  // Which elements of which (rank, buffer) are outputs of this call.
  Regions out_regions(maps.size());
  ExpectedContents expect(s, a, *desc);
  for (std::int32_t g = 0; g < a.ranks; ++g) {
    const std::uint64_t n = expect.output_count(g);
    if (n == 0) continue;
    const std::int32_t r = expect.world(g);
    const std::uint64_t off = a.out_offset(g);
    out_regions[map_index(r, a.out_buf)].push_back({off, off + n});
    if (auto st = output_postcondition(expect, g, want_scaled); !st) return st;
  }

  return inputs_kept(out_regions);
}

}  // namespace collscope
