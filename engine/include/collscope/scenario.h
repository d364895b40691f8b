// Scenarios: what the user asks for (DESIGN §1), read from JSON format version 1.
//
//   {
//     "version": 1,
//     "title": "All-reduce on a ring",
//     "description": "Four ranks add their vectors ...",
//     "ranks": 4,
//     "dtype": "float32",
//     "buffers": {
//       "x":     {"count": 8, "init": "rank"},
//       "table": {"counts": [16, 0, 0, 0], "init": {"random": {"seed": 7, "min": 0, "max": 9}}}
//     },
//     "program": [
//       {"op": "allreduce", "buffer": "x", "algorithm": "ring", "reduce_op": "sum",
//        "caption": "every rank ends with the sum of all vectors"},
//       {"op": "scatter", "send": "table", "recv": "x", "root": 0, "count": 4}
//     ]
//   }
//
// A program entry is an object whose "op" names what it does. Collective calls use
// the keys below; point-to-point ops (send, recv, isend, irecv, wait, ...) will add
// their own keys under the same "op" field, so files written now stay valid.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collscope/result.h"
#include "collscope/schedule.h"
#include "collscope/types.h"

namespace collscope {

enum class InitKind : std::uint8_t {
  zeros,       // 0
  rank,        // the rank number
  index,       // the element index
  rank_index,  // 100 * rank + index
  random,      // seeded random integers in [min, max]
  values,      // explicit values per rank
};

struct BufferInit {
  InitKind kind = InitKind::zeros;
  std::uint64_t seed = 0;
  std::int64_t min = 0, max = 9;
  std::vector<std::vector<double>> values;  // values[rank][i]; for InitKind::values
};

struct BufferSpec {
  std::string name;
  std::vector<std::uint64_t> count;  // one entry per rank
  BufferInit init;
  Location where;                    // of the buffer's entry
};

struct ProgramOp {
  std::string op;                    // "allreduce", "scatter", ...
  std::optional<Collective> coll;    // set for collective calls
  std::string buffer;                // in place: the one buffer
  std::string send, recv;            // out of place
  std::optional<std::uint64_t> count;  // NCCL's count; derived from the buffers when absent
  std::string algorithm = "auto";
  ReduceOp reduce_op = ReduceOp::sum;
  std::int32_t root = 0;
  std::string caption;
  Location where;                            // of the program entry
  std::map<std::string, Location> field_where;  // of each key that was present
};

struct Scenario {
  int version = 1;
  std::string title;
  std::string description;
  std::int32_t ranks = 1;
  DType dtype = DType::float32;
  std::vector<BufferSpec> buffers;
  std::vector<ProgramOp> program;
  std::string file;  // where it was read from ("" for scenarios built from flags)
};

// Hard limits, checked before anything is allocated.
inline constexpr std::int32_t kMaxRanks = 1024;
inline constexpr std::uint64_t kMaxBufferBytes = 1ull << 32;  // 4 GiB per buffer per rank
inline constexpr std::uint64_t kMaxTotalBytes = 16ull << 30;  // 16 GiB over all buffers and ranks

// Parses and validates a scenario (syntax, keys, types, ranges, names).
Result<Scenario> parse_scenario(const std::string& text, const std::string& file_name);
Result<Scenario> load_scenario(const std::string& path);

// Lowers the program to a Schedule (buffers + every call's steps). Errors with the
// location of the offending program entry: buffer too small, root out of range,
// unknown algorithm (listing the valid ones), in place not allowed, ...
Result<Schedule> lower_scenario(const Scenario& s);

// Initial contents of buffer `buf` on `rank`, as doubles (converted to the dtype by the caller).
double initial_value(const BufferSpec& b, std::int32_t rank, std::uint64_t index);

// Writes the scenario back as JSON (format version 1).
std::string to_json(const Scenario& s);

}  // namespace collscope
