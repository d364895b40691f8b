// Lowering one collective call: the algorithm (picked by `auto`, or named), its steps
// appended to the schedule under one Call, and the final division of `avg`.
#include "collscope/collective.h"
#include "families.h"

namespace collscope {

// ---------------------------------------------------------------------------
// Native algorithms: a library's own implementation of a collective, lowered to one
// step that only a backend running that library executes.

const std::vector<NativeLibrary>& native_libraries() {
  static const std::vector<NativeLibrary> table = {
      {"nccl", "NCCL", false, true, true},
      {"mpi", "MPI", true, false, false},
  };
  return table;
}

const NativeLibrary* find_native(std::string_view algorithm) {
  for (const auto& l : native_libraries())
    if (l.algorithm == algorithm) return &l;
  return nullptr;
}

// Which collectives a library has is each collective descriptor's to say (its native
// NCCL and MPI calls, collective.h).
bool has_native(std::string_view algorithm, Collective c) {
  if (algorithm == "nccl") return !nccl_call(c).function.empty();
  if (algorithm == "mpi") return !mpi_call(c).function.empty();
  return false;
}

bool has_native(Collective c) { return has_native(kNativeAlgorithm, c); }

std::string native_choices(Collective c) {
  std::string out;
  for (const auto& l : native_libraries())
    if (has_native(l.algorithm, c))
      out += ", " + std::string(l.algorithm) + " (--backend " + std::string(l.algorithm) + ")";
  return out;
}

std::string valid_algorithms_hint(Collective c, bool custom) {
  std::string hint = "valid algorithms for " + std::string(name_of(c)) + ": auto";
  for (const auto& n : algorithm_names(c)) hint += ", " + n;
  hint += native_choices(c);
  if (custom) hint += ", or custom with a \"body\"";
  return hint;
}

bool uses_native(const Schedule& s) {
  for (const auto& st : s.steps)
    if (st.native) return true;
  return false;
}

namespace {

// One native step: the library's own collective, on the call's buffers.
void append_native_step(Schedule& schedule, const CollArgs& args, std::int32_t call, const NativeLibrary& lib) {
  Step st;
  st.phase = std::string(lib.algorithm);
  st.caption = std::string(lib.title) + "'s own " + std::string(name_of(args.coll)) + " on every rank, in one call";
  st.call = call;
  st.native = true;
  st.library = std::string(lib.algorithm);
  schedule.steps.push_back(std::move(st));
}

// ---------------------------------------------------------------------------
// Built-in algorithms

// `avg` is a sum followed by one division on the ranks that hold the result.
void append_average(StepBuilder& b) {
  const CollArgs& args = b.args();
  if (args.op != ReduceOp::avg || !is_reducing(args.coll)) return;
  b.begin_step("average", "every rank holding a full sum divides it by " + std::to_string(args.ranks) +
                              " to turn it into the average");
  for (std::int32_t r = 0; r < args.ranks; ++r)  // ranks without an output (a reduce's non-roots) scale nothing
    b.scale(b.out(r), shape_of(args, r).out_count, static_cast<std::uint32_t>(args.ranks));
}

}  // namespace

Status lower_call(Schedule& schedule, const CollArgs& args, std::string_view algorithm, std::string caption,
                  std::int32_t program_index, const Machine* tuner, std::string group) {
  std::string name(algorithm);
  const bool picked = name == "auto" || name.empty();
  if (picked) {
    // The pick depends only on the call's shape and the model (one per lowering): a job
    // of a thousand calls of a few shapes prices each shape once, not every call.
    name.clear();
    for (auto it = schedule.calls.rbegin(); it != schedule.calls.rend() && name.empty(); ++it) {
      const CollArgs& p = it->args;
      if (it->auto_picked && it->kind == CallKind::collective && p.coll == args.coll && p.ranks == args.ranks &&
          p.count == args.count && p.root == args.root && p.op == args.op && p.dtype == args.dtype &&
          p.in_place == args.in_place && p.world_rank == args.world_rank &&
          (p.peers == args.peers || (p.peers && args.peers && *p.peers == *args.peers)))
        name = it->algorithm;
    }
    if (name.empty())
      name = tuner ? pick_algorithm(args, *tuner, schedule.ranks_per_node, schedule.slice_bytes) : pick_algorithm(args);
  }
  const NativeLibrary* lib = find_native(name);
  const bool native = lib && has_native(name, args.coll);
  const AlgorithmInfo* info = native ? nullptr : find_algorithm(args.coll, name);
  if (!native && !info)
    return make_error("scenario.unknown_algorithm",
                      "unknown algorithm \"" + name + "\" for " + std::string(name_of(args.coll)),
                      valid_algorithms_hint(args.coll));
  if (native && !lib->reduces_everything && is_reducing(args.coll) &&
      (args.dtype == DType::float16 || args.dtype == DType::bfloat16 || args.op == ReduceOp::avg))
    return make_error(
        "scenario.native_unsupported",
        std::string(lib->title) + " cannot reduce " +
            (args.op == ReduceOp::avg ? std::string("with op avg (it has no average)")
                                      : std::string(name_of(args.dtype)) + " (it has no 16-bit floating types)"),
        "use one of our algorithms (they reduce every dtype and op), or --dtype float32 and op sum");

  // Emitting adds steps and scratch buffers, never calls, so `call` stays valid.
  const auto call_index = static_cast<std::int32_t>(schedule.calls.size());
  Call& call = schedule.calls.emplace_back();
  call.args = args;
  call.algorithm = name;
  call.auto_picked = picked;
  call.caption = std::move(caption);
  call.program_index = program_index;
  call.group = std::move(group);
  call.first_step = static_cast<std::int32_t>(schedule.steps.size());

  if (native) {
    append_native_step(schedule, args, call_index, *lib);
  } else {
    StepBuilder b(schedule, args, call_index);
    info->emit(b);
    append_average(b);
    b.finish();
  }
  call.num_steps = static_cast<std::int32_t>(schedule.steps.size()) - call.first_step;
  return ok_status();
}

}  // namespace collscope
