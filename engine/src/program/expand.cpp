// Expanding a program for every rank: see program.h.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "collscope/collective.h"
#include "program/program.h"
#include "scenario/expr.h"
#include "scenario/resolve.h"

namespace collscope::program {

namespace {

// A bound on the unrolled program, so that "times": 1000000000 fails at once. An
// instance with its record takes about 700 bytes, and matching a million of them about
// five seconds: a thousand ops on each of 1024 ranks.
constexpr std::uint64_t kMaxInstances = 1'000'000;
// A bound on the walk itself: repeats whose bodies run on no rank (or are empty) add
// no instances, yet nested ones would still loop for hours. Walking is cheaper than
// building, so this bound is larger: a program of 4000 ops, each on a few of 1024 ranks.
constexpr std::uint64_t kMaxVisits = 4 * kMaxInstances;

std::string slice_text(const Schedule& sched, const Region& r) {
  return sched.buffers[static_cast<std::size_t>(r.buf)].name + "[" + std::to_string(r.offset) + ".." +
         std::to_string(r.offset + r.count) + ")";
}

class Expander {
 public:
  Expander(const Scenario& s, std::vector<OpRecord>& records, const Frame& frame)
      : s_(s), records_(records), frame_(frame) {
    members_ = frame.members;
    if (members_.empty())
      for (std::int32_t r = 0; r < s.ranks; ++r) members_.push_back(r);
    size_ = static_cast<std::int32_t>(members_.size());
    for (std::size_t i = 0; i < s.buffers.size(); ++i) buffer_.emplace(s.buffers[i].name, static_cast<std::int32_t>(i));
    names_.buffers.reserve(s.buffers.size());
    for (const auto& b : s.buffers) names_.buffers.push_back(BufferDecl{b.name, b.count, b.scratch});
  }

  Result<Expansion> run(const std::vector<ProgramOp>& ops, const std::string& pointer) {
    // First count what the program unrolls to, building nothing, so that a program over
    // the limits fails before it allocates millions of instances. Other errors are left
    // to the real walk, which reports the first one in program order.
    count_only_ = true;
    for (std::int32_t g = 0; g < size_; ++g) {
      enter(g);
      Env env = {{"rank", g}, {"size", size_}};
      if (auto st = walk(ops, pointer, env, -1); !st) {
        if (over_limit_) return st.error();
        break;
      }
    }
    count_only_ = false;
    total_ = visits_ = 0;

    x_.ranks.resize(static_cast<std::size_t>(s_.ranks));
    for (std::int32_t g = 0; g < size_; ++g) {
      enter(g);
      Env env = {{"rank", g}, {"size", size_}};
      if (auto st = walk(ops, pointer, env, -1); !st) return st.error();
    }
    if (auto st = align(); !st) return st.error();
    return std::move(x_);
  }

 private:
  const Scenario& s_;
  std::vector<OpRecord>& records_;
  const Frame& frame_;
  std::vector<std::int32_t> members_;  // the frame's world ranks, in group order
  std::int32_t size_ = 0;              // the frame's size: `size` in expressions
  Expansion x_;
  std::int32_t rank_ = 0;   // the world rank being walked
  std::int32_t grank_ = 0;  // its rank in the frame: `rank` in expressions
  std::string who_;         // "rank 5", or "rank 5 (tp rank 1)" in a group's body

  void enter(std::int32_t g) {
    grank_ = g;
    rank_ = members_[static_cast<std::size_t>(g)];
    who_ = rank_text(frame_, rank_, grank_);
  }
  std::uint64_t total_ = 0;
  std::uint64_t visits_ = 0;
  bool count_only_ = false;  // the first walk: counts instances, builds nothing
  bool over_limit_ = false;  // the error being returned is one of the limits
  std::unordered_map<std::string, std::int32_t> buffer_;
  std::unordered_map<std::string, std::int32_t> sync_of_;              // sync key -> index
  std::unordered_map<std::string, std::vector<std::int64_t>> colors_;  // split group -> color per rank
  Schedule names_;                                                     // only its buffers, for describing slices

  Location loc(const ProgramOp& op, const std::string& key, const std::string& pointer) const {
    Location l = op.where;
    if (!key.empty())
      if (auto it = op.field_where.find(key); it != op.field_where.end()) l = it->second;
    if (l.file.empty() && l.line == 0) l.file = s_.file;
    if (l.pointer.empty()) l.pointer = pointer + (key.empty() ? "" : "/" + key);
    return l;
  }

  static std::string where_text(const std::string& pointer, const Env& env) {
    std::string t = program_op_label(pointer);
    for (std::size_t i = 2; i < env.size(); ++i) t += ", " + env[i].first + "=" + std::to_string(env[i].second);
    return t;
  }

  // Expressions are parsed once and evaluated for every rank and iteration. The key
  // is the text's address (every text is a field of the scenario, which outlives the
  // expansion): hashing the text itself cost more than evaluating it.
  mutable std::unordered_map<const std::string*, Result<Expression>> parsed_;

  Result<std::int64_t> value(const std::string& text, const Env& env, const ProgramOp& op, const std::string& key,
                             const std::string& pointer) const {
    auto it = parsed_.find(&text);
    if (it == parsed_.end()) it = parsed_.emplace(&text, Expression::parse(text)).first;
    const Result<Expression>& e = it->second;
    if (!e) {
      Error err = e.error();
      err.where = loc(op, key, pointer);
      return err;
    }
    auto v = e->eval(env);
    if (!v) {
      Error err = v.error();
      err.message += " on " + who_;
      err.where = loc(op, key, pointer);
      return err;
    }
    return *v;
  }

  // A label or caption with its expressions evaluated ("F{mb}" -> "F2").
  mutable std::unordered_map<const std::string*, Result<scenario::TextTemplate>> templates_;
  Result<std::string> render(const std::string& text, const Env& env, const ProgramOp& op, const std::string& key,
                             const std::string& pointer) const {
    if (text.find_first_of("{}") == std::string::npos) return text;
    auto it = templates_.find(&text);
    if (it == templates_.end()) it = templates_.emplace(&text, scenario::TextTemplate::parse(text)).first;
    if (!it->second) {
      Error err = it->second.error();
      err.where = loc(op, key, pointer);
      return err;
    }
    auto out = it->second->render(env);
    if (!out) {
      Error err = out.error();
      err.where = loc(op, key, pointer);
      return err;
    }
    return out;
  }

  Result<bool> selected(const RankSelector& sel, const Env& env, const ProgramOp& op,
                        const std::string& pointer) const {
    if (!sel.list.empty()) return std::find(sel.list.begin(), sel.list.end(), grank_) != sel.list.end();
    if (sel.text.empty() || sel.text == "all") return true;
    if (long a = 0, b = 0; parse_rank_range(sel.text, a, b)) return grank_ >= a && grank_ <= b;
    auto v = value(sel.text, env, op, "ranks", pointer);
    if (!v) return v.error();
    return *v != 0;
  }

  // A slice of this rank's buffer `name`: offset and count default to 0 and "the rest"
  // (or `count_if_empty` when it is 0 or more).
  Result<Region> region(const std::string& name, const std::string& off, const std::string& cnt, const Env& env,
                        const ProgramOp& op, const std::string& key, const std::string& pointer,
                        std::int64_t count_if_empty = -1) const {
    Region r;
    // Files are checked when read; scenarios built in code are checked here.
    const auto it = buffer_.find(name);
    if (it == buffer_.end())
      return make_error("scenario.unknown_buffer", op.op + " names unknown buffer \"" + name + "\"",
                        "declare it under \"buffers\"", loc(op, key, pointer));
    r.buf = it->second;
    const std::uint64_t have = s_.buffers[static_cast<std::size_t>(r.buf)].count[static_cast<std::size_t>(rank_)];
    std::int64_t o = 0;
    if (!off.empty()) {
      auto v = value(off, env, op, key, pointer);
      if (!v) return v.error();
      o = *v;
    }
    std::int64_t c = count_if_empty >= 0 ? count_if_empty : static_cast<std::int64_t>(have) - o;
    if (!cnt.empty()) {
      auto v = value(cnt, env, op, key, pointer);
      if (!v) return v.error();
      c = *v;
    }
    if (o < 0 || c < 0 || static_cast<std::uint64_t>(o) > have ||
        static_cast<std::uint64_t>(c) > have - static_cast<std::uint64_t>(o)) {
      // Placed at the number that is wrong when one alone is: an offset outside the
      // buffer, a negative count; else at the slice (the op's own keys; a slice
      // object's place for src/dst/writes).
      const bool offset_wrong = o < 0 || static_cast<std::uint64_t>(o) > have;
      std::string at = key;
      if (key == "buffer" && offset_wrong && !off.empty()) at = "offset";
      if (key == "buffer" && !offset_wrong && c < 0 && !cnt.empty()) at = "count";
      // Both are at most 2^63 - 1, so their sum fits in 64 unsigned bits.
      const std::string end =
          o < 0 || c < 0 ? "" : std::to_string(static_cast<std::uint64_t>(o) + static_cast<std::uint64_t>(c));
      const std::string what = o < 0   ? ": offset " + std::to_string(o) + " is negative"
                               : c < 0 ? ": count " + std::to_string(c) + " is negative"
                                       : " needs " + name + "[" + std::to_string(o) + ".." + end + ") but rank " +
                                             std::to_string(rank_) + "'s " + name + " holds " + std::to_string(have) +
                                             " elements";
      return make_error("scenario.buffer_too_small", op.op + " on " + who_ + what,
                        "check the offset and count, or give " + name + " more elements", loc(op, at, pointer));
    }
    r.offset = static_cast<std::uint64_t>(o);
    r.count = static_cast<std::uint64_t>(c);
    return r;
  }

  // One more instance of `op` on this rank, against kMaxInstances.
  Status count(const ProgramOp& op, const std::string& p) {
    if (++total_ <= kMaxInstances) return ok_status();
    over_limit_ = true;
    return make_error("scenario.out_of_range",
                      "the program unrolls to more than " + std::to_string(kMaxInstances) + " ops",
                      "use fewer repeats or ranks", loc(op, "", p));
  }

  Status add(Instance in, const Env& env, std::string text) {
    if (auto st = count(*in.op, in.pointer); !st) return st;
    OpRecord rec;
    rec.rank = rank_;
    rec.op = in.op->op;
    rec.text = std::move(text);
    rec.pointer = in.pointer;
    rec.iteration = env.size() > 2 ? static_cast<std::int32_t>(env.back().second) : -1;
    const bool nonblocking = ((in.kind == Kind::send || in.kind == Kind::recv) && !in.blocking) ||
                             (in.kind == Kind::sync && !in.request.empty());
    rec.order = in.kind == Kind::wait ? OpOrder::wait : nonblocking ? OpOrder::nonblocking : OpOrder::blocking;
    rec.spans_steps = in.kind == Kind::sync;
    in.iteration = rec.iteration;
    in.where_text = where_text(in.pointer, env);
    in.record = static_cast<std::int32_t>(records_.size());
    records_.push_back(std::move(rec));
    x_.ranks[static_cast<std::size_t>(rank_)].push_back(std::move(in));
    return ok_status();
  }

  Status walk(const std::vector<ProgramOp>& ops, const std::string& prefix, Env& env, std::int32_t) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const ProgramOp& op = ops[i];
      if (auto st = one(op, pointer_of(op, prefix, i), env); !st) return st;
    }
    return ok_status();
  }

  // An op's JSON Pointer, made once: the walk reaches the same op millions of times in
  // a long repeat. (An op sits at one place in the program; nodes of an unordered_map
  // keep their address.)
  std::unordered_map<const ProgramOp*, std::string> pointers_;
  const std::string& pointer_of(const ProgramOp& op, const std::string& prefix, std::size_t i) {
    auto it = pointers_.find(&op);
    if (it == pointers_.end()) it = pointers_.emplace(&op, prefix + "/" + std::to_string(i)).first;
    return it->second;
  }

  Status visit(const ProgramOp& op, const std::string& p) {
    if (++visits_ <= kMaxVisits) return ok_status();
    over_limit_ = true;
    return make_error("scenario.out_of_range",
                      "the program takes more than " + std::to_string(kMaxVisits) + " ops and iterations to unroll",
                      "use fewer repeats or ranks", loc(op, "", p));
  }

  Status one(const ProgramOp& op, const std::string& p, Env& env) {
    if (auto st = visit(op, p); !st) return st;
    using K = ProgramOp::Kind;
    if (op.kind == K::repeat) {
      auto n = value(op.times, env, op, "times", p);
      if (!n) return n.error();
      if (*n < 0 || static_cast<std::uint64_t>(*n) > kMaxInstances)
        return make_error("scenario.out_of_range",
                          "repeat times " + std::to_string(*n) + " on " + who_ + " is out of range",
                          "repeat 0 to " + std::to_string(kMaxInstances) + " times", loc(op, "times", p));
      const std::string body = p + "/body";
      for (std::int64_t i = 0; i < *n; ++i) {
        if (auto st = visit(op, p); !st) return st;
        env.emplace_back(op.var, i);
        auto st = walk(op.body, body, env, 0);
        env.pop_back();
        if (!st) return st;
      }
      return ok_status();
    }
    if (count_only_) return count_one(op, p, env);
    Instance in;
    in.op = &op;
    in.pointer = p;
    if (op.coll && (!op.ranks.list.empty() || !op.ranks.text.empty())) {
      auto chosen = selected(op.ranks, env, op, p);
      if (!chosen) return chosen.error();
      if (!*chosen) return ok_status();
    }
    if (is_sync(op.kind)) return sync_op(op, p, env, std::move(in));

    auto chosen = selected(op.ranks, env, op, p);
    if (!chosen) return chosen.error();
    if (!*chosen) return ok_status();
    auto caption = render(op.caption, env, op, "caption", p);
    if (!caption) return caption.error();
    in.caption = std::move(*caption);
    auto label = render(op.label, env, op, "label", p);
    if (!label) return label.error();
    in.label = std::move(*label);

    if (is_message(op.kind)) {
      const bool sends = is_send(op.kind);
      in.kind = sends ? Kind::send : Kind::recv;
      in.blocking = !is_nonblocking_message(op.kind);
      const char* key = sends ? "to" : "from";
      auto peer = value(op.peer, env, op, key, p);
      if (!peer) return peer.error();
      if (*peer < 0 || *peer >= size_)
        return make_error("program.bad_value",
                          op.op + " on " + who_ + (sends ? " goes to " : " comes from ") +
                              (frame_.group.empty() ? "rank " : frame_.group + " rank ") + std::to_string(*peer) +
                              ", outside 0.." + std::to_string(size_ - 1),
                          frame_.group.empty() ? "check the expression for every rank that runs this op"
                                               : "inside a custom algorithm on group " + frame_.group +
                                                     ", rank, size and peers are the group's: check the expression",
                          loc(op, key, p));
      const auto peer_g = static_cast<std::int32_t>(*peer);
      in.peer = members_[static_cast<std::size_t>(peer_g)];
      auto reg = region(op.buffer, op.offset, op.count_expr, env, op, "buffer", p);
      if (!reg) return reg.error();
      in.region = *reg;
      in.request = op.request;
      std::string text = op.op + " " + slice_text(names_, in.region) + (sends ? " to " : " from ") +
                         rank_text(frame_, in.peer, peer_g) + (in.request.empty() ? "" : " as " + in.request);
      return add(std::move(in), env, std::move(text));
    }
    if (op.kind == K::wait) {
      in.kind = Kind::wait;
      in.requests = op.requests;
      std::string text = "wait";
      for (const auto& r : op.requests) text += " " + r;
      return add(std::move(in), env, std::move(text));
    }
    if (op.kind == K::compute) {
      in.kind = Kind::compute;
      if (!op.dst.buffer.empty()) {
        auto reg = region(op.dst.buffer, op.dst.offset, op.dst.count, env, op, "writes", p);
        if (!reg) return reg.error();
        in.region = *reg;
      }
      for (const SliceSpec& sl : op.reads) {
        auto reg = region(sl.buffer, sl.offset, sl.count, env, op, "reads", p);
        if (!reg) return reg.error();
        in.reads.push_back(*reg);
      }
      std::string text = "compute " + (in.label.empty() ? std::string() : "\"" + in.label + "\" ") +
                         std::to_string(op.duration_us) + " us";
      for (std::size_t i = 0; i < in.reads.size(); ++i)
        text += (i ? ", " : " reading ") + slice_text(names_, in.reads[i]);
      if (in.region.buf >= 0) text += " writing " + slice_text(names_, in.region);
      return add(std::move(in), env, std::move(text));
    }
    // copy, accumulate
    in.kind = op.kind == K::copy ? Kind::copy : Kind::accumulate;
    auto src = region(op.src.buffer, op.src.offset, op.src.count, env, op, "src", p);
    if (!src) return src.error();
    // The destination takes the source's count unless it gives its own.
    auto dst =
        region(op.dst.buffer, op.dst.offset, op.dst.count, env, op, "dst", p, static_cast<std::int64_t>(src->count));
    if (!dst) return dst.error();
    if (dst->count != src->count)
      return make_error("program.size_mismatch",
                        op.op + " on " + who_ + " reads " + std::to_string(src->count) + " elements but writes " +
                            std::to_string(dst->count),
                        "give \"src\" and \"dst\" the same count", loc(op, "dst", p));
    in.src = *src;
    in.region = *dst;
    std::string text = op.op + " " + slice_text(names_, in.src) + (in.kind == Kind::copy ? " -> " : " into ") +
                       slice_text(names_, in.region);
    if (in.kind == Kind::accumulate) text += " (" + std::string(name_of(op.reduce_op)) + ")";
    return add(std::move(in), env, std::move(text));
  }

  // The counting walk: whether this rank runs `op` (not a repeat), and nothing else.
  Status count_one(const ProgramOp& op, const std::string& p, const Env& env) {
    if (is_sync(op.kind)) {
      for (const auto& g : s_.groups)
        if (g.name == op.group && g.split.empty() && std::find(g.ranks.begin(), g.ranks.end(), rank_) == g.ranks.end())
          return ok_status();  // not in the group
      return count(op, p);
    }
    auto chosen = selected(op.ranks, env, op, p);
    if (!chosen) return chosen.error();
    return *chosen ? count(op, p) : ok_status();
  }

  // Collectives and written steps: every member enters the same Sync.
  Status sync_op(const ProgramOp& op, const std::string& p, Env& env, Instance in) {
    std::vector<std::int32_t> members;
    std::string key = p;
    std::string comm = op.group;
    for (std::size_t i = 2; i < env.size(); ++i) key += "#" + std::to_string(env[i].second);
    const GroupSpec* group = nullptr;
    std::int32_t part = -1;
    for (const auto& g : s_.groups)
      if (g.name == op.group) group = &g;
    if (!group) {
      members = members_;  // the world, or the body's call
      comm = frame_.comm;
    } else if (group->split.empty()) {
      members = group->ranks;
      if (std::find(members.begin(), members.end(), rank_) == members.end()) return ok_status();  // not in the group
    } else {
      auto colors = split_colors(*group, op, p);
      if (!colors) return colors.error();
      const std::int64_t mine = (*colors)[static_cast<std::size_t>(rank_)];
      for (std::int32_t r = 0; r < s_.ranks; ++r)
        if ((*colors)[static_cast<std::size_t>(r)] == mine) members.push_back(r);
      key += "@" + std::to_string(mine);
      comm += "@" + std::to_string(mine);
      // Parts are numbered in the order of their lowest ranks.
      std::vector<std::int64_t> seen;
      for (const std::int64_t c : *colors)
        if (std::find(seen.begin(), seen.end(), c) == seen.end()) seen.push_back(c);
      part = static_cast<std::int32_t>(std::find(seen.begin(), seen.end(), mine) - seen.begin());
    }
    // Inside a custom algorithm, a collective on a group runs on ranks of the call the
    // body implements: the others do not run the body.
    if (group && !frame_.members.empty())
      for (const std::int32_t m : members)
        if (std::find(members_.begin(), members_.end(), m) == members_.end())
          return make_error("scenario.bad_call",
                            op.op + " on group " + op.group + " inside this custom algorithm includes rank " +
                                std::to_string(m) + " (with " + who_ +
                                "), which is not a member of the call it implements",
                            "use a group whose parts lie inside the call's ranks, e.g. a split of the same ranks",
                            loc(op, "group", p));
    auto [it, fresh] = sync_of_.emplace(key, static_cast<std::int32_t>(x_.syncs.size()));
    if (fresh) {
      Sync sy;
      // One caption for every member: the loop variables and size, not rank.
      Env shared = {{"size", size_}};
      shared.insert(shared.end(), env.begin() + 2, env.end());
      auto caption = render(op.caption, shared, op, "caption", p);
      if (!caption) return caption.error();
      auto phase = render(op.phase, shared, op, "phase", p);
      if (!phase) return phase.error();
      sy.caption = std::move(*caption);
      sy.phase = std::move(*phase);
      if (group) sy.group = group->name;
      sy.part = part;
      sy.op = &op;
      sy.pointer = p;
      sy.where_text = where_text(p, env);
      sy.members = members;
      sy.env.assign(env.begin() + 2, env.end());
      sy.comm = comm;
      x_.syncs.push_back(std::move(sy));
    }
    in.kind = Kind::sync;
    in.sync = it->second;
    in.request = op.request;
    std::string text = op.op;
    if (op.coll) {
      if (!op.buffer.empty()) text += " " + op.buffer;
      if (!op.send.empty()) text += " " + op.send + " -> " + op.recv;
      if (group) text += " on group " + op.group;
      if (!op.algorithm.empty() && op.algorithm != "auto") text += " (" + op.algorithm + ")";
      if (!op.request.empty()) text += " as " + op.request;
    } else if (!op.phase.empty()) {
      text += " \"" + op.phase + "\"";
    }
    return add(std::move(in), env, std::move(text));
  }

  // --- desync check -------------------------------------------------------------------

  // What the members of a communicator must agree on for its n-th collective.
  struct Signature {
    std::string text;       // "allreduce x count 8 float32 sum"
    bool joinable = false;  // a collective (a written step is never joined with another)
  };

  Result<Signature> signature(std::int32_t sync) {
    const Sync& sy = x_.syncs[static_cast<std::size_t>(sync)];
    const ProgramOp& op = *sy.op;
    if (!op.coll) return Signature{"step \"" + op.phase + "\" (" + program_op_label(sy.pointer) + ")", false};
    scenario::CallResolver resolver(s_);
    auto a = resolver.resolve(op, program_index(sy.pointer), sy.members, sy.env);
    if (!a) return a.error();
    std::string t = op.op;
    if (!op.buffer.empty()) t += " " + op.buffer;
    if (!op.send.empty()) t += " " + op.send + " -> " + op.recv;
    if (collective_descriptor(*op.coll).moves_data) t += " count " + std::to_string(a->count);
    if (a->peers) {
      // Members joined into one alltoallv must agree on every count and offset.
      std::uint64_t h = 14695981039346656037ull;
      for (const auto* table : {&a->peers->counts, &a->peers->send_offsets, &a->peers->recv_offsets})
        for (std::uint64_t v : *table) h = (h ^ v) * 1099511628211ull;
      t += " counts #" + std::to_string(h);
    }
    t += " " + std::string(name_of(s_.dtype));
    if (has_root(*op.coll)) t += " root " + std::to_string(a->root);
    if (is_reducing(*op.coll)) t += " " + std::string(name_of(a->op));
    if (op.algorithm != "auto") t += " (" + op.algorithm + ")";
    return Signature{t, op.algorithm != "custom"};
  }

  static std::int32_t program_index(const std::string& pointer) {
    const std::size_t a = pointer.find('/', 1);
    return a == std::string::npos ? 0 : static_cast<std::int32_t>(std::strtol(pointer.c_str() + a + 1, nullptr, 10));
  }

  // The n-th collective of every member of a communicator must be the same call. Where
  // members reached different program entries that agree, they are joined into one; where
  // they disagree (or a member has no n-th call), the program is out of sync.
  Status align() {
    std::map<std::string, std::vector<std::vector<std::size_t>>> calls;  // comm -> rank -> instance indices
    for (std::size_t r = 0; r < x_.ranks.size(); ++r)
      for (std::size_t i = 0; i < x_.ranks[r].size(); ++i) {
        const Instance& in = x_.ranks[r][i];
        if (in.kind != Kind::sync) continue;
        auto& per_rank = calls[x_.syncs[static_cast<std::size_t>(in.sync)].comm];
        per_rank.resize(x_.ranks.size());
        per_rank[r].push_back(i);
      }
    for (auto& [comm, per_rank] : calls) {
      // The members: those of any of its syncs (every sync of a communicator has the same).
      std::vector<std::int32_t> members;
      for (std::size_t r = 0; r < per_rank.size() && members.empty(); ++r)
        if (!per_rank[r].empty())
          members = x_.syncs[static_cast<std::size_t>(x_.ranks[r][per_rank[r][0]].sync)].members;
      std::size_t longest = 0;
      for (const std::int32_t m : members) longest = std::max(longest, per_rank[static_cast<std::size_t>(m)].size());
      for (std::size_t n = 0; n < longest; ++n) {
        std::vector<std::int32_t> sync_of(members.size(), -1);
        bool same = true;
        for (std::size_t k = 0; k < members.size(); ++k) {
          const auto& mine = per_rank[static_cast<std::size_t>(members[k])];
          if (n < mine.size()) sync_of[k] = x_.ranks[static_cast<std::size_t>(members[k])][mine[n]].sync;
          same = same && sync_of[k] == sync_of[0] && sync_of[k] >= 0;
        }
        if (same) continue;
        std::vector<std::string> texts(members.size());
        bool agree = true;
        std::string first;
        for (std::size_t k = 0; k < members.size(); ++k) {
          if (sync_of[k] < 0) {
            agree = false;
            texts[k] = "nothing (its program ends first)";
            continue;
          }
          auto sig = signature(sync_of[k]);
          if (!sig) return sig.error();
          if (k == 0) first = sig->text;
          agree = agree && sig->joinable && sig->text == first;
          texts[k] = sig->text + " (" + x_.syncs[static_cast<std::size_t>(sync_of[k])].where_text + ")";
        }
        if (agree) {
          // One call written as several entries: every member enters the first one.
          for (std::size_t k = 0; k < members.size(); ++k)
            x_.ranks[static_cast<std::size_t>(members[k])][per_rank[static_cast<std::size_t>(members[k])][n]].sync =
                sync_of[0];
          continue;
        }
        return desync_error(comm, members, sync_of, texts, n);
      }
    }
    return ok_status();
  }

  Error desync_error(const std::string& comm, const std::vector<std::int32_t>& members,
                     const std::vector<std::int32_t>& sync_of, const std::vector<std::string>& texts,
                     std::size_t n) const {
    // Ranks that make the same call are listed together.
    std::vector<std::pair<std::string, std::vector<std::int32_t>>> groups;
    for (std::size_t k = 0; k < members.size(); ++k) {
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == texts[k]; });
      if (it == groups.end()) groups.push_back({texts[k], {members[k]}});
      else it->second.push_back(members[k]);
    }
    std::string msg = comm.empty() ? "ranks" : "the ranks of group " + comm.substr(0, comm.find('@'));
    msg += " disagree on their collective call with seq " + std::to_string(n) + ":";
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto& ranks = groups[g].second;
      std::string who = ranks.size() == 1 ? "rank " : "ranks ";
      for (std::size_t i = 0; i < ranks.size(); ++i) who += (i ? ", " : "") + std::to_string(ranks[i]);
      msg += std::string(g ? "; " : " ") + who + (ranks.size() == 1 ? " calls " : " call ") + groups[g].first;
    }
    // Point at the call of the first rank that differs from the first member.
    std::int32_t at = sync_of[0];
    for (std::size_t k = 1; k < members.size(); ++k)
      if (texts[k] != texts[0] && sync_of[k] >= 0) {
        at = sync_of[k];
        break;
      }
    if (at < 0)
      for (const std::int32_t y : sync_of)
        if (y >= 0) at = y;
    const Sync& sy = x_.syncs[static_cast<std::size_t>(at)];
    return make_error(
        "program.desync", msg,
        "every member must make the same collective calls in the same order, with the same op, buffers, "
        "count, dtype and root (check the \"ranks\" of the calls and repeats whose count depends on rank)",
        loc(*sy.op, "", sy.pointer));
  }

  Result<std::vector<std::int64_t>> split_colors(const GroupSpec& g, const ProgramOp& op, const std::string& p) {
    if (auto it = colors_.find(g.name); it != colors_.end()) return it->second;
    std::vector<std::int64_t> colors;
    auto e = Expression::parse(g.split);
    if (!e) return e.error();
    for (std::int32_t r = 0; r < s_.ranks; ++r) {
      auto v = e->eval({{"rank", r}, {"size", s_.ranks}});
      if (!v) {
        Error err = v.error();
        err.message += " (group " + g.name + ", rank " + std::to_string(r) + ")";
        err.where = g.where;
        if (err.where.pointer.empty()) err.where = loc(op, "group", p);
        return err;
      }
      colors.push_back(*v);
    }
    colors_.emplace(g.name, colors);
    return colors;
  }
};

}  // namespace

Result<Expansion> expand(const Scenario& s, const std::vector<ProgramOp>& ops, const std::string& pointer,
                         std::vector<OpRecord>& records, const Frame& frame) {
  Expander e(s, records, frame);
  return e.run(ops, pointer);
}

std::string rank_text(const Frame& f, std::int32_t world, std::int32_t group_rank) {
  std::string t = "rank " + std::to_string(world);
  if (!f.group.empty()) t += " (" + f.group + " rank " + std::to_string(group_rank) + ")";
  return t;
}

}  // namespace collscope::program
