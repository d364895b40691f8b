// Broadcast: the root's buffer ends up in every rank's output.
//
// Ranks are drawn counted from the root (the root is 0; rank k is root+k mod n).
//
// flat: one step, the root sends everything to everyone.
//
//                  root
//           ________|________
//          |     |     |     |
//          v     v     v     v
//          1     2    ...   n-1
//
// binomial: the set of ranks holding the data doubles every step (8 ranks).
//
//   step 1:   0 ------------------> 4
//   step 2:   0 --------> 2         4 --------> 6
//   step 3:   0 -> 1      2 -> 3    4 -> 5      6 -> 7
//
// chain: the buffer is cut into chunks that flow down the chain 0 -> 1 -> 2 -> ...
// like a pipeline (4 ranks, 3 chunks c0 c1 c2):
//
//   step 1:   0 =c0=> 1       2       3         pipeline fill
//   step 2:   0 =c1=> 1 =c0=> 2       3
//   step 3:   0 =c2=> 1 =c1=> 2 =c0=> 3         all links busy
//   step 4:   0       1 =c2=> 2 =c1=> 3         pipeline drain
//   step 5:   0       1       2 =c2=> 3
//
// scatter_allgather (van de Geijn): a binomial scatter gives rank k block k, then a
// ring all-gather hands every block round (4 ranks, blocks A B C D):
//
//   scatter step 1:   0 --[C D]--> 2
//   scatter step 2:   0 --[B]--> 1      2 --[D]--> 3
//                     now rank k holds block k
//   all-gather:       3 steps round the ring 0 -> 1 -> 2 -> 3 (-> 0, which has it all),
//                     each rank passes on the block it received last
//
// Buffers: only the root has an input. Out of place, the root also copies its input
// into its own output; that local copy rides along with the first step (in the chain on
// the cpu backend, chunk by chunk: the root copies chunk c into its output in the step
// it sends it).
#include <algorithm>

#include "common.h"
#include "families.h"

namespace collscope::algo {
namespace {

// Where rank r reads the data it forwards: the root reads its input, everybody else
// the copy that arrived in its output.
Loc source(const StepBuilder& b, std::int32_t r, std::uint64_t elem) {
  return r == b.root() ? b.in(r, elem) : b.out(r, elem);
}

// Out of place the root's output needs the data too. This local copy writes only the
// root's output, which no sender reads, so it can share a step with the sends.
void root_local_copy(StepBuilder& b) {
  if (!b.args().in_place) b.copy(b.in(b.root()), b.out(b.root()), b.count());
}

}  // namespace

// ---------------------------------------------------------------------------
// flat: 1 step.

void broadcast_flat(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t root = b.root();
  if (n == 1) return single_rank(b);

  b.begin_step("fan-out", "the root (" + b.rank_name(root) + ") sends its whole buffer to each of the other " +
                              plural(n - 1, "rank") + " at once");
  root_local_copy(b);
  for (std::int32_t r = 0; r < n; ++r)
    if (r != root) b.copy(b.in(root), b.out(r), b.count());
}

// ---------------------------------------------------------------------------
// binomial: ceil(log2 n) steps.

void broadcast_binomial(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);

  // Down the tree: the rounds from the largest distance to distance 1.
  const auto rounds = binomial_rounds(n, b.root());
  const auto total = static_cast<std::int32_t>(rounds.size());
  std::int64_t holders = 1;
  for (std::int32_t k = 0; k < total; ++k) {
    const TreeRound& round = rounds[static_cast<std::size_t>(total - 1 - k)];
    const auto senders = static_cast<std::int64_t>(round.edges.size());
    holders += senders;
    b.begin_step("tree down", step_of(k + 1, total) + plural(senders, "rank") + " holding the data " +
                                  agree(senders, "sends", "send") + " it to a partner " +
                                  plural(round.distance, "rank") + " away; now " + std::to_string(holders) + " of " +
                                  std::to_string(n) + " ranks have it");
    if (k == 0) root_local_copy(b);
    for (const TreeEdge& e : round.edges) b.copy(source(b, e.parent, 0), b.out(e.child), b.count());
  }
}

// ---------------------------------------------------------------------------
// chain: C + n - 2 steps for C chunks.

void broadcast_chain(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t root = b.root();
  if (n == 1) return single_rank(b);
  const std::uint64_t chunks = chain_chunks(b.count(), b.args().dtype);
  if (chunks == 0) return;  // nothing to send

  // Link i joins the chain's i-th and (i+1)-th rank. In step t link i carries chunk
  // t - i: the root injects chunk t while chunk t-1 moves over link 1, and so on.
  const auto links = static_cast<std::int64_t>(n - 1);
  const auto c_count = static_cast<std::int64_t>(chunks);
  const std::int64_t total = c_count + links - 1;
  for (std::int64_t t = 0; t < total; ++t) {
    const std::int64_t first = std::max<std::int64_t>(0, t - c_count + 1);  // lowest busy link
    const std::int64_t last = std::min(links - 1, t);                       // highest busy link
    const bool filling = first == 0 && last < links - 1;   // the first chunk has not reached the end yet
    const bool draining = first > 0 && last == links - 1;  // the root has sent its last chunk
    const char* phase = filling ? "pipeline fill" : draining ? "pipeline drain" : "pipeline";

    std::string caption = step_of(t + 1, total);
    if (first == last) {
      caption += b.rank_name(absolute_rank(static_cast<std::int32_t>(first), root, n)) + " sends chunk " +
                 std::to_string(t - first + 1) + " of " + std::to_string(c_count) + " to " +
                 b.rank_name(absolute_rank(static_cast<std::int32_t>(first + 1), root, n));
    } else {
      caption += "chunks " + std::to_string(t - last + 1) + " to " + std::to_string(t - first + 1) + " of " +
                 std::to_string(c_count) + " each move one rank down the chain (" + std::to_string(last - first + 1) +
                 " sends at once)";
    }
    b.begin_step(phase, caption);
    // Out of place, where buffers move through a cache (slice_bytes() > 0: the cpu
    // backend), the root copies into its own output the chunk it injects, so that the
    // chunk is read while it is fresh; copied whole in the first step, the root's input
    // was read twice from memory, and on 2 ranks the chain took 1.2-1.4x the flat
    // broadcast. Elsewhere (a GPU, where every transfer is a launch) one copy does it.
    if (!b.args().in_place && b.slice_bytes() != 0) {
      if (t < c_count) {
        const auto c = static_cast<std::uint64_t>(t);
        const std::uint64_t off = block_begin(b.count(), chunks, c);
        b.copy(b.in(root, off), b.out(root, off), block_size(b.count(), chunks, c));
      }
    } else if (t == 0) {
      root_local_copy(b);
    }

    for (std::int64_t i = first; i <= last; ++i) {
      const std::uint64_t c = static_cast<std::uint64_t>(t - i);
      const std::uint64_t off = block_begin(b.count(), chunks, c);
      const std::uint64_t len = block_size(b.count(), chunks, c);
      const std::int32_t from = absolute_rank(static_cast<std::int32_t>(i), root, n);
      const std::int32_t to = absolute_rank(static_cast<std::int32_t>(i + 1), root, n);
      b.copy(source(b, from, off), b.out(to, off), len);
    }
  }
}

// ---------------------------------------------------------------------------
// scatter_allgather: ceil(log2 n) scatter steps + (n - 1) all-gather steps.

void broadcast_scatter_allgather(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t root = b.root();
  if (n == 1) return single_rank(b);
  const std::uint64_t count = b.count();
  const auto parts = static_cast<std::uint64_t>(n);
  // Block k (of n) belongs to the rank k places after the root.
  auto blocks = [&](std::int64_t first, std::int64_t last) {
    return block_range(count, parts, static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(last));
  };

  // Phase 1, scatter down the binomial tree: a parent hands a child at distance d the
  // blocks of the child's subtree, positions child .. child+d-1.
  const auto rounds = binomial_rounds(n, root);
  const auto scatter_steps = static_cast<std::int32_t>(rounds.size());
  for (std::int32_t k = 0; k < scatter_steps; ++k) {
    const TreeRound& round = rounds[static_cast<std::size_t>(scatter_steps - 1 - k)];
    const auto senders = static_cast<std::int64_t>(round.edges.size());
    b.begin_step("scatter", step_of(k + 1, scatter_steps) + plural(senders, "rank") +
                                agree(senders, " hands", " each hand") + " a partner " +
                                plural(round.distance, "rank") +
                                " away the blocks that the partner's part of the tree needs");
    if (k == 0) root_local_copy(b);
    for (const TreeEdge& e : round.edges) {
      const std::int32_t vc = relative_rank(e.child, root, n);
      const ElemRange r = blocks(vc, std::min<std::int64_t>(std::int64_t{vc} + round.distance, n));
      b.copy(source(b, e.parent, r.begin), b.out(e.child, r.begin), r.size);
    }
  }

  // Phase 2, ring all-gather: in step s the rank at position k passes block k - s to
  // its right neighbour. The root already has everything, so nothing is sent to it.
  const std::int32_t gather_steps = n - 1;
  for (std::int32_t s = 0; s < gather_steps; ++s) {
    b.begin_step("all-gather",
                 step_of(s + 1, gather_steps) +
                     "every rank passes the block it got last to its right neighbour; each now has at least " +
                     std::to_string(s + 2) + " of " + std::to_string(n) + " blocks");
    for (std::int32_t vr = 0; vr + 1 < n; ++vr) {
      const ElemRange r = blocks(wrap(std::int64_t{vr} - s, n), wrap(std::int64_t{vr} - s, n) + 1);
      const std::int32_t from = absolute_rank(vr, root, n);
      const std::int32_t to = absolute_rank(vr + 1, root, n);
      b.copy(source(b, from, r.begin), b.out(to, r.begin), r.size);
    }
  }
}

}  // namespace collscope::algo
