#include "ir/digest.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace collscope {

namespace {

class Fnv {
 public:
  explicit Fnv(std::uint64_t h = 14695981039346656037ull) : h_(h) {}
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h_ = (h_ ^ b[i]) * 1099511628211ull;
  }
  // Integers by value, so that the digest does not depend on how a struct is laid out.
  void num(std::uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    bytes(b, 8);
  }
  void text(const std::string& s) {
    num(s.size());
    bytes(s.data(), s.size());
  }
  void loc(const Loc& l) {
    num(static_cast<std::uint64_t>(static_cast<std::int64_t>(l.rank)));
    num(static_cast<std::uint64_t>(static_cast<std::int64_t>(l.buf)));
    num(l.offset);
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_;
};

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// What a transfer moves where, and how. `labels`: a compute span's label too.
void transfer(Fnv& h, const Transfer& t, bool labels) {
  h.loc(t.src);
  h.loc(t.dst);
  h.num(t.count);
  h.num(static_cast<std::uint64_t>(t.action));
  h.num(t.divisor);
  h.num(t.duration_us);
  if (labels) h.num(u(t.label));
  if (t.action == Action::reduce_copy) h.loc(t.aux);
}

}  // namespace

std::uint64_t schedule_digest(const Schedule& s) {
  Fnv h;
  h.num(u(s.ranks));
  h.num(static_cast<std::uint64_t>(s.dtype));
  h.num(s.slice_bytes);
  h.num(s.buffers.size());
  for (const auto& b : s.buffers) {
    h.text(b.name);
    h.num(b.scratch);
    h.num(b.count.size());
    for (auto c : b.count) h.num(c);
  }
  h.num(s.calls.size());
  for (const auto& c : s.calls) {
    h.num(static_cast<std::uint64_t>(c.kind));
    h.num(c.custom);
    h.text(c.algorithm);
    h.num(u(c.first_step));
    h.num(u(c.num_steps));
    const CollArgs& a = c.args;
    h.num(static_cast<std::uint64_t>(a.coll));
    h.num(u(a.ranks));
    h.num(a.count);
    h.num(u(a.root));
    h.num(static_cast<std::uint64_t>(a.op));
    h.num(u(a.in_buf));
    h.num(u(a.out_buf));
    h.num(a.in_place);
    h.num(a.world_rank.size());
    for (auto w : a.world_rank) h.num(u(w));
    h.num(a.peers != nullptr);
    if (a.peers)
      for (const auto* table : {&a.peers->counts, &a.peers->send_offsets, &a.peers->recv_offsets}) {
        h.num(table->size());
        for (auto v : *table) h.num(v);
      }
  }
  h.num(s.steps.size());
  for (const auto& st : s.steps) {
    h.num(u(st.call));
    h.num(st.shared.size());
    for (const auto c : st.shared) h.num(u(c));
    h.num(st.native);
    h.text(st.library);
    h.num(st.transfers.size());
    for (const auto& t : st.transfers) transfer(h, t, true);
  }
  h.num(s.labels.size());
  for (const auto& l : s.labels) h.text(l);
  h.num(s.ops.size());
  for (const auto& o : s.ops) {
    h.num(u(o.rank));
    h.text(o.text);
    h.num(u(o.first_step));
    h.num(u(o.last_step));
  }
  return h.value();
}

std::uint64_t steps_digest(const Schedule& s) {
  Fnv h;
  h.num(u(s.ranks));
  h.num(static_cast<std::uint64_t>(s.dtype));
  h.num(s.buffers.size());
  for (const auto& b : s.buffers) {
    h.num(b.count.size());
    for (auto c : b.count) h.num(c);
  }
  // A step is the set of its transfers: their order within the step is left out.
  h.num(s.steps.size());
  std::vector<std::uint64_t> each;
  for (const auto& st : s.steps) {
    h.num(st.native);
    h.text(st.library);
    each.clear();
    for (const auto& t : st.transfers) {
      Fnv one;
      transfer(one, t, false);
      each.push_back(one.value());
    }
    std::sort(each.begin(), each.end());
    h.num(each.size());
    for (auto v : each) h.num(v);
  }
  return h.value();
}

std::uint64_t digest_more(std::uint64_t digest, const std::string& text) {
  Fnv h(digest);
  h.text(text);
  return h.value();
}

std::string schedule_summary(const Schedule& s) {
  std::string calls;
  for (const auto& c : s.calls) {
    if (!calls.empty()) calls += " + ";
    if (c.kind == CallKind::program) {
      calls += "point-to-point";
      continue;
    }
    calls += std::string(name_of(c.args.coll)) + " " + c.algorithm + " count " + std::to_string(c.args.count);
    if (has_root(c.args.coll)) calls += " root " + std::to_string(c.args.root);
    if (is_reducing(c.args.coll)) calls += " " + std::string(name_of(c.args.op));
    if (c.args.in_place) calls += " in place";
  }
  return std::to_string(s.ranks) + " ranks, " + std::string(name_of(s.dtype)) + ", " +
         (calls.empty() ? "no calls" : calls) + ", " + std::to_string(s.steps.size()) + " steps";
}

}  // namespace collscope
