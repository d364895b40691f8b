// PyTorch's Flight Recorder dumps in JSON (TORCH_NCCL_TRACE_BUFFER_SIZE, written by
// TORCH_NCCL_DUMP_ON_TIMEOUT or _dump_nccl_trace_json), and the files `collscope record`
// writes in the same format:
//
//   {"version": "2.4",
//    "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"}},
//    "entries": [{"record_id": 0, "pg_id": 0, "process_group": ["0", "default_pg"],
//                 "collective_seq_id": 1, "p2p_seq_id": 0, "op_id": 1,
//                 "profiling_name": "nccl:all_reduce", "time_created_ns": 1718...,
//                 "duration_ms": 0.41, "input_sizes": [[1024]], "input_dtypes": ["Float"],
//                 "output_sizes": [[1024]], "output_dtypes": ["Float"], "state": "completed",
//                 "time_discovered_started_ns": 1718..., "time_discovered_completed_ns": 1718...,
//                 "retired": true, "timeout_ms": 600000, "is_p2p": false}, ...]}
//
// Point-to-point entries name their peers in profiling_name, in group ranks:
// "nccl:send 0->1", "nccl:recv 1<-0". The dump does not say its own rank: the trailing
// number of the file name does (nccl_trace_rank_3), as for PyTorch's analyzer; files
// from `collscope record` add "rank" and "world_size", and per entry "peer" and "root"
// (world ranks), "reduce_op", "async_op", "time_returned_ns", "time_wait_started_ns",
// "time_wait_completed_ns", "call_site", and for all_to_all_single "input_split_sizes"
// and "output_split_sizes" (rows of the first dimension, as PyTorch takes them).
//
// An all-to-all's blocks: the split sizes where the file has them, else one tensor per
// peer (all_to_all with a list, as the Flight Recorder records it), else an even split
// of the one tensor. A dump of all_to_all_single whose tensors cannot be split evenly
// says the call was uneven but not how (settle_alltoall).
#include <charconv>
#include <optional>

#include "import/json_cursor.h"
#include "import/readers.h"

namespace collscope::job {

namespace {

enum class Field : std::uint8_t {
  profiling_name,
  collective_seq_id,
  p2p_seq_id,
  process_group,
  pg_id,
  input_sizes,
  output_sizes,
  input_dtypes,
  output_dtypes,
  state,
  time_created_ns,
  time_discovered_started_ns,
  time_discovered_completed_ns,
  duration_ms,
  is_p2p,
  peer,
  root,
  reduce_op,
  async_op,
  time_returned_ns,
  time_wait_started_ns,
  time_wait_completed_ns,
  call_site,
  input_split_sizes,
  output_split_sizes,
  other,
};

// An entry's key, found with one switch on its length: a dump has millions of them.
Field field_of(std::string_view k) {
  switch (k.size()) {
    case 4:
      if (k == "peer") return Field::peer;
      if (k == "root") return Field::root;
      break;
    case 5:
      if (k == "pg_id") return Field::pg_id;
      if (k == "state") return Field::state;
      break;
    case 6:
      if (k == "is_p2p") return Field::is_p2p;
      break;
    case 8:
      if (k == "async_op") return Field::async_op;
      break;
    case 9:
      if (k == "reduce_op") return Field::reduce_op;
      if (k == "call_site") return Field::call_site;
      break;
    case 10:
      if (k == "p2p_seq_id") return Field::p2p_seq_id;
      break;
    case 11:
      if (k == "input_sizes") return Field::input_sizes;
      if (k == "duration_ms") return Field::duration_ms;
      break;
    case 12:
      if (k == "output_sizes") return Field::output_sizes;
      if (k == "input_dtypes") return Field::input_dtypes;
      break;
    case 13:
      if (k == "process_group") return Field::process_group;
      if (k == "output_dtypes") return Field::output_dtypes;
      break;
    case 14:
      if (k == "profiling_name") return Field::profiling_name;
      break;
    case 15:
      if (k == "time_created_ns") return Field::time_created_ns;
      break;
    case 16:
      if (k == "time_returned_ns") return Field::time_returned_ns;
      break;
    case 17:
      if (k == "collective_seq_id") return Field::collective_seq_id;
      if (k == "input_split_sizes") return Field::input_split_sizes;
      break;
    case 18:
      if (k == "output_split_sizes") return Field::output_split_sizes;
      break;
    case 20:
      if (k == "time_wait_started_ns") return Field::time_wait_started_ns;
      break;
    case 22:
      if (k == "time_wait_completed_ns") return Field::time_wait_completed_ns;
      break;
    case 26:
      if (k == "time_discovered_started_ns") return Field::time_discovered_started_ns;
      break;
    case 28:
      if (k == "time_discovered_completed_ns") return Field::time_discovered_completed_ns;
      break;
    default:
      break;
  }
  return Field::other;
}

struct Pending {
  std::int32_t src = -1, dst = -1;  // group ranks from "send 0->1" / "recv 1<-0"
  std::int64_t pg_id = -1;
  // An all-to-all's blocks, settled once its group is known: elements per peer (from
  // the split sizes or one tensor per peer; empty: split evenly) and whole tensors.
  std::vector<std::uint64_t> send, recv;
  std::uint64_t in_numel = 0, out_numel = 0;
};

// One side of an entry's tensors: each tensor's elements and first dimension.
struct Tensors {
  std::vector<std::uint64_t> numel, dim0;
  void clear() { numel.clear(), dim0.clear(); }
};

// Reads [[d0, d1], [d0]]: the number of elements of all tensors, each tensor's, and the
// text as written.
std::uint64_t read_sizes(Cursor& c, std::string& text, const char* what, Tensors& tensors) {
  std::uint64_t total = 0;
  text.clear();
  tensors.clear();
  if (c.peek() == Cursor::Type::null) {
    c.null();
    return 0;
  }
  c.begin_array();
  text += '[';
  bool first_tensor = true;
  while (c.next_item()) {
    if (!first_tensor) text += ", ";
    first_tensor = false;
    text += '[';
    c.begin_array();
    std::uint64_t numel = 1, dim0 = 1;
    bool first_dim = true;
    while (c.next_item()) {
      const auto d = c.integer(what);
      if (d < 0) c.fail("import.bad_field", std::string(what) + " has a negative dimension", "", c.offset());
      if (!first_dim) text += ", ";
      else dim0 = static_cast<std::uint64_t>(d);
      first_dim = false;
      char digits[24];
      text.append(digits, static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, d).ptr - digits));
      const auto ud = static_cast<std::uint64_t>(d);
      numel = (ud != 0 && numel > UINT64_MAX / ud) ? UINT64_MAX : numel * ud;
    }
    text += ']';
    total += numel;
    tensors.numel.push_back(numel);
    tensors.dim0.push_back(dim0);
  }
  text += ']';
  return total;
}

// [3, 1, 2] or null: the split sizes `collscope record` adds to an all-to-all.
void read_count_list(Cursor& c, std::vector<std::uint64_t>& out, const char* what) {
  out.clear();
  if (c.peek() == Cursor::Type::null) {
    c.null();
    return;
  }
  c.begin_array();
  while (c.next_item()) {
    const std::size_t at = c.offset();
    const auto v = c.integer(what);
    if (v < 0) c.fail("import.bad_field", std::string(what) + " has a negative size", "", at);
    out.push_back(static_cast<std::uint64_t>(v));
  }
}

// Elements per peer of one side of an all-to-all: the split sizes (in rows of the one
// tensor's first dimension, as PyTorch takes them), else one tensor per peer; empty
// when the tensor is split evenly.
std::vector<std::uint64_t> per_peer(const std::vector<std::uint64_t>& split, const Tensors& t) {
  std::vector<std::uint64_t> out;
  if (!split.empty()) {
    const std::uint64_t row = t.numel.size() == 1 && t.dim0[0] > 0 ? t.numel[0] / t.dim0[0] : 1;
    for (auto rows : split) out.push_back(rows * row);
  } else if (t.numel.size() > 1) {
    out = t.numel;
  }
  return out;
}

std::string first_string(Cursor& c, const char* what) {
  std::string out;
  if (c.peek() == Cursor::Type::null) {
    c.null();
    return out;
  }
  c.begin_array();
  while (c.next_item()) {
    const auto s = c.string(what);
    if (out.empty()) out.assign(s);
  }
  return out;
}

double ns_or_none(Cursor& c, const char* what) {
  if (c.peek() == Cursor::Type::null) {
    c.null();
    return kNoTime;
  }
  const auto v = c.integer(what);
  return v > 0 ? static_cast<double>(v) / 1000.0 : kNoTime;
}

void read_pg_config(Cursor& c, RankFile& rf) {
  if (c.peek() == Cursor::Type::array) {  // some versions list the groups
    c.skip();
    return;
  }
  c.begin_object();
  std::string_view key;
  const std::string base = c.pointer;
  while (c.next_member(key)) {
    JobGroup g;
    g.id.assign(key);
    c.pointer = base + "/" + std::string(key);
    if (c.peek() != Cursor::Type::object) {
      c.skip();
      continue;
    }
    c.begin_object();
    std::string_view k;
    while (c.next_member(k)) {
      if (k == "name") g.id.assign(c.string("a group's name"));
      else if (k == "desc") g.desc.assign(c.string("a group's desc"));
      else if (k == "ranks") {
        const std::size_t at = c.offset();
        if (c.peek() == Cursor::Type::array) {
          c.begin_array();
          while (c.next_item()) {
            const auto r = c.integer("a group's rank");
            if (r < 0 || r > 1 << 20) c.fail("import.bad_field", "a group's rank is out of range", "", at);
            g.ranks.push_back(static_cast<std::int32_t>(r));
          }
        } else {
          const auto text = c.string("a group's ranks");
          auto list = parse_rank_list(text);
          if (!list)
            c.fail("import.bad_field", "a group's ranks should be a list like \"[0, 1, 2]\"",
                   "the dump does not follow the Flight Recorder's format", at);
          g.ranks = std::move(*list);
        }
      } else {
        c.skip();
      }
    }
    g.world = g.desc == "default_pg";
    rf.groups[g.id] = std::move(g);
  }
  c.pointer = base;
}

// What one entry says beyond what goes straight to its call, until the entry is read.
struct EntryFields {
  std::int64_t coll_seq = -1, p2p_seq = -1;
  bool is_p2p = false, is_p2p_given = false;
  std::uint64_t in_numel = 0, out_numel = 0;
  std::string in_text, out_text, in_dtype, out_dtype, pg_name;
  double created = kNoTime, started = kNoTime, completed = kNoTime, returned = kNoTime;
  double duration_ms = -1;
  std::int32_t peer_world = -1, root_world = -1;
  bool has_profiling_name = false;
  std::uint32_t seen = 0;  // the fields read, one bit each
};

// What all entries of a dump share: the last name and type looked up, and buffers.
struct EntryCache {
  std::string last_name = "\x01", last_kind, last_dtype = "\x01";
  DTypeInfo last_info;
  Tensors in_tensors, out_tensors;  // reused: a dump has millions of entries
  std::vector<std::uint64_t> in_split, out_split;
};

// Bits of EntryFields::seen that are checked after the entry.
constexpr int kInputSizesBit = 5, kOutputSizesBit = 6;

// An entry's field `k` (its bit in `seen`: each field may come once).
void read_field(Cursor& c, std::string_view k, EntryFields& e, JobCall& call, Pending& pend, EntryCache& cache) {
  const Field f = field_of(k);
  auto once = [&](int bit) {
    if (e.seen & (1u << bit))
      c.fail("import.bad_field", "key \"" + std::string(k) + "\" appears twice in one entry",
             "each entry names each field once", c.offset());
    e.seen |= 1u << bit;
  };
  if (f == Field::profiling_name) {
    once(0);
    e.has_profiling_name = true;
    call.name.assign(c.string("profiling_name"));
  } else if (f == Field::collective_seq_id) {
    once(1);
    e.coll_seq = c.integer("collective_seq_id");
  } else if (f == Field::p2p_seq_id) {
    once(2);
    e.p2p_seq = c.integer("p2p_seq_id");
  } else if (f == Field::process_group) {
    once(3);
    if (c.peek() == Cursor::Type::array) {
      c.begin_array();
      int i = 0;
      while (c.next_item()) {
        const auto s = c.string("process_group");
        if (i++ == 0) e.pg_name.assign(s);
      }
    } else {
      e.pg_name.assign(c.string("process_group"));
    }
  } else if (f == Field::pg_id) {
    once(4);
    pend.pg_id = c.integer("pg_id");
  } else if (f == Field::input_sizes) {
    once(kInputSizesBit);
    e.in_numel = read_sizes(c, e.in_text, "input_sizes", cache.in_tensors);
  } else if (f == Field::output_sizes) {
    once(kOutputSizesBit);
    e.out_numel = read_sizes(c, e.out_text, "output_sizes", cache.out_tensors);
  } else if (f == Field::input_dtypes) {
    once(7);
    e.in_dtype = first_string(c, "input_dtypes");
  } else if (f == Field::output_dtypes) {
    once(8);
    e.out_dtype = first_string(c, "output_dtypes");
  } else if (f == Field::state) {
    once(9);
    call.state.assign(c.string("state"));
    if (call.state != "completed" && call.state != "started" && call.state != "scheduled")
      c.fail("import.bad_field", "state \"" + call.state + "\" is not scheduled, started or completed", "", c.offset());
  } else if (f == Field::time_created_ns) {
    once(10);
    e.created = ns_or_none(c, "time_created_ns");
  } else if (f == Field::time_discovered_started_ns) {
    once(11);
    e.started = ns_or_none(c, "time_discovered_started_ns");
  } else if (f == Field::time_discovered_completed_ns) {
    once(12);
    e.completed = ns_or_none(c, "time_discovered_completed_ns");
  } else if (f == Field::duration_ms) {
    once(13);
    if (c.peek() == Cursor::Type::null) c.null();
    else e.duration_ms = c.number("duration_ms");
  } else if (f == Field::is_p2p) {
    once(14);
    e.is_p2p = c.boolean("is_p2p");
    e.is_p2p_given = true;
  } else if (f == Field::peer) {
    once(15);
    const auto v = c.integer("peer");
    e.peer_world = v >= 0 && v < 1 << 20 ? static_cast<std::int32_t>(v) : -1;
  } else if (f == Field::root) {
    once(16);
    const auto v = c.integer("root");
    e.root_world = v >= 0 && v < 1 << 20 ? static_cast<std::int32_t>(v) : -1;
  } else if (f == Field::reduce_op) {
    once(17);
    call.reduce_op.assign(c.string("reduce_op"));
  } else if (f == Field::async_op) {
    once(18);
    call.async_op = c.boolean("async_op");
    call.async_known = true;
  } else if (f == Field::time_returned_ns) {
    once(19);
    e.returned = ns_or_none(c, "time_returned_ns");
  } else if (f == Field::time_wait_started_ns) {
    once(20);
    call.t_wait_begin = ns_or_none(c, "time_wait_started_ns");
  } else if (f == Field::time_wait_completed_ns) {
    once(21);
    call.t_wait_end = ns_or_none(c, "time_wait_completed_ns");
  } else if (f == Field::call_site) {
    once(22);
    call.site.assign(c.string("call_site"));
  } else if (f == Field::input_split_sizes) {
    once(23);
    read_count_list(c, cache.in_split, "input_split_sizes");
  } else if (f == Field::output_split_sizes) {
    once(24);
    read_count_list(c, cache.out_split, "output_split_sizes");
  } else {
    c.skip();
  }
}

// "send 0->1", "recv 1<-0": the peers in group ranks.
void peers_from_name(const std::string& name, Pending& pend) {
  const auto sp = name.find(' ');
  if (sp == std::string::npos) return;
  const std::string meta = name.substr(sp + 1);
  const bool arrow_right = meta.find("->") != std::string::npos;
  const auto mid = meta.find(arrow_right ? "->" : "<-");
  if (mid == std::string::npos) return;
  int a = -1, b = -1;
  std::from_chars(meta.data(), meta.data() + mid, a);
  std::from_chars(meta.data() + mid + 2, meta.data() + meta.size(), b);
  if (arrow_right) pend.src = a, pend.dst = b;
  else pend.dst = a, pend.src = b;
}

// The call's kind, group, peers, type, sizes and times from the entry's fields.
void finish_call(const EntryFields& e, JobCall& call, Pending& pend, EntryCache& cache) {
  // Dumps repeat a few names and types: each is looked up once per file.
  if (call.name != cache.last_name) {
    cache.last_name = call.name;
    cache.last_kind = kind_of(call.name);
  }
  call.kind = cache.last_kind;
  call.p2p = e.is_p2p_given ? e.is_p2p : is_p2p_kind(call.kind);
  if (call.p2p && !is_p2p_kind(call.kind)) call.kind = "";
  call.seq = call.p2p ? e.p2p_seq : e.coll_seq;
  call.group = !e.pg_name.empty() ? e.pg_name : (pend.pg_id >= 0 ? std::to_string(pend.pg_id) : "0");
  if (call.p2p) peers_from_name(call.name, pend);
  call.peer = e.peer_world;
  call.root = e.root_world;
  const std::string& dt = !e.in_dtype.empty() ? e.in_dtype : e.out_dtype;
  call.dtype = dt;
  if (dt != cache.last_dtype) {
    cache.last_dtype = dt;
    cache.last_info = dtype_info(dt);
  }
  const auto& info = cache.last_info;
  call.dt = info.dt;
  call.dtype_bytes = info.bytes;
  call.sizes = !e.in_text.empty() && e.in_text != "[]" ? e.in_text : e.out_text;
  const bool has_in = e.seen & (1u << kInputSizesBit), has_out = e.seen & (1u << kOutputSizesBit);
  if (has_in || has_out)
    call.count = count_from_numels(call.kind, e.in_numel, e.out_numel, 0);  // all-to-all: settled below
  if (call.kind == "alltoall") {
    if (!has_in) cache.in_tensors.clear();
    if (!has_out) cache.out_tensors.clear();
    pend.send = per_peer(cache.in_split, cache.in_tensors);
    pend.recv = per_peer(cache.out_split, cache.out_tensors);
    pend.in_numel = e.in_numel;
    pend.out_numel = e.out_numel;
  }
  call.t_issue = e.created;
  call.t_start = has_time(e.started) ? e.started : e.created;
  if (e.duration_ms >= 0 && has_time(call.t_start)) call.t_end = call.t_start + e.duration_ms * 1000.0;
  else call.t_end = e.completed;
  call.t_return = has_time(e.returned) ? e.returned : kNoTime;
  if (call.async_op && has_time(call.t_wait_end)) call.t_end = call.t_wait_end;
}

// One entry of "entries" (`c.pointer` names it): its call, and what waits for pg_config.
void read_entry(Cursor& c, std::int64_t index, EntryCache& cache, RankFile& rf, std::vector<Pending>& pending) {
  JobCall call;
  call.where = c.pointer;
  Pending pend;
  EntryFields e;
  cache.in_split.clear();
  cache.out_split.clear();
  const std::size_t entry_at = c.offset();
  c.begin_object();
  std::string_view k;
  while (c.next_member(k)) read_field(c, k, e, call, pend, cache);
  if (!e.has_profiling_name)
    c.fail("import.bad_field", "entry " + std::to_string(index) + " has no profiling_name",
           "every Flight Recorder entry names its call, e.g. \"nccl:all_reduce\"", entry_at);
  finish_call(e, call, pend, cache);
  rf.calls.push_back(std::move(call));
  pending.push_back(pend);
}

// "entries": one call each.
void read_entries(Cursor& c, std::size_t text_size, RankFile& rf, std::vector<Pending>& pending) {
  EntryCache cache;
  // An entry is some 450 to 900 bytes: room for the most, so that the calls are
  // never moved (capacity never written costs no memory).
  rf.calls.reserve(text_size / 400);
  c.begin_array();
  std::int64_t index = 0;
  while (c.next_item()) {
    {
      char buf[32] = "/entries/";
      const auto r = std::to_chars(buf + 9, buf + sizeof buf, index);
      c.pointer.assign(buf, static_cast<std::size_t>(r.ptr - buf));
    }
    read_entry(c, index, cache, rf, pending);
    ++index;
  }
}

// The dump's top-level object.
void read_dump(Cursor& c, std::size_t text_size, RankFile& rf, std::vector<Pending>& pending) {
  if (c.peek() != Cursor::Type::object) c.wrong_type("a Flight Recorder dump", "an object");
  c.begin_object();
  std::string_view key;
  bool entries_seen = false;
  while (c.next_member(key)) {
    c.pointer = "/" + std::string(key);
    if (key == "pg_config") {
      read_pg_config(c, rf);
    } else if (key == "rank") {
      const std::size_t at = c.offset();
      const auto r = c.integer("rank");
      if (r < 0 || r >= 1 << 20) c.fail("import.bad_field", "rank " + std::to_string(r) + " is out of range", "", at);
      rf.rank = static_cast<std::int32_t>(r);
    } else if (key == "world_size") {
      const std::size_t at = c.offset();
      const auto w = c.integer("world_size");
      if (w < 1 || w > 1 << 20)
        c.fail("import.bad_field", "world_size " + std::to_string(w) + " is out of range", "", at);
      rf.world = static_cast<std::int32_t>(w);
    } else if (key == "entries") {
      entries_seen = true;
      read_entries(c, text_size, rf, pending);
    } else {
      c.skip();
    }
    c.pointer.clear();
  }
  c.finish();
  if (!entries_seen && rf.groups.empty())
    c.fail("import.bad_field", "the dump has neither \"entries\" nor \"pg_config\"",
           "is this a Flight Recorder dump? Dump it with includeCollectives (the default)", 0);
}

// Now that pg_config is known (it may come after the entries): group sizes, and the
// peers' world ranks.
std::optional<Error> resolve_group_ranks(RankFile& rf, std::vector<Pending>& pending, const std::string& file) {
  for (std::size_t i = 0; i < rf.calls.size(); ++i) {
    JobCall& call = rf.calls[i];
    const auto g = rf.groups.find(call.group);
    const std::vector<std::int32_t>* ranks = g != rf.groups.end() ? &g->second.ranks : nullptr;
    auto world_of = [&](std::int32_t group_rank) -> std::int32_t {
      if (group_rank < 0) return -1;
      if (!ranks || ranks->empty()) return group_rank;
      return static_cast<std::size_t>(group_rank) < ranks->size() ? (*ranks)[static_cast<std::size_t>(group_rank)] : -1;
    };
    if (call.kind == "alltoall" && call.count) {
      const auto n = ranks && !ranks->empty() ? static_cast<std::int32_t>(ranks->size()) : rf.world;
      Pending& p = pending[i];
      const std::string wrong = settle_alltoall(call, n, std::move(p.send), std::move(p.recv), p.in_numel, p.out_numel);
      if (!wrong.empty())
        return make_error("import.bad_field", call.name + " (" + call.where + "): its " + wrong,
                          "an all-to-all names one split size per member of its group",
                          Location{file, 0, 0, call.where});
    }
    if (call.p2p && call.peer < 0) {
      const Pending& p = pending[i];
      const std::int32_t peer_group_rank = call.kind == "send" ? p.dst : p.src;
      call.peer = world_of(peer_group_rank);
    }
  }
  return std::nullopt;
}

}  // namespace

Result<RankFile> read_flight_recorder(std::string_view text, const std::string& file) {
  RankFile rf;
  rf.format = JobFormat::flight_recorder;
  rf.clock = "epoch";
  std::vector<Pending> pending;
  try {
    Cursor c(text);
    read_dump(c, text.size(), rf, pending);
  } catch (const ReadFailure& f) {
    return to_error(f, text, file);
  }
  if (auto err = resolve_group_ranks(rf, pending, file)) return *err;
  return rf;
}

}  // namespace collscope::job
