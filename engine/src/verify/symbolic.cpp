// Symbolic execution of a schedule on contribution sets (DESIGN §4).
//
// Instead of numbers, every element knows which inputs it holds. Elements that
// move together are kept together: each (rank, buffer) is a map of segments, and a
// segment says "element p of me holds, for every term, input element
// term.base + shift + (p - start) of buffer term.buf on each rank in term.ranks".
// A copy shares the source's content (O(1)); a reduce merges two contents and is
// where double counting is caught. At the end of a call the collective's
// postcondition is checked segment by segment against the expected contents.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collscope/collective.h"
#include "collscope/verify.h"
#include "describe.h"
#include "expect.h"

namespace collscope {

namespace {

struct Content {
  std::uint32_t scaled = 0;  // how many times an average division was applied
  std::vector<SymTerm> terms;
};
using ContentPtr = std::shared_ptr<const Content>;  // null = uninitialised scratch memory

struct Seg {
  std::uint64_t end;
  ContentPtr content;
  std::uint64_t shift;   // added to every term's base
  std::int32_t last_step;  // absolute step that last wrote it (-1: the call's input)
};
using SegMap = std::map<std::uint64_t, Seg>;  // keyed by start

// Splits the segment containing `at` so that a segment starts exactly at `at`.
void split_at(SegMap& m, std::uint64_t at) {
  auto it = m.upper_bound(at);
  if (it == m.begin()) return;
  --it;
  if (it->first == at || it->second.end <= at) return;
  Seg right = it->second;
  right.shift += at - it->first;
  it->second.end = at;
  m.emplace(at, std::move(right));
}

struct Piece {
  std::uint64_t start, end;  // relative to the slice start
  ContentPtr content;
  std::uint64_t shift;  // shift at the piece's first element
};

std::vector<Piece> read_slice(const SegMap& m, std::uint64_t off, std::uint64_t count) {
  std::vector<Piece> out;
  auto it = m.upper_bound(off);
  if (it != m.begin()) --it;
  const std::uint64_t end = off + count;
  for (; it != m.end() && it->first < end; ++it) {
    if (it->second.end <= off) continue;
    const std::uint64_t a = std::max(it->first, off), b = std::min(it->second.end, end);
    out.push_back({a - off, b - off, it->second.content, it->second.shift + (a - it->first)});
  }
  return out;
}

}  // namespace

struct SymbolicState::Impl {
  const Schedule& s;
  std::int32_t call;
  std::int32_t next;
  std::int32_t end;
  std::size_t words;
  std::vector<SegMap> maps;  // index rank * nbuf + buf
  std::vector<std::vector<std::uint64_t>> heard;  // barrier knowledge per rank

  Impl(const Schedule& sched, std::int32_t c) : s(sched), call(c) {
    const auto& cl = s.calls[static_cast<std::size_t>(c)];
    next = cl.first_step;
    end = cl.first_step + cl.num_steps;
    words = (static_cast<std::size_t>(s.ranks) + 63) / 64;
    const std::size_t nbuf = s.buffers.size();
    maps.resize(static_cast<std::size_t>(s.ranks) * nbuf);
    for (std::int32_t r = 0; r < s.ranks; ++r)
      for (std::size_t b = 0; b < nbuf; ++b) {
        const std::uint64_t n = s.buffers[b].count[static_cast<std::size_t>(r)];
        if (n == 0) continue;
        ContentPtr content;
        if (!s.buffers[b].scratch) {
          auto ct = std::make_shared<Content>();
          SymTerm t{static_cast<std::int32_t>(b), 0, std::vector<std::uint64_t>(words, 0)};
          t.ranks[static_cast<std::size_t>(r) / 64] |= 1ull << (r % 64);
          ct->terms.push_back(std::move(t));
          content = ct;
        }
        maps[map_index(r, static_cast<std::int32_t>(b))].emplace(0, Seg{n, content, 0, -1});
      }
    heard.assign(static_cast<std::size_t>(s.ranks), std::vector<std::uint64_t>(words, 0));
    for (std::int32_t r = 0; r < s.ranks; ++r) heard[static_cast<std::size_t>(r)][static_cast<std::size_t>(r) / 64] |= 1ull << (r % 64);
  }

  std::size_t map_index(std::int32_t rank, std::int32_t buf) const {
    return static_cast<std::size_t>(rank) * s.buffers.size() + static_cast<std::size_t>(buf);
  }

  // Replaces [off, off+count) of (rank, buf) by the given pieces.
  void write(std::int32_t rank, std::int32_t buf, std::uint64_t off, std::uint64_t count, std::vector<Piece> pieces,
             std::int32_t step) {
    SegMap& m = maps[map_index(rank, buf)];
    split_at(m, off);
    split_at(m, off + count);
    m.erase(m.lower_bound(off), m.lower_bound(off + count));
    for (auto& p : pieces) m.emplace(off + p.start, Seg{off + p.end, std::move(p.content), p.shift, step});
  }

  Status merge(const ContentPtr& dst, std::uint64_t dshift, const ContentPtr& src, std::uint64_t sshift,
               ContentPtr& out, std::string& problem) {
    if (!dst || !src) {
      out = nullptr;
      return ok_status();
    }
    if (dst->scaled || src->scaled) {
      problem = "combines data that was already divided for an average";
      return make_error("verify.double_count", "");
    }
    auto n = std::make_shared<Content>();
    n->terms.reserve(dst->terms.size() + src->terms.size());
    for (const auto& t : dst->terms) n->terms.push_back({t.buf, t.base + dshift, t.ranks});
    for (const auto& t : src->terms) {
      const std::uint64_t base = t.base + sshift;
      auto it = std::find_if(n->terms.begin(), n->terms.end(),
                             [&](const SymTerm& x) { return x.buf == t.buf && x.base == base; });
      if (it == n->terms.end()) {
        n->terms.push_back({t.buf, base, t.ranks});
        continue;
      }
      for (std::size_t w = 0; w < words; ++w) {
        if (it->ranks[w] & t.ranks[w]) {
          const int bit = __builtin_ctzll(it->ranks[w] & t.ranks[w]);
          const auto who = static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(bit));
          problem = "would count rank " + std::to_string(who) + "'s " + s.buffers[static_cast<std::size_t>(t.buf)].name +
                    "[" + std::to_string(base) + "] twice";
          return make_error("verify.double_count", "");
        }
        it->ranks[w] |= t.ranks[w];
      }
    }
    out = std::move(n);
    return ok_status();
  }

  Status apply(std::int32_t k) {
    const Step& st = s.steps[static_cast<std::size_t>(k)];
    // Reads first (the conflict rule guarantees no transfer of this step sees another's write).
    std::vector<std::vector<Piece>> srcs(st.transfers.size());
    for (std::size_t t = 0; t < st.transfers.size(); ++t) {
      const auto& x = st.transfers[t];
      if (x.count == 0) continue;
      srcs[t] = read_slice(maps[map_index(x.src.rank, x.src.buf)], x.src.offset, x.count);
    }
    const bool has_signal = std::any_of(st.transfers.begin(), st.transfers.end(),
                                        [](const Transfer& x) { return x.count == 0; });
    const auto old_heard = has_signal ? heard : std::vector<std::vector<std::uint64_t>>{};
    for (std::size_t t = 0; t < st.transfers.size(); ++t) {
      const auto& x = st.transfers[t];
      if (x.count == 0) {
        for (std::size_t w = 0; w < words; ++w)
          heard[static_cast<std::size_t>(x.dst.rank)][w] |= old_heard[static_cast<std::size_t>(x.src.rank)][w];
        continue;
      }
      if (x.action == Action::copy) {
        write(x.dst.rank, x.dst.buf, x.dst.offset, x.count, std::move(srcs[t]), k);
        continue;
      }
      const auto dsts = read_slice(maps[map_index(x.dst.rank, x.dst.buf)], x.dst.offset, x.count);
      std::vector<Piece> result;
      if (x.action == Action::scale) {
        for (const auto& d : dsts) {
          std::shared_ptr<Content> n;
          if (d.content) {
            n = std::make_shared<Content>(*d.content);
            n->scaled += 1;
          }
          result.push_back({d.start, d.end, n, d.shift});
        }
        write(x.dst.rank, x.dst.buf, x.dst.offset, x.count, std::move(result), k);
        continue;
      }
      // reduce: walk both piece lists together.
      std::size_t i = 0, j = 0;
      std::uint64_t pos = 0;
      const auto& sp = srcs[t];
      while (pos < x.count) {
        while (dsts[i].end <= pos) ++i;
        while (sp[j].end <= pos) ++j;
        const std::uint64_t stop = std::min(dsts[i].end, sp[j].end);
        ContentPtr merged;
        std::string problem;
        auto st_ok = merge(dsts[i].content, dsts[i].shift + (pos - dsts[i].start), sp[j].content,
                           sp[j].shift + (pos - sp[j].start), merged, problem);
        if (!st_ok) {
          return make_error("verify.double_count",
                            "step " + std::to_string(k) + " (" + st.phase + "), transfer " + std::to_string(t) + " (" +
                                describe_transfer(s, x) + "): adding into rank " + std::to_string(x.dst.rank) + " " +
                                s.buffers[static_cast<std::size_t>(x.dst.buf)].name + "[" +
                                std::to_string(x.dst.offset + pos) + "] " + problem,
                            "each input may reach a reduced element exactly once: check which ranks already hold it");
        }
        result.push_back({pos, stop, merged, 0});
        pos = stop;
      }
      write(x.dst.rank, x.dst.buf, x.dst.offset, x.count, std::move(result), k);
    }
    return ok_status();
  }

  std::vector<SymTerm> terms_at(std::int32_t rank, std::int32_t buf, std::uint64_t index, const Seg** seg) const {
    const SegMap& m = maps[map_index(rank, buf)];
    auto it = m.upper_bound(index);
    if (it == m.begin()) return {};
    --it;
    if (it->second.end <= index) return {};
    *seg = &it->second;
    std::vector<SymTerm> out;
    if (!it->second.content) return out;
    for (const auto& t : it->second.content->terms) out.push_back({t.buf, t.base + it->second.shift + (index - it->first), t.ranks});
    return out;
  }

  Status postcondition();
};

SymbolicState::SymbolicState(const Schedule& s, std::int32_t call) : impl_(new Impl(s, call)) {}
SymbolicState::~SymbolicState() { delete impl_; }
Status SymbolicState::advance() {
  if (done()) return ok_status();
  return impl_->apply(impl_->next++);
}
std::int32_t SymbolicState::next_step() const { return impl_->next; }
bool SymbolicState::done() const { return impl_->next >= impl_->end; }
Status SymbolicState::check_postcondition() const { return impl_->postcondition(); }

std::vector<Contribution> SymbolicState::contents(std::int32_t rank, std::int32_t buf, std::uint64_t index) const {
  const Seg* seg = nullptr;
  std::vector<Contribution> out;
  for (const auto& t : impl_->terms_at(rank, buf, index, &seg)) {
    Contribution c{t.buf, t.base, {}};
    for (std::size_t w = 0; w < t.ranks.size(); ++w)
      for (std::uint64_t bits = t.ranks[w]; bits; bits &= bits - 1)
        c.ranks.push_back(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
    out.push_back(std::move(c));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Postconditions

Status SymbolicState::Impl::postcondition() {
  const Call& cl = s.calls[static_cast<std::size_t>(call)];
  const CollArgs& a = cl.args;
  const bool want_scaled = a.op == ReduceOp::avg && is_reducing(a.coll);

  if (a.coll == Collective::barrier) {
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
  }

  // Which elements of which (rank, buffer) are outputs of this call.
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> out_regions(maps.size());
  ExpectedContents expect(s, a);
  for (std::int32_t g = 0; g < a.ranks; ++g) {
    const std::uint64_t n = expect.output_count(g);
    if (n == 0) continue;
    const std::int32_t r = expect.world(g);
    const std::uint64_t off = a.out_offset(g);
    out_regions[map_index(r, a.out_buf)].push_back({off, off + n});
    // Walk the output range: expected runs against segments.
    std::uint64_t i = 0;
    while (i < n) {
      const Seg* seg = nullptr;
      auto got = terms_at(r, a.out_buf, off + i, &seg);
      std::uint64_t run = 0;
      auto want = expect.at(g, i, run);
      // The segment covers [.., seg_end); the expectation holds for `run` elements.
      const std::uint64_t seg_end = seg ? seg->end - off : n;
      const std::uint64_t stop = std::min({n, i + run, seg_end});
      const std::string where = "rank " + std::to_string(r) + " " + s.buffers[static_cast<std::size_t>(a.out_buf)].name +
                                "[" + std::to_string(off + i) + "]";
      const std::string when = seg && seg->last_step >= 0 ? " (last written in step " + std::to_string(seg->last_step) + ")"
                                                          : " (never written by the call)";
      if (seg && !seg->content) {
        return make_error("verify.missing_contribution", where + " holds uninitialised scratch data" + when,
                          "copy real data into scratch space before using it");
      }
      std::string diff = compare_terms(s, got, want, words);
      if (!diff.empty()) {
        const bool missing = diff.rfind("lacks", 0) == 0;
        return make_error(missing ? "verify.missing_contribution" : "verify.wrong_data", where + " " + diff + when,
                          "the " + std::string(name_of(a.coll)) + " postcondition does not hold: check the steps that "
                          "write this element");
      }
      const std::uint32_t scaled = seg && seg->content ? seg->content->scaled : 0;
      if (scaled != (want_scaled ? 1u : 0u)) {
        return make_error("verify.wrong_data",
                          where + (scaled ? " was divided " + std::to_string(scaled) + " time(s)"
                                          : " was never divided to form the average") + when,
                          "an average divides the complete sum exactly once");
      }
      i = stop;
    }
  }

  // Every other element of a user buffer must still hold its own input.
  for (std::int32_t r = 0; r < s.ranks; ++r)
    for (std::size_t b = 0; b < s.buffers.size(); ++b) {
      if (s.buffers[b].scratch) continue;
      const SegMap& m = maps[map_index(r, static_cast<std::int32_t>(b))];
      auto regions = out_regions[map_index(r, static_cast<std::int32_t>(b))];
      std::sort(regions.begin(), regions.end());
      for (const auto& [start, seg] : m) {
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
            const bool ok = seg.content && seg.content->scaled == 0 && seg.content->terms.size() == 1 &&
                            seg.content->terms[0].buf == static_cast<std::int32_t>(b) &&
                            seg.content->terms[0].base + seg.shift == start &&
                            only_rank(seg.content->terms[0].ranks, r);
            if (!ok)
              return make_error("verify.input_modified",
                                "rank " + std::to_string(r) + " " + s.buffers[b].name + "[" + std::to_string(p) +
                                    "] is not an output of " + std::string(name_of(a.coll)) +
                                    " but step " + std::to_string(seg.last_step) + " overwrote it",
                                "keep temporaries in scratch buffers; inputs must survive the call");
          }
          p = upto;
        }
      }
    }
  return ok_status();
}

Status verify_call_symbolic(const Schedule& s, std::int32_t call) {
  SymbolicState state(s, call);
  while (!state.done()) {
    auto st = state.advance();
    if (!st) return st;
  }
  return state.check_postcondition();
}

Status verify_symbolic(const Schedule& s) {
  if (auto st = check_bounds(s); !st) return st;
  if (auto st = check_conflicts(s); !st) return st;
  for (std::size_t c = 0; c < s.calls.size(); ++c)
    if (auto st = verify_call_symbolic(s, static_cast<std::int32_t>(c)); !st) return st;
  return ok_status();
}

}  // namespace collscope
