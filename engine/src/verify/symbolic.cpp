// Symbolic execution of a schedule on contribution sets (docs/ARCHITECTURE.md, "Verification").
//
// Instead of numbers, every element knows which inputs it holds. Elements that
// move together are kept together in segments: a segment [start, end) of one
// (rank, buffer) says "element p of me holds, for every term, input element
// term.base + shift + (p - start) of buffer term.buf on each rank in term.ranks".
// A copy shares the source's content (O(1)); a reduce merges two contents and is
// where double counting is caught. At the end of a call the collective's
// postcondition is checked segment by segment against the expected contents
// (postcondition.cpp). The state itself is in symbolic_state.h, its data structures,
// and why they are fast, in segments.h.
#include <string>
#include <utility>
#include <vector>

#include "verify/symbolic_state.h"

namespace collscope {

SymbolicState::SymbolicState(const Schedule& s, std::int32_t call, const CollectiveDescriptor* descriptor)
    : impl_(new Impl(
          s, call, descriptor ? descriptor : &collective_descriptor(s.calls[static_cast<std::size_t>(call)].args.coll),
          s.calls[static_cast<std::size_t>(call)].first_step,
          s.calls[static_cast<std::size_t>(call)].first_step + s.calls[static_cast<std::size_t>(call)].num_steps,
          false)) {}
SymbolicState::SymbolicState(const Schedule& s, WholeProgram)
    : impl_(new Impl(s, -1, nullptr, 0, static_cast<std::int32_t>(s.steps.size()), true)) {}
SymbolicState::SymbolicState(const Schedule& s, Steps steps)
    : impl_(new Impl(s, -1, nullptr, steps.first, steps.end, true)) {}
SymbolicState::~SymbolicState() { delete impl_; }
Status SymbolicState::advance() {
  if (done()) return ok_status();
  return impl_->apply(impl_->next++);
}
std::int32_t SymbolicState::next_step() const { return impl_->next; }
bool SymbolicState::done() const { return impl_->next >= impl_->end; }
Status SymbolicState::check_postcondition() const { return impl_->call < 0 ? ok_status() : impl_->postcondition(); }

std::vector<HeldRun> SymbolicState::held(std::int32_t rank, std::int32_t buf, std::uint64_t offset,
                                         std::uint64_t count) const {
  std::vector<HeldRun> out;
  if (rank < 0 || rank >= impl_->s.ranks || buf < 0 || static_cast<std::size_t>(buf) >= impl_->s.buffers.size())
    return out;
  std::vector<Piece> pieces;
  read_slice(impl_->maps[impl_->map_index(rank, buf)], offset, count, pieces);
  for (const Piece& p : pieces) {
    HeldRun h;
    h.start = p.start;
    h.end = p.end;
    if (const Seg* sg = impl_->maps[impl_->map_index(rank, buf)].find(offset + p.start)) h.last_step = sg->last_step;
    if (!p.content) {
      h.initialised = false;
      out.push_back(std::move(h));
      continue;
    }
    const Content& c = *p.content.get();
    h.divisions = c.scaled & ~kInexact;
    h.exact = (c.scaled & kInexact) == 0;
    for (std::uint32_t i = 0; i < c.nterms; ++i) {
      Contribution t{c.buf(i), c.base(i) + p.shift, {}};
      for (std::uint32_t w = 0; w < c.words; ++w)
        for (std::uint64_t bits = c.ranks(i)[w]; bits; bits &= bits - 1)
          t.ranks.push_back(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
      h.terms.push_back(std::move(t));
    }
    out.push_back(std::move(h));
  }
  return out;
}

void SymbolicState::holders(std::int32_t rank, std::int32_t buf, std::uint64_t index,
                            std::vector<std::uint64_t>& words) const {
  words.assign(impl_->words, 0);
  if (rank < 0 || rank >= impl_->s.ranks || buf < 0 || static_cast<std::size_t>(buf) >= impl_->s.buffers.size()) return;
  const Seg* sg = impl_->maps[impl_->map_index(rank, buf)].find(index);
  if (!sg || !sg->content) return;
  const Content& c = *sg->content.get();
  for (std::uint32_t i = 0; i < c.nterms; ++i)
    for (std::uint32_t w = 0; w < c.words && w < impl_->words; ++w) words[w] |= c.ranks(i)[w];
}

std::vector<Contribution> SymbolicState::contents(std::int32_t rank, std::int32_t buf, std::uint64_t index) const {
  const Seg* seg = nullptr;
  std::vector<Contribution> out;
  for (const auto& t : impl_->terms_at(rank, buf, index, &seg)) {
    Contribution c{t.buf, t.base, {}};
    for (std::size_t w = 0; w < t.ranks.size(); ++w)
      for (std::uint64_t bits = t.ranks[w]; bits; bits &= bits - 1)
        c.ranks.push_back(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

Status check_call(const Schedule& s, std::int32_t call, const CollectiveDescriptor* d) {
  SymbolicState state(s, call, d);
  while (!state.done()) {
    auto st = state.advance();
    if (!st) return st;
  }
  return state.check_postcondition();
}

Status check_schedule(const Schedule& s, const CollectiveDescriptor* d) {
  if (auto st = check_bounds(s); !st) return st;
  if (auto st = check_conflicts(s); !st) return st;
  // Point-to-point runs have no postcondition: the matcher checked their messages.
  // A native call (NCCL's own collective) cannot be seen inside; the numeric check judges it.
  for (std::size_t c = 0; c < s.calls.size(); ++c)
    if (s.calls[c].kind == CallKind::collective && s.calls[c].num_steps > 0 &&
        !s.steps[static_cast<std::size_t>(s.calls[c].first_step)].native) {
      const bool replaced = d && d->coll == s.calls[c].args.coll;
      if (auto st = check_call(s, static_cast<std::int32_t>(c), replaced ? d : nullptr); !st) return st;
    }
  if (!s.expect.empty()) return check_expectations_symbolic(s);
  return ok_status();
}

}  // namespace

Status verify_call_symbolic(const Schedule& s, std::int32_t call) { return check_call(s, call, nullptr); }

Status verify_symbolic(const Schedule& s) { return check_schedule(s, nullptr); }

Status verify_symbolic(const Schedule& s, const CollectiveDescriptor& d) { return check_schedule(s, &d); }

}  // namespace collscope
