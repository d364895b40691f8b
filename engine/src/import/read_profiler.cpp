// PyTorch profiler traces (Chrome trace JSON, one file per rank).
//
// Newer PyTorch (Kineto) records every collective as a "record_param_comms" CPU op, and
// copies its arguments onto the GPU kernel that runs it:
//
//   {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": 1203.5, "dur": 12.1,
//    "args": {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 1024,
//             "Out msg nelems": 1024, "Group size": 4, "Process Group Name": "0",
//             "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3]",
//             "Rank": 0, "Seq": 41}}
//   {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ...same args}
//
// (an all-to-all adds "In split size" and "Out split size": "[3, 1, 2]", rows per peer,
// or "[]" for an even split) with the file's own rank under "distributedInfo" and its clock's origin in
// "baseTimeNanoseconds". For send and recv, "Rank" is the peer's rank in the group, as
// ProcessGroupNCCL records it.
//
// Older PyTorch (1.13, as Debian ships it, built without Kineto) writes a bare list of
// events named after the backend's work and the dispatcher's op, with empty "args":
//
//   [{"name": "c10d::allreduce_", "ph": "X", "ts": 392, "dur": 2364, "tid": 1, "pid": "CPU functions", "args": {}},
//    {"name": "gloo:all_reduce", "ph": "X", "ts": 3221, "dur": 1550, "tid": 2, ...}, ...]
//
// Such a trace has the calls, their order and their times (from the profiler's start),
// but no sizes unless they were recorded under "Input Dims", no peers and no groups.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "import/json_cursor.h"
#include "import/readers.h"

namespace collscope::job {

namespace {

struct Event {
  std::string name, cat;
  double ts = kNoTime, dur = 0;
  bool complete = true;  // ph "X"
  // Collective arguments (newer traces).
  bool comms = false;
  std::string coll_name, dtype, pg_name, pg_desc, pg_ranks_text;
  std::string in_split, out_split;  // all-to-all: "[3, 1, 2]" rows per peer, "[]" for an even split
  std::int64_t in_nelems = -1, out_nelems = -1, group_size = -1, rank = -1, seq = -1;
  std::int64_t rank_start = -1, rank_stride = -1, src_rank = -1, dst_rank = -1;
  // "Input Dims" (older traces profiled with record_shapes=True).
  std::int64_t input_numel = -1;
  std::string input_type;
  std::size_t index = 0;
};

// The first non-empty list of integers inside "Input Dims" ([[[1000]], [], []]): the
// first tensor's shape. Returns its number of elements, or -1.
void first_shape(Cursor& c, std::int64_t& numel, int depth) {
  if (c.peek() != Cursor::Type::array) {
    c.skip();
    return;
  }
  c.begin_array();
  bool ints = true, any = false;
  std::int64_t product = 1;
  while (c.next_item()) {
    if (c.peek() == Cursor::Type::number && ints) {
      const auto d = c.integer("a dimension");
      any = true;
      product = d >= 0 ? product * d : product;
    } else {
      ints = false;
      if (numel < 0 && depth < 8) first_shape(c, numel, depth + 1);
      else c.skip();
    }
  }
  if (ints && any && numel < 0) numel = product;
}

std::string first_string_in(Cursor& c) {
  std::string out;
  if (c.peek() == Cursor::Type::string) return std::string(c.string("Input type"));
  if (c.peek() != Cursor::Type::array) {
    c.skip();
    return out;
  }
  c.begin_array();
  while (c.next_item()) {
    if (out.empty() && c.peek() == Cursor::Type::string) {
      out.assign(c.string("Input type"));
      if (out.empty()) out = " ";
    } else if (out.empty() && c.peek() == Cursor::Type::array) {
      out = first_string_in(c);
    } else {
      c.skip();
    }
  }
  return out == " " ? std::string() : out;
}

std::int64_t int_or_text(Cursor& c, const char* what) {
  // Some exporters quote numbers.
  if (c.peek() == Cursor::Type::string) {
    const auto s = c.string(what);
    std::int64_t v = -1;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
  }
  if (c.peek() == Cursor::Type::null) {
    c.null();
    return -1;
  }
  return c.integer(what);
}

void read_args(Cursor& c, Event& e) {
  if (c.peek() != Cursor::Type::object) {
    c.skip();
    return;
  }
  c.begin_object();
  std::string_view k;
  while (c.next_member(k)) {
    if (k == "Collective name") {
      e.comms = true;
      e.coll_name.assign(c.string("Collective name"));
    } else if (k == "dtype") {
      if (c.peek() == Cursor::Type::string) e.dtype.assign(c.string("dtype"));
      else c.skip();
    } else if (k == "In msg nelems") {
      e.in_nelems = int_or_text(c, "In msg nelems");
    } else if (k == "Out msg nelems") {
      e.out_nelems = int_or_text(c, "Out msg nelems");
    } else if (k == "In split size") {
      if (c.peek() == Cursor::Type::string) e.in_split.assign(c.string("In split size"));
      else c.skip();
    } else if (k == "Out split size") {
      if (c.peek() == Cursor::Type::string) e.out_split.assign(c.string("Out split size"));
      else c.skip();
    } else if (k == "Group size") {
      e.group_size = int_or_text(c, "Group size");
    } else if (k == "Process Group Name") {
      if (c.peek() == Cursor::Type::string) e.pg_name.assign(c.string("Process Group Name"));
      else e.pg_name = std::to_string(int_or_text(c, "Process Group Name"));
    } else if (k == "Process Group Description") {
      if (c.peek() == Cursor::Type::string) e.pg_desc.assign(c.string("Process Group Description"));
      else c.skip();
    } else if (k == "Process Group Ranks") {
      if (c.peek() == Cursor::Type::string) {
        e.pg_ranks_text.assign(c.string("Process Group Ranks"));
      } else if (c.peek() == Cursor::Type::array) {
        e.pg_ranks_text = "[";
        c.begin_array();
        bool first = true;
        while (c.next_item()) {
          if (!first) e.pg_ranks_text += ", ";
          first = false;
          e.pg_ranks_text += std::to_string(c.integer("a group rank"));
        }
        e.pg_ranks_text += "]";
      } else {
        c.skip();
      }
    } else if (k == "Rank") {
      e.rank = int_or_text(c, "Rank");
    } else if (k == "Seq") {
      e.seq = int_or_text(c, "Seq");
    } else if (k == "Global rank start") {
      e.rank_start = int_or_text(c, "Global rank start");
    } else if (k == "Global rank stride") {
      e.rank_stride = int_or_text(c, "Global rank stride");
    } else if (k == "Src Rank") {
      e.src_rank = int_or_text(c, "Src Rank");
    } else if (k == "Dst Rank") {
      e.dst_rank = int_or_text(c, "Dst Rank");
    } else if (k == "Input Dims") {
      first_shape(c, e.input_numel, 0);
    } else if (k == "Input type") {
      e.input_type = first_string_in(c);
    } else {
      c.skip();
    }
  }
}

// An all-to-all's blocks from "In split size" and "Out split size" (rows of the
// tensor's first dimension; the row's elements follow from "In msg nelems"). A list the
// profiler cut short ("[3, 1, ...]") says the call was split but not how.
std::string settle_profiled_alltoall(JobCall& call, const Event& e, std::uint64_t in, std::uint64_t out,
                                     std::int32_t group_size) {
  auto side = [](const std::string& text, std::uint64_t numel, bool& known) {
    std::vector<std::uint64_t> per;
    if (text.empty()) return per;
    auto rows = parse_count_list(text);
    if (!rows) {
      known = false;
      return per;
    }
    std::uint64_t total = 0;
    for (auto r : *rows) total += r;
    const std::uint64_t row = total ? numel / total : 0;
    for (auto r : *rows) per.push_back(r * row);
    return per;
  };
  bool known = true;
  auto send = side(e.in_split, in, known);
  auto recv = side(e.out_split, out, known);
  if (!known) {
    call.kind = "alltoallv";
    call.count = in;
    return "";
  }
  return settle_alltoall(call, group_size, std::move(send), std::move(recv), in, out);
}

Event read_event(Cursor& c) {
  Event e;
  if (c.peek() != Cursor::Type::object) {
    c.skip();
    return e;
  }
  c.begin_object();
  std::string_view k;
  while (c.next_member(k)) {
    if (k == "name") {
      if (c.peek() == Cursor::Type::string) e.name.assign(c.string("name"));
      else c.skip();
    } else if (k == "cat") {
      if (c.peek() == Cursor::Type::string) e.cat.assign(c.string("cat"));
      else c.skip();
    } else if (k == "ph") {
      if (c.peek() == Cursor::Type::string) e.complete = c.string("ph") == "X";
      else c.skip();
    } else if (k == "ts") {
      e.ts = c.peek() == Cursor::Type::number ? c.number("ts") : (c.skip(), kNoTime);
    } else if (k == "dur") {
      e.dur = c.peek() == Cursor::Type::number ? c.number("dur") : (c.skip(), 0.0);
    } else if (k == "args") {
      read_args(c, e);
    } else {
      c.skip();
    }
  }
  return e;
}

// Backend work ("gloo:all_reduce") and dispatcher ops ("c10d::allreduce_") of older traces.
bool is_backend_event(const std::string& n) {
  for (const char* p : {"gloo:", "nccl:", "mpi:", "ucc:", "xccl:"})
    if (n.rfind(p, 0) == 0) return true;
  return false;
}
bool is_dispatcher_event(const std::string& n) { return n.rfind("c10d::", 0) == 0; }

std::string reduce_op_from_kernel(const std::string& name) {
  // ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_AllReduce_RING_LL_Sum_float
  for (const auto& [token, op] : std::initializer_list<std::pair<const char*, const char*>>{{"_Sum", "sum"},
                                                                                            {"_Prod", "prod"},
                                                                                            {"_Max", "max"},
                                                                                            {"_Min", "min"},
                                                                                            {"_Avg", "avg"},
                                                                                            {"_PreMulSum", "sum"},
                                                                                            {"_SumPostDiv", "avg"}}) {
    const auto at = name.find(token);
    if (at != std::string::npos) {
      const char next = at + std::strlen(token) < name.size() ? name[at + std::strlen(token)] : '_';
      if (next == '_' || next == '(') return op;
    }
  }
  return "";
}

// The events a trace's calls are made of, and its clock's origin.
struct Trace {
  std::vector<Event> events;
  double base_us = 0;
  bool has_base = false;
};

// The event list (the whole document of an older trace, "traceEvents" of a newer one):
// the complete events with times that can be calls.
void read_events(Cursor& c, bool bare, std::vector<Event>& events) {
  c.begin_array();
  std::size_t i = 0;
  while (c.next_item()) {
    c.pointer = (bare ? "/" : "/traceEvents/") + std::to_string(i);
    Event e = read_event(c);
    e.index = i++;
    if (!e.complete || !has_time(e.ts)) continue;
    if (e.comms || is_backend_event(e.name) || is_dispatcher_event(e.name)) events.push_back(std::move(e));
  }
  c.pointer.clear();
}

// "distributedInfo"'s "pg_config": its groups, each {"pg_name": .., "pg_desc": .., "ranks": [..]}.
void read_pg_config(Cursor& c, RankFile& rf) {
  c.begin_array();
  std::size_t gi = 0;
  while (c.next_item()) {
    c.pointer = "/distributedInfo/pg_config/" + std::to_string(gi++);
    if (c.peek() != Cursor::Type::object) {
      c.skip();
      continue;
    }
    JobGroup g;
    c.begin_object();
    std::string_view gk;
    while (c.next_member(gk)) {
      if (gk == "pg_name")
        g.id.assign(c.peek() == Cursor::Type::string ? c.string("pg_name") : std::to_string(c.integer("pg_name")));
      else if (gk == "pg_desc" && c.peek() == Cursor::Type::string) g.desc.assign(c.string("pg_desc"));
      else if (gk == "ranks" && c.peek() == Cursor::Type::array) {
        c.begin_array();
        while (c.next_item()) g.ranks.push_back(static_cast<std::int32_t>(c.integer("a group rank")));
      } else {
        c.skip();
      }
    }
    g.world = g.desc == "default_pg";
    if (!g.id.empty()) rf.groups[g.id] = std::move(g);
  }
}

// "distributedInfo" (an object): the file's rank, the world's size and the groups.
void read_distributed_info(Cursor& c, RankFile& rf) {
  c.begin_object();
  std::string_view k;
  while (c.next_member(k)) {
    c.pointer = "/distributedInfo/" + std::string(k);
    if (k == "rank") {
      const std::size_t at = c.offset();
      const auto r = int_or_text(c, "rank");
      if (r < 0 || r >= 1 << 20) c.fail("import.bad_field", "rank is out of range", "", at);
      rf.rank = static_cast<std::int32_t>(r);
    } else if (k == "world_size") {
      const std::size_t at = c.offset();
      const auto w = int_or_text(c, "world_size");
      if (w < 1 || w >= 1 << 20) c.fail("import.bad_field", "world_size is out of range", "", at);
      rf.world = static_cast<std::int32_t>(w);
    } else if (k == "pg_config" && c.peek() == Cursor::Type::array) {
      read_pg_config(c, rf);
    } else {
      c.skip();
    }
  }
}

// A newer trace's top-level object.
void read_trace_object(Cursor& c, Trace& t, RankFile& rf) {
  c.begin_object();
  std::string_view key;
  bool saw_events = false;
  while (c.next_member(key)) {
    c.pointer = "/" + std::string(key);
    if (key == "traceEvents") {
      saw_events = true;
      read_events(c, false, t.events);
    } else if (key == "baseTimeNanoseconds") {
      t.base_us = static_cast<double>(c.integer("baseTimeNanoseconds")) / 1000.0;
      t.has_base = true;
    } else if (key == "distributedInfo") {
      if (c.peek() != Cursor::Type::object) {
        c.skip();
        continue;
      }
      read_distributed_info(c, rf);
    } else {
      c.skip();
    }
    c.pointer.clear();
  }
  if (!saw_events)
    c.fail("import.bad_field", "the trace has no \"traceEvents\"", "export it with prof.export_chrome_trace()", 0);
}

// One call per (group, kind, seq): the CPU op gives when it was issued, the kernel
// when it ran on the device.
struct CallKey {
  std::string pg;
  std::string kind;
  std::int64_t seq;
  bool operator<(const CallKey& o) const { return std::tie(pg, kind, seq) < std::tie(o.pg, o.kind, o.seq); }
};

// "In msg nelems" and "Out msg nelems" as counts (0 when not given).
std::uint64_t numel(std::int64_t nelems) { return nelems > 0 ? static_cast<std::uint64_t>(nelems) : 0; }

bool is_kernel(const Event& e) { return e.cat == "kernel" || e.cat == "gpu_user_annotation"; }

// A call's sizes, times and place from its first event (`call` has its name, kind and group).
void fill_call(JobCall& call, const Event& e, std::int64_t seq, double base_us) {
  call.seq = seq;
  call.dtype = e.dtype;
  const auto info = dtype_info(e.dtype);
  call.dt = info.dt;
  call.dtype_bytes = info.bytes;
  const std::uint64_t in = numel(e.in_nelems), out = numel(e.out_nelems);
  if (e.in_nelems >= 0 || e.out_nelems >= 0)
    call.count = count_from_numels(call.kind, in, out, static_cast<std::int32_t>(e.group_size));
  call.sizes = "in " + std::to_string(in) + ", out " + std::to_string(out);
  if (is_kernel(e)) {
    call.t_start = base_us + e.ts;
    call.t_end = base_us + e.ts + e.dur;
    call.reduce_op = reduce_op_from_kernel(e.name);
  } else {
    call.t_issue = base_us + e.ts;
    call.t_return = base_us + e.ts + e.dur;
  }
  call.where = "/traceEvents/" + std::to_string(e.index);
}

// The group's members: the list, unless it was cut short; else start and stride.
JobGroup group_of_event(const Event& e, const std::string& id) {
  JobGroup g;
  g.id = id;
  g.desc = e.pg_desc;
  g.world = e.pg_desc == "default_pg";
  if (auto list = parse_rank_list(e.pg_ranks_text)) {
    g.ranks = std::move(*list);
  } else if (e.group_size > 0 && e.rank_start >= 0) {
    const auto stride = e.rank_stride > 0 ? e.rank_stride : 1;
    for (std::int64_t i = 0; i < e.group_size; ++i)
      g.ranks.push_back(static_cast<std::int32_t>(e.rank_start + i * stride));
  }
  return g;
}

// A point-to-point call's peer, or (from a collective) the file's rank, in world ranks.
void settle_ranks(JobCall& call, const Event& e, RankFile& rf) {
  const auto& ranks = rf.groups[call.group].ranks;
  if (call.p2p) {
    // For send and recv ProcessGroupNCCL records the peer as "Rank" (a group rank).
    std::int64_t peer = call.kind == "send" ? e.dst_rank : e.src_rank;
    if (peer < 0) peer = e.rank;
    if (peer >= 0)
      call.peer = ranks.empty()
                      ? static_cast<std::int32_t>(peer)
                      : (static_cast<std::size_t>(peer) < ranks.size() ? ranks[static_cast<std::size_t>(peer)] : -1);
  } else if (rf.rank < 0 && e.rank >= 0) {
    if (!ranks.empty() && static_cast<std::size_t>(e.rank) < ranks.size())
      rf.rank = ranks[static_cast<std::size_t>(e.rank)];
  }
}

// Newer traces: the "record_param_comms" events (CPU ops and their kernels) are the calls.
std::optional<Error> calls_from_comms(const Trace& t, RankFile& rf, const std::string& file) {
  std::map<CallKey, std::size_t> by_key;
  std::map<std::pair<std::string, std::string>, std::int64_t> counters;  // when Seq is missing
  std::vector<const Event*> order;
  for (const auto& e : t.events)
    if (e.comms) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const Event* a, const Event* b) { return a->ts < b->ts; });
  for (const Event* e : order) {
    const bool kernel = is_kernel(*e);
    JobCall call;
    call.name = e->coll_name;
    call.kind = kind_of(e->coll_name);
    call.p2p = is_p2p_kind(call.kind);
    call.group = e->pg_name.empty() ? "0" : e->pg_name;
    std::int64_t seq = e->seq;
    if (seq < 0) {
      auto& n = counters[{call.group, call.kind}];
      seq = kernel ? -1 : n++;
    }
    CallKey key{call.group, call.kind + (call.p2p ? "" : ""), seq};
    auto it = seq >= 0 ? by_key.find(key) : by_key.end();
    if (it != by_key.end()) {
      JobCall& prev = rf.calls[it->second];
      if (kernel) {
        prev.t_start = t.base_us + e->ts;
        prev.t_end = t.base_us + e->ts + e->dur;
        if (prev.reduce_op.empty()) prev.reduce_op = reduce_op_from_kernel(e->name);
      }
      continue;  // a second CPU op for the same call (nested record functions)
    }
    fill_call(call, *e, seq, t.base_us);
    JobGroup g = group_of_event(*e, call.group);
    if (!rf.groups.count(g.id) || rf.groups[g.id].ranks.empty()) rf.groups[g.id] = g;
    if (call.kind == "alltoall" && call.count) {
      const auto n = e->group_size > 0 ? static_cast<std::int32_t>(e->group_size)
                                       : static_cast<std::int32_t>(rf.groups[g.id].ranks.size());
      const std::string wrong = settle_profiled_alltoall(call, *e, numel(e->in_nelems), numel(e->out_nelems), n);
      if (!wrong.empty())
        return make_error("import.bad_field", call.name + " (" + call.where + "): its " + wrong,
                          "an all-to-all names one split size per member of its group",
                          Location{file, 0, 0, call.where});
    }
    settle_ranks(call, *e, rf);
    call.state = "completed";
    if (seq >= 0) by_key[key] = rf.calls.size();
    rf.calls.push_back(std::move(call));
  }
  rf.sizes = true;
  bool peers = true;
  for (const auto& call : rf.calls)
    if (call.p2p && call.peer < 0) peers = false;
  rf.peers = peers;
  return std::nullopt;
}

// One call of an older trace: backend event `e`, and `d`, its dispatcher op (or null).
JobCall legacy_call(const Event* e, const Event* d, bool& any_size) {
  JobCall call;
  call.name = e->name;
  call.kind = kind_of(e->name);
  call.p2p = is_p2p_kind(call.kind);
  call.group = "0";
  call.t_start = e->ts;
  call.t_end = e->ts + e->dur;
  call.t_issue = d ? d->ts : e->ts;
  call.t_return = d ? d->ts + d->dur : e->ts + e->dur;
  call.where = "/" + std::to_string(e->index);
  call.state = "completed";
  const Event* sized = e->input_numel >= 0 ? e : (d && d->input_numel >= 0 ? d : nullptr);
  if (sized && call.kind != "barrier") {
    call.count = static_cast<std::uint64_t>(sized->input_numel);
    call.sizes = "[" + std::to_string(sized->input_numel) + " elements]";
    any_size = true;
  }
  if (call.kind == "barrier") call.count = 0;
  const std::string& type = sized ? sized->input_type : std::string();
  if (!type.empty()) {
    call.dtype = type;
    const auto info = dtype_info(type);
    call.dt = info.dt;
    call.dtype_bytes = info.bytes;
  }
  return call;
}

// Older traces: the backend's events are the calls; the dispatcher's, when they pair
// up one to one, say when the program made them.
void legacy_calls(const std::vector<Event>& events, RankFile& rf) {
  std::vector<const Event*> backend, dispatcher;
  for (const auto& e : events) {
    if (kind_of(e.name).empty() && e.name.find("coalesced") == std::string::npos) continue;
    (is_backend_event(e.name) ? backend : dispatcher).push_back(&e);
  }
  auto by_time = [](const Event* a, const Event* b) { return a->ts < b->ts; };
  std::stable_sort(backend.begin(), backend.end(), by_time);
  std::stable_sort(dispatcher.begin(), dispatcher.end(), by_time);
  bool paired = !backend.empty() && backend.size() == dispatcher.size();
  for (std::size_t i = 0; paired && i < backend.size(); ++i)
    if (kind_of(backend[i]->name) != kind_of(dispatcher[i]->name)) paired = false;
  const auto& primary = backend.empty() ? dispatcher : backend;
  bool any_size = false;
  for (std::size_t i = 0; i < primary.size(); ++i)
    rf.calls.push_back(legacy_call(primary[i], paired ? dispatcher[i] : nullptr, any_size));
  rf.sizes =
      any_size || std::all_of(rf.calls.begin(), rf.calls.end(), [](const JobCall& c) { return c.kind == "barrier"; });
  rf.peers = std::none_of(rf.calls.begin(), rf.calls.end(), [](const JobCall& c) { return c.p2p; });
  // Sequence numbers: the position of each collective on the default group.
  std::int64_t seq = 0;
  for (auto& call : rf.calls)
    if (!call.p2p) call.seq = seq++;
}

}  // namespace

Result<RankFile> read_profiler(std::string_view text, const std::string& file) {
  RankFile rf;
  Trace t;
  try {
    Cursor c(text);
    const bool bare = c.peek() == Cursor::Type::array;
    rf.format = bare ? JobFormat::profiler_legacy : JobFormat::profiler;
    if (bare) read_events(c, true, t.events);
    else read_trace_object(c, t, rf);
    c.finish();
  } catch (const ReadFailure& f) {
    return to_error(f, text, file);
  }

  // The clock: newer traces give their origin; microseconds since 1970 are epoch times too.
  double max_ts = 0;
  for (const auto& e : t.events) max_ts = std::max(max_ts, e.ts);
  if (t.has_base) rf.clock = "epoch";
  else rf.clock = max_ts > 1e14 ? "epoch" : "profiler start";

  if (std::any_of(t.events.begin(), t.events.end(), [](const Event& e) { return e.comms; })) {
    if (auto err = calls_from_comms(t, rf, file)) return *err;
    return rf;
  }
  legacy_calls(t.events, rf);
  return rf;
}

}  // namespace collscope::job
