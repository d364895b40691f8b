// The MPI library's own collectives (algorithm "mpi"): one native step runs
// MPI_Allreduce, MPI_Bcast, ... on the call's buffers of every member process, as
// algorithm "nccl" runs NCCL's own on the nccl backend. Verified like every run, by the
// numeric check.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "collscope/result.h"
#include "collscope/schedule.h"

namespace collscope::mpi {

// The MPI call that runs collective c ("MPI_Allreduce"). The whole mapping from our
// collectives to MPI's lives in this function and run_native().
const char* native_call_name(Collective c);

// What MPI cannot run: a reduction of float16, bfloat16 or avg (refused while lowering
// already), counts of 2^31 elements or more (MPI counts are ints). backend.native_unsupported, exit 2.
Status check_native(const CollArgs& a, DType t);

// Runs the call on this process: `in` and `out` are the rank's input and output buffers
// (their starts; nullptr where the rank has none), `group_rank` its rank in `comm`, the
// communicator of the call's members. float16, bfloat16 and avg are refused for
// reductions while lowering (MPI cannot reduce them); here they only move.
Status run_native(const CollArgs& a, DType t, std::int32_t group_rank, std::uint8_t* in, std::uint8_t* out,
                  MPI_Comm comm);

}  // namespace collscope::mpi
