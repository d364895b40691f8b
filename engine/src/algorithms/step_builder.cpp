// The StepBuilder: what an algorithm writes through. It turns group ranks into world
// ranks, element indices into buffer offsets (the in-place offsets included), and
// drops steps that end up empty.
#include "collscope/algorithms.h"
#include "collscope/collective.h"

namespace collscope {

StepBuilder::StepBuilder(Schedule& schedule, const CollArgs& args, std::int32_t call)
    : s_(schedule),
      args_(args),
      call_(call),
      first_step_(static_cast<std::int32_t>(schedule.steps.size())),
      peers_(peers_of(args)) {}

static std::int32_t world_of(const CollArgs& a, std::int32_t r) {
  return a.world_rank.empty() ? r : a.world_rank[static_cast<std::size_t>(r)];
}

std::vector<std::vector<std::int32_t>> StepBuilder::nodes() const {
  // Nodes in the order their first rank appears; ranks in group order inside each.
  std::vector<std::vector<std::int32_t>> out;
  std::vector<std::int32_t> ids;
  for (std::int32_t r = 0; r < args_.ranks; ++r) {
    const std::int32_t node = s_.ranks_per_node > 0 ? world_of(args_, r) / s_.ranks_per_node : 0;
    std::size_t k = 0;
    while (k < ids.size() && ids[k] != node) ++k;
    if (k == ids.size()) {
      ids.push_back(node);
      out.emplace_back();
    }
    out[k].push_back(r);
  }
  return out;
}

Loc StepBuilder::in(std::int32_t r, std::uint64_t elem) const {
  return Loc{world_of(args_, r), args_.in_buf, args_.in_offset(r) + elem};
}
Loc StepBuilder::out(std::int32_t r, std::uint64_t elem) const {
  return Loc{world_of(args_, r), args_.out_buf, args_.out_offset(r) + elem};
}

std::uint64_t StepBuilder::peer_count(std::int32_t s, std::int32_t d) const { return peers_ ? peers_->count(s, d) : 0; }
Loc StepBuilder::send_block(std::int32_t s, std::int32_t d) const { return in(s, peers_ ? peers_->send_at(s, d) : 0); }
Loc StepBuilder::recv_block(std::int32_t d, std::int32_t s) const { return out(d, peers_ ? peers_->recv_at(d, s) : 0); }

std::int32_t StepBuilder::add_scratch(const std::string& name, std::uint64_t count_per_rank) {
  std::vector<std::uint64_t> count(static_cast<std::size_t>(s_.ranks), 0);
  for (std::int32_t r = 0; r < args_.ranks; ++r) count[static_cast<std::size_t>(world_of(args_, r))] = count_per_rank;
  // The work space an earlier call of the same shape took (the same name, the same size on
  // every rank) is taken again: a program that repeats an all-reduce a thousand times needs
  // it once, not a thousand times, as `bench`'s repeated calls run one schedule on one set of
  // buffers. The dependencies order this call's writes after the earlier call's reads. What
  // this call took already is not taken twice. (The parts of a split group, lowered one
  // after another and then run in the same steps, never share one: their ranks differ.)
  const std::string prefix = "~" + name + "#";
  for (std::size_t b = s_.buffers.size(); b-- > 0;) {
    BufferDecl& d = s_.buffers[b];
    if (!d.scratch || d.taken_at < 0 || d.taken_at >= first_step_ || d.count != count ||
        d.name.compare(0, prefix.size(), prefix) != 0)
      continue;
    d.taken_at = first_step_;
    scratch_bufs_.push_back(static_cast<std::int32_t>(b));
    return static_cast<std::int32_t>(scratch_bufs_.size() - 1);
  }
  BufferDecl d;
  d.name = prefix + std::to_string(call_);
  d.count = std::move(count);
  d.scratch = true;
  d.taken_at = first_step_;
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
  if (call_ >= 0 && static_cast<std::size_t>(call_) < s_.calls.size())
    return rank_text(s_.calls[static_cast<std::size_t>(call_)], r);
  return "rank " + std::to_string(world_of(args_, r));
}

std::int32_t StepBuilder::steps_emitted() const { return static_cast<std::int32_t>(s_.steps.size()) - first_step_; }

}  // namespace collscope
