// Algorithms that know where the node boundaries are. Inside a node ranks reach each
// other over fast links (NVLink, shared memory); between nodes every byte crosses a
// network card, so these algorithms cross it as few times, or on as many cards, as
// they can. The node size comes from the topology a schedule is lowered for, or
// --ranks-per-node (StepBuilder::nodes()). On one node each is an ordinary ring.
//
// hierarchical (all-reduce): two levels, 2 nodes of 4 ranks, buffer in shards A B C D:
//
//   node 0: ranks 0 1 2 3             node 1: ranks 4 5 6 7
//   1. reduce-scatter inside each node (3 steps): rank 0 and rank 4 hold shard A of
//      their node's sum, ranks 1 and 5 shard B, ...
//   2. all-reduce across the nodes, one ring per shard (2 x 1 steps):
//      0 <-> 4 on A,  1 <-> 5 on B,  2 <-> 6 on C,  3 <-> 7 on D   -- every card busy,
//      each carrying a quarter of the buffer
//   3. all-gather inside each node (3 steps): everyone gets A B C D of the total
//
// hierarchical (reduce-scatter and all-gather): the same two levels without the
// third: reduce-scatter inside the node then across; all-gather across then inside.
//
// rings (all-reduce): one ring per rank of a node, like NCCL's channels. Ring c visits
// the ranks of every node starting at local rank c and leaves the node from local rank
// c-1 to local rank c of the next node; ring c carries the c-th part of the buffer.
// Each ring crosses every node boundary once, each on its own card, so all the cards
// of a node work at once (a single ring would cross on one card and leave the rest idle).
//
//   2 nodes of 4, ring 1:  1 -> 2 -> 3 -> 0 ==> 5 -> 6 -> 7 -> 4 ==> back to 1
//                  ring 2:  2 -> 3 -> 0 -> 1 ==> 6 -> 7 -> 4 -> 5 ==> back to 2
//
// rings (all-gather and reduce-scatter): the same rings, each carrying the c-th part of
// every rank's block: the two halves of the all-reduce's, as NCCL runs these collectives.
//
// Ranks that do not fill the nodes evenly (7 ranks on nodes of 4) take the algorithms
// back to one ring over every rank, and the captions say so.
#include "common.h"
#include "families.h"

namespace collscope::algo {

namespace {

using Nodes = std::vector<std::vector<std::int32_t>>;

// The nodes, or one node of every rank when they are uneven (and `why` says so).
Nodes even_nodes(const StepBuilder& b, std::string& why) {
  Nodes nodes = b.nodes();
  for (const auto& n : nodes)
    if (n.size() != nodes.front().size()) {
      why = "(uneven nodes: one ring) ";
      std::vector<std::int32_t> all(static_cast<std::size_t>(b.ranks()));
      for (std::int32_t r = 0; r < b.ranks(); ++r) all[static_cast<std::size_t>(r)] = r;
      return {all};
    }
  return nodes;
}

// One ring: its members in ring order and the elements it works on. Its region is cut
// into as many blocks as it has members; member i ends the reduce-scatter with block i.
struct Ring {
  std::vector<std::int32_t> members;
  std::uint64_t base = 0, count = 0;
  std::pair<std::uint64_t, std::uint64_t> block(std::int64_t blk) const {
    const auto n = static_cast<std::int32_t>(members.size());
    const auto i = static_cast<std::uint64_t>(wrap(blk, n));
    return {base + block_begin(count, members.size(), i), block_size(count, members.size(), i)};
  }
};

std::size_t longest(const std::vector<Ring>& rings) {
  std::size_t n = 0;
  for (const auto& r : rings) n = std::max(n, r.members.size());
  return n;
}

// Every ring at once, step s of each in one step: a ring of n members needs n - 1
// steps, so the shorter rings finish first. `each(ring, i, s)` adds member i's
// transfer of step s.
template <typename Each>
void on_every_ring(StepBuilder& b, const std::vector<Ring>& rings, const std::string& phase, const std::string& what,
                   Each each) {
  const std::size_t steps = longest(rings) - 1;
  for (std::size_t s = 0; s < steps; ++s) {
    b.begin_step(phase, step_of(static_cast<std::int64_t>(s + 1), static_cast<std::int64_t>(steps)) + what);
    for (const Ring& ring : rings) {
      const auto n = static_cast<std::int32_t>(ring.members.size());
      if (static_cast<std::size_t>(n) <= s + 1) continue;
      for (std::int32_t i = 0; i < n; ++i) each(ring, i, static_cast<std::int64_t>(s));
    }
  }
}

// Reduce-scatter on every ring at once. `fresh`: nothing has been added yet, so a
// member's partial sums are its input (the first step sends from the input, and each
// receiver writes what arrives plus its own input into its output: a reduce-copy);
// otherwise they are already in the outputs (a reduce).
void rings_reduce_scatter(StepBuilder& b, const std::vector<Ring>& rings, bool fresh, const std::string& phase,
                          const std::string& what) {
  on_every_ring(b, rings, phase, what, [&](const Ring& ring, std::int32_t i, std::int64_t s) {
    const auto n = ring.members.size();
    const auto [off, len] = ring.block(std::int64_t{i} - 1 - s);
    const std::int32_t r = ring.members[static_cast<std::size_t>(i)];
    const std::int32_t next = ring.members[(static_cast<std::size_t>(i) + 1) % n];
    if (fresh) b.reduce_copy(s == 0 ? b.in(r, off) : b.out(r, off), b.in(next, off), b.out(next, off), len);
    else b.reduce(b.out(r, off), b.out(next, off), len);
  });
}

// All-gather on every ring at once: member i passes on the complete block it got last.
void rings_all_gather(StepBuilder& b, const std::vector<Ring>& rings, const std::string& phase,
                      const std::string& what) {
  on_every_ring(b, rings, phase, what, [&](const Ring& ring, std::int32_t i, std::int64_t s) {
    const auto n = ring.members.size();
    const auto [off, len] = ring.block(std::int64_t{i} - s);
    b.copy(b.out(ring.members[static_cast<std::size_t>(i)], off),
           b.out(ring.members[(static_cast<std::size_t>(i) + 1) % n], off), len);
  });
}

// The members of the rings that cross the nodes as NCCL's channels do: one per local rank
// (ring c enters every node at local rank c), or one ring when there is one node.
std::vector<std::vector<std::int32_t>> channel_rings(const Nodes& nodes) {
  const std::size_t N = nodes.size(), G = nodes.front().size();
  const std::size_t channels = N > 1 ? G : 1;
  std::vector<std::vector<std::int32_t>> rings(channels);
  for (std::size_t c = 0; c < channels; ++c)
    for (const auto& node : nodes)
      for (std::size_t i = 0; i < G; ++i) rings[c].push_back(node[(c + i) % G]);
  return rings;
}

// "on all 8 rings, " in a caption, where there are several.
std::string on_all(const std::vector<std::vector<std::int32_t>>& rings) {
  return rings.size() > 1 ? "on all " + std::to_string(rings.size()) + " rings, " : "";
}

// One step of every channel's ring: `each(ring, i, at, len)` adds member i's transfer of
// the part [at, at + len) of every block, the part that channel carries.
template <typename Each>
void on_channels(const std::vector<std::vector<std::int32_t>>& rings, std::uint64_t count, Each each) {
  const std::size_t channels = rings.size();
  for (std::size_t ch = 0; ch < channels; ++ch) {
    const std::uint64_t at = block_begin(count, channels, ch), len = block_size(count, channels, ch);
    if (len == 0) continue;
    const auto& ring = rings[ch];
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(ring.size()); ++i) each(ring, i, at, len);
  }
}

std::string nodes_text(const Nodes& nodes) {
  return plural(static_cast<std::int64_t>(nodes.size()), "node") + " of " +
         plural(static_cast<std::int64_t>(nodes.front().size()), "rank");
}

}  // namespace

// ---------------------------------------------------------------------------
// all-reduce, hierarchical: (G-1) steps inside + 2(N-1) across + (G-1) inside.

void allreduce_hierarchical(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);
  std::string why;
  const Nodes nodes = even_nodes(b, why);
  const std::size_t N = nodes.size(), G = nodes.front().size();
  const std::uint64_t count = b.count();
  // One node (or uneven ones): the ring itself, sliced as it is where buffers move
  // through a cache.
  if (N == 1) return allreduce_one_ring(b, why);

  // The buffer in G shards: local rank l of every node looks after shard l.
  auto shard = [&](std::size_t l) { return Ring{{}, block_begin(count, G, l), block_size(count, G, l)}; };

  // Phase 1, inside every node: a ring reduce-scatter over the node's ranks, all nodes
  // at once; afterwards local rank l holds shard l of its node's sum.
  std::vector<Ring> inside;
  for (const auto& node : nodes) inside.push_back(Ring{node, 0, count});
  rings_reduce_scatter(b, inside, true, "reduce-scatter inside the node",
                       why + "in each of " + nodes_text(nodes) +
                           ", every rank passes a shard of partial sums on; the next adds its own");

  // Phase 2, across the nodes: for each shard, a ring over the ranks that look after it
  // (one per node), reduce-scatter then all-gather on that shard alone.
  std::vector<Ring> across;
  for (std::size_t l = 0; l < G; ++l) {
    Ring r = shard(l);
    for (const auto& node : nodes) r.members.push_back(node[l]);
    across.push_back(std::move(r));
  }
  if (N > 1) {
    rings_reduce_scatter(b, across, G == 1, "all-reduce across nodes",
                         "one ring per shard across the nodes: each rank sends a block of its shard to its peer "
                         "in the next node, which adds it");
    rings_all_gather(b, across, "all-reduce across nodes",
                     "across the nodes, each rank passes a finished block of its shard to its peer in the next node");
  }

  // Phase 3, inside every node: a ring all-gather of the finished shards.
  rings_all_gather(b, inside, "all-gather inside the node",
                   "inside each node, every rank passes on the finished shard it got last");
}

// ---------------------------------------------------------------------------
// all-reduce, rings: one ring per local rank (channel), 2(n-1) steps.

void allreduce_rings(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);
  std::string why;
  const Nodes nodes = even_nodes(b, why);
  const std::size_t N = nodes.size(), G = nodes.front().size();
  // On one node every rotation of the ring is the same ring: the ring itself.
  if (N == 1) return allreduce_one_ring(b, why);
  const std::size_t channels = G;
  std::vector<Ring> rings;
  for (std::size_t c = 0; c < channels; ++c) {
    Ring ring{{}, block_begin(b.count(), channels, c), block_size(b.count(), channels, c)};
    for (const auto& node : nodes)
      for (std::size_t i = 0; i < G; ++i) ring.members.push_back(node[(c + i) % G]);
    rings.push_back(std::move(ring));
  }
  const std::string each = channels > 1 ? "on all " + std::to_string(channels) + " rings, " : "";
  rings_reduce_scatter(b, rings, true, "reduce-scatter",
                       why + each + "every rank sends a block of partial sums on; the next adds its own input's piece");
  rings_all_gather(b, rings, "all-gather", each + "every rank passes on the complete block it got last");
}

// ---------------------------------------------------------------------------
// reduce-scatter, hierarchical: a reduce-scatter inside the node over blocks grouped
// by the local rank they are for, then one across the nodes among equal local ranks.
//
//   rank r = node k, local l: its block is block r. Inside the node, local l gathers
//   the node's sums of the blocks of every node's local l (N blocks); across the nodes,
//   the ranks with local l reduce-scatter those N blocks, one ends with each.

void reduce_scatter_hierarchical(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);
  std::string why;
  const Nodes nodes = even_nodes(b, why);
  const std::size_t N = nodes.size(), G = nodes.front().size();
  const std::uint64_t count = b.count();
  // The partial sums on their way, in scratch (the inputs never change): slot (l, k)
  // holds the block of node k's local rank l. A rank passes on one set of slots while it
  // receives another, so every set has slots of its own.
  const std::int32_t partial = b.add_scratch("node-partial", count * N * G);
  auto slot = [&](std::int32_t r, std::size_t l, std::size_t k) {
    return b.scratch(partial, r, at_block(static_cast<std::int64_t>(l * N + k), count));
  };
  auto block_of = [&](std::size_t k, std::size_t l) {
    return static_cast<std::int64_t>(nodes[k][l]);
  };  // group rank = block

  // Phase 1, inside every node: a ring reduce-scatter whose "blocks" are the sets of N
  // blocks each local rank looks after. After G-1 steps local l holds, in its slots,
  // the node's sum of the blocks of every node's local l. With one node this is the
  // plain ring and the last step writes into the output.
  for (std::size_t s = 0; s + 1 < G; ++s) {
    b.begin_step("reduce-scatter inside the node",
                 why + step_of(static_cast<std::int64_t>(s + 1), static_cast<std::int64_t>(G - 1)) +
                     "inside each node, every rank passes on the sums for one local rank of every node");
    const bool last = s + 2 == G;
    for (const auto& node : nodes)
      for (std::size_t i = 0; i < G; ++i) {
        const std::int32_t r = node[i], next = node[(i + 1) % G];
        const std::size_t l = static_cast<std::size_t>(
            wrap(static_cast<std::int64_t>(i) - 1 - static_cast<std::int64_t>(s), static_cast<std::int32_t>(G)));
        for (std::size_t k = 0; k < N; ++k) {
          const std::uint64_t at = at_block(block_of(k, l), count);
          const Loc src = s == 0 ? b.in(r, at) : slot(r, l, k);
          // The finished block of a one-node run goes straight to the output.
          const Loc dst = (last && N == 1) ? b.out(next, 0) : slot(next, l, k);
          b.reduce_copy(src, b.in(next, at), dst, count);
        }
      }
  }
  if (N == 1) return;

  // Phase 2, across the nodes: the ranks with local index l form a ring over their N
  // slots; after N-1 steps node k's rank holds slot k, its own block, complete. Its last
  // addition writes into its output. (With one rank per node there was no phase 1, and
  // the slots are still the inputs.)
  for (std::size_t s = 0; s + 1 < N; ++s) {
    b.begin_step("reduce-scatter across nodes",
                 step_of(static_cast<std::int64_t>(s + 1), static_cast<std::int64_t>(N - 1)) +
                     "across the nodes, every rank sends a block of node sums to its peer in the next node");
    const bool last = s + 2 == N;
    for (std::size_t l = 0; l < G; ++l)
      for (std::size_t i = 0; i < N; ++i) {
        const std::int32_t r = nodes[i][l], next = nodes[(i + 1) % N][l];
        const auto k = static_cast<std::size_t>(
            wrap(static_cast<std::int64_t>(i) - 1 - static_cast<std::int64_t>(s), static_cast<std::int32_t>(N)));
        const std::uint64_t at = at_block(block_of(k, l), count);
        const Loc src = G == 1 && s == 0 ? b.in(r, at) : slot(r, l, k);
        const Loc own = G == 1 ? b.in(next, at) : slot(next, l, k);
        b.reduce_copy(src, own, last ? b.out(next, 0) : slot(next, l, k), count);
      }
  }
}

// ---------------------------------------------------------------------------
// all-gather, hierarchical: across the nodes among equal local ranks, then inside
// the node, each rank passing on every node's block of one local rank.

void allgather_hierarchical(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);
  std::string why;
  const Nodes nodes = even_nodes(b, why);
  const std::size_t N = nodes.size(), G = nodes.front().size();
  const std::uint64_t count = b.count();
  auto at = [&](std::size_t k, std::size_t l) { return at_block(nodes[k][l], count); };

  // Every rank's own block into its place in its output (in place it is already there).
  b.begin_step("local copy", why + "every rank puts its own block in its place in the output");
  for (std::int32_t r = 0; r < n; ++r) copy_unless_same(b, b.in(r), b.out(r, at_block(r, count)), count);

  // Phase 1, across the nodes: a ring over the ranks with local index l gathers the N
  // blocks of every node's local l.
  for (std::size_t s = 0; s + 1 < N; ++s) {
    b.begin_step("all-gather across nodes",
                 step_of(static_cast<std::int64_t>(s + 1), static_cast<std::int64_t>(N - 1)) +
                     "across the nodes, every rank passes the block it got last to its peer in the next node");
    for (std::size_t l = 0; l < G; ++l)
      for (std::size_t i = 0; i < N; ++i) {
        const auto k = static_cast<std::size_t>(
            wrap(static_cast<std::int64_t>(i) - static_cast<std::int64_t>(s), static_cast<std::int32_t>(N)));
        b.copy(b.out(nodes[i][l], at(k, l)), b.out(nodes[(i + 1) % N][l], at(k, l)), count);
      }
  }
  // Phase 2, inside every node: a ring over the node's ranks, each passing the N blocks
  // of one local rank (that local rank's column of the gathered table).
  for (std::size_t s = 0; s + 1 < G; ++s) {
    b.begin_step("all-gather inside the node",
                 step_of(static_cast<std::int64_t>(s + 1), static_cast<std::int64_t>(G - 1)) +
                     "inside each node, every rank passes on the blocks of one local rank of every node");
    for (const auto& node : nodes)
      for (std::size_t i = 0; i < G; ++i) {
        const auto l = static_cast<std::size_t>(
            wrap(static_cast<std::int64_t>(i) - static_cast<std::int64_t>(s), static_cast<std::int32_t>(G)));
        for (std::size_t k = 0; k < N; ++k) b.copy(b.out(node[i], at(k, l)), b.out(node[(i + 1) % G], at(k, l)), count);
      }
  }
}

// ---------------------------------------------------------------------------
// all-gather, rings: n-1 steps, every ring at once, ring c passing the c-th part of
// the blocks (the all-gather half of the all-reduce's rings).

void allgather_rings(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b);
  std::string why;
  const auto rings = channel_rings(even_nodes(b, why));
  const std::string each = on_all(rings);
  for (std::int32_t k = 1; k < n; ++k) {
    std::string caption = (k == 1 ? why : "") + step_of(k, n - 1) + each;
    if (k == 1)
      caption += std::string("every rank sends its own block's part along the ring") +
                 (b.args().in_place ? "" : " and keeps its block in its output");
    else caption += "every rank passes on the part it received in the last step";
    b.begin_step("ring", caption);
    on_channels(rings, c,
                [&](const std::vector<std::int32_t>& ring, std::int32_t i, std::uint64_t at, std::uint64_t len) {
                  // Member i forwards the part of member i-k+1's block: its own in step 1.
                  const std::int32_t r = ring[static_cast<std::size_t>(i)];
                  const std::int32_t owner = ring[static_cast<std::size_t>(wrap(std::int64_t{i} - k + 1, n))];
                  const std::int32_t next = ring[static_cast<std::size_t>(wrap(std::int64_t{i} + 1, n))];
                  const Loc src = k == 1 ? b.in(r, at) : b.out(r, at_block(owner, c) + at);
                  b.copy(src, b.out(next, at_block(owner, c) + at), len);
                });
    if (k == 1)
      for (std::int32_t r = 0; r < n; ++r) copy_unless_same(b, b.in(r), b.out(r, at_block(r, c)), c);
  }
}

// ---------------------------------------------------------------------------
// reduce-scatter, rings: n-1 steps, every ring at once, ring c adding up the c-th part
// of every block (the reduce-scatter half of the all-reduce's rings). The partial sums
// travel in two work slots a rank, one received while the other is passed on.

void reduce_scatter_rings(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b, "only one rank: its block is already the full sum, it copies it into its output");
  std::string why;
  const auto rings = channel_rings(even_nodes(b, why));
  const std::string each = on_all(rings);
  const std::int32_t slots = n >= 3 ? b.add_scratch("rings-partial", 2 * c) : -1;
  // Where member x collects a part in step k: a work slot, or its output in the last step.
  auto collect_at = [&](std::int32_t x, std::int32_t k, std::uint64_t at) {
    return k == n - 1 ? b.out(x, at) : b.scratch(slots, x, at_block(k % 2, c) + at);
  };
  for (std::int32_t k = 1; k < n; ++k) {
    std::string caption = (k == 1 ? why : "") + step_of(k, n - 1) + each;
    caption += k == 1 ? "every rank sends its part of one block along the ring; the next rank adds its own"
                      : "every rank passes its partial sum on; the next adds its own part";
    if (k == n - 1) caption += ": now complete";
    b.begin_step("ring", caption);
    on_channels(rings, c,
                [&](const std::vector<std::int32_t>& ring, std::int32_t i, std::uint64_t at, std::uint64_t len) {
                  // Member i receives in step k the partial sum of member i-k-1's block: its own
                  // block in the last step.
                  const std::int32_t r = ring[static_cast<std::size_t>(i)];
                  const std::int32_t from = ring[static_cast<std::size_t>(wrap(std::int64_t{i} - 1, n))];
                  const std::int32_t blk = ring[static_cast<std::size_t>(wrap(std::int64_t{i} - k - 1, n))];
                  const Loc src = k == 1 ? b.in(from, at_block(blk, c) + at) : collect_at(from, k - 1, at);
                  b.reduce_copy(src, b.in(r, at_block(blk, c) + at), collect_at(r, k, at), len);
                });
  }
}

}  // namespace collscope::algo
