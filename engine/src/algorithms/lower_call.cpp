// Lowering one collective call: the algorithm (picked by `auto`, or named), its steps
// appended to the schedule under one Call, and the final division of `avg`.
#include "collscope/collective.h"
#include "families.h"

namespace collscope {

// ---------------------------------------------------------------------------
// Native algorithms: a library's own implementation of a collective, lowered to one
// step that only a backend running that library executes.

bool has_native(Collective c) { return c != Collective::barrier; }

bool uses_native(const Schedule& s) {
  for (const auto& st : s.steps)
    if (st.native) return true;
  return false;
}

namespace {

bool is_native(Collective c, std::string_view name) { return name == kNativeAlgorithm && has_native(c); }

// One native step: the library's own collective, on the call's buffers.
void append_native_step(Schedule& schedule, const CollArgs& args, std::int32_t call) {
  Step st;
  st.phase = "nccl";
  st.caption = "NCCL's own " + std::string(name_of(args.coll)) + " on every rank, in one call";
  st.call = call;
  st.native = true;
  schedule.steps.push_back(std::move(st));
}

// The names a call of collective c may give, for the error about one it may not.
std::string valid_algorithms(Collective c) {
  std::string valid;
  for (const auto& n : algorithm_names(c)) valid += (valid.empty() ? "" : ", ") + n;
  if (has_native(c)) valid += ", nccl (--backend nccl)";
  return valid;
}

// ---------------------------------------------------------------------------
// Built-in algorithms

// `avg` is a sum followed by one division on the ranks that hold the result.
void append_average(StepBuilder& b) {
  const CollArgs& args = b.args();
  if (args.op != ReduceOp::avg || !is_reducing(args.coll)) return;
  b.begin_step("average", "every rank holding a full sum divides it by " + std::to_string(args.ranks) +
                              " to turn it into the average");
  for (std::int32_t r = 0; r < args.ranks; ++r) {
    if (args.coll == Collective::reduce && r != args.root) continue;
    auto sh = shape_of(args.coll, args.ranks, r, args.root, args.count);
    b.scale(b.out(r), sh.out_count, static_cast<std::uint32_t>(args.ranks));
  }
}

}  // namespace

Status lower_call(Schedule& schedule, const CollArgs& args, std::string_view algorithm, std::string caption,
                  std::int32_t program_index, const Machine* tuner) {
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
          p.in_place == args.in_place)
        name = it->algorithm;
    }
    if (name.empty()) name = tuner ? pick_algorithm(args, *tuner) : pick_algorithm(args);
  }
  const bool native = is_native(args.coll, name);
  const AlgorithmInfo* info = native ? nullptr : find_algorithm(args.coll, name);
  if (!native && !info)
    return make_error("scenario.unknown_algorithm",
                      "unknown algorithm \"" + name + "\" for " + std::string(name_of(args.coll)),
                      "valid algorithms: auto, " + valid_algorithms(args.coll));

  // Emitting adds steps and scratch buffers, never calls, so `call` stays valid.
  const auto call_index = static_cast<std::int32_t>(schedule.calls.size());
  Call& call = schedule.calls.emplace_back();
  call.args = args;
  call.algorithm = name;
  call.auto_picked = picked;
  call.caption = std::move(caption);
  call.program_index = program_index;
  call.first_step = static_cast<std::int32_t>(schedule.steps.size());

  if (native) {
    append_native_step(schedule, args, call_index);
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
