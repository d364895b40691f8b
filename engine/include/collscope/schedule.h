// The Schedule: collscope's one intermediate representation (DESIGN §3).
//
// Every algorithm and every program lowers to a Schedule; every backend executes
// one; the verifier, the trace and the views only read it.
//
//   world of R ranks, each with the same named buffers (sizes may differ per rank)
//   schedule = ordered list of steps
//   step     = set of transfers that may run at the same time
//   transfer = move `count` elements (src rank, buffer, offset) -> (dst rank, buffer, offset)
//              with an action: copy (dst = src), reduce (dst = dst (+) src),
//              or scale (dst = dst / divisor, local, used to finish `avg`)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/types.h"

namespace collscope {

enum class Action : std::uint8_t {
  copy,    // dst = src
  reduce,  // dst = dst (op) src   (op = the call's reduction operator)
  scale,   // dst = dst / divisor  (src == dst; finishes an average)
};

// A place in memory: element `offset` of buffer `buf` on rank `rank`.
struct Loc {
  std::int32_t rank = 0;
  std::int32_t buf = 0;
  std::uint64_t offset = 0;
};

struct Transfer {
  Loc src;
  Loc dst;
  std::uint64_t count = 0;
  Action action = Action::copy;
  std::uint32_t divisor = 1;  // only for Action::scale
};

struct Step {
  std::string phase;    // "reduce-scatter", "tree up", ...
  std::string caption;  // plain words for teaching
  std::int32_t call = 0;  // index into Schedule::calls
  std::vector<Transfer> transfers;
};

struct BufferDecl {
  std::string name;
  std::vector<std::uint64_t> count;  // elements, one entry per rank
  bool scratch = false;              // created by an algorithm, not by the user
};

// Arguments of one collective call after validation, in the engine's terms.
// Offsets follow NCCL's in-place conventions: for in-place allgather the input of
// rank r is out + r*count; for in-place reduce_scatter the output of rank r is
// in + r*count; for in-place scatter/gather the root's own block lives at
// root*count inside the large buffer.
struct CollArgs {
  Collective coll = Collective::allreduce;
  std::int32_t ranks = 1;
  std::uint64_t count = 0;  // NCCL's meaning of count, see collective.h
  std::int32_t root = 0;
  ReduceOp op = ReduceOp::sum;
  DType dtype = DType::float32;
  std::int32_t in_buf = 0;
  std::int32_t out_buf = 0;
  bool in_place = false;
  // When the call runs on a group, world_rank[g] is the world rank of group rank g;
  // empty = the whole world in order. Algorithms work on group ranks; the builder maps.
  std::vector<std::int32_t> world_rank;

  // Where rank r's input and output start (element offsets in in_buf / out_buf).
  std::uint64_t in_offset(std::int32_t r) const;
  std::uint64_t out_offset(std::int32_t r) const;
};

// One collective call of the program and the range of steps it lowered to.
struct Call {
  CollArgs args;
  std::string algorithm;   // the algorithm that ran (after `auto` was resolved)
  bool auto_picked = false;
  std::string caption;     // the program's caption for this call
  std::int32_t first_step = 0;
  std::int32_t num_steps = 0;
  std::int32_t program_index = 0;  // position in the scenario's program
};

struct Schedule {
  std::int32_t ranks = 1;
  DType dtype = DType::float32;
  std::vector<BufferDecl> buffers;
  std::vector<Call> calls;
  std::vector<Step> steps;

  std::int32_t find_buffer(const std::string& name) const;  // -1 when absent
  std::uint64_t buffer_count(std::int32_t buf, std::int32_t rank) const { return buffers[buf].count[rank]; }
  std::uint64_t total_transfers() const;
};

// Bytes a step moves between ranks (local copies excluded).
std::uint64_t step_bytes(const Schedule& s, const Step& st);

}  // namespace collscope
