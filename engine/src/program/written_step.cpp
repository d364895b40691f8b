// Written steps ({"op": "step", "transfers": [...]}): every transfer line is
// evaluated for each rank its "ranks" selects, with rank, size and the enclosing
// repeats' variables bound, into the Schedule's transfers.
#include <algorithm>
#include <unordered_map>

#include "program/program.h"
#include "scenario/expr.h"
#include "scenario/resolve.h"

namespace collscope::program {

namespace {

class WrittenStep {
 public:
  WrittenStep(const Scenario& sc, const Schedule& s, const Frame& frame) : sc_(sc), s_(s), frame_(frame) {
    members_ = frame.members;
    if (members_.empty())
      for (std::int32_t r = 0; r < s.ranks; ++r) members_.push_back(r);
  }

  Result<std::vector<Transfer>> run(const ProgramOp& op, const std::vector<std::pair<std::string, std::int64_t>>& vars,
                                    const std::string& pointer, std::uint64_t room) const {
    std::vector<Transfer> out;
    const auto n_ranks = static_cast<std::int32_t>(members_.size());
    Env env = {{"rank", 0}, {"size", n_ranks}};
    env.insert(env.end(), vars.begin(), vars.end());
    for (std::size_t ti = 0; ti < op.transfers.size(); ++ti) {
      const TransferSpec& ts = op.transfers[ti];
      const std::string tp = pointer + "/transfers/" + std::to_string(ti);
      for (std::int32_t r = 0; r < n_ranks; ++r) {
        env[0].second = r;
        auto chosen = selected(ts, env, tp);
        if (!chosen) return chosen.error();
        if (!*chosen) continue;
        auto from = place(ts, ts.from, env, "from", tp);
        if (!from) return from.error();
        auto to = place(ts, ts.to, env, "to", tp);
        if (!to) return to.error();
        Transfer t;
        t.src = from->first;
        t.dst = to->first;
        t.action = ts.action;
        std::uint64_t n = std::min(from->second, to->second);
        if (ts.action == Action::reduce_copy) {  // "with" lives on the receiving rank
          auto with = place(ts, ts.with, env, "with", tp, t.dst.rank);
          if (!with) return with.error();
          t.aux = with->first;
          n = std::min(n, with->second);
        }
        if (!ts.count.empty()) {
          auto c = eval(ts.count, env, ts, "count", tp);
          if (!c) return c.error();
          if (*c < 0 || static_cast<std::uint64_t>(*c) > n)
            return make_error("scenario.buffer_too_small",
                              "transfer of " + std::to_string(*c) + " elements (" +
                                  rank_text(frame_, members_[static_cast<std::size_t>(r)], r) +
                                  ") does not fit: the slices hold " + std::to_string(n),
                              "lower the count or the offsets", ts_where(ts, "count", tp));
          n = static_cast<std::uint64_t>(*c);
        }
        t.count = n;
        if (out.size() >= room) return scenario::too_many_transfers_error(ts_where(ts, "", tp));
        out.push_back(t);
      }
    }
    return out;
  }

 private:
  const Scenario& sc_;
  const Schedule& s_;
  const Frame& frame_;
  std::vector<std::int32_t> members_;  // world rank of each rank of the frame

  Location ts_where(const TransferSpec& ts, const std::string& key, const std::string& p) const {
    Location l = ts.where;
    if (auto it = ts.field_where.find(key); it != ts.field_where.end()) l = it->second;
    if (l.file.empty() && l.line == 0) l.file = sc_.file;
    if (l.pointer.empty()) l.pointer = p;
    return l;
  }

  // Parsed once, then evaluated for every rank. The key is the text's address (every
  // text is a field of the scenario, which outlives this evaluation).
  mutable std::unordered_map<const std::string*, Result<Expression>> parsed_;

  Result<std::int64_t> eval(const std::string& text, const Env& env, const TransferSpec& ts, const std::string& key,
                            const std::string& p) const {
    auto it = parsed_.find(&text);
    if (it == parsed_.end()) it = parsed_.emplace(&text, Expression::parse(text)).first;
    const Result<Expression>& e = it->second;
    if (!e) return e.error();
    auto v = e->eval(env);
    if (!v) {
      Error err = v.error();
      const auto g = static_cast<std::int32_t>(env[0].second);
      err.message += " (" + rank_text(frame_, members_[static_cast<std::size_t>(g)], g) + ")";
      err.where = ts_where(ts, key, p);
      return err;
    }
    return *v;
  }

  Result<bool> selected(const TransferSpec& ts, const Env& env, const std::string& p) const {
    const auto r = static_cast<std::int32_t>(env[0].second);
    if (!ts.ranks.list.empty()) return std::find(ts.ranks.list.begin(), ts.ranks.list.end(), r) != ts.ranks.list.end();
    if (ts.ranks.text.empty()) return r == 0;  // without "ranks", a transfer is written once
    if (ts.ranks.text == "all") return true;
    if (long a = 0, b = 0; parse_rank_range(ts.ranks.text, a, b)) return r >= a && r <= b;
    auto v = eval(ts.ranks.text, env, ts, "ranks", p);
    if (!v) return v.error();
    return *v != 0;
  }

  // A transfer end: (where it starts, how many elements from there to the slice's end).
  // The written rank is a rank of the frame; `on_rank`: the slice's world rank is given
  // (a reduce-copy's "with"), not written.
  Result<std::pair<Loc, std::uint64_t>> place(const TransferSpec& ts, const SliceSpec& sl, const Env& env,
                                              const std::string& key, const std::string& p,
                                              std::int32_t on_rank = -1) const {
    Result<std::int64_t> rank = std::int64_t{on_rank};
    if (on_rank < 0) {
      auto g = eval(sl.rank, env, ts, key, p);
      if (!g) return g.error();
      const auto n = static_cast<std::int64_t>(members_.size());
      const auto me = static_cast<std::int32_t>(env[0].second);
      if (*g < 0 || *g >= n)
        return make_error("program.bad_value",
                          "transfer " + key + (frame_.group.empty() ? " rank " : " " + frame_.group + " rank ") +
                              std::to_string(*g) + " is outside 0.." + std::to_string(n - 1) + " (for " +
                              rank_text(frame_, members_[static_cast<std::size_t>(me)], me) + ")",
                          frame_.group.empty() ? "check the rank expression"
                                               : "inside a custom algorithm on group " + frame_.group +
                                                     ", ranks are the group's: check the rank expression",
                          ts_where(ts, key, p));
      rank = members_[static_cast<std::size_t>(*g)];
    }
    if (!rank) return rank.error();
    const std::int32_t b = s_.find_buffer(sl.buffer);
    if (b < 0)
      return make_error("scenario.unknown_buffer", "transfer " + key + " names unknown buffer \"" + sl.buffer + "\"",
                        "declare it under \"buffers\"", ts_where(ts, key, p));
    const std::uint64_t have = s_.buffers[static_cast<std::size_t>(b)].count[static_cast<std::size_t>(*rank)];
    std::int64_t off = 0;
    if (!sl.offset.empty()) {
      auto o = eval(sl.offset, env, ts, key, p);
      if (!o) return o.error();
      off = *o;
    }
    std::int64_t n = static_cast<std::int64_t>(have) - off;
    if (!sl.count.empty()) {
      auto c = eval(sl.count, env, ts, key, p);
      if (!c) return c.error();
      n = *c;
    }
    // An offset past the end is named as such (the count defaults to what is left, which
    // would be negative); the end is summed unsigned, where both fit without overflow.
    if (off < 0 || static_cast<std::uint64_t>(off) > have)
      return make_error("scenario.buffer_too_small",
                        "transfer " + key + " offset " + std::to_string(off) + " is outside rank " +
                            std::to_string(*rank) + "'s " + sl.buffer + " of " + std::to_string(have) + " elements",
                        "check the offset", ts_where(ts, key, p));
    if (n < 0)
      return make_error("scenario.buffer_too_small", "transfer " + key + " count " + std::to_string(n) + " is negative",
                        "check the count", ts_where(ts, key, p));
    if (static_cast<std::uint64_t>(off) + static_cast<std::uint64_t>(n) > have)
      return make_error("scenario.buffer_too_small",
                        "transfer " + key + " " + sl.buffer + "[" + std::to_string(off) + ".." +
                            std::to_string(static_cast<std::uint64_t>(off) + static_cast<std::uint64_t>(n)) +
                            ") on rank " + std::to_string(*rank) + " is outside its " + std::to_string(have) +
                            " elements",
                        "check the offset and count", ts_where(ts, key, p));
    return std::pair{Loc{static_cast<std::int32_t>(*rank), b, static_cast<std::uint64_t>(off)},
                     static_cast<std::uint64_t>(n)};
  }
};

}  // namespace

Result<std::vector<Transfer>> written_transfers(const Scenario& sc, const Schedule& s, const ProgramOp& op,
                                                const std::vector<std::pair<std::string, std::int64_t>>& vars,
                                                const std::string& pointer, std::uint64_t room, const Frame& frame) {
  return WrittenStep(sc, s, frame).run(op, vars, pointer, room);
}

}  // namespace collscope::program
