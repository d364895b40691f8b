// The algorithms library: every collective algorithm is a function that emits
// steps through a StepBuilder. The builder hides buffer ids, group-to-world rank
// mapping and in-place offsets, so an algorithm reads like the textbook picture.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collscope/result.h"
#include "collscope/schedule.h"

namespace collscope {

class StepBuilder {
 public:
  StepBuilder(Schedule& schedule, const CollArgs& args, std::int32_t call);

  const CollArgs& args() const { return args_; }
  std::int32_t ranks() const { return args_.ranks; }  // group size
  std::uint64_t count() const { return args_.count; }
  std::int32_t root() const { return args_.root; }
  Collective collective() const { return args_.coll; }
  // Bytes of each rank's buffer per slice for sliced algorithms; 0 = do not slice.
  std::uint64_t slice_bytes() const { return s_.slice_bytes; }

  // Locations, addressed by group rank r and an element index inside that rank's
  // input / output (already shifted by the in-place offsets).
  Loc in(std::int32_t r, std::uint64_t elem = 0) const;
  Loc out(std::int32_t r, std::uint64_t elem = 0) const;

  // Scratch space the algorithm needs (same size on every rank). Returns an id for scratch().
  std::int32_t add_scratch(const std::string& name, std::uint64_t count_per_rank);
  Loc scratch(std::int32_t id, std::int32_t r, std::uint64_t elem = 0) const;

  // Starts a new step; transfers added afterwards belong to it. A step that ends up
  // with no transfers is dropped.
  void begin_step(std::string phase, std::string caption);
  // Data movement inside the current step. Zero counts are ignored.
  void copy(Loc src, Loc dst, std::uint64_t count);
  void reduce(Loc src, Loc dst, std::uint64_t count);
  // dst = aux (op) src, aux on dst's rank: receive and add a piece of one's own in one
  // go. When aux is dst itself (in place) this is a plain reduce.
  void reduce_copy(Loc src, Loc aux, Loc dst, std::uint64_t count);
  // Pure synchronisation: dst may not pass this step before src has reached it
  // (used by barrier). Group ranks.
  void signal(std::int32_t src, std::int32_t dst);
  // dst = dst / divisor (finishes an average).
  void scale(Loc dst, std::uint64_t count, std::uint32_t divisor);

  // Closes the last step (drops it when empty). Call once when the algorithm is done.
  void finish() { close_step(); }

  // Number of steps emitted so far for this call (the current one included if non-empty).
  std::int32_t steps_emitted() const;

  // How a caption names group rank r: "rank 4 (tp rank 0)" on a group, "rank 0" otherwise.
  std::string rank_name(std::int32_t r) const;

 private:
  void close_step();
  Schedule& s_;
  CollArgs args_;
  std::int32_t call_;
  std::int32_t first_step_;
  bool open_ = false;
  std::vector<std::int32_t> scratch_bufs_;
};

using AlgorithmFn = void (*)(StepBuilder&);

struct AlgorithmInfo {
  Collective coll;
  std::string_view name;     // CLI contract: "ring", "binomial", ...
  std::string_view summary;  // one line for `collscope list`
  AlgorithmFn emit;
};

const std::vector<AlgorithmInfo>& all_algorithms();

// "nccl": NCCL's own implementation of a collective (every one but barrier), lowered
// to one native step that only the nccl backend runs. Not in all_algorithms(), never
// picked by auto.
inline constexpr std::string_view kNativeAlgorithm = "nccl";
bool has_native(Collective c);
// Does the schedule contain native steps?
bool uses_native(const Schedule& s);
std::vector<std::string> algorithm_names(Collective c);
const AlgorithmInfo* find_algorithm(Collective c, std::string_view name);

// Picks an algorithm for `auto` from message size and rank count with the cost model,
// the way NCCL's tuner does. Returns the algorithm name.
std::string pick_algorithm(const CollArgs& args);

// Appends the steps of one collective call to `schedule` (scratch buffers included;
// the final division of `avg` included). `algorithm` may be "auto".
// `group` names the group the call runs on (args.world_rank), for its captions.
Status lower_call(Schedule& schedule, const CollArgs& args, std::string_view algorithm, std::string caption = {},
                  std::int32_t program_index = 0, std::string group = {});

}  // namespace collscope
