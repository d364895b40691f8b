// Scenario -> Schedule: declare the user's buffers, then lower every program call
// with the algorithms library. Also the initial contents of buffers.
#include "collscope/algorithms.h"
#include "collscope/backend.h"
#include "collscope/machine.h"
#include "collscope/scenario.h"
#include "program/program.h"
#include "scenario/resolve.h"

namespace collscope {

LowerOptions lower_options_for(const BackendCapabilities& backend) {
  LowerOptions o;
  if (!backend.cache_slices) o.slice_bytes = 0;
  return o;
}

std::int32_t ranks_per_node_for(const LowerOptions& options, std::int32_t world) {
  if (options.ranks_per_node > 0) return options.ranks_per_node;
  if (options.machine && !options.machine->cpu) {
    const Placement p = options.machine->placement(world);
    if (p.nodes > 1) return static_cast<std::int32_t>(p.ranks_per_node);
  }
  return 0;
}

Result<Schedule> lower_scenario(const Scenario& s, const LowerOptions& options) {
  if (auto st = scenario::check_world(s, options.price_only ? kMaxPricedRanks : kMaxRanks,
                                      !(options.price_only && options.unbounded_bytes));
      !st)
    return st.error();
  if (!scenario::is_collectives_only(s)) {
    auto r = program::lower_program(s, options);
    // Checks on the finished schedule (a race between written transfers) know only a pointer.
    if (!r) return scenario::placed_in_file(r.error(), s);
    return r;
  }

  Schedule schedule;
  schedule.slice_bytes = options.slice_bytes;
  schedule.ranks_per_node = ranks_per_node_for(options, s.ranks);
  schedule.ranks = s.ranks;
  schedule.dtype = s.dtype;
  // Same order as s.buffers, so buffer ids from the resolver index both; the
  // algorithms append their scratch buffers after these.
  for (const auto& b : s.buffers) schedule.buffers.push_back(BufferDecl{b.name, b.count, b.scratch});

  scenario::CallResolver resolver(s);
  std::uint64_t transfers = 0;
  for (std::size_t i = 0; i < s.program.size(); ++i) {
    const ProgramOp& op = s.program[i];
    const auto index = static_cast<std::int32_t>(i);
    auto args = resolver.resolve(op, index);
    if (!args) return args.error();
    auto st = lower_call(schedule, *args, op.algorithm, op.caption, index, options.machine);
    if (!st) {
      // lower_call knows nothing about files: place its error at the program entry.
      Error e = st.error();
      if (e.where.file.empty() && e.where.line == 0 && e.where.pointer.empty()) {
        const char* key = e.id == "scenario.unknown_algorithm" ? "algorithm" : "";
        auto it = op.field_where.find(key);
        e.where = it != op.field_where.end() ? it->second : op.where;
        if (e.where.file.empty() && e.where.line == 0) e.where.file = s.file;
        if (e.where.pointer.empty()) e.where.pointer = "/program/" + std::to_string(i);
      }
      return e;
    }
    const auto& call = schedule.calls.back();
    for (std::int32_t k = call.first_step; k < call.first_step + call.num_steps; ++k)
      transfers += schedule.steps[static_cast<std::size_t>(k)].transfers.size();
    const std::uint64_t limit = options.price_only ? scenario::kMaxPricedTransfers : scenario::kMaxTransfers;
    if (transfers > limit) {
      Location where = op.where;
      if (where.file.empty() && where.line == 0) where.file = s.file;
      if (where.pointer.empty()) where.pointer = "/program/" + std::to_string(i);
      return scenario::too_many_transfers_error(where, limit);
    }
  }
  if (auto st = program::resolve_expectations(s, schedule); !st) return st.error();
  return schedule;
}

namespace {

// splitmix64: a tiny, well-mixed hash. Chaining it over (seed, rank, index) gives
// every element its own value, the same whatever order elements are filled in.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

double initial_value(const BufferSpec& b, std::int32_t rank, std::uint64_t index) {
  switch (b.init.kind) {
    case InitKind::zeros:
      return 0.0;
    case InitKind::rank:
      return static_cast<double>(rank);
    case InitKind::index:
      return static_cast<double>(index);
    case InitKind::rank_index:
      return 100.0 * rank + static_cast<double>(index);
    case InitKind::random: {
      const std::uint64_t h =
          splitmix64(splitmix64(splitmix64(b.init.seed) ^ static_cast<std::uint64_t>(rank)) ^ index);
      // Width of [min, max]; 0 stands for the full 2^64 range.
      const std::uint64_t width = static_cast<std::uint64_t>(b.init.max) - static_cast<std::uint64_t>(b.init.min) + 1;
      const std::uint64_t offset = width == 0 ? h : h % width;
      return static_cast<double>(static_cast<std::int64_t>(static_cast<std::uint64_t>(b.init.min) + offset));
    }
    case InitKind::values: {
      const auto r = static_cast<std::size_t>(rank);
      if (r < b.init.values.size() && index < b.init.values[r].size()) return b.init.values[r][index];
      return 0.0;
    }
  }
  return 0.0;
}

}  // namespace collscope
