#include "backends/mpi/native.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "backends/mpi/job.h"
#include "collscope/collective.h"

namespace collscope::mpi {

const char* native_call_name(Collective c) {
  switch (c) {
    case Collective::allreduce:
      return "MPI_Allreduce";
    case Collective::broadcast:
      return "MPI_Bcast";
    case Collective::reduce:
      return "MPI_Reduce";
    case Collective::allgather:
      return "MPI_Allgather";
    case Collective::reduce_scatter:
      return "MPI_Reduce_scatter_block";
    case Collective::alltoall:
      return "MPI_Alltoall";
    case Collective::alltoallv:
      return "MPI_Alltoallv";
    case Collective::gather:
      return "MPI_Gather";
    case Collective::scatter:
      return "MPI_Scatter";
    case Collective::barrier:
      return "MPI_Barrier";
  }
  return "MPI_Barrier";
}

namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::int8:
      return MPI_INT8_T;
    case DType::uint8:
      return MPI_UINT8_T;
    case DType::int32:
      return MPI_INT32_T;
    case DType::int64:
      return MPI_INT64_T;
    case DType::float16:
    case DType::bfloat16:
      return MPI_UINT16_T;  // moved, never reduced (see native.h)
    case DType::float32:
      return MPI_FLOAT;
    case DType::float64:
      return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return MPI_SUM;
    case ReduceOp::prod:
      return MPI_PROD;
    case ReduceOp::min:
      return MPI_MIN;
    case ReduceOp::max:
      return MPI_MAX;
    case ReduceOp::avg:
      break;
  }
  return MPI_OP_NULL;
}

}  // namespace

Status check_native(const CollArgs& a, DType t) {
  if (is_reducing(a.coll) && (t == DType::float16 || t == DType::bfloat16 || a.op == ReduceOp::avg))
    return make_error("backend.native_unsupported",
                      std::string(native_call_name(a.coll)) + " cannot reduce " +
                          (a.op == ReduceOp::avg ? std::string("with avg") : std::string(name_of(t))),
                      "use one of our algorithms", {}, ExitCode::bad_input);
  if (a.count > static_cast<std::uint64_t>(INT_MAX) / static_cast<std::uint64_t>(a.ranks > 0 ? a.ranks : 1))
    return make_error("backend.native_unsupported",
                      std::string(native_call_name(a.coll)) + " takes counts below 2^31 elements; this call has " +
                          std::to_string(a.count),
                      "use one of our algorithms for larger counts", {}, ExitCode::bad_input);
  if (const auto p = peers_of(a)) {
    // MPI_Alltoallv's counts and displacements are ints.
    std::uint64_t most = 0;
    for (const auto* table : {&p->counts, &p->send_offsets, &p->recv_offsets})
      for (std::uint64_t v : *table) most = std::max(most, v);
    for (std::uint64_t v : p->in_need) most = std::max(most, v);
    for (std::uint64_t v : p->out_need) most = std::max(most, v);
    if (most > static_cast<std::uint64_t>(INT_MAX))
      return make_error("backend.native_unsupported",
                        std::string(native_call_name(a.coll)) +
                            " takes counts and offsets below 2^31 elements; this call "
                            "reaches " +
                            std::to_string(most),
                        "use one of our algorithms for larger counts", {}, ExitCode::bad_input);
  }
  return ok_status();
}

Status run_native(const CollArgs& a, DType t, std::int32_t g, std::uint8_t* in_base, std::uint8_t* out_base,
                  MPI_Comm comm) {
  const std::size_t e = size_of(t);
  const MPI_Datatype type = mpi_type(t);
  const int n = static_cast<int>(a.count);
  std::uint8_t* in = in_base ? in_base + a.in_offset(g) * e : nullptr;
  std::uint8_t* out = out_base ? out_base + a.out_offset(g) * e : nullptr;
  const bool in_place = a.in_place || a.in_buf == a.out_buf;
  const bool root = g == a.root;
  const MPI_Op op = mpi_op(a.op);
  switch (a.coll) {
    case Collective::allreduce:
      COLLSCOPE_MPI_CALL(MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, n, type, op, comm));
      break;
    case Collective::broadcast:
      // The root's output gets the data too, as NCCL's out-of-place broadcast does.
      if (root && !in_place && n) std::memcpy(out, in, a.count * e);
      COLLSCOPE_MPI_CALL(MPI_Bcast(out, n, type, a.root, comm));
      break;
    case Collective::reduce:
      COLLSCOPE_MPI_CALL(
          MPI_Reduce(root && in_place ? MPI_IN_PLACE : in, root ? out : nullptr, n, type, op, a.root, comm));
      break;
    case Collective::allgather:
      if (in_place) COLLSCOPE_MPI_CALL(MPI_Allgather(MPI_IN_PLACE, 0, type, out, n, type, comm));
      else COLLSCOPE_MPI_CALL(MPI_Allgather(in, n, type, out, n, type, comm));
      break;
    case Collective::reduce_scatter:
      if (in_place) {
        // MPI puts an in-place result at the start of the buffer; ours lands in the rank's
        // own block (NCCL's convention), so it goes through a block of its own.
        std::vector<std::uint8_t> mine(a.count * e);
        COLLSCOPE_MPI_CALL(MPI_Reduce_scatter_block(in, mine.data(), n, type, op, comm));
        if (n) std::memcpy(out, mine.data(), mine.size());
      } else {
        COLLSCOPE_MPI_CALL(MPI_Reduce_scatter_block(in, out, n, type, op, comm));
      }
      break;
    case Collective::alltoall:
      COLLSCOPE_MPI_CALL(MPI_Alltoall(in, n, type, out, n, type, comm));
      break;
    case Collective::alltoallv: {
      // This rank's row of the table (what it sends) and column (what it receives).
      const auto p = peers_of(a);
      const auto ranks = static_cast<std::size_t>(p->ranks);
      std::vector<int> sc(ranks), sd(ranks), rc(ranks), rd(ranks);
      for (std::int32_t q = 0; q < p->ranks; ++q) {
        const auto k = static_cast<std::size_t>(q);
        sc[k] = static_cast<int>(p->count(g, q));
        sd[k] = static_cast<int>(p->send_at(g, q));
        rc[k] = static_cast<int>(p->count(q, g));
        rd[k] = static_cast<int>(p->recv_at(g, q));
      }
      COLLSCOPE_MPI_CALL(MPI_Alltoallv(in, sc.data(), sd.data(), type, out, rc.data(), rd.data(), type, comm));
      break;
    }
    case Collective::gather:
      COLLSCOPE_MPI_CALL(
          MPI_Gather(root && in_place ? MPI_IN_PLACE : in, n, type, root ? out : nullptr, n, type, a.root, comm));
      break;
    case Collective::scatter:
      COLLSCOPE_MPI_CALL(
          MPI_Scatter(root ? in : nullptr, n, type, root && in_place ? MPI_IN_PLACE : out, n, type, a.root, comm));
      break;
    case Collective::barrier:
      COLLSCOPE_MPI_CALL(MPI_Barrier(comm));
      break;
  }
  return ok_status();
}

}  // namespace collscope::mpi
