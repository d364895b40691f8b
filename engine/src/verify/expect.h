// Expected contents of a collective's outputs, in terms of its inputs: the
// postconditions of DESIGN §4, one small rule per collective.
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

class ExpectedContents {
 public:
  ExpectedContents(const Schedule& s, const CollArgs& a) : a_(a), words_((static_cast<std::size_t>(s.ranks) + 63) / 64) {
    all_.assign(words_, 0);
    for (std::int32_t g = 0; g < a.ranks; ++g) set(all_, world(g));
  }

  std::int32_t world(std::int32_t g) const {
    return a_.world_rank.empty() ? g : a_.world_rank[static_cast<std::size_t>(g)];
  }

  std::uint64_t output_count(std::int32_t g) const {
    if (a_.coll == Collective::barrier) return 0;
    return shape_of(a_.coll, a_.ranks, g, a_.root, a_.count).out_count;
  }

  // The terms output element i of group rank g must hold; `run` = for how many
  // following elements the same rule holds with every base advanced by one.
  std::vector<SymTerm> at(std::int32_t g, std::uint64_t i, std::uint64_t& run) const {
    const std::uint64_t n = output_count(g), c = a_.count;
    switch (a_.coll) {
      case Collective::broadcast:
        run = n - i;
        return {one(a_.in_offset(a_.root) + i, a_.root)};
      case Collective::reduce:
      case Collective::allreduce:
        run = n - i;
        return {SymTerm{a_.in_buf, i, all_}};
      case Collective::reduce_scatter:
        run = n - i;
        return {SymTerm{a_.in_buf, static_cast<std::uint64_t>(g) * c + i, all_}};
      case Collective::scatter:
        run = n - i;
        return {one(a_.in_offset(a_.root) + static_cast<std::uint64_t>(g) * c + i, a_.root)};
      case Collective::gather:
      case Collective::allgather: {
        const auto s = static_cast<std::int32_t>(i / c);
        const std::uint64_t ii = i % c;
        run = c - ii;
        return {one(a_.in_offset(s) + ii, s)};
      }
      case Collective::alltoall: {
        const auto s = static_cast<std::int32_t>(i / c);
        const std::uint64_t ii = i % c;
        run = c - ii;
        return {one(a_.in_offset(s) + static_cast<std::uint64_t>(g) * c + ii, s)};
      }
      case Collective::barrier: break;
    }
    run = 1;
    return {};
  }

 private:
  void set(std::vector<std::uint64_t>& bits, std::int32_t r) const {
    bits[static_cast<std::size_t>(r) / 64] |= 1ull << (r % 64);
  }
  SymTerm one(std::uint64_t base, std::int32_t g) const {
    SymTerm t{a_.in_buf, base, std::vector<std::uint64_t>(words_, 0)};
    set(t.ranks, world(g));
    return t;
  }
  const CollArgs& a_;
  std::size_t words_;
  std::vector<std::uint64_t> all_;
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
