// The state of symbolic execution (verify/symbolic.cpp): every (rank, buffer) as a
// segment list, applied step by step; its postcondition check is in postcondition.cpp.
#pragma once

#include <string>
#include <vector>

#include "collscope/collective.h"
#include "collscope/verify.h"
#include "describe.h"
#include "expect.h"
#include "verify/radix_sort.h"
#include "verify/segments.h"

namespace collscope {

using symbolic::Content;
using symbolic::ContentRef;
using symbolic::Piece;
using symbolic::read_slice;
using symbolic::Seg;
using symbolic::SegList;
using symbolic::write_slice;

// In a whole-program state, the `scaled` of a content that the sets cannot follow (an
// input counted twice, data combined after an average) carries this bit.
constexpr std::uint32_t kInexact = 1u << 31;

struct SymbolicState::Impl {
  const Schedule& s;
  std::int32_t call;                 // -1: the whole program
  const CollectiveDescriptor* desc;  // whose postcondition the call must meet (null: the whole program)
  std::int32_t next;
  std::int32_t end;
  bool lenient = false;  // the whole program: mark double counts instead of failing
  // A call's state: its ranks. In a step it shares with the other parts of its split
  // group, the transfers into other ranks are theirs, not the call's.
  std::vector<char> member;
  bool foreign(const Step& st, const Transfer& x) const {
    return !st.shared.empty() && !member.empty() && !member[static_cast<std::size_t>(x.dst.rank)];
  }
  std::uint32_t words;
  std::vector<SegList> maps;                      // index rank * nbuf + buf
  std::vector<std::vector<std::uint64_t>> heard;  // barrier knowledge per rank

  // Scratch space reused by every step, so that applying a step allocates little.
  std::vector<Piece> src_pieces;       // what every transfer of the step reads
  std::vector<std::size_t> src_first;  // transfer t's pieces: [src_first[t], src_first[t + 1])
  std::vector<Piece> dst_pieces, result;

  Impl(const Schedule& sched, std::int32_t c, const CollectiveDescriptor* d, std::int32_t first, std::int32_t stop,
       bool whole)
      : s(sched), call(c), desc(d), next(first), end(stop), lenient(whole) {
    words = static_cast<std::uint32_t>((static_cast<std::size_t>(s.ranks) + 63) / 64);
    const std::size_t nbuf = s.buffers.size();
    maps.resize(static_cast<std::size_t>(s.ranks) * nbuf);
    if (c >= 0) {
      const auto& w = s.calls[static_cast<std::size_t>(c)].args.world_rank;
      member.assign(static_cast<std::size_t>(s.ranks), w.empty() ? 1 : 0);
      for (const std::int32_t r : w) member[static_cast<std::size_t>(r)] = 1;
    }

    // Pre-split: the offsets where the call's writes begin and end, per (rank, buffer).
    std::vector<std::size_t> first_cut;
    std::vector<std::uint64_t> cuts;
    collect_cuts(first_cut, cuts);
    std::vector<std::uint64_t> sort_tmp;

    std::vector<std::uint64_t> own(words, 0);
    for (std::int32_t r = 0; r < s.ranks; ++r)
      for (std::size_t b = 0; b < nbuf; ++b) {
        const std::uint64_t n = s.buffers[b].count[static_cast<std::size_t>(r)];
        if (n == 0) continue;
        ContentRef content;  // scratch starts uninitialised
        if (!s.buffers[b].scratch) {
          // "Element p holds rank r's own element p of this buffer."
          std::fill(own.begin(), own.end(), 0);
          own[static_cast<std::size_t>(r) / 64] |= 1ull << (r % 64);
          Content* ct = Content::create(1, words);
          ct->add_term(static_cast<std::int32_t>(b), 0, own.data());
          content = ContentRef(ct);
        }
        const std::size_t mi = map_index(r, static_cast<std::int32_t>(b));
        std::uint64_t* cb = cuts.data() + first_cut[mi];
        std::uint64_t* ce = cuts.data() + first_cut[mi + 1];
        radix_sort(cb, ce, sort_tmp);
        const std::uint64_t* ue = std::unique(cb, ce);
        // One segment from each cut to the next; all share the buffer's one content.
        SegList& m = maps[mi];
        m.segs.reserve(static_cast<std::size_t>(ue - cb) + 1);
        std::uint64_t start = 0;
        for (const std::uint64_t* it = cb; it != ue; ++it) {
          if (*it <= start || *it >= n) continue;
          m.segs.push_back({start, *it, content, start, -1});
          start = *it;
        }
        m.segs.push_back({start, n, content, start, -1});
        m.bounds_changed();
      }
    heard.assign(static_cast<std::size_t>(s.ranks), std::vector<std::uint64_t>(words, 0));
    for (std::int32_t r = 0; r < s.ranks; ++r)
      heard[static_cast<std::size_t>(r)][static_cast<std::size_t>(r) / 64] |= 1ull << (r % 64);
  }

  std::size_t map_index(std::int32_t rank, std::int32_t buf) const {
    return static_cast<std::size_t>(rank) * s.buffers.size() + static_cast<std::size_t>(buf);
  }

  // Where the call's writes begin and end, grouped by (rank, buffer): those of map
  // index mi are cuts[first_cut[mi] .. first_cut[mi + 1]), unsorted, with repeats.
  // Two passes (count, then fill) so the cuts go into one array of the right size.
  void collect_cuts(std::vector<std::size_t>& first_cut, std::vector<std::uint64_t>& cuts) const {
    auto for_each_write = [&](auto&& fn) {
      for (std::int32_t k = next; k < end; ++k)
        for (const Transfer& x : s.steps[static_cast<std::size_t>(k)].transfers)
          if (x.count != 0 && !foreign(s.steps[static_cast<std::size_t>(k)], x) && x.dst.rank >= 0 &&
              x.dst.rank < s.ranks && x.dst.buf >= 0 && static_cast<std::size_t>(x.dst.buf) < s.buffers.size())
            fn(map_index(x.dst.rank, x.dst.buf), x);
    };
    first_cut.assign(maps.size() + 1, 0);
    for_each_write([&](std::size_t mi, const Transfer&) { first_cut[mi + 1] += 2; });
    for (std::size_t i = 0; i < maps.size(); ++i) first_cut[i + 1] += first_cut[i];
    cuts.resize(first_cut.back());
    std::vector<std::size_t> fill(first_cut.begin(), first_cut.end() - 1);
    for_each_write([&](std::size_t mi, const Transfer& x) {
      cuts[fill[mi]++] = x.dst.offset;
      cuts[fill[mi]++] = x.dst.offset + x.count;
    });
  }

  // out = dst (+) src, each seen at its own shift; null (uninitialised scratch) if
  // either is. Returns false, and says why in `problem`, when an input would be
  // counted twice.
  bool merge(const ContentRef& dst, std::uint64_t dshift, const ContentRef& src, std::uint64_t sshift, ContentRef& out,
             std::string& problem) {
    if (!dst || !src) {
      out = ContentRef();
      return true;
    }
    bool inexact = false;
    if (dst->scaled || src->scaled) {
      problem = "combines data that was already divided for an average";
      if (!lenient) return false;
      inexact = true;
    }
    // A src term with the same buffer and element as a dst term folds into it; the
    // others are appended. Count them first, to allocate the content at its size.
    auto dst_match = [&](std::uint32_t i) {  // the dst term src term i folds into, or dst->nterms
      const std::uint64_t base = src->base(i) + sshift;
      std::uint32_t j = 0;
      while (j < dst->nterms && !(dst->buf(j) == src->buf(i) && dst->base(j) + dshift == base)) ++j;
      return j;
    };
    std::uint32_t nterms = dst->nterms;
    for (std::uint32_t i = 0; i < src->nterms; ++i)
      if (dst_match(i) == dst->nterms) ++nterms;
    Content* n = Content::create(nterms, words);
    ContentRef keep(n);  // frees it if we return an error
    for (std::uint32_t i = 0; i < dst->nterms; ++i) n->add_term(dst->buf(i), dst->base(i) + dshift, dst->ranks(i));
    for (std::uint32_t i = 0; i < src->nterms; ++i) {
      const std::int32_t tb = src->buf(i);
      const std::uint64_t base = src->base(i) + sshift;
      const std::uint64_t* bits = src->ranks(i);
      const std::uint32_t j = dst_match(i);
      if (j == dst->nterms) {
        n->add_term(tb, base, bits);
        continue;
      }
      std::uint64_t* into = n->ranks(j);
      for (std::size_t w = 0; w < words; ++w) {
        if (into[w] & bits[w]) {
          const int bit = __builtin_ctzll(into[w] & bits[w]);
          const auto who = static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(bit));
          problem = "would count rank " + std::to_string(who) + "'s " + s.buffers[static_cast<std::size_t>(tb)].name +
                    "[" + std::to_string(base) + "] twice";
          if (!lenient) return false;
          inexact = true;
        }
        into[w] |= bits[w];
      }
    }
    if (inexact) n->scaled |= kInexact;
    out = std::move(keep);
    return true;
  }

  Status apply(std::int32_t k) {
    const Step& st = s.steps[static_cast<std::size_t>(k)];
    const std::size_t nt = st.transfers.size();
    // Reads first (the conflict rule guarantees no transfer of this step sees another's write).
    src_pieces.clear();
    src_first.assign(nt + 1, 0);
    for (std::size_t t = 0; t < nt; ++t) {
      const auto& x = st.transfers[t];
      src_first[t] = src_pieces.size();
      if (x.count == 0 || foreign(st, x)) continue;
      read_slice(maps[map_index(x.src.rank, x.src.buf)], x.src.offset, x.count, src_pieces);
    }
    src_first[nt] = src_pieces.size();
    const bool has_signal =
        std::any_of(st.transfers.begin(), st.transfers.end(), [](const Transfer& x) { return is_signal(x); });
    const auto old_heard = has_signal ? heard : std::vector<std::vector<std::uint64_t>>{};
    for (std::size_t t = 0; t < nt; ++t) {
      const auto& x = st.transfers[t];
      if (x.action == Action::compute || foreign(st, x)) continue;  // work, not data; another part's
      if (x.count == 0) {
        for (std::size_t w = 0; w < words; ++w)
          heard[static_cast<std::size_t>(x.dst.rank)][w] |= old_heard[static_cast<std::size_t>(x.src.rank)][w];
        continue;
      }
      SegList& dm = maps[map_index(x.dst.rank, x.dst.buf)];
      Piece* sp = src_pieces.data() + src_first[t];
      const std::size_t nsp = src_first[t + 1] - src_first[t];
      if (x.action == Action::copy) {
        write_slice(dm, x.dst.offset, x.count, sp, nsp, k);
        continue;
      }
      // What the source is added to: the destination itself, or a reduce-copy's second
      // operand (read now: the conflict rule keeps this step's writes away from it).
      dst_pieces.clear();
      if (x.action == Action::reduce_copy)
        read_slice(maps[map_index(x.aux.rank, x.aux.buf)], x.aux.offset, x.count, dst_pieces);
      else read_slice(dm, x.dst.offset, x.count, dst_pieces);
      result.clear();
      if (x.action == Action::scale) {
        for (const auto& d : dst_pieces) {
          ContentRef n;
          if (d.content) {
            Content* c = Content::copy_of(*d.content.get());
            c->scaled += 1;
            n = ContentRef(c);
          }
          result.push_back({d.start, d.end, std::move(n), d.shift});
        }
        write_slice(dm, x.dst.offset, x.count, result.data(), result.size(), k);
        continue;
      }
      // reduce and reduce_copy: walk both piece lists together.
      std::size_t i = 0, j = 0;
      std::uint64_t pos = 0;
      const auto& dsts = dst_pieces;
      while (pos < x.count) {
        while (dsts[i].end <= pos) ++i;
        while (sp[j].end <= pos) ++j;
        const std::uint64_t stop = std::min(dsts[i].end, sp[j].end);
        ContentRef merged;
        std::string problem;
        if (!merge(dsts[i].content, dsts[i].shift + (pos - dsts[i].start), sp[j].content,
                   sp[j].shift + (pos - sp[j].start), merged, problem)) {
          return make_error("verify.double_count",
                            "step " + std::to_string(k) + " (" + st.phase + "), transfer " + std::to_string(t) + " (" +
                                describe_transfer(s, x) + "): adding into rank " + std::to_string(x.dst.rank) + " " +
                                s.buffers[static_cast<std::size_t>(x.dst.buf)].name + "[" +
                                std::to_string(x.dst.offset + pos) + "] " + problem,
                            "each input may reach a reduced element exactly once: check which ranks already hold it");
        }
        result.push_back({pos, stop, std::move(merged), 0});
        pos = stop;
      }
      write_slice(dm, x.dst.offset, x.count, result.data(), result.size(), k);
    }
    return ok_status();
  }

  // The terms element `index` of (rank, buf) holds, in the form the expectations use.
  std::vector<SymTerm> terms_at(std::int32_t rank, std::int32_t buf, std::uint64_t index, const Seg** seg) const {
    const Seg* sg = maps[map_index(rank, buf)].find(index);
    if (!sg) return {};
    *seg = sg;
    std::vector<SymTerm> out;
    if (!sg->content) return out;
    const Content& c = *sg->content.get();
    for (std::uint32_t i = 0; i < c.nterms; ++i)
      out.push_back({c.buf(i), c.base(i) + sg->shift + (index - sg->start),
                     std::vector<std::uint64_t>(c.ranks(i), c.ranks(i) + words)});
    return out;
  }

  // postcondition.cpp: the call's postcondition, in its parts.
  using Regions = std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>>;  // per map: output ranges
  Status postcondition();
  Status barrier_postcondition() const;
  Status output_postcondition(const ExpectedContents& expect, std::int32_t g, bool want_scaled);
  Status inputs_kept(Regions& out_regions) const;
};

}  // namespace collscope
