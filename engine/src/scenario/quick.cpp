// One-call scenarios from flags, with inputs that make exact checks possible.
#include <algorithm>
#include <cmath>

#include "collscope/collective.h"
#include "collscope/scenario.h"
#include "scenario/resolve.h"

namespace collscope {

BufferInit default_init(DType t, ReduceOp op, std::int32_t ranks) {
  BufferInit init;
  init.kind = InitKind::random;
  init.seed = 1;
  init.min = 0;
  init.max = 9;
  if (op == ReduceOp::prod) {
    init.min = 1;  // products of 1s and 2s are powers of two: exact in every order
    init.max = 2;
    return init;
  }
  if (op == ReduceOp::sum || op == ReduceOp::avg) {
    // Keep every partial sum exactly representable: n * max <= 2^precision.
    double limit = 0;
    switch (t) {
      case DType::float16:
        limit = 2048;
        break;
      case DType::bfloat16:
        limit = 256;
        break;
      case DType::int8:
        limit = 127;
        break;
      case DType::uint8:
        limit = 255;
        break;
      default:
        limit = 1e9;
        break;
    }
    const auto fit = static_cast<std::int64_t>(std::floor(limit / std::max(1, ranks)));
    init.max = std::clamp<std::int64_t>(fit, 1, 9);
  }
  return init;
}

Result<Scenario> scenario_from_spec(const QuickSpec& q) {
  auto flag_error = [](const std::string& id, const std::string& msg, const std::string& hint) {
    return make_error(id, msg, hint);
  };
  if (q.ranks < 1 || q.ranks > kMaxRanks)
    return flag_error("scenario.out_of_range", "--ranks " + std::to_string(q.ranks) + " is out of range",
                      "use 1.." + std::to_string(kMaxRanks) + " ranks");
  if (has_root(q.coll) && (q.root < 0 || q.root >= q.ranks))
    return flag_error("scenario.out_of_range",
                      "--root " + std::to_string(q.root) + " is not a rank of a world of " + std::to_string(q.ranks),
                      "use a root in 0.." + std::to_string(q.ranks - 1));
  if (q.in_place && !supports_in_place(q.coll))
    return flag_error("scenario.in_place_unsupported", std::string(name_of(q.coll)) + " cannot run in place",
                      "drop --in-place");

  Scenario s;
  s.title = std::string(name_of(q.coll)) + " on " + std::to_string(q.ranks) + " ranks";
  s.ranks = q.ranks;
  s.dtype = q.dtype;
  const bool moves_data = collective_descriptor(q.coll).moves_data;  // a barrier has no buffers and no count
  const std::uint64_t count = moves_data ? q.count : 0;
  std::vector<std::uint64_t> in_n, out_n;
  std::uint64_t total = 0;
  // The call from a count alone (a per-peer collective: its default pattern, built once).
  CollArgs call;
  call.coll = q.coll;
  call.ranks = q.ranks;
  call.root = has_root(q.coll) ? q.root : 0;
  call.count = count;
  call.peers = peers_of(call);
  const auto full_in = shape_of(call, call.root).in_count;
  const auto full_out = shape_of(call, call.root).out_count;
  for (std::int32_t r = 0; r < q.ranks; ++r) {
    const auto sh = shape_of(call, r);
    // Every rank gets the same sizes, like a program written once for all ranks.
    in_n.push_back(q.in_place ? std::max(full_in, full_out) : std::max(sh.in_count, full_in));
    out_n.push_back(std::max(sh.out_count, full_out));
    if (count && !q.unbounded_bytes &&
        (in_n.back() > kMaxBufferBytes / size_of(q.dtype) || out_n.back() > kMaxBufferBytes / size_of(q.dtype)))
      return flag_error("scenario.out_of_range",
                        "--count " + std::to_string(q.count) + " makes a buffer larger than " +
                            std::to_string(kMaxBufferBytes >> 30) + " GiB",
                        "use a smaller count");
    total += (in_n.back() + (q.in_place ? 0 : out_n.back())) * size_of(q.dtype);
  }
  if (total > kMaxTotalBytes && !q.unbounded_bytes)
    return flag_error("scenario.out_of_range",
                      "--count " + std::to_string(q.count) + " with " + std::to_string(q.ranks) + " ranks needs " +
                          scenario::human_bytes_pair(total, kMaxTotalBytes).first + " in all, over the limit of " +
                          scenario::human_bytes_pair(total, kMaxTotalBytes).second,
                      "use a smaller count or fewer ranks");

  ProgramOp op;
  op.op = std::string(name_of(q.coll));
  op.coll = q.coll;
  op.algorithm = q.algorithm;
  op.reduce_op = q.op;
  op.root = has_root(q.coll) ? q.root : 0;
  if (collective_descriptor(q.coll).per_peer)
    op.peer_counts.expr = alltoallv_default_counts_text(count);  // --count N: the default pattern of N
  else op.count = count;
  const BufferInit init = default_init(q.dtype, q.op, q.ranks);
  if (moves_data) {
    if (q.in_place) {
      s.buffers.push_back({"buf", in_n, init, {}});
      op.buffer = "buf";
    } else {
      s.buffers.push_back({"send", in_n, init, {}});
      BufferInit zeros;
      s.buffers.push_back({"recv", out_n, zeros, {}});
      op.send = "send";
      op.recv = "recv";
    }
  }
  s.program.push_back(op);
  return s;
}

}  // namespace collscope
