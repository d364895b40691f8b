// double_tree (all-reduce): NCCL's double binary tree across the nodes, a chain
// inside each node. A ring across N nodes takes 2(N-1) steps, each paying the
// network's latency; a tree takes about 2 log2(N) up and log2(N) down. That is why
// NCCL uses trees for small messages on many nodes. A single binary tree wastes half
// the network: its leaves only send, and its interior nodes send and receive for two
// children. Two trees, each carrying half of the buffer, where the leaves of one are
// the interior of the other (binary_tree.h), keep every node's card busy in both
// directions.
//
//   4 nodes of 2 ranks, the buffer in halves A and B:
//
//   node:       0        1        2        3
//   ranks:     0  1     2  3     4  5     6  7
//
//   1. chain up inside each node (G-1 steps): half A flows towards the node's first
//      rank, half B towards its last, so every link inside the node is busy both ways;
//      each receiver adds its own input.            0 <-A- 1      0 -B-> 1
//   2. up the trees across the nodes: the node sums of half A climb tree 1 among the
//      first ranks (0 2 4 6), those of half B climb tree 2 among the last ranks
//      (1 3 5 7); a parent adds one child per step.
//
//        tree 1 (half A)              tree 2 (half B)
//            node 3                       node 0
//             /                            /
//          node 1                       node 2
//          /    \                       /    \      node 1 is interior in tree 1
//      node 0  node 2               node 1  node 3  and a leaf in tree 2
//
//   3. down the same trees: each root holds its half of the total and sends it to its
//      children, who pass it on (both children in one step).
//   4. chain down inside each node: the finished halves flow back along the chain.
//
// Steps: 2(G-1) inside, plus between 2 log2(N) and 3 log2(N) across (3 log2(N) - 1
// when N is a power of two). On one node only the chain is left: NCCL's tree inside
// a node. Ranks that do not fill the nodes evenly make every rank a node of its own,
// a double binary tree over every rank, and the captions say so.
#include "binary_tree.h"
#include "common.h"
#include "families.h"

namespace collscope::algo {

namespace {

using Nodes = std::vector<std::vector<std::int32_t>>;

// The nodes; every rank one of its own when they are uneven (and `why` says so).
Nodes tree_nodes(const StepBuilder& b, std::string& why) {
  Nodes nodes = b.nodes();
  for (const auto& node : nodes)
    if (node.size() != nodes.front().size()) {
      why = "(uneven nodes: a tree over all ranks) ";
      Nodes each;
      for (std::int32_t r = 0; r < b.ranks(); ++r) each.push_back({r});
      return each;
    }
  return nodes;
}

// Where every rank's partial sum of each half is: its input until something has been
// added to it, then its output. Out of place no rank copies its input first: the first
// addition writes (what arrives) + (its own input) into its output (a reduce-copy).
class Halves {
 public:
  explicit Halves(StepBuilder& b)
      : b_(b), split_(block_begin(b.count(), 2, 1)), written_(2 * static_cast<std::size_t>(b.ranks()), 0) {}

  // Rank `from` hands its partial sum of half h to rank `to`, which adds it to its own.
  void add(std::int32_t from, std::int32_t to, int h) {
    char& done = written_[slot(to, h)];
    if (done) b_.reduce(sum(from, h), b_.out(to, begin(h)), size(h));
    else b_.reduce_copy(sum(from, h), b_.in(to, begin(h)), b_.out(to, begin(h)), size(h));
    done = 1;
  }
  // Rank `from` holds the finished half h and copies it to rank `to`.
  void pass(std::int32_t from, std::int32_t to, int h) {
    b_.copy(b_.out(from, begin(h)), b_.out(to, begin(h)), size(h));
  }

 private:
  std::size_t slot(std::int32_t r, int h) const {
    return 2 * static_cast<std::size_t>(r) + static_cast<std::size_t>(h);
  }
  std::uint64_t begin(int h) const { return h == 0 ? 0 : split_; }
  std::uint64_t size(int h) const { return h == 0 ? split_ : b_.count() - split_; }
  Loc sum(std::int32_t r, int h) const { return written_[slot(r, h)] ? b_.out(r, begin(h)) : b_.in(r, begin(h)); }
  StepBuilder& b_;
  std::uint64_t split_;  // half A is [0, split), half B [split, count)
  std::vector<char> written_;
};

// "in each of 4 nodes" or, on one node, "in the node".
std::string inside(const Nodes& nodes) {
  return nodes.size() == 1 ? "in the node" : "in each of " + std::to_string(nodes.size()) + " nodes";
}

}  // namespace

// ---------------------------------------------------------------------------
// all-reduce, double_tree: (G-1) chain steps, the two trees up and down, (G-1) chain steps.

void allreduce_double_tree(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return single_rank(b);
  std::string why;
  const Nodes nodes = tree_nodes(b, why);
  const std::size_t N = nodes.size(), G = nodes.front().size();
  const auto chain_steps = static_cast<std::int64_t>(G) - 1;
  Halves halves(b);
  // The first caption says why the nodes are not the topology's, when they are not.
  auto first = [&why]() { return std::exchange(why, std::string()); };

  // Phase 1, chain up inside every node, all nodes at once: in step s local rank
  // G-1-s hands its partial sum of half A to local rank G-2-s, and local rank s its
  // partial sum of half B to local rank s+1. Afterwards the first rank of each node
  // holds the node's sum of half A, the last rank the node's sum of half B.
  for (std::int64_t s = 0; s < chain_steps; ++s) {
    b.begin_step("chain up inside the node",
                 first() + step_of(s + 1, chain_steps) + inside(nodes) +
                     ", half A moves a rank towards the first rank, half B towards the last; each receiver adds "
                     "its input");
    const auto i = static_cast<std::size_t>(s);
    for (const auto& node : nodes) {
      halves.add(node[G - 1 - i], node[G - 2 - i], 0);
      halves.add(node[i], node[i + 1], 1);
    }
  }
  if (N > 1) {
    // The trees join the nodes: tree 1 their first ranks on half A, tree 2 their last
    // ranks on half B. Position p of tree t is node tree_rank(t, p, N).
    auto rank_at = [&](int t, std::int32_t p) {
      const auto& node = nodes[static_cast<std::size_t>(tree_rank(t, p, static_cast<std::int64_t>(N)))];
      return t == 0 ? node.front() : node.back();
    };
    const auto m = static_cast<std::int64_t>(N);
    const std::int32_t root1 = rank_at(0, static_cast<std::int32_t>(inorder_root(m)));
    const std::int32_t root2 = rank_at(1, static_cast<std::int32_t>(inorder_root(m)));

    // Phase 2, up both trees at once: a child node hands its subtree's sum of the
    // tree's half to its parent node, which adds it.
    const auto up = inorder_up_rounds(m);
    const auto up_steps = static_cast<std::int64_t>(up.size());
    std::int64_t waiting = m - 1;  // nodes per tree whose sum has not been added yet
    for (std::int64_t k = 0; k < up_steps; ++k) {
      const auto& round = up[static_cast<std::size_t>(k)];
      const auto senders = static_cast<std::int64_t>(round.size());
      waiting -= senders;
      const std::string after = waiting == 0 ? "the root, which adds it; the totals: half A on " + b.rank_name(root1) +
                                                   ", half B on " + b.rank_name(root2)
                                             : "the parent node, which adds it; " + std::to_string(waiting) + " of " +
                                                   std::to_string(m - 1) + " left";
      b.begin_step("tree up across nodes", first() + step_of(k + 1, up_steps) + plural(senders, "node") + " per tree" +
                                               agree(senders, " sends its", " send their") + " sum to " + after);
      for (int t = 0; t < 2; ++t)
        for (const TreeEdge& e : round) halves.add(rank_at(t, e.child), rank_at(t, e.parent), t);
    }

    // Phase 3, down both trees: a parent node sends the finished half to both its
    // children in one step (two readers of one place, no conflict).
    const auto down = inorder_down_rounds(m);
    const auto down_steps = static_cast<std::int64_t>(down.size());
    std::int64_t holders = 1;
    for (std::int64_t k = 0; k < down_steps; ++k) {
      const auto& round = down[static_cast<std::size_t>(k)];
      holders += static_cast<std::int64_t>(round.size());
      b.begin_step("tree down across nodes", step_of(k + 1, down_steps) + "parents send the finished half to " +
                                                 plural(static_cast<std::int64_t>(round.size()), "child node") +
                                                 " per tree; " + std::to_string(holders) + " of " + std::to_string(m) +
                                                 " nodes have it");
      for (int t = 0; t < 2; ++t)
        for (const TreeEdge& e : round) halves.pass(rank_at(t, e.parent), rank_at(t, e.child), t);
    }
  }

  // Phase 4, chain down inside every node: the first rank passes the finished half A
  // on towards the last, the last rank half B towards the first.
  for (std::int64_t s = 0; s < chain_steps; ++s) {
    b.begin_step("chain down inside the node",
                 step_of(s + 1, chain_steps) + inside(nodes) +
                     ", the finished half A moves a rank towards the last rank, half B towards the first");
    const auto i = static_cast<std::size_t>(s);
    for (const auto& node : nodes) {
      halves.pass(node[i], node[i + 1], 0);
      halves.pass(node[G - 1 - i], node[G - 2 - i], 1);
    }
  }
}

}  // namespace collscope::algo
