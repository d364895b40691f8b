// The table of algorithms under their CLI names. The StepBuilder they write through
// is in step_builder.cpp, `auto` in tuner.cpp, the lowering of one call in lower_call.cpp.
#include "families.h"

namespace collscope {

const std::vector<AlgorithmInfo>& all_algorithms() {
  using C = Collective;
  static const std::vector<AlgorithmInfo> table = {
      {C::broadcast, "flat", "root sends the whole buffer to every rank, one after another", algo::broadcast_flat},
      {C::broadcast, "binomial", "binomial tree: the set of ranks holding the data doubles every step",
       algo::broadcast_binomial},
      {C::broadcast, "chain", "pipeline along a chain of ranks, chunk by chunk", algo::broadcast_chain},
      {C::broadcast, "scatter_allgather", "binomial scatter of blocks, then ring all-gather (van de Geijn)",
       algo::broadcast_scatter_allgather},
      {C::reduce, "flat", "every rank sends its buffer to the root, which adds them one by one", algo::reduce_flat},
      {C::reduce, "binomial", "binomial tree: pairs combine, halving the active ranks each step",
       algo::reduce_binomial},
      {C::reduce, "ring", "ring reduce-scatter, then every rank sends its reduced block to the root",
       algo::reduce_ring},
      {C::allreduce, "flat", "flat reduce to rank 0, then flat broadcast", algo::allreduce_flat},
      {C::allreduce, "tree", "binomial reduce, then binomial broadcast", algo::allreduce_tree},
      {C::allreduce, "ring", "ring reduce-scatter, then ring all-gather (large buffers slice by slice)",
       algo::allreduce_ring},
      {C::allreduce, "recursive_doubling", "pairs at distance 1, 2, 4, ... exchange and add whole buffers",
       algo::allreduce_recursive_doubling},
      {C::allreduce, "rabenseifner", "recursive-halving reduce-scatter, then recursive-doubling all-gather",
       algo::allreduce_rabenseifner},
      {C::allreduce, "hierarchical", "reduce-scatter inside each node, all-reduce across nodes, all-gather inside",
       algo::allreduce_hierarchical, true},
      {C::allreduce, "rings", "one ring per rank of a node, each crossing the nodes on its own card (NCCL's channels)",
       algo::allreduce_rings, true},
      {C::allreduce, "double_tree",
       "chain inside each node, two binary trees across the nodes on half the buffer each (NCCL's trees)",
       algo::allreduce_double_tree, true},
      {C::scatter, "flat", "root sends each rank its block directly", algo::scatter_flat},
      {C::scatter, "binomial", "binomial tree: root hands half of the blocks to a partner, recursively",
       algo::scatter_binomial},
      {C::scatter, "chain", "blocks flow down a chain of ranks, the far end's first, all arriving in the last step",
       algo::scatter_chain},
      {C::gather, "flat", "every rank sends its block straight to the root", algo::gather_flat},
      {C::gather, "binomial", "binomial tree: blocks are collected in ever larger pieces", algo::gather_binomial},
      {C::gather, "chain", "blocks flow up a chain of ranks to the root, one link per step", algo::gather_chain},
      {C::allgather, "ring", "every step each rank passes the block it received last to its right neighbour",
       algo::allgather_ring},
      {C::allgather, "recursive_doubling", "pairs at distance 1, 2, 4, ... swap everything they hold",
       algo::allgather_recursive_doubling},
      {C::allgather, "bruck", "ceil(log2 n) steps at distances 1, 2, 4, ..., then a local rotation",
       algo::allgather_bruck},
      {C::allgather, "hierarchical", "all-gather across nodes among equal local ranks, then inside each node",
       algo::allgather_hierarchical, true},
      {C::allgather, "rings", "one ring per rank of a node, each crossing the nodes on its own card (NCCL's channels)",
       algo::allgather_rings, true},
      {C::reduce_scatter, "ring", "blocks travel around the ring, each rank adds its share", algo::reduce_scatter_ring},
      {C::reduce_scatter, "recursive_halving", "pairs exchange half of what remains, at distances n/2, n/4, ...",
       algo::reduce_scatter_recursive_halving},
      {C::reduce_scatter, "pairwise", "step k: every rank sends block r+k to rank r+k and adds what it gets",
       algo::reduce_scatter_pairwise},
      {C::reduce_scatter, "hierarchical", "reduce-scatter inside each node, then across nodes among equal local ranks",
       algo::reduce_scatter_hierarchical, true},
      {C::reduce_scatter, "rings",
       "one ring per rank of a node, each crossing the nodes on its own card (NCCL's channels)",
       algo::reduce_scatter_rings, true},
      {C::alltoall, "pairwise", "step k: rank r sends its block for r+k and receives from r-k",
       algo::alltoall_pairwise},
      {C::alltoall, "bruck", "log2 n steps of rotated block bundles, then a local rotation", algo::alltoall_bruck},
      {C::alltoall, "linear", "one step: every rank sends all its blocks at once, the k-th to rank r+k (spread out)",
       algo::alltoall_linear},
      {C::alltoallv, "pairwise", "round k: rank r sends its block (of its own size) to r+k and receives from r-k",
       algo::alltoallv_pairwise},
      {C::alltoallv, "linear", "one step: every rank sends all its blocks at once, the k-th to rank r+k (spread out)",
       algo::alltoallv_linear},
      {C::alltoallv, "scattered", "the rounds of pairwise, four at a time: fewer steps, at most 4 messages in flight",
       algo::alltoallv_scattered},
      {C::barrier, "dissemination", "round k: every rank signals rank r+2^k", algo::barrier_dissemination},
      {C::barrier, "central", "a central counter: everyone signals rank 0, then rank 0 releases everyone",
       algo::barrier_central},
      {C::barrier, "tree", "a tournament up a binomial tree to rank 0, then the release down the tree",
       algo::barrier_tree},
  };
  return table;
}

std::vector<std::string> algorithm_names(Collective c) {
  std::vector<std::string> names;
  for (const auto& a : all_algorithms())
    if (a.coll == c) names.emplace_back(a.name);
  return names;
}

const AlgorithmInfo* find_algorithm(Collective c, std::string_view name) {
  for (const auto& a : all_algorithms())
    if (a.coll == c && a.name == name) return &a;
  return nullptr;
}

}  // namespace collscope
