// Declarations of every algorithm, one family per .cpp file in this folder.
// registry.cpp lists them under their CLI names.
#pragma once

#include "collscope/algorithms.h"

namespace collscope::algo {

// broadcast.cpp
void broadcast_flat(StepBuilder& b);
void broadcast_binomial(StepBuilder& b);
void broadcast_chain(StepBuilder& b);
void broadcast_scatter_allgather(StepBuilder& b);

// reduce.cpp
void reduce_flat(StepBuilder& b);
void reduce_binomial(StepBuilder& b);
void reduce_ring(StepBuilder& b);

// allreduce.cpp
void allreduce_flat(StepBuilder& b);
void allreduce_tree(StepBuilder& b);
void allreduce_ring(StepBuilder& b);
// The ring all-reduce, every caption led by `why` ("(one node: the ring) "): what the
// node-aware all-reduces run where the nodes leave them one ring, cut in slices as the
// ring is, so that they are the ring's very steps.
void allreduce_one_ring(StepBuilder& b, const std::string& why);
void allreduce_recursive_doubling(StepBuilder& b);
void allreduce_rabenseifner(StepBuilder& b);

// scatter_gather.cpp
void scatter_flat(StepBuilder& b);
void scatter_binomial(StepBuilder& b);
void scatter_chain(StepBuilder& b);
void gather_flat(StepBuilder& b);
void gather_binomial(StepBuilder& b);
void gather_chain(StepBuilder& b);

// allgather.cpp
void allgather_ring(StepBuilder& b);
void allgather_recursive_doubling(StepBuilder& b);
void allgather_bruck(StepBuilder& b);

// reduce_scatter.cpp
void reduce_scatter_ring(StepBuilder& b);
void reduce_scatter_recursive_halving(StepBuilder& b);
void reduce_scatter_pairwise(StepBuilder& b);

// alltoall.cpp
void alltoall_pairwise(StepBuilder& b);
void alltoall_bruck(StepBuilder& b);
void alltoall_linear(StepBuilder& b);

// alltoallv.cpp
void alltoallv_pairwise(StepBuilder& b);
void alltoallv_linear(StepBuilder& b);
void alltoallv_scattered(StepBuilder& b);

// barrier.cpp
void barrier_dissemination(StepBuilder& b);
void barrier_central(StepBuilder& b);
void barrier_tree(StepBuilder& b);

// hierarchical.cpp (algorithms that know the node boundary)
void allreduce_hierarchical(StepBuilder& b);
void allreduce_rings(StepBuilder& b);
void reduce_scatter_hierarchical(StepBuilder& b);
void allgather_hierarchical(StepBuilder& b);
void reduce_scatter_rings(StepBuilder& b);
void allgather_rings(StepBuilder& b);

// double_tree.cpp (NCCL's double binary tree across nodes, a chain inside each)
void allreduce_double_tree(StepBuilder& b);

}  // namespace collscope::algo
