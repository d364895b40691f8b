// All-reduce: every rank's output ends up holding the sum (or min, max, ...) of every
// rank's input.
//
// flat: rank 0 adds everyone's buffer one after another, then sends the result out.
//
//   fan-in  (n-1 steps):  1 --+--> 0,  2 --+--> 0,  ...
//   fan-out (1 step):     0 --> 1, 2, ..., n-1
//
// tree: a binomial reduce to rank 0, then a binomial broadcast back (8 ranks).
//
//   up   1:  0 <- 1   2 <- 3   4 <- 5   6 <- 7       down 1:  0 ----------> 4
//   up   2:  0 <----- 2        4 <----- 6            down 2:  0 ---> 2      4 ---> 6
//   up   3:  0 <-------------- 4                     down 3:  0->1 2->3 4->5 6->7
//
// ring: reduce-scatter then all-gather round the ring 0 -> 1 -> ... -> n-1 -> 0; the
// buffer is cut into n blocks (4 ranks, blocks A B C D; x+ = partial sum of block x).
//
//   reduce-scatter, 3 steps: each rank adds the block it receives and passes it on;
//                            afterwards rank k holds block k complete
//   all-gather, 3 steps:     each rank passes the complete block it got last on
//
//            rank 0   rank 1   rank 2   rank 3
//   start:   A B C D  A B C D  A B C D  A B C D      (each its own input)
//   end:     A        B        C        D             complete blocks after reduce-scatter
//
//   A large buffer goes round the ring in slices, like NCCL's chunks: the whole ring
//   (reduce-scatter and all-gather) runs on slice 1, then on slice 2, ... While one
//   slice is on its way round, what every rank reads and writes fits in the processor's
//   cache, so each element comes from main memory once instead of at every step.
//
//   buffer:  | slice 1 | slice 2 | slice 3 |      each slice: A B C D as above
//
//   A buffer of up to 2 slices' worth goes round in one piece: there the slices'
//   extra rounds cost more than the cache saves (bench/RESULTS.md).
//
//   On a GPU the ring goes round once, unsliced: there every transfer is a kernel
//   launch, and slices of 1 MiB would leave the GPU waiting for the host.
//
// recursive_doubling: partners at distance 1, 2, 4, ... swap whole buffers and add,
// one step per round: each reads the other's partial sum and its own and writes the
// total into a buffer that nobody reads in that round (output and scratch take turns).
//
//   round 1:  0 <-> 1   2 <-> 3   4 <-> 5   6 <-> 7
//   round 2:  0 <-----> 2   1 <-----> 3   4 <-----> 6   5 <-----> 7
//   round 3:  0 <-------------> 4  (and 1-5, 2-6, 3-7)
//
// rabenseifner: recursive halving (reduce-scatter: partners swap half of what they
// are responsible for, at distance p/2, p/4, ..., 1), then recursive doubling
// (all-gather: partners swap everything they finished, at distance 1, 2, ..., p/2).
//
//   4 ranks, blocks A B C D:
//   halving d=2:  0,1 keep A B and send C D;  2,3 keep C D and send A B   (and add)
//   halving d=1:  0 keeps A, 1 keeps B, 2 keeps C, 3 keeps D              (and add)
//   doubling d=1: 0 <-> 1 swap A, B;  2 <-> 3 swap C, D
//   doubling d=2: 0 <-> 2 swap A B, C D;  1 <-> 3 likewise
//
// Both recursive algorithms want a power-of-two number of ranks p. The e = n - p extra
// ranks fold in first (rank 2i hands its buffer to rank 2i+1 and waits) and get the
// result back at the end (fold-out); see PowerOfTwoFold in common.h.
//
// Buffers: all sums are built in the output buffers, and the inputs never change. Out
// of place no algorithm copies its input into its output first: where a rank adds
// something for the first time, a reduce-copy writes (what arrives) + (its own input)
// straight into its output, like NCCL's recvReduceSend. The ring, 4 ranks:
//
//   out of place, rank 1 in reduce-scatter step 1:  out1[D] = in1[D] + (rank 0's in0[D])
//                                       step 2:  out1[C] = in1[C] + (rank 0's out0[C])
#include "common.h"
#include "families.h"

namespace collscope::algo {

// ---------------------------------------------------------------------------
// flat: (n-1) fan-in steps + 1 fan-out step.

void allreduce_flat(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);
  const std::uint64_t count = b.count();

  // Phase 1, fan-in: rank 0 adds one buffer per step (every step writes the same place).
  // The first one it adds to its own input, writing the sum into its output.
  for (std::int32_t r = 1; r < n; ++r) {
    b.begin_step("fan-in", step_of(r, n - 1) + b.rank_name(0) + " adds the buffer of " + b.rank_name(r) + "; " +
                               std::to_string(r + 1) + " of " + std::to_string(n) + " inputs are in");
    if (r == 1) b.reduce_copy(b.in(1), b.in(0), b.out(0), count);
    else b.reduce(b.in(r), b.out(0), count);
  }

  // Phase 2, fan-out: rank 0 sends the finished sum to everyone at once.
  b.begin_step("fan-out",
               b.rank_name(0) + " sends the finished sum to each of the other " + plural(n - 1, "rank") + " at once");
  for (std::int32_t r = 1; r < n; ++r) b.copy(b.out(0), b.out(r), count);
}

// ---------------------------------------------------------------------------
// tree: ceil(log2 n) steps up + ceil(log2 n) steps down.

void allreduce_tree(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);
  const std::uint64_t count = b.count();
  auto has_children = [n](std::int32_t r) { return binomial_has_children(r, n); };  // root 0: relative = absolute

  const auto rounds = binomial_rounds(n, 0);
  const auto total = static_cast<std::int32_t>(rounds.size());

  // Phase 1, up the tree (distance 1, 2, 4, ...): a child hands its sum to its parent,
  // which adds it, building its own sum in its output from its first child on. A leaf
  // hands up its bare input.
  binomial_tree_up(
      b, rounds, n, b.rank_name(0), [&](std::int32_t c) { return has_children(c) ? b.out(c) : b.in(c); },
      [&](std::int32_t p) { return b.out(p); }, [&](std::int32_t p) { return b.in(p); });

  // Phase 2, down the tree (largest distance first): rank 0's finished sum is copied
  // to every rank, overwriting the partial sums left there.
  std::int64_t holders = 1;
  for (std::int32_t k = 0; k < total; ++k) {
    const TreeRound& round = rounds[static_cast<std::size_t>(total - 1 - k)];
    const auto senders = static_cast<std::int64_t>(round.edges.size());
    holders += senders;
    b.begin_step("tree down", step_of(k + 1, total) + plural(senders, "rank") + agree(senders, " sends", " send") +
                                  " the finished sum to a partner " + plural(round.distance, "rank") + " away; now " +
                                  std::to_string(holders) + " of " + std::to_string(n) + " have it");
    for (const TreeEdge& e : round.edges) b.copy(b.out(e.parent), b.out(e.child), count);
  }
}

// ---------------------------------------------------------------------------
// ring: per slice, (n-1) reduce-scatter steps + (n-1) all-gather steps.

namespace {

// A slice holds about slice_bytes() (1 MiB on the cpu backend) of each rank's buffer,
// and at least 64 KiB per block, so that many ranks do not cut a buffer into slivers
// (nor a schedule into millions of transfers). slice_bytes() 0: one slice. Up to
// kWholeSlices slices' worth is one slice: measured in turns on the 2-core machine of
// bench/RESULTS.md, 2 MiB per rank went round 1.02-1.22x faster in one piece than in
// 1 MiB slices on 2, 3, 4, 8 and 16 ranks; at 4 MiB one piece still won on 2 to 4 ranks
// but lost on 8, and at 16 MiB the slices win (1.06-1.43x over thirty passes).
constexpr std::uint64_t kWholeSlices = 2;

std::uint64_t ring_slices(const StepBuilder& b) {
  if (b.slice_bytes() == 0) return 1;
  const std::uint64_t bytes = b.count() * size_of(b.args().dtype);
  if (bytes <= kWholeSlices * b.slice_bytes()) return 1;
  const std::uint64_t slice =
      std::max<std::uint64_t>(b.slice_bytes(), static_cast<std::uint64_t>(b.ranks()) * (64u << 10));
  return std::max<std::uint64_t>(1, (bytes + slice - 1) / slice);
}

// The ring on elements [base, base + count) of every rank's buffer.
void ring_slice(StepBuilder& b, std::uint64_t base, std::uint64_t count, const std::string& prefix) {
  const std::int32_t n = b.ranks();
  const auto parts = static_cast<std::uint64_t>(n);

  // Block `blk` of the slice: where it starts and how long it is.
  auto block = [&](std::int64_t blk) {
    const auto i = static_cast<std::uint64_t>(wrap(blk, n));
    return std::pair{base + block_begin(count, parts, i), block_size(count, parts, i)};
  };

  // Phase 1, reduce-scatter: in step s rank r sends block r-1-s; its neighbour adds its
  // own input's piece of that block to it and passes the sum on in step s+1. After n-1
  // steps block r on rank r holds every rank's contribution.
  //   Out of place the neighbour writes (what arrives) + (its own input) straight into
  //   its output (a reduce-copy), and the first step sends from the input itself: no
  //   rank ever copies its input into its output first.
  for (std::int32_t s = 0; s + 1 < n; ++s) {
    b.begin_step("reduce-scatter", prefix + step_of(s + 1, n - 1) +
                                       "every rank sends a block of partial sums to its right neighbour, "
                                       "which adds its own input's piece");
    for (std::int32_t r = 0; r < n; ++r) {
      const auto [off, len] = block(std::int64_t{r} - 1 - s);
      const std::int32_t next = (r + 1) % n;
      b.reduce_copy(s == 0 ? b.in(r, off) : b.out(r, off), b.in(next, off), b.out(next, off), len);
    }
  }

  // Phase 2, all-gather: in step s rank r passes on the complete block r-s (its own one
  // first, then the one it just received).
  for (std::int32_t s = 0; s + 1 < n; ++s) {
    b.begin_step("all-gather",
                 prefix + step_of(s + 1, n - 1) +
                     "every rank passes the complete block it got last to its right neighbour; each has " +
                     std::to_string(s + 2) + " of " + std::to_string(n) + " now");
    for (std::int32_t r = 0; r < n; ++r) {
      const auto [off, len] = block(std::int64_t{r} - s);
      b.copy(b.out(r, off), b.out((r + 1) % n, off), len);
    }
  }
}

}  // namespace

void allreduce_one_ring(StepBuilder& b, const std::string& why) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);
  const std::uint64_t slices = ring_slices(b);
  for (std::uint64_t c = 0; c < slices; ++c) {
    const std::string prefix =
        why + (slices > 1 ? "slice " + std::to_string(c + 1) + " of " + std::to_string(slices) + ", " : "");
    ring_slice(b, block_begin(b.count(), slices, c), block_size(b.count(), slices, c), prefix);
  }
}

void allreduce_ring(StepBuilder& b) { allreduce_one_ring(b, ""); }

// ---------------------------------------------------------------------------
// Fold-in and fold-out for a number of ranks that is not a power of two.

namespace {

void fold_in(StepBuilder& b, const PowerOfTwoFold& fold) {
  if (fold.extra == 0) return;
  // Ranks 0, 2, ..., 2e-2 hand their input to their right neighbour and sit out.
  const std::int64_t e = fold.extra;
  b.begin_step("fold-in", plural(e, "rank") + " beyond the power of two " + std::to_string(fold.p) +
                              agree(e, " hands its", " hand their") +
                              " buffer to the right neighbour, which adds it; then " +
                              agree(e, "it waits", "they wait"));
  // Out of place the sum goes straight into the stand-in's output (a reduce-copy of the
  // two inputs); in place it adds into the stand-in's buffer.
  for (std::int32_t i = 0; i < fold.extra; ++i)
    b.reduce_copy(b.in(2 * i), b.in(2 * i + 1), b.out(2 * i + 1), b.count());
}

void fold_out(StepBuilder& b, const PowerOfTwoFold& fold) {
  if (fold.extra == 0) return;
  // The ranks that sat out get the result from the neighbour that stood in for them.
  const std::int64_t e = fold.extra;
  b.begin_step("fold-out", "the " + plural(e, "rank") + " that waited " + agree(e, "gets", "get") +
                               " the finished sum from the right neighbour");
  for (std::int32_t i = 0; i < fold.extra; ++i) b.copy(b.out(2 * i + 1), b.out(2 * i), b.count());
}

}  // namespace

// ---------------------------------------------------------------------------
// recursive_doubling: log2(p) steps (+2 fold steps when n != p, +1 local copy when
// p == 2 and a rank's single round reads its output).

void allreduce_recursive_doubling(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);
  const std::uint64_t count = b.count();
  const PowerOfTwoFold fold(n);
  fold_in(b, fold);

  // Main phase among the p ranks that take part, addressed by virtual rank v. In round
  // k a rank reads its partner's partial sum and its own, and writes their sum into a
  // buffer that nobody reads in that round: a reduce-copy, one step per round. So each
  // rank's partial sum moves between buffers, round after round:
  //
  //   out of place, 4 ranks:   in --round 1--> sum --round 2--> out
  //   in place, 4 ranks:      out --round 1--> sum --round 2--> out
  //   in place, 8 ranks:      out --round 1--> sum2 --round 2--> sum --round 3--> out
  //
  // The sequence is chosen backwards from "the last round writes the output", never
  // writing the buffer the round reads. Only with a single round that reads the output
  // (in place, or a stand-in, with 2 ranks taking part) does the sum land in scratch
  // and need a last local copy.
  enum Where { input, output, sum, sum2 };
  const std::int32_t rounds = ceil_log2(fold.p);
  auto stands_in = [&](std::int32_t r) { return r < 2 * fold.extra && !fold.sits_out(r); };
  // Where rank r's partial sum is before round 0 (a stand-in's is in its output after
  // the fold-in). plan[r][k] is where round k reads it, plan[r][k + 1] where it writes.
  auto start = [&](std::int32_t r) { return b.args().in_place || stands_in(r) ? output : input; };
  std::vector<std::vector<Where>> plan(static_cast<std::size_t>(n));
  bool uses_sum = false, uses_sum2 = false, last_copy = false;
  for (std::int32_t v = 0; v < fold.p; ++v) {
    const std::int32_t r = fold.real_rank(v);
    std::vector<Where>& w = plan[static_cast<std::size_t>(r)];
    w.assign(static_cast<std::size_t>(rounds) + 1, output);
    w[0] = start(r);
    for (std::int32_t k = rounds - 2; k >= 0; --k)
      w[static_cast<std::size_t>(k) + 1] = w[static_cast<std::size_t>(k) + 2] == output ? sum : output;
    if (w[1] == w[0]) {  // round 0 would write what it reads: take another buffer
      if (rounds == 1) {
        w[1] = sum;  // a stand-in with 2 ranks taking part, or in place with 2 ranks
        last_copy = true;
      } else {
        w[1] = w[2] == sum ? sum2 : sum;
      }
    }
    for (const Where x : w) {
      uses_sum = uses_sum || x == sum;
      uses_sum2 = uses_sum2 || x == sum2;
    }
  }
  const std::int32_t sum_id = uses_sum ? b.add_scratch("sum", count) : -1;
  const std::int32_t sum2_id = uses_sum2 ? b.add_scratch("sum2", count) : -1;
  auto at = [&](std::int32_t r, Where w) {
    switch (w) {
      case input:
        return b.in(r);
      case output:
        return b.out(r);
      case sum:
        return b.scratch(sum_id, r);
      case sum2:
        break;
    }
    return b.scratch(sum2_id, r);
  };

  for (std::int32_t k = 0; k < rounds; ++k) {
    const std::int32_t d = 1 << k;
    b.begin_step(
        "recursive doubling",
        step_of(k + 1, rounds) + "partners " + std::to_string(d) +
            " apart add each other's partial sum to their own, into a buffer not read this round; each covers " +
            std::to_string(2 * d) + " of " + std::to_string(fold.p) + " ranks");
    for (std::int32_t v = 0; v < fold.p; ++v) {
      const std::int32_t r = fold.real_rank(v);
      const std::int32_t partner = fold.real_rank(v ^ d);
      const auto& w = plan[static_cast<std::size_t>(r)];
      const auto& wp = plan[static_cast<std::size_t>(partner)];
      const auto kk = static_cast<std::size_t>(k);
      b.reduce_copy(at(partner, wp[kk]), at(r, w[kk]), at(r, w[kk + 1]), count);
    }
  }
  if (last_copy) {
    b.begin_step("local copy", "the sum went to scratch, as the round read the output; each rank copies it there");
    for (std::int32_t v = 0; v < fold.p; ++v) {
      const std::int32_t r = fold.real_rank(v);
      if (plan[static_cast<std::size_t>(r)].back() != output) b.copy(at(r, sum), b.out(r), count);
    }
  }

  fold_out(b, fold);
}

// ---------------------------------------------------------------------------
// rabenseifner: log2(p) reduce-scatter steps + log2(p) all-gather steps (+2 fold steps
// when n != p).

void allreduce_rabenseifner(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);
  const std::uint64_t count = b.count();
  const PowerOfTwoFold fold(n);
  const std::int32_t p = fold.p;
  const auto parts = static_cast<std::uint64_t>(p);
  // Blocks lo .. lo+len-1 of p, as elements.
  auto blocks = [&](std::int32_t lo, std::int32_t len) {
    return block_range(count, parts, static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(lo + len));
  };

  // Out of place nobody copies its input first: the fold-in writes a stand-in's sum
  // straight into its output, and in the first halving step every other rank sends
  // from its input and writes (what arrives) + (its own input) into its output.
  auto stands_in = [&](std::int32_t r) { return r < 2 * fold.extra && !fold.sits_out(r); };
  fold_in(b, fold);

  // Phase 1, reduce-scatter by recursive halving, distance p/2, p/4, ..., 1. Virtual rank
  // v is responsible for the 2d blocks starting at v rounded down to a multiple of 2d;
  // it keeps the half its partner v^d is not keeping, sends the other half, and adds the
  // partner's half of its own. The two transfers of a pair touch different halves, so
  // they share one step. At the end virtual rank v holds block v complete.
  // In the first step a rank that does not stand in for a neighbour sends from its
  // input and adds the half it gets to its input's half (in place they are one).
  const std::int32_t rounds = ceil_log2(p);
  for (std::int32_t k = 0; k < rounds; ++k) {
    const std::int32_t d = p >> (k + 1);
    b.begin_step("reduce-scatter", step_of(k + 1, rounds) + "partners " + std::to_string(d) +
                                       " apart each send half of their part and add the half they get; each keeps " +
                                       std::to_string(d) + " of " + std::to_string(p) + " blocks");
    for (std::int32_t v = 0; v < p; ++v) {
      const std::int32_t lo = v & ~(2 * d - 1);
      const std::int32_t given_away = (v & d) != 0 ? lo : lo + d;  // the half the partner keeps
      const ElemRange e = blocks(given_away, d);
      const std::int32_t r = fold.real_rank(v);
      const std::int32_t to = fold.real_rank(v ^ d);
      const Loc from = k == 0 && !stands_in(r) ? b.in(r, e.begin) : b.out(r, e.begin);
      const Loc own = k == 0 && !stands_in(to) ? b.in(to, e.begin) : b.out(to, e.begin);
      b.reduce_copy(from, own, b.out(to, e.begin), e.size);
    }
  }

  // Phase 2, all-gather by recursive doubling, distance 1, 2, ..., p/2: v holds the d
  // complete blocks starting at v rounded down to a multiple of d and copies them to its
  // partner, which holds the neighbouring d blocks.
  for (std::int32_t k = 0; k < rounds; ++k) {
    const std::int32_t d = 1 << k;
    b.begin_step("all-gather", step_of(k + 1, rounds) + "partners " + std::to_string(d) +
                                   " apart swap all the complete blocks they have; each now has " +
                                   std::to_string(2 * d) + " of " + std::to_string(p));
    for (std::int32_t v = 0; v < p; ++v) {
      const ElemRange e = blocks(v & ~(d - 1), d);
      b.copy(b.out(fold.real_rank(v), e.begin), b.out(fold.real_rank(v ^ d), e.begin), e.size);
    }
  }

  fold_out(b, fold);
}

}  // namespace collscope::algo
