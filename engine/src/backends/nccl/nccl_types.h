// collscope's dtypes and reduction ops as NCCL's, for the single-process nccl backend and
// its one-process-per-GPU form (nccl_processes.cpp).
#pragma once

#include <nccl.h>

#include "collscope/types.h"

namespace collscope::gpu {

inline ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::int8:
      return ncclInt8;
    case DType::uint8:
      return ncclUint8;
    case DType::int32:
      return ncclInt32;
    case DType::int64:
      return ncclInt64;
    case DType::float16:
      return ncclFloat16;
    case DType::bfloat16:
      return ncclBfloat16;
    case DType::float32:
      return ncclFloat32;
    case DType::float64:
      return ncclFloat64;
  }
  return ncclUint8;
}

inline ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return ncclSum;
    case ReduceOp::prod:
      return ncclProd;
    case ReduceOp::min:
      return ncclMin;
    case ReduceOp::max:
      return ncclMax;
    case ReduceOp::avg:
      return ncclAvg;
  }
  return ncclSum;
}

}  // namespace collscope::gpu
