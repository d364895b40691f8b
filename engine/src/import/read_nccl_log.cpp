// NCCL's own log (NCCL_DEBUG=INFO), one file per process or all processes in one.
//
// Every line starts with "host:pid:tid [cudaDev] NCCL INFO ". What import reads:
//
//   comm 0x55d0c8a0 rank 1 nranks 4 cudaDev 1 busId 2000 commId 0x3c1d... - Init COMPLETE
//       which communicator the following lines are about, and this process's rank in it
//   Channel 00/02 :    0   1   2   3
//       (printed by the communicator's rank 0) channel 0's ring, in communicator ranks
//   Trees [0] 1/-1/-1->0->-1 [1] 2/-1/-1->0->-1
//       per channel: this rank's children (down to three) -> itself -> its parent
//   Ring 00 : 3 -> 0 -> 1
//       (older NCCL) per channel: the previous rank -> itself -> the next one
//   AllReduce: opCount 2a sendbuff 0x7f.. recvbuff 0x7f.. count 1048576 datatype 7 op 0 root 0 comm 0x55d0c8a0
//   [nranks=4] stream 0x..
//       (NCCL_DEBUG_SUBSYS=COLL) one call: its count, datatype and op as NCCL's enums,
//       its root (the peer for Send and Recv), and the communicator's call counter
//
// The log has no times, so a job read from it has no compute gaps.
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "import/readers.h"

namespace collscope::job {

namespace {

struct CommInst {
  std::string ptr, id;
  std::int32_t rank = -1, nranks = 0;
  std::int32_t order = 0;                                      // among this unit's communicators of the same size
  std::map<int, std::vector<std::int32_t>> rings;              // channel -> comm ranks (rank 0 prints them)
  std::map<int, std::pair<std::int32_t, std::int32_t>> links;  // channel -> (prev, next) of this rank
  std::map<int, std::vector<std::int32_t>> trees;              // channel -> {up, down0, down1, down2}
  int line = 0;
};

struct Unit {  // one rank: a process and its device
  std::string key;
  std::vector<CommInst> comms;
  std::int32_t current = -1;
  struct Call {
    std::string op;
    std::uint64_t op_count = 0, count = 0;
    int datatype = -1, redop = -1;
    std::int32_t root = -1;
    std::string comm_ptr;
    int line = 0;
  };
  std::vector<Call> calls;
  std::int32_t world_rank = -1;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The word after `key ` in s, or "".
std::string_view word_after(std::string_view s, std::string_view key) {
  std::size_t at = 0;
  while ((at = s.find(key, at)) != std::string_view::npos) {
    const bool starts_word = at == 0 || s[at - 1] == ' ' || s[at - 1] == '[';
    const std::size_t after = at + key.size();
    if (starts_word && after < s.size() && (s[after] == ' ' || s[after] == '=')) {
      std::size_t b = after + 1;
      while (b < s.size() && s[b] == ' ') ++b;
      std::size_t e = b;
      while (e < s.size() && s[e] != ' ' && s[e] != ']' && s[e] != ',') ++e;
      return s.substr(b, e - b);
    }
    at = after;
  }
  return {};
}

template <class T>
bool to_int(std::string_view s, T& v, int base = 10) {
  if (s.empty()) return false;
  if (base == 16 && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::vector<std::int32_t> ints_in(std::string_view s, bool* ok) {
  std::vector<std::int32_t> out;
  *ok = true;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    if (i >= s.size()) break;
    std::size_t e = i;
    while (e < s.size() && s[e] != ' ') ++e;
    std::int32_t v = 0;
    if (!to_int(s.substr(i, e - i), v)) {
      *ok = false;
      return out;
    }
    out.push_back(v);
    i = e;
  }
  return out;
}

const std::map<std::string_view, std::string_view>& op_kinds() {
  static const std::map<std::string_view, std::string_view> m = {
      {"AllReduce", "allreduce"}, {"Broadcast", "broadcast"}, {"Bcast", "broadcast"},
      {"Reduce", "reduce"},       {"AllGather", "allgather"}, {"ReduceScatter", "reduce_scatter"},
      {"Send", "send"},           {"Recv", "recv"},           {"AllToAll", "alltoall"},
      {"Gather", "gather"},       {"Scatter", "scatter"}};
  return m;
}

// The unit's key from a line's prefix "host:pid:tid [dev] ": the process and its device.
std::string unit_key(std::string_view line_prefix) {
  const std::string_view prefix = trim(line_prefix);
  const auto c1 = prefix.find(':');
  const auto c2 = c1 == std::string_view::npos ? c1 : prefix.find(':', c1 + 1);
  const auto lb = prefix.find('[');
  const auto rb = lb == std::string_view::npos ? lb : prefix.find(']', lb);
  std::string key(c2 != std::string_view::npos ? prefix.substr(0, c2) : prefix.substr(0, std::min(prefix.size(), lb)));
  if (lb != std::string_view::npos && rb != std::string_view::npos) key += std::string(prefix.substr(lb, rb - lb + 1));
  return key;
}

// The units (ranks) of a log, in the order the log first names them.
struct Units {
  std::map<std::string, Unit> by_key;
  std::vector<std::string> order;
  Unit& get(const std::string& key) {
    auto [it, fresh] = by_key.try_emplace(key);
    if (fresh) {
      it->second.key = key;
      order.push_back(key);
    }
    return it->second;
  }
};

// A call: "AllReduce: opCount 2a sendbuff ... count N datatype D op O root R comm 0x.. [nranks=4] ..."
// (`colon` is where ": opCount " starts; ops collscope does not replay are skipped).
std::optional<Error> read_call_line(std::string_view msg, std::size_t colon, int line_no, int col,
                                    const std::string& file, Unit& u, NcclLog& log) {
  const std::string_view op = msg.substr(0, colon);
  if (!op_kinds().count(op)) return std::nullopt;
  Unit::Call call;
  call.op = std::string(op);
  call.line = line_no;
  const bool ok = to_int(word_after(msg, "opCount"), call.op_count, 16) &&
                  to_int(word_after(msg, "count"), call.count) && to_int(word_after(msg, "datatype"), call.datatype) &&
                  to_int(word_after(msg, "op"), call.redop) && to_int(word_after(msg, "root"), call.root);
  call.comm_ptr = std::string(word_after(msg, "comm"));
  if (!ok || call.comm_ptr.empty())
    return make_error(
        "import.parse", "this NCCL call line does not read as NCCL prints them",
        "expected \"" + call.op + ": opCount HEX sendbuff P recvbuff P count N datatype D op O root R comm P ...\"",
        Location{file, line_no, col, ""});
  u.calls.push_back(std::move(call));
  log.has_calls = true;
  return std::nullopt;
}

// A communicator: "comm 0x.. rank R nranks N ..." (also "nRanks") makes it the unit's
// current one. Returns true when the line was such an init line; other lines naming a
// known communicator only make it current and are read on.
Result<bool> read_comm_line(std::string_view msg, int line_no, const std::string& file, Unit& u) {
  const std::string_view ptr = word_after(msg, "comm");
  std::int32_t rank = -1, nranks = 0;
  std::string_view nr = word_after(msg, "nranks");
  if (nr.empty()) nr = word_after(msg, "nRanks");
  if (!ptr.empty() && to_int(word_after(msg, "rank"), rank) && to_int(nr, nranks) && rank >= 0 && nranks > 0 &&
      rank < nranks) {
    if (nranks > 1 << 16)
      return make_error("import.bad_field", "a communicator of " + std::to_string(nranks) + " ranks",
                        "collscope reads jobs of up to 65536 ranks (and replays up to 1024)",
                        Location{file, line_no, 1, ""});
    std::int32_t found = -1;
    for (std::size_t i = 0; i < u.comms.size(); ++i)
      if (u.comms[i].ptr == ptr) found = static_cast<std::int32_t>(i);
    if (found < 0) {
      CommInst ci;
      ci.ptr = std::string(ptr);
      ci.rank = rank;
      ci.nranks = nranks;
      ci.line = line_no;
      for (const auto& other : u.comms)
        if (other.nranks == nranks) ++ci.order;
      u.comms.push_back(std::move(ci));
      found = static_cast<std::int32_t>(u.comms.size() - 1);
    }
    if (const auto id = word_after(msg, "commId"); !id.empty()) u.comms[static_cast<std::size_t>(found)].id = id;
    u.current = found;
    return true;
  }
  // Newer NCCL ends its "Trees" line with "comm 0x.. nRanks N ...": that communicator.
  for (std::size_t i = 0; i < u.comms.size(); ++i)
    if (u.comms[i].ptr == ptr) u.current = static_cast<std::int32_t>(i);
  return false;
}

// "Channel 00/02 :    0   1   2   3" (not "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC")
bool is_channel_line(std::string_view msg) {
  return msg.rfind("Channel ", 0) == 0 && msg.find("->") == std::string_view::npos &&
         msg.find("via") == std::string_view::npos;
}

void read_channel_line(std::string_view msg, int line_no, const std::string& file, CommInst& comm, NcclLog& log) {
  const auto slash = msg.find('/');
  const auto colon = msg.find(':');
  int channel = -1;
  if (slash == std::string_view::npos || colon == std::string_view::npos || slash > colon ||
      !to_int(trim(msg.substr(8, slash - 8)), channel))
    return;
  const std::string_view list = trim(msg.substr(colon + 1));
  bool ok = true;
  auto ranks = ints_in(list, &ok);
  if (!ok) {
    log.notes.push_back("line " + std::to_string(line_no) + " of " + file +
                        " lists a ring cut short (\"...\"); "
                        "that channel is left out");
    return;
  }
  comm.rings[channel] = std::move(ranks);
}

// "Ring 00 : 3 -> 0 -> 1"
void read_ring_line(std::string_view msg, CommInst& comm) {
  const auto colon = msg.find(':');
  int channel = -1;
  if (colon == std::string_view::npos || !to_int(trim(msg.substr(5, colon - 5)), channel)) return;
  std::string_view rest = msg.substr(colon + 1);
  std::vector<std::int32_t> v;
  std::size_t i = 0;
  while (i <= rest.size()) {
    auto next = rest.find("->", i);
    if (next == std::string_view::npos) next = rest.size();
    std::int32_t x = 0;
    if (!to_int(trim(rest.substr(i, next - i)), x)) break;
    v.push_back(x);
    i = next + 2;
  }
  if (v.size() == 3) comm.links[channel] = {v[0], v[2]};
}

// One channel's "down0/down1/down2->rank->up" as {up, down0, down1, down2}; nullopt
// when it has no two arrows.
std::optional<std::vector<std::int32_t>> tree_entry(std::string_view tt) {
  const auto a1 = tt.find("->");
  const auto a2 = a1 == std::string_view::npos ? a1 : tt.find("->", a1 + 2);
  if (a2 == std::string_view::npos) return std::nullopt;
  std::vector<std::int32_t> entry(4, -1);
  std::int32_t up = -1;
  to_int(tt.substr(a2 + 2), up);
  entry[0] = up;
  std::string_view downs = tt.substr(0, a1);
  for (int d = 0; d < 3 && !downs.empty(); ++d) {
    const auto sl = downs.find('/');
    std::int32_t x = -1;
    to_int(downs.substr(0, sl), x);
    entry[static_cast<std::size_t>(d + 1)] = x;
    if (sl == std::string_view::npos) break;
    downs.remove_prefix(sl + 1);
  }
  return entry;
}

// "Trees [0] 1/-1/-1->0->-1 [1] ..."
void read_trees_line(std::string_view msg, CommInst& comm) {
  std::size_t i = 5;
  while ((i = msg.find('[', i)) != std::string_view::npos) {
    const auto rb = msg.find(']', i);
    if (rb == std::string_view::npos) break;
    int channel = -1;
    if (!to_int(msg.substr(i + 1, rb - i - 1), channel)) break;
    std::size_t e = msg.find(' ', rb + 2);
    if (e == std::string_view::npos) e = msg.size();
    const std::string_view t = msg.substr(rb + 1, e - rb - 1);
    if (auto entry = tree_entry(trim(t))) comm.trees[channel] = std::move(*entry);
    i = rb + 1;
  }
}

// One line of the log: what it says goes to its unit (or to the log's notes).
std::optional<Error> read_line(std::string_view line, int line_no, const std::string& file, Units& units,
                               NcclLog& log) {
  const auto tag = line.find("NCCL INFO");
  if (tag == std::string_view::npos) return std::nullopt;
  Unit& u = units.get(unit_key(line.substr(0, tag)));
  const std::string_view msg = trim(line.substr(tag + 9));

  if (const auto colon = msg.find(": opCount "); colon != std::string_view::npos)
    return read_call_line(msg, colon, line_no, static_cast<int>(tag + 10), file, u, log);
  if (msg.find("comm 0x") != std::string_view::npos || msg.find("comm (nil)") != std::string_view::npos) {
    const auto init = read_comm_line(msg, line_no, file, u);
    if (!init) return init.error();
    if (*init) return std::nullopt;
  }
  if (u.current < 0) return std::nullopt;
  CommInst& comm = u.comms[static_cast<std::size_t>(u.current)];
  if (is_channel_line(msg)) read_channel_line(msg, line_no, file, comm, log);
  else if (msg.rfind("Ring ", 0) == 0) read_ring_line(msg, comm);
  else if (msg.rfind("Trees", 0) == 0) read_trees_line(msg, comm);
  return std::nullopt;
}

// Communicators across units: by NCCL's id when the log prints it, else by size and
// the order each unit created them in.
std::string comm_key(const CommInst& c) {
  return !c.id.empty() ? "commId " + c.id
                       : "comm of " + std::to_string(c.nranks) + " ranks #" + std::to_string(c.order);
}

// The job's communicators, matched across units.
struct Comms {
  std::map<std::string, std::vector<std::int32_t>> members;  // key -> world rank per comm rank
  std::vector<std::string> order;
  std::map<std::string, std::string> group_of;  // comm key -> group id
};

Comms match_comms(const Units& units, std::int32_t world) {
  Comms out;
  for (const auto& k : units.order) {
    const Unit& u = units.by_key.at(k);
    if (u.world_rank < 0) continue;
    for (const auto& c : u.comms) {
      const std::string key = comm_key(c);
      auto [it, fresh] =
          out.members.try_emplace(key, std::vector<std::int32_t>(static_cast<std::size_t>(c.nranks), -1));
      if (fresh) out.order.push_back(key);
      if (static_cast<std::size_t>(c.rank) < it->second.size())
        it->second[static_cast<std::size_t>(c.rank)] = u.world_rank;
    }
  }
  int next = 1;
  for (const auto& key : out.order) {
    const auto& m = out.members[key];
    bool is_world = static_cast<std::int32_t>(m.size()) == world && !out.group_of.count("world");
    if (is_world) {
      out.group_of[key] = "0";
      out.group_of["world"] = key;
    } else {
      out.group_of[key] = "comm" + std::to_string(next++);
    }
  }
  return out;
}

// What the units' lines say of one communicator's channels, in its ranks.
struct CommChannels {
  std::map<int, std::vector<std::int32_t>> rings;
  std::map<int, std::map<std::int32_t, std::pair<std::int32_t, std::int32_t>>> links;
  std::map<int, std::map<std::int32_t, std::vector<std::int32_t>>> trees;
};

CommChannels gather_channels(const Units& units, const std::string& key) {
  CommChannels out;
  for (const auto& k : units.order) {
    const Unit& u = units.by_key.at(k);
    for (const auto& c : u.comms) {
      if (comm_key(c) != key) continue;
      for (const auto& [chn, ring] : c.rings) out.rings[chn] = ring;
      for (const auto& [chn, l] : c.links) out.links[chn][c.rank] = l;
      for (const auto& [chn, t] : c.trees) out.trees[chn][c.rank] = t;
    }
  }
  return out;
}

// Rings from "Ring" lines where no "Channel" line gave them: follow next from rank 0.
void rings_from_links(CommChannels& cc, std::size_t n) {
  for (const auto& [chn, l] : cc.links) {
    if (cc.rings.count(chn) || static_cast<std::int32_t>(l.size()) != static_cast<std::int32_t>(n)) continue;
    std::vector<std::int32_t> ring;
    std::int32_t cur = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ring.push_back(cur);
      const auto it = l.find(cur);
      if (it == l.end()) break;
      cur = it->second.second;
    }
    if (ring.size() == n) cc.rings[chn] = ring;
  }
}

// One communicator's rings and trees, in world ranks.
JobChannels channels_of(const Units& units, const Comms& comms, const std::string& key, const std::string& file,
                        NcclLog& log) {
  JobChannels ch;
  ch.comm = key;
  ch.group = comms.group_of.at(key);
  ch.members = comms.members.at(key);
  ch.file = file;
  const auto to_world = [&](std::int32_t r) -> std::int32_t {
    return r >= 0 && static_cast<std::size_t>(r) < ch.members.size() ? ch.members[static_cast<std::size_t>(r)] : -1;
  };
  CommChannels cc = gather_channels(units, key);
  rings_from_links(cc, ch.members.size());
  const std::int32_t n = static_cast<std::int32_t>(ch.members.size());
  for (const auto& [chn, ring] : cc.rings) {
    std::set<std::int32_t> distinct(ring.begin(), ring.end());
    if (static_cast<std::int32_t>(ring.size()) != n || static_cast<std::int32_t>(distinct.size()) != n ||
        *distinct.begin() < 0 || *distinct.rbegin() >= n) {
      log.notes.push_back("channel " + std::to_string(chn) + " of " + key + " in " + file +
                          " is not a ring of all its ranks; it is left out");
      continue;
    }
    std::vector<std::int32_t> w;
    for (auto r : ring) w.push_back(to_world(r));
    ch.rings.push_back(std::move(w));
  }
  for (const auto& [chn, per_rank] : cc.trees) {
    std::vector<std::vector<std::int32_t>> t(static_cast<std::size_t>(n), std::vector<std::int32_t>(4, -1));
    for (const auto& [r, e] : per_rank)
      if (r >= 0 && r < n)
        for (std::size_t j = 0; j < 4; ++j) t[static_cast<std::size_t>(r)][j] = to_world(e[j]);
    ch.trees.push_back(std::move(t));
  }
  return ch;
}

// NCCL's name of the datatype it prints as a number.
std::string nccl_type_name(int datatype) {
  static const char* const kNcclTypes[] = {"ncclInt8",    "ncclUint8",    "ncclInt32",      "ncclUint32",
                                           "ncclInt64",   "ncclUint64",   "ncclFloat16",    "ncclFloat32",
                                           "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
  return datatype >= 0 && datatype < 12 ? kNcclTypes[datatype] : "ncclDataType " + std::to_string(datatype);
}

// One call of unit `u` as the job's call, on communicator `key` (members `m`, in world ranks).
JobCall job_call(const Unit& u, const Unit::Call& c, const std::string& key, const std::vector<std::int32_t>& m,
                 const Comms& comms) {
  JobCall call;
  call.rank = u.world_rank;
  call.name = c.op;
  call.kind = std::string(op_kinds().at(c.op));
  call.p2p = is_p2p_kind(call.kind);
  call.group = comms.group_of.at(key);
  call.seq = static_cast<std::int64_t>(c.op_count);
  call.count = c.count;
  call.sizes = std::to_string(c.count) + " elements";
  const auto info = nccl_dtype(c.datatype);
  call.dtype = nccl_type_name(c.datatype);
  call.dt = info.dt;
  call.dtype_bytes = info.bytes;
  if (call.kind == "allreduce" || call.kind == "reduce" || call.kind == "reduce_scatter")
    call.reduce_op = nccl_reduce_op(c.redop);
  const std::int32_t root_world =
      c.root >= 0 && static_cast<std::size_t>(c.root) < m.size() ? m[static_cast<std::size_t>(c.root)] : -1;
  if (call.p2p) call.peer = root_world;
  else if (call.kind == "broadcast" || call.kind == "reduce") call.root = root_world;
  call.where = "line " + std::to_string(c.line);
  call.state = "";
  return call;
}

// What one unit (with its world rank) says: its calls and the groups the log knows.
Result<RankFile> rank_file_of(const Unit& u, const Comms& comms, std::int32_t world, const std::string& file) {
  RankFile rf;
  rf.format = JobFormat::nccl_log;
  rf.rank = u.world_rank;
  rf.world = world;
  rf.clock = "";
  for (const auto& c : u.calls) {
    const CommInst* ci = nullptr;
    for (const auto& x : u.comms)
      if (x.ptr == c.comm_ptr) ci = &x;
    if (!ci)
      return make_error("import.bad_field", "a call on communicator " + c.comm_ptr + " that no init line introduced",
                        "keep the init lines (\"comm 0x... rank R nranks N\") of every communicator in the log",
                        Location{file, c.line, 1, ""});
    const std::string key = comm_key(*ci);
    rf.calls.push_back(job_call(u, c, key, comms.members.at(key), comms));
  }
  // The groups, as the log knows them.
  for (const auto& [key, m] : comms.members) {
    JobGroup g;
    g.id = comms.group_of.at(key);
    g.ranks = m;
    g.world = g.id == "0";
    g.desc = key;
    rf.groups[g.id] = g;
  }
  return rf;
}

}  // namespace

Result<NcclLog> read_nccl_log(std::string_view text, const std::string& file) {
  NcclLog log;
  Units units;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (auto err = read_line(line, line_no, file, units, log)) return *err;
  }

  // The world: the largest communicator; each unit's rank in it is its world rank.
  std::int32_t world = 0;
  for (const auto& k : units.order)
    for (const auto& c : units.by_key[k].comms) world = std::max(world, c.nranks);
  if (world == 0) {
    if (log.has_calls)
      return make_error("import.bad_field", "the log has NCCL calls but no line that says which rank made them",
                        "keep the init lines (\"comm 0x... rank R nranks N ... Init COMPLETE\") in the log: run with "
                        "NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,COLL",
                        Location{file, 0, 0, ""});
    return log;
  }
  for (const auto& k : units.order) {
    Unit& u = units.by_key[k];
    for (const auto& c : u.comms)
      if (c.nranks == world) {
        u.world_rank = c.rank;
        break;
      }
  }
  const Comms comms = match_comms(units, world);
  // Channels per communicator.
  for (const auto& key : comms.order) {
    JobChannels ch = channels_of(units, comms, key, file, log);
    if (!ch.rings.empty() || !ch.trees.empty()) log.channels.push_back(std::move(ch));
  }
  // Calls, per unit.
  std::set<std::int32_t> seen_ranks;
  for (const auto& k : units.order) {
    const Unit& u = units.by_key[k];
    if (u.world_rank < 0) {
      if (!u.calls.empty())
        log.notes.push_back("the process " + k + " in " + file +
                            " made calls but never said its rank in a communicator of " + std::to_string(world) +
                            " ranks; its calls are left out");
      continue;
    }
    if (u.calls.empty() && u.comms.empty()) continue;
    if (!seen_ranks.insert(u.world_rank).second)
      return make_error("import.ranks", "two processes in the log say they are rank " + std::to_string(u.world_rank),
                        "give one job's log at a time", Location{file, 0, 0, ""});
    auto rf = rank_file_of(u, comms, world, file);
    if (!rf) return rf.error();
    log.ranks.push_back(std::move(*rf));
  }
  return log;
}

}  // namespace collscope::job
