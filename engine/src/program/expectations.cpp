// A scenario's "expect", resolved rank by rank into the Schedule's Expectations
// (schedule.h): selectors and expressions evaluated, slices checked against the
// buffers, groups turned into their parts. The checks themselves are in verify/.
#include <algorithm>
#include <unordered_map>

#include "program/program.h"
#include "scenario/expr.h"

namespace collscope::program {

namespace {

// More statements than this (a block of 1 over a large buffer on many ranks) is an
// error rather than minutes of checking.
constexpr std::size_t kMaxExpectations = 1'000'000;

class ExpectResolver {
 public:
  ExpectResolver(const Scenario& s, Schedule& sched) : s_(s), sched_(sched) {}

  Status run() {
    for (std::size_t i = 0; i < s_.expect.size(); ++i) {
      const std::string pointer = "/expect/" + std::to_string(i);
      sched_.expect_where.push_back(loc(s_.expect[i], "", pointer));
      for (std::int32_t r = 0; r < s_.ranks; ++r)
        if (auto st = one(s_.expect[i], static_cast<std::int32_t>(i), pointer, r); !st) return st;
    }
    return ok_status();
  }

 private:
  const Scenario& s_;
  Schedule& sched_;
  std::unordered_map<std::string, std::vector<std::int64_t>> colors_;  // split group -> color per rank

  Location loc(const ExpectSpec& e, const std::string& key, const std::string& pointer) const {
    Location l = e.where;
    if (auto it = e.field_where.find(key); it != e.field_where.end()) l = it->second;
    if (l.file.empty() && l.line == 0) l.file = s_.file;
    if (l.pointer.empty()) l.pointer = pointer + (key.empty() ? "" : "/" + key);
    return l;
  }

  // Parsed once, evaluated for every rank and block (the key: the text's address, a
  // field of the scenario).
  mutable std::unordered_map<const std::string*, Result<Expression>> parsed_;

  Result<std::int64_t> value(const std::string& text, const Env& env, const ExpectSpec& e, const std::string& key,
                             const std::string& pointer) const {
    auto it = parsed_.find(&text);
    if (it == parsed_.end()) it = parsed_.emplace(&text, Expression::parse(text)).first;
    const Result<Expression>& x = it->second;
    if (!x) {
      Error err = x.error();
      err.where = loc(e, key, pointer);
      return err;
    }
    auto v = x->eval(env);
    if (!v) {
      Error err = v.error();
      err.message += " (expectation on rank " + std::to_string(env[0].second) + ")";
      err.where = loc(e, key, pointer);
      return err;
    }
    return *v;
  }

  Result<bool> selected(const RankSelector& sel, const Env& env, const ExpectSpec& e, const std::string& key,
                        const std::string& pointer, std::int32_t r) const {
    if (!sel.list.empty()) return std::find(sel.list.begin(), sel.list.end(), r) != sel.list.end();
    if (sel.text.empty() || sel.text == "all") return true;
    if (long a = 0, b = 0; parse_rank_range(sel.text, a, b)) return r >= a && r <= b;
    auto v = value(sel.text, env, e, key, pointer);
    if (!v) return v.error();
    return *v != 0;
  }

  std::int32_t buffer(const std::string& name) const {
    for (std::size_t b = 0; b < s_.buffers.size(); ++b)
      if (s_.buffers[b].name == name) return static_cast<std::int32_t>(b);
    return -1;
  }

  std::uint64_t have(std::int32_t buf, std::int32_t rank) const {
    return s_.buffers[static_cast<std::size_t>(buf)].count[static_cast<std::size_t>(rank)];
  }

  // The ranks a reduction combines, for the checked rank r.
  Result<std::vector<std::int32_t>> over(const ExpectSpec& e, const std::string& pointer, std::int32_t r) {
    std::vector<std::int32_t> out;
    if (!e.over_group.empty()) {
      const GroupSpec* g = nullptr;
      for (const auto& x : s_.groups)
        if (x.name == e.over_group) g = &x;
      if (!g)
        return make_error("scenario.unknown_group", "unknown group \"" + e.over_group + "\"",
                          "declare it under \"groups\"", loc(e, "holds/over", pointer));
      if (g->split.empty()) {
        if (std::find(g->ranks.begin(), g->ranks.end(), r) == g->ranks.end())
          return make_error("scenario.out_of_range",
                            "rank " + std::to_string(r) + " is not in group " + g->name + ", the ranks of \"over\"",
                            "select only the group's ranks with \"ranks\", or reduce over another group",
                            loc(e, "holds/over", pointer));
        out = g->ranks;
      } else {
        auto it = colors_.find(g->name);
        if (it == colors_.end()) {
          auto x = Expression::parse(g->split);
          if (!x) return x.error();
          std::vector<std::int64_t> colors;
          for (std::int32_t q = 0; q < s_.ranks; ++q) {
            auto v = x->eval({{"rank", q}, {"size", s_.ranks}});
            if (!v) {
              Error err = v.error();
              err.where = g->where;
              return err;
            }
            colors.push_back(*v);
          }
          it = colors_.emplace(g->name, std::move(colors)).first;
        }
        for (std::int32_t q = 0; q < s_.ranks; ++q)
          if (it->second[static_cast<std::size_t>(q)] == it->second[static_cast<std::size_t>(r)]) out.push_back(q);
      }
    } else {
      const Env env = {{"rank", r}, {"size", s_.ranks}};
      for (std::int32_t q = 0; q < s_.ranks; ++q) {
        auto in = selected(e.over, env, e, "holds/over", pointer, q);
        if (!in) return in.error();
        if (*in) out.push_back(q);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  Status one(const ExpectSpec& e, std::int32_t spec, const std::string& pointer, std::int32_t r) {
    Env env = {{"rank", r}, {"size", s_.ranks}};
    auto chosen = selected(e.ranks, env, e, "ranks", pointer, r);
    if (!chosen) return chosen.error();
    if (!*chosen) return ok_status();
    const std::int32_t buf = buffer(e.buffer);
    if (buf < 0)
      return make_error("scenario.unknown_buffer", "expectation names unknown buffer \"" + e.buffer + "\"",
                        "declare it under \"buffers\"", loc(e, "buffer", pointer));
    std::int64_t off = 0;
    if (!e.offset.empty()) {
      auto v = value(e.offset, env, e, "offset", pointer);
      if (!v) return v.error();
      off = *v;
    }
    const auto n = static_cast<std::int64_t>(have(buf, r));
    std::int64_t count = e.holds ? n - off : static_cast<std::int64_t>(e.values.size());
    if (!e.count.empty()) {
      auto v = value(e.count, env, e, "count", pointer);
      if (!v) return v.error();
      count = *v;
    }
    if (off < 0 || count < 0 || off > n || count > n - off)
      return make_error("scenario.buffer_too_small",
                        "the expectation on rank " + std::to_string(r) + " is about " + e.buffer + "[" +
                            std::to_string(off) + ".." + std::to_string(off + count) + "), but rank " +
                            std::to_string(r) + "'s " + e.buffer + " holds " + std::to_string(n) + " elements",
                        "check the offset and count", loc(e, e.count.empty() ? "offset" : "count", pointer));
    Expectation x;
    x.rank = r;
    x.buf = buf;
    x.spec = spec;
    if (!e.holds) {
      if (static_cast<std::size_t>(count) != e.values.size())
        return make_error("scenario.out_of_range",
                          "the expectation gives " + std::to_string(e.values.size()) + " values for " +
                              std::to_string(count) + " elements (rank " + std::to_string(r) + ")",
                          "give one value per element", loc(e, "values", pointer));
      x.kind = Expectation::Kind::values;
      x.offset = static_cast<std::uint64_t>(off);
      x.count = static_cast<std::uint64_t>(count);
      x.values = e.values;
      return add(std::move(x), e, pointer);
    }
    std::int64_t block = count;
    if (!e.block.empty()) {
      auto v = value(e.block, env, e, "block", pointer);
      if (!v) return v.error();
      block = *v;
      if (block <= 0 || count % block != 0)
        return make_error("scenario.out_of_range",
                          "block " + std::to_string(block) + " does not divide the " + std::to_string(count) +
                              " elements the expectation is about (rank " + std::to_string(r) + ")",
                          "give a block size that divides the count", loc(e, "block", pointer));
    }
    const std::int32_t from = buffer(e.from_buffer);
    if (from < 0)
      return make_error("scenario.unknown_buffer", "expectation names unknown buffer \"" + e.from_buffer + "\"",
                        "declare it under \"buffers\"", loc(e, "holds/buffer", pointer));
    std::vector<std::int32_t> ranks;
    if (e.from_rank.empty()) {
      auto o = over(e, pointer, r);
      if (!o) return o.error();
      ranks = std::move(*o);
      if (ranks.empty())
        return make_error("scenario.out_of_range",
                          "the reduction of the expectation on rank " + std::to_string(r) + " is over no rank",
                          "reduce over at least one rank", loc(e, "holds/over", pointer));
    }
    const std::int64_t blocks = block == 0 ? 1 : count / block;
    env.emplace_back("b", 0);
    for (std::int64_t b = 0; b < blocks; ++b) {
      env.back().second = b;
      Expectation y = x;
      y.offset = static_cast<std::uint64_t>(off + b * block);
      y.count = static_cast<std::uint64_t>(block);
      y.from_buf = from;
      std::int64_t from_off = off + b * block;  // by default, the element's own place
      if (!e.from_offset.empty()) {
        auto v = value(e.from_offset, env, e, "holds/offset", pointer);
        if (!v) return v.error();
        from_off = *v;
      }
      if (!e.from_rank.empty()) {
        auto v = value(e.from_rank, env, e, "holds/rank", pointer);
        if (!v) return v.error();
        if (*v < 0 || *v >= s_.ranks)
          return make_error("program.bad_value",
                            "the expectation on rank " + std::to_string(r) + " names rank " + std::to_string(*v) +
                                ", outside 0.." + std::to_string(s_.ranks - 1),
                            "check the rank expression", loc(e, "holds/rank", pointer));
        y.kind = Expectation::Kind::copy;
        y.from_rank = static_cast<std::int32_t>(*v);
        ranks = {y.from_rank};
      } else {
        y.kind = Expectation::Kind::reduction;
        y.op = e.reduce_op;
        y.over = ranks;
      }
      for (const std::int32_t q : ranks) {
        const auto m = static_cast<std::int64_t>(have(from, q));
        if (from_off < 0 || from_off > m || block > m - from_off)
          return make_error("scenario.buffer_too_small",
                            "the expectation on rank " + std::to_string(r) + " reads rank " + std::to_string(q) +
                                "'s " + e.from_buffer + "[" + std::to_string(from_off) + ".." +
                                std::to_string(from_off + block) + "), but it holds " + std::to_string(m) + " elements",
                            "check the offset in \"holds\" and the count", loc(e, "holds", pointer));
      }
      y.from_offset = static_cast<std::uint64_t>(from_off);
      if (auto st = add(std::move(y), e, pointer); !st) return st;
    }
    return ok_status();
  }

  Status add(Expectation x, const ExpectSpec& e, const std::string& pointer) {
    if (sched_.expect.size() >= kMaxExpectations)
      return make_error("scenario.out_of_range",
                        "the expectations make more than " + std::to_string(kMaxExpectations) + " statements",
                        "use larger blocks or fewer ranks", loc(e, "", pointer));
    if (x.count) sched_.expect.push_back(std::move(x));
    return ok_status();
  }
};

}  // namespace

Status resolve_expectations(const Scenario& s, Schedule& sched) {
  sched.expect.clear();
  sched.expect_where.clear();
  return ExpectResolver(s, sched).run();
}

}  // namespace collscope::program
