// Chrome trace event export (see collscope/trace.h for the layout).
//
// The format is a JSON object whose "traceEvents" array holds events such as
//   {"name":"recv ← rank 2","ph":"X","pid":0,"tid":3,"ts":12.5,"dur":3.25,"args":{...}}
// where ph "X" is a complete slice (start + duration, in microseconds), "M" names
// processes and threads, "s"/"f" draw a flow arrow between two slices and "i" is
// an instant marker. Viewers draw slices of one thread as a stack, so slices on one
// thread must be disjoint or properly nested; this file keeps them disjoint by
// spreading overlapping slices of a channel over several lanes (threads).
//
// How it is built:
//   1. every timed transfer becomes a recv slice on its receiver and, when it crosses
//      ranks, a send slice on its source joined to it by a flow;
//   2. every rank's step slices come from the measured step times (observable mode)
//      or from the span of that rank's transfers in the step (fast mode);
//   3. every rank's call slices span its step slices of that call;
//   4. slices are grouped per (rank, channel), sorted by time and given lanes;
//   5. events are serialized one by one into the output string, so that large runs
//      never hold a whole JSON tree in memory.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "collscope/collective.h"
#include "collscope/trace.h"
#include "trace/atomic_file.h"
#include "trace/event_text.h"

namespace collscope {
namespace {

using Json = nlohmann::ordered_json;
using trace::append_int;
using trace::append_uint;
using trace::Ns;
using trace::ObjectText;

constexpr int kFormatVersion = 1;

enum Channel : std::uint8_t { kCollectives = 0, kSteps = 1, kRecv = 2, kSend = 3, kCompute = 4 };
constexpr int kChannels = 5;
constexpr std::string_view kChannelNames[kChannels] = {"collectives", "steps", "recv", "send", "compute"};

Ns to_ns(double us) {
  // Beyond about 100 days the clock is broken anyway; the clamp keeps the arithmetic defined.
  constexpr double kLimitUs = 1e13;
  if (!std::isfinite(us)) return 0;
  return static_cast<Ns>(std::llround(std::clamp(us, -kLimitUs, kLimitUs) * 1000.0));
}

struct Slice {
  Ns t0 = 0, t1 = 0;
  std::int32_t rank = 0;
  Channel channel = kRecv;
  std::int32_t lane = 0;
  std::int32_t payload = 0;  // call index, step index, or index into RunRecord::transfers
  std::int64_t flow = -1;    // flow id for transfer slices that start or end an arrow
};

// The time a rank spent on something, before it becomes a slice.
struct Span {
  std::int32_t key = 0;  // step or call index
  std::int32_t rank = 0;
  Ns t0 = 0, t1 = 0;
  bool passive = false;  // the time another rank spent on a transfer from or to this one
};

// Sorts spans by (key, rank) and merges the ones with equal keys into their hull.
// Where a group has active spans, passive ones are left out: a rank's step is the
// time it worked itself, not the time others spent reading its memory, which in
// fast mode can be much later and would stretch its steps over each other.
std::vector<Span> merge_spans(std::vector<Span> v) {
  std::sort(v.begin(), v.end(), [](const Span& a, const Span& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.passive < b.passive;  // active ones first
  });
  std::vector<Span> out;
  for (const Span& sp : v) {
    if (!out.empty() && out.back().key == sp.key && out.back().rank == sp.rank) {
      if (sp.passive && !out.back().passive) continue;
      out.back().t0 = std::min(out.back().t0, sp.t0);
      out.back().t1 = std::max(out.back().t1, sp.t1);
    } else {
      out.push_back(sp);
    }
  }
  return out;
}

// Gives each slice of one (rank, channel) group the lowest lane that is free at its
// start. `v[first, last)` is sorted by start time, longer slices first on ties.
// Returns the number of lanes used.
std::int32_t assign_lanes(std::vector<Slice>& v, std::size_t first, std::size_t last) {
  using Busy = std::pair<Ns, std::int32_t>;  // (end time, lane)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  std::priority_queue<std::int32_t, std::vector<std::int32_t>, std::greater<>> free_lanes;
  std::int32_t lanes = 0;
  for (std::size_t i = first; i < last; ++i) {
    while (!busy.empty() && busy.top().first <= v[i].t0) {
      free_lanes.push(busy.top().second);
      busy.pop();
    }
    std::int32_t lane = 0;
    if (!free_lanes.empty()) {
      lane = free_lanes.top();
      free_lanes.pop();
    } else {
      lane = lanes++;
    }
    v[i].lane = lane;
    busy.emplace(v[i].t1, lane);
  }
  return lanes;
}

// Thread ids start at 1: Perfetto reserves thread 0 for the idle thread of a kernel
// trace, and some of its versions merge a JSON thread 0 into thread 1.
std::int32_t tid_of(Channel c, std::int32_t lane) { return 1 + static_cast<std::int32_t>(c) + kChannels * lane; }

std::string thread_name(Channel c, std::int32_t lane) {
  std::string name(kChannelNames[c]);
  if (lane > 0) name += " (" + std::to_string(lane + 1) + ")";
  return name;
}

std::string_view action_name(Action a) {
  switch (a) {
    case Action::copy:
      return "copy";
    case Action::reduce:
      return "reduce";
    case Action::reduce_copy:
      return "reduce_copy";
    case Action::scale:
      return "scale";
    case Action::compute:
      return "compute";
  }
  return "copy";
}

// User text (phases, captions, names) as a JSON string literal. nlohmann escapes it
// and replaces bytes that are not UTF-8, so a stray byte never aborts the export.
std::string quoted(const std::string& text) { return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace); }

class TraceBuilder {
 public:
  TraceBuilder(const Schedule& s, const RunRecord& r) : s_(s), r_(r) {
    const std::size_t n = s.steps.size();
    step_call_.assign(n, -1);
    // A call owns the steps [first_step, first_step + num_steps); Step::call is the fallback.
    for (std::size_t c = 0; c < s.calls.size(); ++c) {
      const auto& call = s.calls[c];
      for (std::int32_t k = std::max(0, call.first_step);
           k < call.first_step + call.num_steps && static_cast<std::size_t>(k) < n; ++k)
        step_call_[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(c);
    }
    for (std::size_t k = 0; k < n; ++k)
      if ((step_call_[k] < 0 || !s.steps[k].shared.empty()) && s.steps[k].call >= 0 &&
          static_cast<std::size_t>(s.steps[k].call) < s.calls.size())
        step_call_[k] = s.steps[k].call;  // a shared step: its first call (each rank's slice says its own)
    // User text is escaped once here rather than once per event.
    phase_.reserve(n);
    caption_.reserve(n);
    step_name_.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
      const Step& st = s.steps[k];
      phase_.push_back(quoted(st.phase));
      caption_.push_back(quoted(st.caption));
      step_name_.push_back(quoted("step " + std::to_string(k) + (st.phase.empty() ? "" : ": " + st.phase)));
    }
    for (const auto& b : s.buffers) {
      std::string q = quoted(b.name);
      buffer_name_.push_back(q.substr(1, q.size() - 2));  // without the quotes
    }
  }

  std::string build() {
    collect_transfers();
    collect_steps_and_calls();
    std::sort(slices_.begin(), slices_.end(), [](const Slice& a, const Slice& b) {
      if (a.rank != b.rank) return a.rank < b.rank;
      if (a.channel != b.channel) return a.channel < b.channel;
      if (a.t0 != b.t0) return a.t0 < b.t0;
      return a.t1 > b.t1;
    });

    out_.reserve(4096 + slices_.size() * 320);
    write_header();
    write_process_metadata();
    for (std::size_t i = 0; i < slices_.size();) {
      std::size_t j = i;
      while (j < slices_.size() && slices_[j].rank == slices_[i].rank && slices_[j].channel == slices_[i].channel) ++j;
      const std::int32_t lanes = assign_lanes(slices_, i, j);
      for (std::int32_t lane = 0; lane < lanes; ++lane)
        write_thread_metadata(slices_[i].rank, slices_[i].channel, lane);
      i = j;
    }
    write_step_markers();
    for (const Slice& sl : slices_) write_slice(sl);
    out_ += "\n]}\n";
    return std::move(out_);
  }

 private:
  // --- collecting ---------------------------------------------------------------

  const Transfer* transfer_of(const TransferTiming& t) const {
    if (t.step < 0 || static_cast<std::size_t>(t.step) >= s_.steps.size()) return nullptr;
    const auto& ts = s_.steps[static_cast<std::size_t>(t.step)].transfers;
    if (t.transfer < 0 || static_cast<std::size_t>(t.transfer) >= ts.size()) return nullptr;
    return &ts[static_cast<std::size_t>(t.transfer)];
  }

  void add_transfer_slice(std::size_t timing, std::int32_t rank, Channel c, std::int64_t flow) {
    const auto& t = r_.transfers[timing];
    Slice sl;
    sl.t0 = to_ns(t.t0_us);
    sl.t1 = std::max(sl.t0, to_ns(t.t1_us));  // a clock can step back a little: clamp
    sl.rank = rank;
    sl.channel = c;
    sl.payload = static_cast<std::int32_t>(timing);
    sl.flow = flow;
    slices_.push_back(sl);
    // Passive: this end did not time the transfer itself (a mirrored send slice).
    rank_step_time_.push_back({t.step, rank, sl.t0, sl.t1, t.rank != rank});
  }

  // Every timed transfer: a recv slice on the receiver and, across ranks, a send
  // slice on the source (the receiver reads the sender's memory, so both ends are
  // busy for the same time) with a flow from send to recv. A backend that times
  // both ends itself (a sender's timing has rank == src) gets its own send times.
  void collect_transfers() {
    std::vector<std::size_t> order;
    order.reserve(r_.transfers.size());
    for (std::size_t i = 0; i < r_.transfers.size(); ++i)
      if (transfer_of(r_.transfers[i]) != nullptr) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const auto& x = r_.transfers[a];
      const auto& y = r_.transfers[b];
      if (x.step != y.step) return x.step < y.step;
      if (x.transfer != y.transfer) return x.transfer < y.transfer;
      // Compared as nanoseconds: a NaN time would break the ordering sort relies on.
      const Ns tx = to_ns(x.t0_us), ty = to_ns(y.t0_us);
      if (tx != ty) return tx < ty;
      return a < b;
    });
    slices_.reserve(order.size() * 2 + s_.steps.size() * 4);
    std::vector<std::size_t> recv_end, send_end;
    for (std::size_t i = 0; i < order.size();) {
      const auto& head = r_.transfers[order[i]];
      std::size_t j = i;
      while (j < order.size() && r_.transfers[order[j]].step == head.step &&
             r_.transfers[order[j]].transfer == head.transfer)
        ++j;
      const Transfer& t = *transfer_of(head);
      if (t.action == Action::compute) {
        for (std::size_t k = i; k < j; ++k) add_transfer_slice(order[k], t.dst.rank, kCompute, -1);
      } else if (t.src.rank == t.dst.rank) {
        for (std::size_t k = i; k < j; ++k) add_transfer_slice(order[k], t.dst.rank, kRecv, -1);
      } else {
        recv_end.clear();
        send_end.clear();
        for (std::size_t k = i; k < j; ++k)
          (r_.transfers[order[k]].rank == t.src.rank ? send_end : recv_end).push_back(order[k]);
        if (send_end.empty()) send_end = recv_end;
        if (recv_end.empty()) recv_end = send_end;
        const std::size_t pairs = std::min(recv_end.size(), send_end.size());
        for (std::size_t k = 0; k < recv_end.size(); ++k)
          add_transfer_slice(recv_end[k], t.dst.rank, kRecv,
                             k < pairs ? next_flow_ + static_cast<std::int64_t>(k) : -1);
        for (std::size_t k = 0; k < send_end.size(); ++k)
          add_transfer_slice(send_end[k], t.src.rank, kSend,
                             k < pairs ? next_flow_ + static_cast<std::int64_t>(k) : -1);
        next_flow_ += static_cast<std::int64_t>(pairs);
      }
      i = j;
    }
  }

  // Step slices per rank, then call slices per rank spanning them.
  void collect_steps_and_calls() {
    const std::size_t n = s_.steps.size();
    // Measured step times (observable mode); a step measured twice keeps the hull.
    std::vector<char> measured(n, 0);
    std::vector<Span> step_time;
    for (const auto& st : r_.steps) {
      if (st.step < 0 || static_cast<std::size_t>(st.step) >= n) continue;
      const Ns t0 = to_ns(st.t0_us);
      step_time.push_back({st.step, 0, t0, std::max(t0, to_ns(st.t1_us))});
      measured[static_cast<std::size_t>(st.step)] = 1;
    }
    step_time = merge_spans(std::move(step_time));

    // A measured step covers every rank that takes part in it, in the schedule's words.
    std::vector<Span> spans;
    for (const Span& st : step_time) {
      for (const auto& t : s_.steps[static_cast<std::size_t>(st.key)].transfers) {
        spans.push_back({st.key, t.src.rank, st.t0, st.t1});
        if (t.dst.rank != t.src.rank) spans.push_back({st.key, t.dst.rank, st.t0, st.t1});
      }
    }
    // An unmeasured step (fast mode) spans the transfers the rank executed in that
    // step, or, where it only served as a source, the time it was read from.
    for (const Span& sp : rank_step_time_)
      if (!measured[static_cast<std::size_t>(sp.key)]) spans.push_back(sp);
    rank_step_time_.clear();
    rank_step_time_.shrink_to_fit();
    spans = merge_spans(std::move(spans));

    step_start_.assign(n, 0);
    step_timed_.assign(n, 0);
    std::vector<Span> call_spans;
    std::int32_t by_rank_step = -1;  // the shared step whose calls_by_rank is in by_rank
    std::vector<std::int32_t> by_rank;
    for (const Span& sp : spans) {
      add_slice(sp, kSteps);
      const auto k = static_cast<std::size_t>(sp.key);
      mark_step_start(k, sp.t0);
      if (step_call_[k] < 0) continue;
      // A step the parts of a split group share: each rank's slice belongs to its part's call.
      std::int32_t call = step_call_[k];
      if (!s_.steps[k].shared.empty()) {
        if (by_rank_step != sp.key) by_rank = calls_by_rank(s_, by_rank_step = sp.key);
        call = by_rank[static_cast<std::size_t>(sp.rank)];
      }
      call_spans.push_back({call, sp.rank, sp.t0, sp.t1});
    }
    // A measured step is marked at its measured start even where no rank took part.
    for (const Span& st : step_time) mark_step_start(static_cast<std::size_t>(st.key), st.t0);
    for (const Span& sp : merge_spans(std::move(call_spans))) add_slice(sp, kCollectives);
  }

  // A slice of channel `c` on the span's rank, carrying the span's key (step or call).
  void add_slice(const Span& sp, Channel c) {
    Slice sl;
    sl.t0 = sp.t0;
    sl.t1 = sp.t1;
    sl.rank = sp.rank;
    sl.channel = c;
    sl.payload = sp.key;
    slices_.push_back(sl);
  }

  // The step marker sits at the earliest start seen for the step.
  void mark_step_start(std::size_t k, Ns t0) {
    step_start_[k] = step_timed_[k] ? std::min(step_start_[k], t0) : t0;
    step_timed_[k] = 1;
  }

  // --- writing ------------------------------------------------------------------

  // Starts the next element of "traceEvents".
  ObjectText event() {
    if (!first_event_) out_ += ",\n";
    first_event_ = false;
    return ObjectText(out_);
  }

  std::string_view mode_name() const { return r_.mode == RunMode::observable ? "observable" : "fast"; }

  void write_header() {
    Json head;
    head["displayTimeUnit"] = "ns";
    // PyTorch's profiler writes this object at the top level; tools that read
    // distributed PyTorch traces look for it there.
    head["distributedInfo"] = {{"rank", 0}, {"world_size", s_.ranks}, {"backend", r_.backend}};
    Json info;
    info["format"] = "collscope-trace";
    info["format_version"] = kFormatVersion;
    info["steps"] = s_.steps.size();
    info["calls"] = s_.calls.size();
    info["ranks"] = s_.ranks;
    info["transfers"] = s_.total_transfers();
    info["timed_transfers"] = r_.transfers.size();
    info["mode"] = mode_name();
    info["dtype"] = name_of(s_.dtype);
    info["time_us"] = std::isfinite(r_.time_us) ? r_.time_us : 0.0;
    head["collscope"] = std::move(info);
    // The object is written open-ended so that the events can follow one by one.
    std::string text = head.dump(-1, ' ', false, Json::error_handler_t::replace);
    text.pop_back();  // the closing brace
    out_ += text;
    out_ += ",\"traceEvents\":[\n";
  }

  std::string device_label(std::int32_t rank) const {
    const auto i = static_cast<std::size_t>(rank);
    std::string label = "rank " + std::to_string(rank);
    if (rank >= 0 && i < r_.device_labels.size() && !r_.device_labels[i].empty()) label += " · " + r_.device_labels[i];
    return label;
  }

  void write_process_name(std::int32_t rank) {
    // Process metadata names a thread too; use one that exists anyway (see tid_of).
    const std::int32_t tid = tid_of(kCollectives, 0);
    event()
        .str("name", "process_name")
        .str("ph", "M")
        .num("pid", rank)
        .num("tid", tid)
        .open("args")
        .raw("name", quoted(device_label(rank)))
        .close()
        .end();
    event()
        .str("name", "process_sort_index")
        .str("ph", "M")
        .num("pid", rank)
        .num("tid", tid)
        .open("args")
        .num("sort_index", rank)
        .close()
        .end();
  }

  void write_process_metadata() {
    for (std::int32_t rank = 0; rank < s_.ranks; ++rank) write_process_name(rank);
  }

  void write_thread_metadata(std::int32_t rank, Channel c, std::int32_t lane) {
    // Ranks outside the world (a malformed schedule) still get a named process.
    if ((rank < 0 || rank >= s_.ranks) && named_extra_.insert(rank).second) write_process_name(rank);
    const std::int32_t tid = tid_of(c, lane);
    event()
        .str("name", "thread_name")
        .str("ph", "M")
        .num("pid", rank)
        .num("tid", tid)
        .open("args")
        .str("name", thread_name(c, lane))
        .close()
        .end();
    event()
        .str("name", "thread_sort_index")
        .str("ph", "M")
        .num("pid", rank)
        .num("tid", tid)
        .open("args")
        .num("sort_index", static_cast<std::int64_t>(c) * 1000000 + lane)
        .close()
        .end();
  }

  void write_step_markers() {
    for (std::size_t k = 0; k < s_.steps.size(); ++k) {
      if (!step_timed_[k]) continue;
      event()
          .str("name", "step " + std::to_string(k))
          .str("cat", "step")
          .str("ph", "i")
          .str("s", "g")  // global: a line across every rank
          .num("pid", 0)
          .num("tid", tid_of(kSteps, 0))
          .time("ts", step_start_[k])
          .open("args")
          .unum("step", k)
          .raw("phase", phase_[k])
          .close()
          .end();
    }
  }

  DType dtype_of_step(std::int32_t step) const {
    const std::int32_t c = step_call_[static_cast<std::size_t>(step)];
    return c >= 0 ? s_.calls[static_cast<std::size_t>(c)].args.dtype : s_.dtype;
  }

  void write_slice(const Slice& sl) {
    switch (sl.channel) {
      case kCollectives:
        write_call(sl);
        break;
      case kSteps:
        write_step(sl);
        break;
      case kCompute:
        write_compute(sl);
        break;
      case kRecv:
      case kSend:
        write_transfer(sl);
        break;
    }
    if (sl.flow < 0) return;
    // The arrow's ends sit in the middle of their slices, so each binds to exactly
    // that slice even when a neighbouring slice on the lane ends where this one starts.
    const bool start = sl.channel == kSend;
    ObjectText fl = event();
    fl.str("name", "transfer").str("cat", "transfer").str("ph", start ? "s" : "f");
    if (!start) fl.str("bp", "e");  // bind to the enclosing slice, not the next one
    fl.num("id", sl.flow)
        .num("pid", sl.rank)
        .num("tid", tid_of(sl.channel, sl.lane))
        .time("ts", sl.t0 + (sl.t1 - sl.t0) / 2)
        .end();
  }

  // The fields every complete slice has; `name` is JSON text (quoted).
  ObjectText slice_event(const Slice& sl, std::string_view name, std::string_view cat) {
    ObjectText ev = event();
    ev.raw("name", name)
        .str("cat", cat)
        .str("ph", "X")
        .num("pid", sl.rank)
        .num("tid", tid_of(sl.channel, sl.lane))
        .time("ts", sl.t0)
        .time("dur", sl.t1 - sl.t0);
    return ev;
  }

  // A compute span of a program: its label, on the rank's compute thread.
  void write_compute(const Slice& sl) {
    const TransferTiming& tm = r_.transfers[static_cast<std::size_t>(sl.payload)];
    const Transfer& t = *transfer_of(tm);
    const bool labelled = t.label >= 0 && static_cast<std::size_t>(t.label) < s_.labels.size();
    ObjectText ev =
        slice_event(sl, quoted(labelled ? s_.labels[static_cast<std::size_t>(t.label)] : "compute"), "compute");
    ev.open("args").num("step", tm.step).unum("duration_us", t.duration_us);
    if (t.count) append_place(ev.value("writes"), t.dst, t.count);
    ev.num("transfer", tm.transfer).close().end();
  }

  // A run of point-to-point ops (no collective arguments to report).
  void write_program_call(const Slice& sl, const Call& call) {
    ObjectText ev = slice_event(sl, quoted("point-to-point"), "program");
    ev.open("args").num("call", sl.payload).num("first_step", call.first_step).num("num_steps", call.num_steps);
    ev.close().end();
  }

  void write_call(const Slice& sl) {
    const Call& call = s_.calls[static_cast<std::size_t>(sl.payload)];
    if (call.kind == CallKind::program) return write_program_call(sl, call);
    const CollArgs& a = call.args;
    // The rank's place in the call's group (calls on a group map group ranks to world ranks).
    std::int32_t group_rank = sl.rank;
    if (!a.world_rank.empty()) {
      const auto it = std::find(a.world_rank.begin(), a.world_rank.end(), sl.rank);
      group_rank = it == a.world_rank.end() ? -1 : static_cast<std::int32_t>(it - a.world_rank.begin());
    }
    const CollectiveShape shape = group_rank >= 0 ? shape_of(a, group_rank) : CollectiveShape{};
    const std::string coll(name_of(a.coll));
    ObjectText ev =
        slice_event(sl, quoted(call.algorithm.empty() ? coll : coll + " (" + call.algorithm + ")"), "collective");
    ev.open("args");
    // The names PyTorch's profiler gives these arguments.
    ev.str("Collective name", coll)
        .unum("In msg nelems", shape.in_count)
        .unum("Out msg nelems", shape.out_count)
        .num("Group size", a.ranks)
        .str("dtype", name_of(a.dtype));
    if (!a.world_rank.empty()) {
      std::string ranks = "[";
      for (std::size_t i = 0; i < a.world_rank.size(); ++i) ranks += (i ? ", " : "") + std::to_string(a.world_rank[i]);
      ev.str("Process Group Ranks", ranks + "]");
    }
    ev.raw("algorithm", quoted(call.algorithm));
    if (call.auto_picked) ev.raw("auto", "true");
    ev.num("call", sl.payload).unum("count", a.count);
    if (has_root(a.coll)) ev.num("root", a.root);
    if (is_reducing(a.coll)) ev.str("op", name_of(a.op));
    ev.raw("in_place", a.in_place ? "true" : "false")
        .num("first_step", call.first_step)
        .num("num_steps", call.num_steps);
    if (!call.caption.empty()) ev.raw("caption", quoted(call.caption));
    ev.close().end();
  }

  void write_step(const Slice& sl) {
    const auto k = static_cast<std::size_t>(sl.payload);
    ObjectText ev = slice_event(sl, step_name_[k], "step");
    ev.open("args").unum("step", k).raw("phase", phase_[k]).raw("caption", caption_[k]);
    if (step_call_[k] >= 0) ev.num("call", step_call_[k]);
    ev.close().end();
  }

  // "rank 2 x[8..12)": elements 8 to 11 of buffer x on rank 2, as a JSON string.
  void append_place(std::string& out, const Loc& l, std::uint64_t count) const {
    out += "\"rank ";
    append_int(out, l.rank);
    out += ' ';
    if (l.buf >= 0 && static_cast<std::size_t>(l.buf) < buffer_name_.size()) {
      out += buffer_name_[static_cast<std::size_t>(l.buf)];
    } else {
      out += "buffer ";
      append_int(out, l.buf);
    }
    out += '[';
    append_uint(out, l.offset);
    out += "..";
    append_uint(out, l.offset + count);
    out += ")\"";
  }

  // "reduce ← rank 2", "send → rank 0", "local copy", "scale ÷4", as a JSON string.
  void transfer_name(std::string& name, const Transfer& t, Channel c) const {
    name = "\"";
    const std::int32_t peer = c == kSend ? t.dst.rank : t.src.rank;
    if (t.action == Action::scale) {
      name += "scale ÷";
      append_uint(name, t.divisor);
    } else if (t.src.rank == t.dst.rank) {
      name += "local ";
      name += action_name(t.action);
    } else {
      if (t.count == 0) name += c == kSend ? "signal → rank " : "signal ← rank ";
      else if (c == kSend) name += "send → rank ";
      else
        name += t.action == Action::reduce        ? "reduce ← rank "
                : t.action == Action::reduce_copy ? "reduce-copy ← rank "
                                                  : "recv ← rank ";
      append_int(name, peer);
    }
    name += '"';
  }

  void write_transfer(const Slice& sl) {
    const TransferTiming& tm = r_.transfers[static_cast<std::size_t>(sl.payload)];
    const Transfer& t = *transfer_of(tm);
    transfer_name(name_buf_, t, sl.channel);
    ObjectText ev = slice_event(sl, name_buf_, "transfer");
    ev.open("args")
        .unum("bytes", t.count * size_of(dtype_of_step(tm.step)))
        .num("step", tm.step)
        .raw("phase", phase_[static_cast<std::size_t>(tm.step)])
        .num("peer", sl.channel == kSend ? t.dst.rank : t.src.rank)
        .str("action", action_name(t.action))
        .unum("count", t.count);
    if (t.action == Action::scale) ev.num("divisor", t.divisor);
    append_place(ev.value("src"), t.src, t.count);
    append_place(ev.value("dst"), t.dst, t.count);
    if (t.action == Action::reduce_copy) append_place(ev.value("aux"), t.aux, t.count);
    ev.num("transfer", tm.transfer).close().end();
  }

  const Schedule& s_;
  const RunRecord& r_;
  std::vector<std::int32_t> step_call_;                   // step -> call, -1 = none
  std::vector<std::string> phase_, caption_, step_name_;  // per step, as JSON strings
  std::vector<std::string> buffer_name_;                  // per buffer, escaped, unquoted
  std::vector<Slice> slices_;
  std::vector<Span> rank_step_time_;  // (step, rank, span) of every transfer slice
  std::vector<Ns> step_start_;
  std::vector<char> step_timed_;
  std::int64_t next_flow_ = 0;
  std::string out_;
  std::string name_buf_;  // reused for transfer names
  bool first_event_ = true;
  std::set<std::int32_t> named_extra_;
};

}  // namespace

std::string trace_json(const Schedule& s, const RunRecord& r) { return TraceBuilder(s, r).build(); }

Status write_trace(const std::string& path, const Schedule& s, const RunRecord& r) {
  std::string text;
  try {
    text = trace_json(s, r);
  } catch (const std::exception& e) {
    return make_error("trace.io", "cannot write \"" + path + "\": " + e.what(), {}, {}, ExitCode::bad_input);
  }
  return write_file_atomically(path, text, "trace.io");
}

}  // namespace collscope
