// From a program entry to CollArgs: which buffers, in place or not, which count,
// and whether every rank's buffers are large enough (see resolve.h).
#include "scenario/resolve.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "scenario/json.h"
#include "scenario/suggest.h"

namespace collscope::scenario {

using json::quote;

bool is_collectives_only(const Scenario& s) {
  for (const auto& op : s.program) {
    if (!op.group.empty() || !op.body.empty() || !op.ranks.list.empty() || !op.ranks.text.empty() ||
        !op.request.empty() || op.kind != ProgramOp::Kind::collective)
      return false;
  }
  return true;
}

namespace {

std::vector<std::string> collective_names() {
  std::vector<std::string> v;
  for (Collective c : kAllCollectives) v.emplace_back(name_of(c));
  return v;
}

std::string rank_range(std::int32_t ranks) { return "0.." + std::to_string(ranks - 1); }

}  // namespace

Error unknown_op_error(const std::string& op, Location where) {
  auto names = collective_names();
  for (const auto& [name, kind] : kProgramOps) names.emplace_back(name);
  std::string msg = "unknown op " + quote(op);
  if (auto c = closest(op, names)) msg += " (did you mean \"" + *c + "\"?)";
  return make_error("scenario.unknown_op", msg, "valid ops: " + join(names), std::move(where));
}

Error root_range_error(const std::string& root_text, std::int32_t ranks, Location where) {
  return make_error(
      "scenario.out_of_range",
      "root " + root_text + " is out of range " + rank_range(ranks) + " (ranks is " + std::to_string(ranks) + ")",
      "choose a root rank between 0 and " + std::to_string(ranks - 1), std::move(where));
}

Error count_too_large_error(const std::string& count_text, Location where) {
  return make_error("scenario.out_of_range",
                    "count " + count_text + " is larger than any buffer can hold (" +
                        std::to_string(kMaxCountElements) + " elements)",
                    "use a smaller count", std::move(where));
}

std::string human_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::pair<std::string, std::string> human_bytes_pair(std::uint64_t bytes, std::uint64_t other) {
  std::string a = human_bytes(bytes), b = human_bytes(other);
  if (a == b && bytes != other) {
    a = std::to_string(bytes) + " bytes";
    b = std::to_string(other) + " bytes (" + b + ")";
  }
  return {a, b};
}

namespace {
void find_entry(const std::vector<ProgramOp>& ops, const std::string& pointer, const Location*& best) {
  for (const ProgramOp& op : ops) {
    const std::string& p = op.where.pointer;
    if (p.empty()) continue;
    if (pointer == p || pointer.starts_with(p + "/")) {
      if (!best || p.size() > best->pointer.size()) best = &op.where;
      find_entry(op.body, pointer, best);
    }
  }
}
}  // namespace

Error placed_in_file(Error e, const Scenario& s) {
  if (e.where.line != 0 || e.where.pointer.empty()) return e;
  const Location* best = nullptr;
  find_entry(s.program, e.where.pointer, best);
  if (best) {
    e.where.line = best->line;
    e.where.col = best->col;
    if (e.where.file.empty()) e.where.file = best->file;
  }
  if (e.where.file.empty()) e.where.file = s.file;
  return e;
}

Error buffer_bytes_error(const std::string& name, std::int32_t rank, std::uint64_t count, DType t, Location where) {
  // count <= 2^64 / 8 is not guaranteed, so report the size without overflowing.
  const std::uint64_t e = size_of(t);
  auto [size, limit] = human_bytes_pair(count > UINT64_MAX / e ? UINT64_MAX : count * e, kMaxBufferBytes);
  if (count > UINT64_MAX / e) size = "more than 16 EiB";
  return make_error("scenario.out_of_range",
                    "buffer " + quote(name) + " on rank " + std::to_string(rank) + " would take " + size + " (" +
                        std::to_string(count) + " x " + std::string(name_of(t)) + "), over the limit of " + limit +
                        " per buffer",
                    "use a smaller count", std::move(where));
}

Error too_many_transfers_error(Location where, std::uint64_t limit) {
  return make_error("scenario.out_of_range", "the program lowers to more than " + std::to_string(limit) + " transfers",
                    "use fewer calls, repeats or ranks", std::move(where));
}

Error total_bytes_error(std::uint64_t total, Location where) {
  return make_error("scenario.out_of_range",
                    "buffers take " + human_bytes_pair(total, kMaxTotalBytes).first +
                        " over all ranks, over the limit of " + human_bytes_pair(total, kMaxTotalBytes).second,
                    "use fewer ranks, fewer buffers or smaller counts", std::move(where));
}

Error ranks_range_error(const std::string& ranks_text, Location where, std::int32_t max) {
  std::string message = "ranks " + ranks_text + " is out of range 1.." + std::to_string(max);
  if (max == kMaxPricedRanks)
    message += " (a run takes up to " + std::to_string(kMaxRanks) + "; collscope predict prices up to " +
               std::to_string(kMaxPricedRanks) + " on a topology)";
  std::string help = "set \"ranks\" to the number of ranks to simulate, from 1 to " + std::to_string(max);
  if (max == kMaxRanks)
    help += ", or price it with collscope predict on a topology (up to " + std::to_string(kMaxPricedRanks) + " ranks)";
  return make_error("scenario.out_of_range", message, help, std::move(where));
}

std::uint64_t total_bytes(const Scenario& s) {
  std::uint64_t total = 0;
  for (const auto& b : s.buffers)
    for (std::uint64_t n : b.count) {
      const std::uint64_t bytes = n > UINT64_MAX / size_of(s.dtype) ? UINT64_MAX : n * size_of(s.dtype);
      total = bytes > UINT64_MAX - total ? UINT64_MAX : total + bytes;
    }
  return total;
}

std::int32_t first_over_total(const Scenario& s) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < s.buffers.size(); ++i) {
    for (std::uint64_t n : s.buffers[i].count) {
      const std::uint64_t bytes = n > UINT64_MAX / size_of(s.dtype) ? UINT64_MAX : n * size_of(s.dtype);
      total = bytes > UINT64_MAX - total ? UINT64_MAX : total + bytes;
    }
    if (total > kMaxTotalBytes) return static_cast<std::int32_t>(i);
  }
  return -1;
}

Status check_world(const Scenario& s, std::int32_t max_ranks, bool byte_limits) {
  const Location top{s.file, 0, 0, ""};
  if (s.ranks < 1 || s.ranks > max_ranks) {
    Location l = s.ranks_where.line > 0 ? s.ranks_where : top;
    l.pointer = "/ranks";
    return ranks_range_error(std::to_string(s.ranks), l, max_ranks);
  }
  std::unordered_set<std::string> names;
  for (const auto& b : s.buffers) {
    Location l = b.where;
    if (l.file.empty() && l.line == 0) l.file = s.file;
    if (l.pointer.empty()) l.pointer = "/buffers/" + b.name;
    if (b.name.empty() || b.name[0] == '~')
      return make_error("scenario.bad_name", "buffer name " + quote(b.name) + " is not allowed",
                        "name buffers with a non-empty name that does not start with '~' (reserved for scratch)", l);
    if (!names.insert(b.name).second)
      return make_error("scenario.duplicate_key", "duplicate buffer " + quote(b.name), "give every buffer its own name",
                        l);
    if (b.count.size() != static_cast<std::size_t>(s.ranks))
      return make_error("scenario.out_of_range",
                        "buffer " + quote(b.name) + " has counts for " + std::to_string(b.count.size()) +
                            " ranks, but ranks is " + std::to_string(s.ranks),
                        "give one count per rank", l);
    for (std::size_t r = 0; r < b.count.size() && byte_limits; ++r) {
      if (b.count[r] > kMaxBufferBytes / size_of(s.dtype))
        return buffer_bytes_error(b.name, static_cast<std::int32_t>(r), b.count[r], s.dtype, l);
    }
    if (b.init.kind == InitKind::values) {
      if (b.init.values.size() != b.count.size())
        return make_error("scenario.out_of_range",
                          "init values have " + std::to_string(b.init.values.size()) + " rows, but ranks is " +
                              std::to_string(s.ranks),
                          "give one row of values per rank", l);
      for (std::size_t r = 0; r < b.count.size(); ++r)
        if (b.init.values[r].size() != b.count[r])
          return make_error("scenario.out_of_range",
                            "init values row " + std::to_string(r) + " has " + std::to_string(b.init.values[r].size()) +
                                " numbers, but buffer " + quote(b.name) + " holds " + std::to_string(b.count[r]) +
                                " on rank " + std::to_string(r),
                            "give rank " + std::to_string(r) + " exactly " + std::to_string(b.count[r]) + " numbers",
                            l);
    }
    if (b.init.kind == InitKind::random && b.init.min > b.init.max)
      return make_error(
          "scenario.out_of_range",
          "random min " + std::to_string(b.init.min) + " is larger than max " + std::to_string(b.init.max),
          "make min <= max", l);
  }
  if (auto over = byte_limits ? first_over_total(s) : -1; over >= 0) {
    const BufferSpec& b = s.buffers[static_cast<std::size_t>(over)];
    Location l = b.where;
    if (l.file.empty() && l.line == 0) l.file = s.file;
    if (l.pointer.empty()) l.pointer = "/buffers/" + b.name;
    return total_bytes_error(total_bytes(s), l);
  }
  return ok_status();
}

CallResolver::CallResolver(const Scenario& s) : s_(s) {
  for (std::size_t i = 0; i < s.buffers.size(); ++i) by_name_.emplace(s.buffers[i].name, static_cast<std::int32_t>(i));
}

Location CallResolver::where(const ProgramOp& op, std::int32_t index, const std::string& key) const {
  if (!key.empty())
    if (auto it = op.field_where.find(key); it != op.field_where.end()) return it->second;
  Location l = op.where;
  if (l.file.empty() && l.line == 0) l.file = s_.file;
  if (l.pointer.empty()) l.pointer = "/program/" + std::to_string(index);
  return l;
}

namespace {

// Elements rank r needs in the call's input and output buffer. In place, both live
// in one buffer and `in` is the end of the furthest region used in it.
struct Need {
  std::uint64_t in = 0, out = 0;
};

Need need_of(const CollArgs& a, std::int32_t r) {
  const auto sh = shape_of(a, r);
  if (!a.in_place) return {sh.in_count, sh.out_count};
  const std::uint64_t in_end = sh.in_count ? a.in_offset(r) + sh.in_count : 0;
  const std::uint64_t out_end = sh.out_count ? a.out_offset(r) + sh.out_count : 0;
  return {std::max(in_end, out_end), 0};
}

// Out of place, the buffer whose size gives NCCL's count (the collective's
// descriptor says; see the rule in scenario.h).
bool count_from_input(Collective c) { return collective_descriptor(c).count_of != CountOf::recv; }

}  // namespace

Status CallResolver::resolve_peers(const ProgramOp& op, std::int32_t index, std::int32_t n, const Env& env,
                                   CollArgs& a) const {
  const std::string cname(name_of(a.coll));
  const std::string on =
      op.group.empty() ? std::to_string(n) + " ranks" : std::to_string(n) + " ranks of group " + quote(op.group);
  if (op.peer_counts.empty())
    return make_error("scenario.missing_key", cname + " has no \"counts\"",
                      "say how many elements each rank sends to each peer, e.g. \"counts\": \"(rank + peer) % 3\"",
                      where(op, index, ""));
  auto p = std::make_shared<PeerCounts>();
  p->ranks = n;
  const auto cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  // One table: its n x n numbers, from the expression or the rows, each 0..kMaxCountElements.
  auto fill = [&](const PeerTable& t, const char* key, std::vector<std::uint64_t>& out) -> Status {
    const Location at = where(op, index, key);
    out.assign(cells, 0);
    if (!t.rows.empty()) {
      const std::string hint =
          std::string("give one row per rank of the call (") + on + "), each with one number per peer";
      if (t.rows.size() != static_cast<std::size_t>(n))
        return make_error("scenario.out_of_range",
                          std::string("\"") + key + "\" has " + std::to_string(t.rows.size()) + " rows, but " + cname +
                              " runs on " + on,
                          hint, at);
      for (std::int32_t r = 0; r < n; ++r) {
        const auto& row = t.rows[static_cast<std::size_t>(r)];
        if (row.size() != static_cast<std::size_t>(n))
          return make_error("scenario.out_of_range",
                            std::string("row ") + std::to_string(r) + " of \"" + key + "\" has " +
                                std::to_string(row.size()) + " numbers, but " + cname + " runs on " + on,
                            hint, at);
        for (std::int32_t q = 0; q < n; ++q) out[p->at(r, q)] = row[static_cast<std::size_t>(q)];
      }
      return ok_status();
    }
    auto e = Expression::parse(t.expr);
    if (!e) {
      Error err = e.error();
      err.where = at;
      return err;
    }
    Env vars = env;
    vars.push_back({"size", n});
    vars.push_back({"rank", 0});
    vars.push_back({"peer", 0});
    const std::size_t rank_at = vars.size() - 2, peer_at = vars.size() - 1;
    for (std::int32_t r = 0; r < n; ++r)
      for (std::int32_t q = 0; q < n; ++q) {
        vars[rank_at].second = r;
        vars[peer_at].second = q;
        auto v = e->eval(vars);
        if (!v) {
          Error err = v.error();
          err.message = std::string("\"") + key + "\" for rank " + std::to_string(r) + " and peer " +
                        std::to_string(q) + ": " + err.message;
          err.where = at;
          return err;
        }
        if (*v < 0 || static_cast<std::uint64_t>(*v) > kMaxCountElements)
          return make_error(
              "scenario.out_of_range",
              std::string("\"") + key + "\" " + quote(t.expr) + " is " + std::to_string(*v) + " for rank " +
                  std::to_string(r) + " and peer " + std::to_string(q),
              std::string(*v < 0 ? "counts and offsets are 0 or more" : "that is more than any buffer holds") +
                  " (rank and peer are ranks of the call" + (op.group.empty() ? "" : ", in group " + quote(op.group)) +
                  ")",
              at);
        out[p->at(r, q)] = static_cast<std::uint64_t>(*v);
      }
    return ok_status();
  };
  if (auto st = fill(op.peer_counts, "counts", p->counts); !st) return st;
  if (!op.send_offsets.empty())
    if (auto st = fill(op.send_offsets, "send_offsets", p->send_offsets); !st) return st;
  if (!op.recv_offsets.empty()) {
    if (auto st = fill(op.recv_offsets, "recv_offsets", p->recv_offsets); !st) return st;
    // Two blocks landing on the same element would make the result depend on their
    // order (MPI calls it erroneous): receive blocks must not overlap.
    for (std::int32_t d = 0; d < n; ++d) {
      std::vector<std::pair<std::uint64_t, std::int32_t>> starts;
      for (std::int32_t s = 0; s < n; ++s)
        if (p->count(s, d)) starts.push_back({p->recv_at(d, s), s});
      std::sort(starts.begin(), starts.end());
      for (std::size_t k = 1; k < starts.size(); ++k) {
        const auto [at0, s0] = starts[k - 1];
        const auto [at1, s1] = starts[k];
        if (at0 + p->count(s0, d) > at1)
          return make_error("scenario.bad_call",
                            "on rank " + std::to_string(d) + " the block from rank " + std::to_string(s0) +
                                " (elements " + std::to_string(at0) + ".." + std::to_string(at0 + p->count(s0, d)) +
                                ") overlaps the block from rank " + std::to_string(s1) + " (from element " +
                                std::to_string(at1) + ")",
                            "give every peer's block its own elements of the receive buffer (leave out "
                            "\"recv_offsets\" to pack them in rank order)",
                            where(op, index, "recv_offsets"));
      }
    }
  }
  p->finish();
  a.count = 0;
  for (std::uint64_t c : p->counts) a.count = std::max(a.count, c);
  a.peers = std::move(p);
  return ok_status();
}

// The buffers of one call as its group sees them: group rank g lives on world rank
// world(g), and every message names buffers by their role in the call.
struct CallResolver::Site {
  const ProgramOp& op;
  std::int32_t index;
  const std::vector<std::int32_t>& members;
  const Scenario& s;
  std::string cname;

  std::int32_t world(std::int32_t g) const { return members.empty() ? g : members[static_cast<std::size_t>(g)]; }
  std::uint64_t count_of(std::int32_t buf, std::int32_t g) const {
    return s.buffers[static_cast<std::size_t>(buf)].count[static_cast<std::size_t>(world(g))];
  }
  const std::string& buffer_name(std::int32_t buf) const { return s.buffers[static_cast<std::size_t>(buf)].name; }
  std::string role(bool in_place, bool input) const {
    return in_place ? "buffer" : input ? "send buffer" : "recv buffer";
  }
  std::string key(bool in_place, bool input) const { return in_place ? "buffer" : input ? "send" : "recv"; }
};

Result<CollArgs> CallResolver::resolve(const ProgramOp& op, std::int32_t index,
                                       const std::vector<std::int32_t>& members, const Env& env) const {
  std::optional<Collective> coll = op.coll;
  if (!coll) coll = parse_collective(op.op);
  if (!coll) return unknown_op_error(op.op, where(op, index, "op"));
  const Collective c = *coll;
  const Site site{op, index, members, s_, std::string(name_of(c))};
  const std::int32_t n = members.empty() ? s_.ranks : static_cast<std::int32_t>(members.size());

  CollArgs a;
  bool identity = true;
  for (std::size_t g = 0; g < members.size(); ++g) identity = identity && members[g] == static_cast<std::int32_t>(g);
  if (!(identity && n == s_.ranks)) a.world_rank = members;
  a.coll = c;
  a.ranks = n;
  a.op = op.reduce_op;
  a.dtype = s_.dtype;
  a.root = 0;
  if (has_root(c)) {
    if (op.root < 0 || op.root >= n) {
      Error e = root_range_error(std::to_string(op.root), n, where(op, index, "root"));
      if (!op.group.empty()) e.message += " (the root is a rank in group " + quote(op.group) + ")";
      return e;
    }
    a.root = op.root;
  }
  if (auto st = check_algorithm(site, c); !st) return st.error();

  if (!collective_descriptor(c).moves_data) {
    const std::pair<std::string, const std::string*> given[] = {
        {"buffer", &op.buffer}, {"send", &op.send}, {"recv", &op.recv}};
    for (const auto& [key, value] : given)
      if (!value->empty())
        return make_error("scenario.bad_call", site.cname + " takes no buffers, but \"" + key + "\" is given",
                          "remove \"" + key + "\": a barrier only synchronises the ranks", where(op, index, key));
    a.in_buf = a.out_buf = -1;  // no buffer
    a.count = 0;
    return a;
  }
  if (auto st = resolve_buffers(site, a); !st) return st.error();
  if (auto st = resolve_count(site, env, a); !st) return st.error();
  if (auto st = check_fits(site, a); !st) return st.error();
  return a;
}

// "auto", "custom" (the program's own body is the algorithm, program/match.cpp), a
// library's native call, or one of the registry's algorithms for the collective.
Status CallResolver::check_algorithm(const Site& site, Collective c) const {
  const ProgramOp& op = site.op;
  if (op.algorithm.empty() || op.algorithm == "auto" || op.algorithm == "custom" || has_native(op.algorithm, c) ||
      find_algorithm(c, op.algorithm))
    return ok_status();
  std::string msg = "unknown algorithm " + quote(op.algorithm) + " for " + site.cname;
  if (auto m = closest(op.algorithm, algorithm_names(c))) msg += " (did you mean \"" + *m + "\"?)";
  return make_error("scenario.unknown_algorithm", msg, valid_algorithms_hint(c, true),
                    where(op, site.index, "algorithm"));
}

Result<std::int32_t> CallResolver::lookup_buffer(const Site& site, const std::string& name, const char* key) const {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& b : s_.buffers) names.push_back(b.name);
  std::string msg = "unknown buffer " + quote(name);
  if (auto m = closest(name, names)) msg += " (did you mean \"" + *m + "\"?)";
  std::string hint =
      names.empty() ? "declare it under \"buffers\", e.g. " + quote(name) + ": {\"count\": 8}"
                    : "declared buffers: " + join_quoted(names) + "; or declare " + quote(name) + " under \"buffers\"";
  return make_error("scenario.unknown_buffer", msg, hint, where(site.op, site.index, key));
}

// Which buffers: "buffer" alone in place, or "send" and "recv" out of place.
Status CallResolver::resolve_buffers(const Site& site, CollArgs& a) const {
  const ProgramOp& op = site.op;
  const std::int32_t index = site.index;
  const Collective c = a.coll;
  const std::string& cname = site.cname;
  const bool in_place = !op.buffer.empty();
  const std::string both_hint = supports_in_place(c)
                                    ? "use \"buffer\" alone for an in-place call, or \"send\" and \"recv\" for an "
                                      "out-of-place one"
                                    : cname + " needs a \"send\" and a \"recv\" buffer";
  if (in_place && (!op.send.empty() || !op.recv.empty()))
    return make_error("scenario.bad_call",
                      cname + " names both \"buffer\" and \"" + (op.send.empty() ? "recv" : "send") + "\"", both_hint,
                      where(op, index, "buffer"));
  if (!in_place) {
    if (op.send.empty() && op.recv.empty())
      return make_error("scenario.bad_call", cname + " names no buffer", both_hint, where(op, index, ""));
    if (op.send.empty() || op.recv.empty()) {
      const std::string has = op.send.empty() ? "recv" : "send";
      const std::string lacks = op.send.empty() ? "send" : "recv";
      return make_error("scenario.bad_call", cname + " has \"" + has + "\" but no \"" + lacks + "\"",
                        supports_in_place(c) ? "add \"" + lacks + "\", or use \"buffer\" alone for an in-place call"
                                             : "add \"" + lacks + "\"",
                        where(op, index, has));
    }
    if (op.send == op.recv)
      return make_error("scenario.bad_call", "\"send\" and \"recv\" both name buffer " + quote(op.send),
                        supports_in_place(c) ? "use \"buffer\": " + quote(op.send) + " for an in-place call"
                                             : cname + " needs two different buffers",
                        where(op, index, "recv"));
  }
  if (in_place && !supports_in_place(c))
    return make_error("scenario.in_place_unsupported",
                      cname + " cannot run in place (\"buffer\": " + quote(op.buffer) + ")",
                      "give separate \"send\" and \"recv\" buffers", where(op, index, "buffer"));
  if (in_place) {
    auto b = lookup_buffer(site, op.buffer, "buffer");
    if (!b) return b.error();
    a.in_buf = a.out_buf = *b;
  } else {
    auto sb = lookup_buffer(site, op.send, "send");
    if (!sb) return sb.error();
    auto rb = lookup_buffer(site, op.recv, "recv");
    if (!rb) return rb.error();
    a.in_buf = *sb;
    a.out_buf = *rb;
  }
  a.in_place = in_place;
  return ok_status();
}

// The count: alltoallv's per-peer counts, the "count" given, or else the largest count
// for which the count-giving buffer fits on every rank.
Status CallResolver::resolve_count(const Site& site, const Env& env, CollArgs& a) const {
  const ProgramOp& op = site.op;
  const std::int32_t index = site.index;
  if (collective_descriptor(a.coll).per_peer) {
    if (op.count)
      return make_error("scenario.bad_call", site.cname + " has a count per pair of ranks, not one \"count\"",
                        "give \"counts\" instead", where(op, index, "count"));
    return resolve_peers(op, index, a.ranks, env, a);
  }
  if (op.count) {
    if (*op.count > kMaxCountElements)
      return count_too_large_error(std::to_string(*op.count), where(op, index, "count"));
    a.count = *op.count;
    return ok_status();
  }
  const bool from_in = a.in_place || count_from_input(a.coll);
  const std::int32_t buf = from_in ? a.in_buf : a.out_buf;
  CollArgs unit = a;
  unit.count = 1;
  std::uint64_t best = UINT64_MAX;
  std::int32_t tight = -1;
  for (std::int32_t r = 0; r < a.ranks; ++r) {
    const Need u = need_of(unit, r);
    const std::uint64_t per = from_in ? u.in : u.out;
    if (per == 0) continue;
    const std::uint64_t fit = site.count_of(buf, r) / per;
    if (fit < best) {
      best = fit;
      tight = r;
    }
  }
  if (tight < 0) best = 0;
  if (best == 0 && tight >= 0) {
    const Need u = need_of(unit, tight);
    const std::uint64_t per = from_in ? u.in : u.out;
    const std::string& name = site.buffer_name(buf);
    return make_error("scenario.buffer_too_small",
                      site.role(a.in_place, from_in) + " " + quote(name) + " is too small for " + site.cname +
                          " on rank " + std::to_string(site.world(tight)) + ": needs at least " + std::to_string(per) +
                          " elements, has " + std::to_string(site.count_of(buf, tight)),
                      "give " + quote(name) + " at least " + std::to_string(per) + " elements on rank " +
                          std::to_string(site.world(tight)),
                      where(op, index, site.key(a.in_place, from_in)));
  }
  a.count = best;
  return ok_status();
}

// Every rank's buffers must hold what the call touches.
Status CallResolver::check_fits(const Site& site, const CollArgs& a) const {
  for (std::int32_t r = 0; r < a.ranks; ++r) {
    const Need need = need_of(a, r);
    for (const bool input : {true, false}) {
      const std::uint64_t want = input ? need.in : need.out;
      if (want == 0) continue;
      const std::int32_t buf = input ? a.in_buf : a.out_buf;
      const std::uint64_t have = site.count_of(buf, r);
      if (have >= want) continue;
      const std::string& name = site.buffer_name(buf);
      std::string hint = "give " + quote(name) + " at least " + std::to_string(want) + " elements on rank " +
                         std::to_string(site.world(r));
      if (site.op.count) hint += ", or lower \"count\"";
      if (a.peers)
        hint += input ? ", or send less (\"counts\", \"send_offsets\")"
                      : ", or receive less (\"counts\", \"recv_offsets\")";
      return make_error("scenario.buffer_too_small",
                        site.role(a.in_place, input) + " " + quote(name) + " is too small for " + site.cname +
                            " on rank " + std::to_string(site.world(r)) + ": needs " + std::to_string(want) +
                            " elements, has " + std::to_string(have),
                        hint, where(site.op, site.index, site.key(a.in_place, input)));
    }
  }
  return ok_status();
}

}  // namespace collscope::scenario
