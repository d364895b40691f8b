// The algorithms library: every collective algorithm is a function that emits
// steps through a StepBuilder. The builder hides buffer ids, group-to-world rank
// mapping and in-place offsets, so an algorithm reads like the textbook picture.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collscope/result.h"
#include "collscope/schedule.h"

namespace collscope {

struct CostModel;

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
  // The call's ranks by node, in order: lists of group ranks whose world ranks share a
  // node (Schedule::ranks_per_node; one list of every rank when that is 0).
  std::vector<std::vector<std::int32_t>> nodes() const;

  // Locations, addressed by group rank r and an element index inside that rank's
  // input / output (already shifted by the in-place offsets).
  Loc in(std::int32_t r, std::uint64_t elem = 0) const;
  Loc out(std::int32_t r, std::uint64_t elem = 0) const;

  // Collectives with a count per pair of ranks (alltoallv): how many elements group
  // rank s sends to d, where that block starts in s's input, and where it lands in d's
  // output (CollArgs::peers, schedule.h).
  std::uint64_t peer_count(std::int32_t s, std::int32_t d) const;
  Loc send_block(std::int32_t s, std::int32_t d) const;
  Loc recv_block(std::int32_t d, std::int32_t s) const;

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
  std::shared_ptr<const PeerCounts> peers_;  // per-peer collectives only
};

using AlgorithmFn = void (*)(StepBuilder&);

struct AlgorithmInfo {
  Collective coll;
  std::string_view name;     // CLI contract: "ring", "binomial", ...
  std::string_view summary;  // one line for `collscope list`
  AlgorithmFn emit;
  // Knows the node boundary (hierarchical.cpp): on a single node it is an ordinary
  // ring, and `auto` leaves it out there.
  bool node_aware = false;
};

const std::vector<AlgorithmInfo>& all_algorithms();

// A communication library's own collectives, lowered to one native step (Step::native)
// that only the backend whose capabilities name the library runs
// (BackendCapabilities::native_algorithm): "nccl" (ncclAllReduce, ... on the nccl
// backend) and "mpi" (MPI_Allreduce, ... on the mpi backend). They are algorithms under
// the library's name, not in all_algorithms() and never picked by auto.
struct NativeLibrary {
  std::string_view algorithm;  // "nccl", "mpi": the algorithm name and the capability
  std::string_view title;      // "NCCL", "MPI"
  bool barrier = false;        // has a barrier of its own (MPI_Barrier; NCCL has none)
  // Reduces every dtype and op (NCCL); MPI has no 16-bit floating types and no average.
  bool reduces_everything = true;
  // The cost model knows how its collectives stream through a topology of GPUs
  // (price_native, model/native_model.cpp: NCCL's algorithms); MPI's it does not.
  bool priced_on_topology = false;
};
const std::vector<NativeLibrary>& native_libraries();
// The library whose name is `algorithm`, nullptr when it is none.
const NativeLibrary* find_native(std::string_view algorithm);
inline constexpr std::string_view kNativeAlgorithm = "nccl";  // NCCL's, the first native library
bool has_native(Collective c);                                // NCCL has c (every collective but barrier)
// Does library `algorithm` implement c?
bool has_native(std::string_view algorithm, Collective c);
// ", nccl (--backend nccl), mpi (--backend mpi)": the native choices for c, for messages.
std::string native_choices(Collective c);
// Does the schedule contain native steps?
bool uses_native(const Schedule& s);
std::vector<std::string> algorithm_names(Collective c);
// The hint of an unknown-algorithm error, the same wherever it is raised: "valid
// algorithms for broadcast: auto, flat, ..., nccl (--backend nccl)", and with `custom`
// (in a scenario, where a call may carry its own steps) ', or custom with a "body"'.
std::string valid_algorithms_hint(Collective c, bool custom = false);
const AlgorithmInfo* find_algorithm(Collective c, std::string_view name);

struct Machine;  // machine.h

// Picks an algorithm for `auto` from message size and rank count with the cost model,
// the way NCCL's tuner does. Returns the algorithm name. Without a model, the cpu
// backend's (CostModel::cpu_default(), which reads this machine's cores and cache).
std::string pick_algorithm(const CollArgs& args);
std::string pick_algorithm(const CollArgs& args, const CostModel& model);
// On a Machine (machine.h): this machine's cpu model or a topology of devices, with
// the node boundaries of the schedule the call goes into (Schedule::ranks_per_node).
// On a topology the candidates are lowered with `slice_bytes`, as the schedule they go
// into is (a GPU backend's: 0, whole transfers; the cpu backend priced on a topology cuts
// its ring in cache slices), so that the price picked by is the price of what runs.
std::string pick_algorithm(const CollArgs& args, const Machine& machine, std::int32_t ranks_per_node = 0,
                           std::uint64_t slice_bytes = 0);

// Appends the steps of one collective call to `schedule` (scratch buffers included;
// the final division of `avg` included). `algorithm` may be "auto".
// `tuner` is what `auto` prices with (nullptr: the cpu model's defaults); `group` names
// the group the call runs on (args.world_rank), for its captions.
Status lower_call(Schedule& schedule, const CollArgs& args, std::string_view algorithm, std::string caption = {},
                  std::int32_t program_index = 0, const Machine* tuner = nullptr, std::string group = {});

// ---------------------------------------------------------------------------
// Shapes: an algorithm as its distinct steps and how often each occurs
// (algorithms/shapes.cpp, shapes_rooted.cpp), so that it can be priced at any number of ranks without
// lowering it. `fill` appends one such step's transfers (every rank's, or where the machine
// repeats itself those that price it, ShapeRepeat below; offsets 0).
struct ShapePhase {
  std::int64_t repeat = 1;
  std::string phase;
  std::function<void(Step&)> fill;
  // A step that every node takes alike (node m's transfers are node 0's moved m nodes on:
  // every rank r sending to r+k, a ring inside each node, ...), where the machine lets the
  // pricer count its switch groups' loads (ShapeRepeat::counted_groups): `fill` then
  // writes only the transfers that leave or reach node 0, and the price adds what crosses
  // each group (TopologyPricer::step). False: `fill` writes all a step's pricing needs.
  bool node_periodic = false;
};
// Where the machine a shape is priced on repeats itself (predict_shape fills it from the
// placement): for every multiple r of `period`, ranks [r, r + period) sit as ranks
// [0, period) do, in nodes of `node_ranks` ranks and whole switch groups. A step that is
// the same at every rank then loads no resource more than it loads one of the ranks
// [0, period), and its price can be taken from the transfers that leave or reach them.
// 0: not known (a shape writes every rank's transfers).
struct ShapeRepeat {
  std::int64_t period = 0;
  std::int64_t node_ranks = 0;
  // The switch tiers nest (each tier's group of nodes divides the next one's and the
  // nodes), so that a step in which every rank sends k ranks on loads every group of a
  // tier alike and the pricer can count those loads (ShapePhase::node_periodic).
  bool counted_groups = false;
  // Where they do: the ranks under one group of each tier a message may climb, in order.
  std::vector<std::int64_t> group_ranks;
};
// nullopt: the algorithm has no shape (it is priced by lowering it), or none that prices
// quickly on such a machine. `ranks_per_node` (0: one node) is what node-aware algorithms
// split on, as Schedule::ranks_per_node.
std::optional<std::vector<ShapePhase>> algorithm_shape(const CollArgs& args, std::string_view algorithm,
                                                       std::int64_t ranks_per_node, ShapeRepeat repeat = {});

}  // namespace collscope
