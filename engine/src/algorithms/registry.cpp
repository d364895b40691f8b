// The table of algorithms under their CLI names, and the StepBuilder they write through.
#include <algorithm>
#include <cmath>

#include "collscope/collective.h"
#include "collscope/model.h"
#include "families.h"

namespace collscope {

const std::vector<AlgorithmInfo>& all_algorithms() {
  using C = Collective;
  static const std::vector<AlgorithmInfo> table = {
      {C::broadcast, "flat", "root sends the whole buffer to every rank, one after another", algo::broadcast_flat},
      {C::broadcast, "binomial", "binomial tree: the set of ranks holding the data doubles every step",
       algo::broadcast_binomial},
      {C::broadcast, "chain", "pipeline along a chain of ranks, chunk by chunk", algo::broadcast_chain},
      {C::broadcast, "scatter_allgather", "binomial scatter of blocks, then ring all-gather (van de Geijn)",
       algo::broadcast_scatter_allgather},
      {C::reduce, "flat", "every rank sends its buffer to the root, which adds them one by one", algo::reduce_flat},
      {C::reduce, "binomial", "binomial tree: pairs combine, halving the active ranks each step",
       algo::reduce_binomial},
      {C::reduce, "ring", "ring reduce-scatter, then every rank sends its reduced block to the root",
       algo::reduce_ring},
      {C::allreduce, "flat", "flat reduce to rank 0, then flat broadcast", algo::allreduce_flat},
      {C::allreduce, "tree", "binomial reduce, then binomial broadcast", algo::allreduce_tree},
      {C::allreduce, "ring", "ring reduce-scatter, then ring all-gather (large buffers slice by slice)",
       algo::allreduce_ring},
      {C::allreduce, "recursive_doubling", "pairs at distance 1, 2, 4, ... exchange and add whole buffers",
       algo::allreduce_recursive_doubling},
      {C::allreduce, "rabenseifner", "recursive-halving reduce-scatter, then recursive-doubling all-gather",
       algo::allreduce_rabenseifner},
      {C::scatter, "flat", "root sends each rank its block directly", algo::scatter_flat},
      {C::scatter, "binomial", "binomial tree: root hands half of the blocks to a partner, recursively",
       algo::scatter_binomial},
      {C::gather, "flat", "every rank sends its block straight to the root", algo::gather_flat},
      {C::gather, "binomial", "binomial tree: blocks are collected in ever larger pieces", algo::gather_binomial},
      {C::allgather, "ring", "every step each rank passes the block it received last to its right neighbour",
       algo::allgather_ring},
      {C::allgather, "recursive_doubling", "pairs at distance 1, 2, 4, ... swap everything they hold",
       algo::allgather_recursive_doubling},
      {C::allgather, "bruck", "ceil(log2 n) steps at distances 1, 2, 4, ..., then a local rotation",
       algo::allgather_bruck},
      {C::reduce_scatter, "ring", "blocks travel around the ring, each rank adds its share",
       algo::reduce_scatter_ring},
      {C::reduce_scatter, "recursive_halving", "pairs exchange half of what remains, at distances n/2, n/4, ...",
       algo::reduce_scatter_recursive_halving},
      {C::reduce_scatter, "pairwise", "step k: every rank sends block r+k to rank r+k and adds what it gets",
       algo::reduce_scatter_pairwise},
      {C::alltoall, "pairwise", "step k: rank r sends its block for r+k and receives from r-k",
       algo::alltoall_pairwise},
      {C::alltoall, "bruck", "log2 n steps of rotated block bundles, then a local rotation", algo::alltoall_bruck},
      {C::barrier, "dissemination", "round k: every rank signals rank r+2^k", algo::barrier_dissemination},
  };
  return table;
}

std::vector<std::string> algorithm_names(Collective c) {
  std::vector<std::string> names;
  for (const auto& a : all_algorithms())
    if (a.coll == c) names.emplace_back(a.name);
  return names;
}

bool has_native(Collective c) { return c != Collective::barrier; }

bool uses_native(const Schedule& s) {
  for (const auto& st : s.steps)
    if (st.native) return true;
  return false;
}

const AlgorithmInfo* find_algorithm(Collective c, std::string_view name) {
  for (const auto& a : all_algorithms())
    if (a.coll == c && a.name == name) return &a;
  return nullptr;
}

// ---------------------------------------------------------------------------
// StepBuilder

StepBuilder::StepBuilder(Schedule& schedule, const CollArgs& args, std::int32_t call)
    : s_(schedule), args_(args), call_(call), first_step_(static_cast<std::int32_t>(schedule.steps.size())) {}

static std::int32_t world_of(const CollArgs& a, std::int32_t r) {
  return a.world_rank.empty() ? r : a.world_rank[static_cast<std::size_t>(r)];
}

Loc StepBuilder::in(std::int32_t r, std::uint64_t elem) const {
  return Loc{world_of(args_, r), args_.in_buf, args_.in_offset(r) + elem};
}
Loc StepBuilder::out(std::int32_t r, std::uint64_t elem) const {
  return Loc{world_of(args_, r), args_.out_buf, args_.out_offset(r) + elem};
}

std::int32_t StepBuilder::add_scratch(const std::string& name, std::uint64_t count_per_rank) {
  BufferDecl d;
  d.name = "~" + name + "#" + std::to_string(call_);
  d.count.assign(static_cast<std::size_t>(s_.ranks), 0);
  for (std::int32_t r = 0; r < args_.ranks; ++r) d.count[static_cast<std::size_t>(world_of(args_, r))] = count_per_rank;
  d.scratch = true;
  s_.buffers.push_back(std::move(d));
  scratch_bufs_.push_back(static_cast<std::int32_t>(s_.buffers.size() - 1));
  return static_cast<std::int32_t>(scratch_bufs_.size() - 1);
}

Loc StepBuilder::scratch(std::int32_t id, std::int32_t r, std::uint64_t elem) const {
  return Loc{world_of(args_, r), scratch_bufs_[static_cast<std::size_t>(id)], elem};
}

void StepBuilder::close_step() {
  if (open_ && s_.steps.back().transfers.empty()) s_.steps.pop_back();
  open_ = false;
}

void StepBuilder::begin_step(std::string phase, std::string caption) {
  close_step();
  Step st;
  st.phase = std::move(phase);
  st.caption = std::move(caption);
  st.call = call_;
  s_.steps.push_back(std::move(st));
  open_ = true;
}

void StepBuilder::copy(Loc src, Loc dst, std::uint64_t count) {
  if (count == 0) return;
  s_.steps.back().transfers.push_back(Transfer{src, dst, count, Action::copy, 1});
}

void StepBuilder::reduce(Loc src, Loc dst, std::uint64_t count) {
  if (count == 0) return;
  s_.steps.back().transfers.push_back(Transfer{src, dst, count, Action::reduce, 1});
}

void StepBuilder::reduce_copy(Loc src, Loc aux, Loc dst, std::uint64_t count) {
  if (count == 0) return;
  if (aux.rank == dst.rank && aux.buf == dst.buf && aux.offset == dst.offset) return reduce(src, dst, count);
  Transfer t{src, dst, count, Action::reduce_copy, 1};
  t.aux = aux;
  s_.steps.back().transfers.push_back(t);
}

void StepBuilder::signal(std::int32_t src, std::int32_t dst) {
  Loc a{world_of(args_, src), -1, 0};
  Loc b{world_of(args_, dst), -1, 0};
  s_.steps.back().transfers.push_back(Transfer{a, b, 0, Action::copy, 1});
}

void StepBuilder::scale(Loc dst, std::uint64_t count, std::uint32_t divisor) {
  if (count == 0) return;
  s_.steps.back().transfers.push_back(Transfer{dst, dst, count, Action::scale, divisor});
}

std::string StepBuilder::rank_name(std::int32_t r) const {
  // Captions speak in world ranks; on a group they add the group rank.
  if (call_ >= 0 && static_cast<std::size_t>(call_) < s_.calls.size()) return rank_text(s_.calls[static_cast<std::size_t>(call_)], r);
  return "rank " + std::to_string(world_of(args_, r));
}

std::int32_t StepBuilder::steps_emitted() const {
  return static_cast<std::int32_t>(s_.steps.size()) - first_step_;
}

// ---------------------------------------------------------------------------
// Lowering one call

namespace {
constexpr std::uint64_t kMaxTransfersForSync = 250000;
}  // namespace

std::string pick_algorithm(const CollArgs& args) {
  // Like NCCL's tuner: predict every candidate (model.h: the data time of its steps plus
  // the chain of wake-ups of fast mode) and keep the fastest. Candidates are lowered on
  // a throw-away schedule. Estimates within 2% of the best count as a tie, which the
  // candidate with the fewest transfers wins (less bookkeeping per run), then the
  // registry's order.
  struct Candidate {
    std::string name;
    double us;
    std::uint64_t transfers;
  };
  std::vector<Candidate> all;
  std::vector<Schedule> schedules;
  const CostModel model = CostModel::cpu_default();
  for (const auto& a : all_algorithms()) {
    if (a.coll != args.coll) continue;
    Schedule tmp;
    tmp.ranks = args.ranks;
    tmp.dtype = args.dtype;
    CollArgs local = args;
    local.world_rank.clear();
    BufferDecl in{"in", {}, false}, out{"out", {}, false};
    for (std::int32_t r = 0; r < args.ranks; ++r) {
      auto sh = shape_of(args.coll, args.ranks, r, args.root, args.count);
      in.count.push_back(std::max<std::uint64_t>(sh.in_count, sh.out_count));
      out.count.push_back(std::max<std::uint64_t>(sh.in_count, sh.out_count));
    }
    tmp.buffers = {in, out};
    local.in_buf = 0;
    local.out_buf = args.in_place ? 0 : 1;
    StepBuilder b(tmp, local, 0);
    a.emit(b);
    b.finish();
    all.push_back({std::string(a.name), 0.0, tmp.total_transfers()});
    schedules.push_back(std::move(tmp));
  }
  if (all.empty()) return "";
  // Walking the dependencies of millions of transfers (a ring over a thousand ranks)
  // would cost more than running them: beyond kMaxTransfersForSync, every candidate is
  // priced by the step model (an alpha per step) instead, so all compare alike.
  std::uint64_t most = 0;
  for (const auto& c : all) most = std::max(most, c.transfers);
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i].us = most <= kMaxTransfersForSync ? predict_auto_us(schedules[i], model) : predict_us(schedules[i], model);
  double fastest = all.front().us;
  for (const auto& c : all) fastest = std::min(fastest, c.us);
  const Candidate* best = nullptr;
  for (const auto& c : all)
    if (c.us <= fastest * 1.02 && (!best || c.transfers < best->transfers)) best = &c;
  return best->name;
}

Status lower_call(Schedule& schedule, const CollArgs& args, std::string_view algorithm, std::string caption,
                  std::int32_t program_index, std::string group) {
  std::string name(algorithm);
  bool picked = false;
  if (name == "auto" || name.empty()) {
    name = pick_algorithm(args);
    picked = true;
  }
  if (name == kNativeAlgorithm && has_native(args.coll)) {
    // One native step: the library's own collective, on the call's buffers.
    Call call;
    call.args = args;
    call.algorithm = name;
    call.caption = std::move(caption);
    call.program_index = program_index;
    call.group = std::move(group);
    call.first_step = static_cast<std::int32_t>(schedule.steps.size());
    call.num_steps = 1;
    schedule.calls.push_back(call);
    Step st;
    st.phase = "nccl";
    st.caption = "NCCL's own " + std::string(name_of(args.coll)) + " on every rank, in one call";
    st.call = static_cast<std::int32_t>(schedule.calls.size()) - 1;
    st.native = true;
    schedule.steps.push_back(std::move(st));
    return ok_status();
  }
  const AlgorithmInfo* info = find_algorithm(args.coll, name);
  if (!info) {
    std::string valid;
    for (const auto& n : algorithm_names(args.coll)) valid += (valid.empty() ? "" : ", ") + n;
    if (has_native(args.coll)) valid += ", nccl (--backend nccl)";
    return make_error("scenario.unknown_algorithm",
                      "unknown algorithm \"" + name + "\" for " + std::string(name_of(args.coll)),
                      "valid algorithms: auto, " + valid);
  }
  Call call;
  call.args = args;
  call.algorithm = name;
  call.auto_picked = picked;
  call.caption = std::move(caption);
  call.program_index = program_index;
  call.group = std::move(group);
  call.first_step = static_cast<std::int32_t>(schedule.steps.size());
  const auto call_index = static_cast<std::int32_t>(schedule.calls.size());
  schedule.calls.push_back(call);

  StepBuilder b(schedule, args, call_index);
  info->emit(b);
  // `avg` is a sum followed by one division on the ranks that hold the result.
  if (args.op == ReduceOp::avg && is_reducing(args.coll)) {
    b.begin_step("average", "every rank holding a full sum divides it by " + std::to_string(args.ranks) +
                                " to turn it into the average");
    for (std::int32_t r = 0; r < args.ranks; ++r) {
      if (args.coll == Collective::reduce && r != args.root) continue;
      auto sh = shape_of(args.coll, args.ranks, r, args.root, args.count);
      b.scale(b.out(r), sh.out_count, static_cast<std::uint32_t>(args.ranks));
    }
  }
  b.finish();
  schedule.calls[static_cast<std::size_t>(call_index)].num_steps =
      static_cast<std::int32_t>(schedule.steps.size()) - schedule.calls[static_cast<std::size_t>(call_index)].first_step;
  return ok_status();
}

}  // namespace collscope
