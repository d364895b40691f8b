// Expected contents of a collective's outputs, in terms of its inputs, for the
// symbolic check (docs/ARCHITECTURE.md, "Verification").
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collscope/collective.h"
#include "collscope/schedule.h"

namespace collscope {

// "For every rank in `ranks` (a bitset over world ranks), element `base` of buffer `buf`."
struct SymTerm {
  std::int32_t buf;
  std::uint64_t base;
  std::vector<std::uint64_t> ranks;
};

inline bool only_rank(const std::vector<std::uint64_t>& bits, std::int32_t r) {
  for (std::size_t w = 0; w < bits.size(); ++w) {
    const std::uint64_t want = w == static_cast<std::size_t>(r) / 64 ? 1ull << (r % 64) : 0;
    if (bits[w] != want) return false;
  }
  return true;
}

inline std::int32_t first_rank(const std::vector<std::uint64_t>& bits) {
  for (std::size_t w = 0; w < bits.size(); ++w)
    if (bits[w]) return static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits[w])));
  return -1;
}

// The postcondition of one call in the symbolic checker's terms: the collective's
// descriptor says which group ranks' input elements an output element holds; this
// turns that into terms over world ranks and input buffers. Only the symbolic check
// uses it: the numeric reference computes values from the descriptor's separate
// numeric definition, so that a mistake in one is caught by the other.
class ExpectedContents {
 public:
  ExpectedContents(const Schedule& s, const CollArgs& a, const CollectiveDescriptor& d)
      : a_(a), d_(d), words_((static_cast<std::size_t>(s.ranks) + 63) / 64) {
    all_.assign(words_, 0);
    for (std::int32_t g = 0; g < a.ranks; ++g) set(all_, world(g));
  }

  std::int32_t world(std::int32_t g) const {
    return a_.world_rank.empty() ? g : a_.world_rank[static_cast<std::size_t>(g)];
  }

  std::uint64_t output_count(std::int32_t g) const { return d_.moves_data ? d_.shape(a_, g).out_count : 0; }

  // The terms output element i of group rank g must hold; `run` = for how many
  // following elements the same rule holds with every base advanced by one.
  std::vector<SymTerm> at(std::int32_t g, std::uint64_t i, std::uint64_t& run) const {
    const ExpectedElement e = d_.postcondition(a_, g, i);
    run = std::max<std::uint64_t>(1, e.run);
    if (e.keeps) {  // the element holds what it held before the call: its own element
      std::vector<std::uint64_t> own(words_, 0);
      set(own, world(g));
      return {SymTerm{a_.out_buf, a_.out_offset(g) + i, std::move(own)}};
    }
    const std::int32_t first = std::max(0, e.first), last = std::min(a_.ranks, e.last);
    // One term per distinct input offset: in place, ranks may keep their input at
    // different places of the buffer (an all-gather's rank r at r*count).
    if (first == 0 && last == a_.ranks && last > 0 && same_offsets())
      return {SymTerm{a_.in_buf, a_.in_offset(0) + e.index, all_}};
    std::vector<SymTerm> terms;
    for (std::int32_t src = first; src < last; ++src) {
      const std::uint64_t base = a_.in_offset(src) + e.index;
      auto t = std::find_if(terms.begin(), terms.end(), [&](const SymTerm& x) { return x.base == base; });
      if (t == terms.end())
        t = terms.insert(terms.end(), SymTerm{a_.in_buf, base, std::vector<std::uint64_t>(words_, 0)});
      set(t->ranks, world(src));
    }
    return terms;
  }

 private:
  void set(std::vector<std::uint64_t>& bits, std::int32_t r) const {
    bits[static_cast<std::size_t>(r) / 64] |= 1ull << (r % 64);
  }
  // Does every group rank's input start at the same offset? (Asked once.)
  bool same_offsets() const {
    if (same_offsets_ < 0) {
      same_offsets_ = 1;
      for (std::int32_t g = 1; g < a_.ranks && same_offsets_; ++g)
        if (a_.in_offset(g) != a_.in_offset(0)) same_offsets_ = 0;
    }
    return same_offsets_ == 1;
  }
  const CollArgs& a_;
  const CollectiveDescriptor& d_;
  std::size_t words_;
  std::vector<std::uint64_t> all_;
  mutable int same_offsets_ = -1;
};

// "" when equal; otherwise a phrase: "lacks ..." or "holds ...".
inline std::string compare_terms(const Schedule& s, std::vector<SymTerm> got, std::vector<SymTerm> want,
                                 std::size_t words) {
  auto key_less = [](const SymTerm& x, const SymTerm& y) { return x.buf != y.buf ? x.buf < y.buf : x.base < y.base; };
  std::sort(got.begin(), got.end(), key_less);
  std::sort(want.begin(), want.end(), key_less);
  auto name = [&](const SymTerm& t, std::int32_t r) {
    return "rank " + std::to_string(r) + "'s " + s.buffers[static_cast<std::size_t>(t.buf)].name + "[" +
           std::to_string(t.base) + "]";
  };
  std::size_t i = 0, j = 0;
  std::string extra;
  while (i < got.size() || j < want.size()) {
    if (j == want.size() || (i < got.size() && key_less(got[i], want[j]))) {
      if (extra.empty()) extra = "holds " + name(got[i], first_rank(got[i].ranks)) + ", which does not belong there";
      ++i;
      continue;
    }
    if (i == got.size() || key_less(want[j], got[i])) return "lacks " + name(want[j], first_rank(want[j].ranks));
    for (std::size_t w = 0; w < words; ++w) {
      const std::uint64_t missing = want[j].ranks[w] & ~got[i].ranks[w];
      if (missing)
        return "lacks the contribution of " +
               name(want[j], static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(missing))));
      const std::uint64_t more = got[i].ranks[w] & ~want[j].ranks[w];
      if (more && extra.empty())
        extra = "holds an extra contribution from " +
                name(got[i], static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(more))));
    }
    ++i, ++j;
  }
  return extra;
}

}  // namespace collscope
