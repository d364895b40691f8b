// The shapes of the algorithms, for pricing them at any number of ranks.
//
// Lowering a ring all-reduce on 65536 ranks would write 2 x 65535 steps of 65536
// transfers each: far too many to build. But most of those steps are the same step
// again, with other offsets: every step of a ring's reduce-scatter sends one block from
// each rank to its right neighbour. A step's price depends only on who sends how much
// to whom (model.h), not on offsets, so an algorithm can be described by its distinct
// steps and how often each occurs:
//
//   ring all-reduce, n ranks:   (n-1) x  [every r: r -> r+1, count/n, reduce]
//                               (n-1) x  [every r: r -> r+1, count/n, copy]
//   recursive doubling, p = 2^k:  1 x  [every r: r xor 1 -> r, count, reduce]
//                                 1 x  [every r: r xor 2 -> r, count, reduce] ...
//
// Each shape below follows its algorithm's file step for step (same partners, same
// sizes, the largest block where blocks differ by one element); a test prices both
// ways wherever the schedule can be lowered and requires them to agree.
#include "shape_builder.h"

namespace collscope {

namespace {

using namespace shape;  // the builder and the steps the shapes share (shape_builder.h)

// One ring over n ranks in order: (n-1) reduce steps then (n-1) copy steps of `block`.
void ring(ShapeBuilder& b, std::int64_t n, std::uint64_t block, bool reduce_scatter, bool all_gather) {
  auto next = [n](std::int64_t r) { return (r + 1) % n; };
  if (reduce_scatter)
    b.add_alike(n - 1, "reduce-scatter", 1, [=](std::vector<Transfer>& t, std::int64_t W) {
      every_rank(t, n, block, Action::reduce_copy, next, W);
    });
  if (all_gather)
    b.add_alike(n - 1, "all-gather", 1,
                [=](std::vector<Transfer>& t, std::int64_t W) { every_rank(t, n, block, Action::copy, next, W); });
}

// double_tree (double_tree.cpp): nodes of G ranks, half A (the larger) on tree 1
// among the nodes' first ranks, half B on tree 2 among their last ranks, each chain
// step and each round of the trees once.
void double_tree(ShapeBuilder& b, std::int64_t n, std::uint64_t c, std::int64_t rpn) {
  // Uneven nodes make every rank a node; one node (rpn 0, or all ranks) leaves the chain.
  const bool split = rpn > 0 && rpn < n;
  const std::int64_t G = !split ? n : n % rpn != 0 ? 1 : rpn, N = n / G;
  const std::uint64_t half[2] = {ceil_div(c, 2), c / 2};
  auto push = [half](std::vector<Transfer>& t, std::int64_t src, std::int64_t dst, int h, Action a) {
    if (half[h] > 0) t.push_back(xfer(src, dst, half[h], a));
  };
  auto chain = [&](const char* phase, bool up) {
    for (std::int64_t s = 0; s + 1 < G; ++s)
      b.add(1, phase, [=](std::vector<Transfer>& t) {
        for (std::int64_t k = 0; k < N; ++k) {
          // Going up, half A moves towards local rank 0 and half B towards local rank
          // G-1; going down, the other way.
          const std::int64_t to_first = k * G + G - 1 - s, to_last = k * G + s;
          if (up) {
            push(t, to_first, to_first - 1, 0, Action::reduce_copy);
            push(t, to_last, to_last + 1, 1, Action::reduce_copy);
          } else {
            push(t, to_last, to_last + 1, 0, Action::copy);
            push(t, to_first, to_first - 1, 1, Action::copy);
          }
        }
      });
  };
  chain("chain up inside the node", true);
  if (N > 1) {
    auto rank_at = [G, N](int tree, std::int64_t p) {
      return algo::tree_rank(tree, p, N) * G + (tree == 0 ? 0 : G - 1);
    };
    auto rounds = [&](const std::vector<std::vector<algo::TreeEdge>>& all, const char* phase, bool up) {
      for (const auto& round : all) {
        auto edges = std::make_shared<std::vector<algo::TreeEdge>>(round);
        b.add(1, phase, [=](std::vector<Transfer>& t) {
          for (int tree = 0; tree < 2; ++tree)
            for (const auto& e : *edges)
              if (up) push(t, rank_at(tree, e.child), rank_at(tree, e.parent), tree, Action::reduce_copy);
              else push(t, rank_at(tree, e.parent), rank_at(tree, e.child), tree, Action::copy);
        });
      }
    };
    rounds(algo::inorder_up_rounds(N), "tree up across nodes", true);
    rounds(algo::inorder_down_rounds(N), "tree down across nodes", false);
  }
  chain("chain down inside the node", false);
}

std::optional<std::vector<ShapePhase>> allreduce_shape(const CollArgs& a, std::string_view algo, std::int64_t rpn,
                                                       ShapeRepeat rep) {
  const std::int32_t n = a.ranks;
  const std::uint64_t c = a.count;
  if (!shaped(algo,
              {"flat", "tree", "ring", "recursive_doubling", "rabenseifner", "hierarchical", "rings", "double_tree"}))
    return std::nullopt;
  ShapeBuilder b(n, rep);
  if (c == 0) return b.phases;  // nothing moves: the lowered call has no steps
  if (n == 1) {
    if (!a.in_place) local_copy(b, 1, c);
    return b.phases;
  }
  if (algo == "flat") {
    // Every fan-in step is its own: a sender on another node pays the network's latency.
    for (std::int32_t r = 1; r < n; ++r)
      b.add(1, "fan-in", [r, c](std::vector<Transfer>& t) { t.push_back(xfer(r, 0, c, Action::reduce)); });
    b.add(1, "fan-out", [n, c](std::vector<Transfer>& t) {
      for (std::int32_t r = 1; r < n; ++r) t.push_back(xfer(0, r, c, Action::copy));
    });
  } else if (algo == "tree") {
    tree(b, n, 0, c, true);
    tree(b, n, 0, c, false);
  } else if (algo == "ring") {
    ring(b, n, ceil_div(c, static_cast<std::uint64_t>(n)), true, true);
  } else if (algo == "recursive_doubling") {
    const PowerOfTwoFold f(n);
    fold_in(b, f, c);
    for (std::int32_t d = 1; d < f.p; d *= 2)
      b.add(1, "recursive doubling", [f, d, c](std::vector<Transfer>& t) {
        for (std::int32_t v = 0; v < f.p; ++v)
          t.push_back(xfer(f.real_rank(v ^ d), f.real_rank(v), c, Action::reduce_copy));
      });
    // A single round that read the output leaves the sum in scratch (allreduce.cpp).
    if (f.p == 2 && (a.in_place || f.extra > 0))
      b.add(1, "local copy", [f, c, a](std::vector<Transfer>& t) {
        for (std::int32_t v = 0; v < f.p; ++v) {
          const std::int32_t r = f.real_rank(v);
          const bool stands_in = r < 2 * f.extra;
          if (a.in_place || stands_in) t.push_back(xfer(r, r, c, Action::copy));
        }
      });
    fold_out(b, f, c);
  } else if (algo == "rabenseifner") {
    const PowerOfTwoFold f(n);
    const std::uint64_t blk = ceil_div(c, static_cast<std::uint64_t>(f.p));
    fold_in(b, f, c);
    for (std::int32_t d = f.p / 2; d >= 1; d /= 2)
      b.add(1, "reduce-scatter", [f, d, blk](std::vector<Transfer>& t) {
        for (std::int32_t v = 0; v < f.p; ++v)
          t.push_back(
              xfer(f.real_rank(v), f.real_rank(v ^ d), blk * static_cast<std::uint64_t>(d), Action::reduce_copy));
      });
    for (std::int32_t d = 1; d < f.p; d *= 2)
      b.add(1, "all-gather", [f, d, blk](std::vector<Transfer>& t) {
        for (std::int32_t v = 0; v < f.p; ++v)
          t.push_back(xfer(f.real_rank(v), f.real_rank(v ^ d), blk * static_cast<std::uint64_t>(d), Action::copy));
      });
    fold_out(b, f, c);
  } else if (algo == "hierarchical" || algo == "rings") {
    // Nodes of rpn ranks; uneven nodes (or one node) make both one ring over every rank.
    const std::int64_t G = node_size(n, rpn);
    const std::int64_t N = n / G;
    if (algo == "hierarchical") {
      const std::uint64_t shard = ceil_div(c, static_cast<std::uint64_t>(G));
      auto inside = [G](std::int64_t r) { return r / G * G + (r % G + 1) % G; };
      auto across = [G, n](std::int64_t r) { return (r + G) % n; };
      const std::uint64_t piece = ceil_div(shard, static_cast<std::uint64_t>(N));
      b.add_alike(G - 1, "reduce-scatter inside the node", G, [=](std::vector<Transfer>& t, std::int64_t W) {
        every_rank(t, n, shard, Action::reduce_copy, inside, W);
      });
      b.add_alike(N - 1, "all-reduce across nodes", 1, [=](std::vector<Transfer>& t, std::int64_t W) {
        every_rank(t, n, piece, Action::reduce, across, W);
      });
      b.add_alike(N - 1, "all-reduce across nodes", 1,
                  [=](std::vector<Transfer>& t, std::int64_t W) { every_rank(t, n, piece, Action::copy, across, W); });
      b.add_alike(G - 1, "all-gather inside the node", G,
                  [=](std::vector<Transfer>& t, std::int64_t W) { every_rank(t, n, shard, Action::copy, inside, W); });
    } else {
      // Channel ch carries the ch-th part of the buffer, cut into n blocks.
      const std::int64_t channels = N > 1 ? G : 1;
      const std::uint64_t block =
          ceil_div(ceil_div(c, static_cast<std::uint64_t>(channels)), static_cast<std::uint64_t>(n));
      b.add_alike(n - 1, "reduce-scatter", G, [=](std::vector<Transfer>& t, std::int64_t W) {
        rings_step(t, n, G, block, Action::reduce_copy, W);
      });
      b.add_alike(n - 1, "all-gather", G,
                  [=](std::vector<Transfer>& t, std::int64_t W) { rings_step(t, n, G, block, Action::copy, W); });
    }
  } else if (algo == "double_tree") {
    double_tree(b, n, c, rpn);
  } else {
    return std::nullopt;
  }
  return b.phases;
}

std::optional<std::vector<ShapePhase>> allgather_shape(const CollArgs& a, std::string_view algo, std::int64_t rpn,
                                                       ShapeRepeat rep) {
  const std::int32_t n = a.ranks;
  const std::uint64_t c = a.count;
  // Recursive doubling keeps to powers of two (allgather.cpp takes the others elsewhere).
  if (!shaped(algo, {"ring", "hierarchical", "rings", "bruck"}) &&
      !(algo == "recursive_doubling" && n > 1 && (n & (n - 1)) == 0))
    return std::nullopt;
  ShapeBuilder b(n, rep);
  if (c == 0) return b.phases;
  auto next = [n](std::int64_t r) { return (r + 1) % n; };
  auto self = [](std::int64_t r) { return r; };
  if (n == 1) {
    if (!a.in_place) local_copy(b, 1, c);
    return b.phases;
  }
  if (algo == "ring") {
    // Step 1 also keeps each rank's own block (out of place).
    b.add_alike(1, "ring", 1, [=](std::vector<Transfer>& t, std::int64_t W) {
      every_rank(t, n, c, Action::copy, next, W);
      if (!a.in_place) every_rank(t, n, c, Action::copy, self, W);
    });
    b.add_alike(n - 2, "ring", 1,
                [=](std::vector<Transfer>& t, std::int64_t W) { every_rank(t, n, c, Action::copy, next, W); });
  } else if (algo == "hierarchical") {
    // Its own block into place, then across the nodes among equal local ranks (a
    // block a step), then inside each node (a block of every node a step).
    const std::int64_t G = node_size(n, rpn), N = n / G;
    if (!a.in_place) local_copy(b, n, c);
    b.add_alike(N - 1, "all-gather across nodes", 1, [=](std::vector<Transfer>& t, std::int64_t W) {
      every_rank(
          t, n, c, Action::copy, [G, n](std::int64_t r) { return (r + G) % n; }, W);
    });
    b.add_alike(G - 1, "all-gather inside the node", G, [=](std::vector<Transfer>& t, std::int64_t W) {
      every_rank(
          t, n, c * static_cast<std::uint64_t>(N), Action::copy,
          [G](std::int64_t r) { return r / G * G + (r % G + 1) % G; }, W);
    });
  } else if (algo == "rings") {
    // Channel ch carries the ch-th part of every block; step 1 also keeps each rank's
    // own block (out of place), as the ring does.
    const std::int64_t G = node_size(n, rpn);
    const std::uint64_t piece = ceil_div(c, static_cast<std::uint64_t>(n / G > 1 ? G : 1));
    b.add_alike(1, "ring", G, [=](std::vector<Transfer>& t, std::int64_t W) {
      rings_step(t, n, G, piece, Action::copy, W);
      if (!a.in_place) every_rank(t, n, c, Action::copy, self, W);
    });
    b.add_alike(n - 2, "ring", G,
                [=](std::vector<Transfer>& t, std::int64_t W) { rings_step(t, n, G, piece, Action::copy, W); });
  } else if (algo == "recursive_doubling") {
    // Round k: partners 2^k apart swap the 2^k blocks they hold; step 1 also keeps
    // the own block out of place (allgather.cpp).
    for (std::int32_t d = 1; d < n; d *= 2)
      b.add(1, "doubling", [=](std::vector<Transfer>& t) {
        every_rank(t, n, c * static_cast<std::uint64_t>(d), Action::copy, [d](std::int64_t r) { return r ^ d; });
        if (d == 1 && !a.in_place) every_rank(t, n, c, Action::copy, self);
      });
  } else if (algo == "bruck") {
    // Round i: every rank sends the first min(2^i, n - 2^i) blocks of its work buffer
    // to rank r - 2^i; then each rotates its blocks into place, its own too out of place.
    for (std::int64_t d = 1; d < n; d *= 2) {
      const auto sent = static_cast<std::uint64_t>(std::min(d, n - d));
      b.add_alike(1, "bruck", 1, [=](std::vector<Transfer>& t, std::int64_t W) {
        every_rank(
            t, n, c * sent, Action::copy, [n, d](std::int64_t r) { return (r - d + n) % n; }, W);
      });
    }
    const std::uint64_t kept = static_cast<std::uint64_t>(a.in_place ? n - 1 : n) * c;
    b.add_alike(1, "rotate", 1,
                [=](std::vector<Transfer>& t, std::int64_t W) { every_rank(t, n, kept, Action::copy, self, W); });
  } else {
    return std::nullopt;
  }
  return b.phases;
}

// The n-1 steps of a pairwise exchange (reduce_scatter.cpp, alltoall.cpp): in step k every
// rank r sends a block to rank r+k. Each step sends a different distance, so each is its
// own; on a machine that repeats every P ranks a step is priced from one repeat (Repeat),
// and the steps with P <= k <= n-P, where every block leaves its node and every switch
// group, load the same resources alike but for where in the next node a block lands: one
// such step per residue of k modulo the ranks of a node. `first` is step 1's action, `act`
// the others'. False: too many transfers to price quickly.
bool pairwise(ShapeBuilder& b, std::int64_t n, std::uint64_t c, ShapeRepeat rep, Action first, Action act) {
  const Repeat w(n, rep);
  const std::int64_t P = w.P, R = w.R;
  const std::int64_t band = n >= 2 * P ? n - 2 * P + 1 : 0;  // the steps P <= k <= n-P
  const std::int64_t steps = n - 1 - band + std::min(band, R);
  if (steps * w.shift_transfers(n) > kMaxShapeTransfers) return false;
  for (std::int64_t k = 1; k < n; ++k) {
    const Action a = k == 1 ? first : act;
    auto fill = [n, c, k, a](std::vector<Transfer>& t, std::int64_t W) { shift(t, n, W, k, c, a); };
    if (band > 0 && k >= P && k <= n - P) {
      if (k < P + R) b.add_alike((n - P - k) / R + 1, "pairwise", 1, fill);
      continue;
    }
    b.add_alike(1, "pairwise", 1, fill);
  }
  return true;
}

std::optional<std::vector<ShapePhase>> reduce_scatter_shape(const CollArgs& a, std::string_view algo, std::int64_t rpn,
                                                            ShapeRepeat repeat) {
  const std::int32_t n = a.ranks;
  const std::uint64_t c = a.count;
  if (!shaped(algo, {"ring", "hierarchical", "rings", "recursive_halving", "pairwise"})) return std::nullopt;
  ShapeBuilder b(n, repeat);
  if (c == 0) return b.phases;
  if (n == 1) {
    if (!a.in_place) local_copy(b, 1, c);
    return b.phases;
  }
  if (algo == "ring") {
    b.add_alike(n - 1, "ring", 1, [=](std::vector<Transfer>& t, std::int64_t W) {
      every_rank(
          t, n, c, Action::reduce_copy, [n](std::int64_t r) { return (r + 1) % n; }, W);
    });
  } else if (algo == "hierarchical") {
    // Inside each node the sums for one local rank of every node (a block of each), then
    // across the nodes among equal local ranks, a block a step.
    const std::int64_t G = node_size(n, rpn), N = n / G;
    b.add_alike(G - 1, "reduce-scatter inside the node", G, [=](std::vector<Transfer>& t, std::int64_t W) {
      every_rank(
          t, n, c * static_cast<std::uint64_t>(N), Action::reduce_copy,
          [G](std::int64_t r) { return r / G * G + (r % G + 1) % G; }, W);
    });
    b.add_alike(N - 1, "reduce-scatter across nodes", 1, [=](std::vector<Transfer>& t, std::int64_t W) {
      every_rank(
          t, n, c, Action::reduce_copy, [G, n](std::int64_t r) { return (r + G) % n; }, W);
    });
  } else if (algo == "rings") {
    const std::int64_t G = node_size(n, rpn);
    const std::uint64_t piece = ceil_div(c, static_cast<std::uint64_t>(n / G > 1 ? G : 1));
    b.add_alike(n - 1, "ring", G,
                [=](std::vector<Transfer>& t, std::int64_t W) { rings_step(t, n, G, piece, Action::reduce_copy, W); });
  } else if (algo == "recursive_halving") {
    // Among p = 2^k ranks (the others folded in), virtual ranks d apart swap the partial
    // sums of the half the other keeps: blocks of the partner's group of d virtual ranks,
    // two blocks for one that stands in for a folded-in rank (reduce_scatter.cpp).
    const PowerOfTwoFold f(n);
    auto first_block = [f](std::int64_t v) -> std::int64_t { return v < f.extra ? 2 * v : v + f.extra; };
    b.add(f.extra > 0 ? 1 : 0, "fold-in", [f, n, c](std::vector<Transfer>& t) {
      for (std::int32_t i = 0; i < f.extra; ++i)
        t.push_back(xfer(2 * i, 2 * i + 1, c * static_cast<std::uint64_t>(n), Action::reduce_copy));
    });
    for (std::int32_t d = f.p / 2; d >= 1; d /= 2)
      b.add(1, "halving", [=](std::vector<Transfer>& t) {
        for (std::int32_t v = 0; v < f.p; ++v) {
          const std::int32_t theirs = (v ^ d) & ~(d - 1);
          const auto blocks = static_cast<std::uint64_t>(first_block(theirs + d) - first_block(theirs));
          t.push_back(xfer(f.real_rank(v), f.real_rank(v ^ d), blocks * c, Action::reduce_copy));
        }
      });
    fold_out(b, f, c);
  } else if (algo == "pairwise") {
    if (!pairwise(b, n, c, repeat, Action::reduce_copy, Action::reduce)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  return b.phases;
}

// All-to-all (alltoall.cpp): its pairwise and linear exchanges send every rank's block
// for rank r+k to it, k steps on or all at once; priced where the machine repeats itself
// (Repeat). Bruck moves its blocks in runs, a transfer per run (and one per block in the
// rotation back); what a step costs is what each rank sends to each other rank, so the
// shape writes one transfer per rank and partner.
std::optional<std::vector<ShapePhase>> alltoall_shape(const CollArgs& a, std::string_view algo, ShapeRepeat rep) {
  const std::int64_t n = a.ranks;
  const std::uint64_t c = a.count;
  if (!shaped(algo, {"pairwise", "linear", "bruck"})) return std::nullopt;
  ShapeBuilder b(n, rep);
  if (c == 0) return b.phases;
  if (n == 1) {
    local_copy(b, 1, c);
    return b.phases;
  }
  const Repeat w(n, rep);
  if (algo == "bruck") {
    // The indices j < n of a rank's work buffer with bit `bit` set, and bit `clear` clear.
    auto blocks = [n](int bit, int clear) {
      std::uint64_t k = 0;
      for (std::int64_t j = 0; j < n; ++j) k += ((j >> bit) & 1) && (clear < 0 || !((j >> clear) & 1)) ? 1 : 0;
      return k;
    };
    const auto whole = static_cast<std::uint64_t>(n) * c;
    b.add_alike(1, "rotate", 1, [n, whole](std::vector<Transfer>& t, std::int64_t W) {
      every_rank(
          t, n, whole, Action::copy, [](std::int64_t r) { return r; }, W);
    });
    for (int k = 0; (std::int64_t{1} << k) < n; ++k) {
      // Round k: the blocks with bit k set go to rank r + 2^k; those that arrived in round
      // k-1 and stay (bit k-1 set, bit k clear) are filed back into the work buffer.
      const std::uint64_t sent = blocks(k, -1) * c, filed = k > 0 ? blocks(k - 1, k) * c : 0;
      b.add_alike(1, "bruck", 1, [n, k, sent, filed](std::vector<Transfer>& t, std::int64_t W) {
        every_rank(
            t, n, sent, Action::copy, [n, k](std::int64_t r) { return (r + (std::int64_t{1} << k)) % n; }, W);
        if (filed > 0)
          every_rank(
              t, n, filed, Action::copy, [](std::int64_t r) { return r; }, W);
      });
    }
    b.add_alike(1, "rotate back", 1, [n, whole](std::vector<Transfer>& t, std::int64_t W) {
      every_rank(
          t, n, whole, Action::copy, [](std::int64_t r) { return r; }, W);
    });
  } else if (algo == "pairwise") {
    b.add_alike(1, "local copy", 1,
                [n, c](std::vector<Transfer>& t, std::int64_t W) { shift(t, n, W, 0, c, Action::copy); });
    if (!pairwise(b, n, c, rep, Action::copy, Action::copy)) return std::nullopt;
  } else {
    if ((n - 1) * w.shift_transfers(n) + w.W > kMaxShapeTransfers) return std::nullopt;
    b.add_alike(1, "spread out", 1, [n, c](std::vector<Transfer>& t, std::int64_t W) {
      for (std::int64_t k = 0; k < n; ++k) shift(t, n, W, k, c, Action::copy);
    });
  }
  return b.phases;
}

// Barrier (barrier.cpp): signals only, which cost their latency and the step's fixed costs.
std::optional<std::vector<ShapePhase>> barrier_shape(const CollArgs& a, std::string_view algo, ShapeRepeat rep) {
  const std::int64_t n = a.ranks;
  if (!shaped(algo, {"dissemination", "central", "tree"})) return std::nullopt;
  ShapeBuilder b(n, rep);
  if (n == 1) return b.phases;  // nothing to wait for
  if (algo == "dissemination") {
    for (std::int64_t d = 1; d < n; d *= 2)
      b.add_alike(1, "dissemination", 1, [n, d](std::vector<Transfer>& t, std::int64_t W) {
        every_rank(
            t, n, 0, Action::copy, [n, d](std::int64_t r) { return (r + d) % n; }, W);
      });
  } else if (algo == "central") {
    b.add(1, "arrive", [n](std::vector<Transfer>& t) {
      for (std::int64_t r = 1; r < n; ++r) t.push_back(xfer(r, 0, 0, Action::copy));
    });
    b.add(1, "release", [n](std::vector<Transfer>& t) {
      for (std::int64_t r = 1; r < n; ++r) t.push_back(xfer(0, r, 0, Action::copy));
    });
  } else {
    // The tournament up the binomial tree to rank 0, and the release down it.
    tree(b, static_cast<std::int32_t>(n), 0, 0, true);
    tree(b, static_cast<std::int32_t>(n), 0, 0, false);
  }
  return b.phases;
}

}  // namespace

std::optional<std::vector<ShapePhase>> algorithm_shape(const CollArgs& a, std::string_view algo,
                                                       std::int64_t ranks_per_node, ShapeRepeat repeat) {
  if (a.ranks < 1) return std::nullopt;
  switch (a.coll) {
    case Collective::allreduce:
      return allreduce_shape(a, algo, ranks_per_node, repeat);
    case Collective::allgather:
      return allgather_shape(a, algo, ranks_per_node, repeat);
    case Collective::reduce_scatter:
      return reduce_scatter_shape(a, algo, ranks_per_node, repeat);
    case Collective::broadcast:
    case Collective::reduce:
    case Collective::scatter:
    case Collective::gather:
      return rooted_shape(a, algo, repeat);
    case Collective::alltoall:
      return alltoall_shape(a, algo, repeat);
    case Collective::barrier:
      return barrier_shape(a, algo, repeat);
    default:
      return std::nullopt;
  }
}

}  // namespace collscope
