// The Chrome trace export on hand-made schedules and synthetic timings: one process
// per rank, slices on both ends of every transfer, flows that pair up, slices that
// nest on every thread, PyTorch's argument names, and atomic file writing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collscope/trace.h"

using namespace collscope;
using nlohmann::json;

namespace {

Transfer move_of(std::int32_t src, std::uint64_t so, std::int32_t dst, std::uint64_t dof, std::uint64_t n,
                 Action a = Action::copy, std::int32_t buf = 0) {
  return Transfer{{src, buf, so}, {dst, buf, dof}, n, a, 1};
}

void add_step(Schedule& s, std::string phase, std::vector<Transfer> ts) {
  Step st;
  st.phase = std::move(phase);
  st.caption = "caption of step " + std::to_string(s.steps.size());
  st.call = static_cast<std::int32_t>(s.calls.size()) - 1;
  st.transfers = std::move(ts);
  s.steps.push_back(std::move(st));
  s.calls.back().num_steps = static_cast<std::int32_t>(s.steps.size()) - s.calls.back().first_step;
}

void add_call(Schedule& s, Collective c, std::uint64_t count, std::string algorithm) {
  Call call;
  call.args.coll = c;
  call.args.ranks = s.ranks;
  call.args.count = count;
  call.args.dtype = s.dtype;
  call.args.in_place = true;
  call.algorithm = std::move(algorithm);
  call.first_step = static_cast<std::int32_t>(s.steps.size());
  s.calls.push_back(call);
}

// Three ranks, buffer x of 3 float32 each:
//   call 0, an in-place ring allreduce (2 reduce-scatter steps, 2 all-gather steps,
//           then a local scale step, as an `avg` would finish);
//   call 1, a broadcast from rank 0 where both other ranks read rank 0 at once;
//   call 2, a barrier made of zero-element signals around the ring.
Schedule three_rank_program() {
  Schedule s;
  s.ranks = 3;
  s.dtype = DType::float32;
  s.buffers.push_back({"x", {3, 3, 3}, false});
  const std::int32_t n = 3;
  add_call(s, Collective::allreduce, 3, "ring");
  for (int k = 0; k < 2; ++k) {
    std::vector<Transfer> ts;
    for (std::int32_t r = 0; r < n; ++r) {
      const auto chunk = static_cast<std::uint64_t>((r - k - 1 + 2 * n) % n);
      ts.push_back(move_of((r + n - 1) % n, chunk, r, chunk, 1, Action::reduce));
    }
    add_step(s, "reduce-scatter", std::move(ts));
  }
  for (int k = 0; k < 2; ++k) {
    std::vector<Transfer> ts;
    for (std::int32_t r = 0; r < n; ++r) {
      const auto chunk = static_cast<std::uint64_t>((r - k + 2 * n) % n);
      ts.push_back(move_of((r + n - 1) % n, chunk, r, chunk, 1));
    }
    add_step(s, "all-gather", std::move(ts));
  }
  {
    std::vector<Transfer> ts;
    for (std::int32_t r = 0; r < n; ++r) {
      Transfer t = move_of(r, 0, r, 0, 3, Action::scale);
      t.divisor = 3;
      ts.push_back(t);
    }
    add_step(s, "average", std::move(ts));
  }
  add_call(s, Collective::broadcast, 3, "direct");
  add_step(s, "fan out", {move_of(0, 0, 1, 0, 3), move_of(0, 0, 2, 0, 3)});
  add_call(s, Collective::barrier, 0, "ring signals");
  add_step(s, "signal", {move_of(0, 0, 1, 0, 0), move_of(1, 0, 2, 0, 0), move_of(2, 0, 0, 0, 0)});
  return s;
}

// Fast-mode timings: each rank's transfers of a step start a little after the last
// one it did, with ranks drifting apart (no barrier), and the two readers of the
// broadcast overlapping on the root.
RunRecord fast_record(const Schedule& s) {
  RunRecord r;
  r.backend = "cpu";
  r.mode = RunMode::fast;
  for (std::int32_t k = 0; k < s.ranks; ++k) r.device_labels.push_back("cpu");
  std::vector<double> clock(static_cast<std::size_t>(s.ranks), 0.0);
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const auto& ts = s.steps[k].transfers;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const std::int32_t rank = ts[i].dst.rank;
      double& c = clock[static_cast<std::size_t>(rank)];
      const double t0 = c + 0.25 + 0.5 * rank;
      const double t1 = t0 + 1.0 + 0.125 * static_cast<double>(ts[i].count);
      r.transfers.push_back({static_cast<std::int32_t>(k), static_cast<std::int32_t>(i), rank, t0, t1});
      c = t1;
    }
  }
  r.time_us = *std::max_element(clock.begin(), clock.end());
  return r;
}

struct XSlice {
  std::int64_t t0 = 0, t1 = 0;
  const json* ev = nullptr;
};

std::int64_t ns(const json& v) { return std::llround(v.get<double>() * 1000.0); }

// Slices of one thread must be disjoint or properly nested; returns "" or what is wrong.
std::string nesting_problem(std::vector<XSlice> v) {
  std::sort(v.begin(), v.end(),
            [](const XSlice& a, const XSlice& b) { return a.t0 != b.t0 ? a.t0 < b.t0 : a.t1 > b.t1; });
  std::vector<XSlice> open;
  for (const XSlice& x : v) {
    while (!open.empty() && open.back().t1 <= x.t0) open.pop_back();
    if (!open.empty() && x.t1 > open.back().t1)
      return "\"" + x.ev->at("name").get<std::string>() + "\" overlaps \"" +
             open.back().ev->at("name").get<std::string>() + "\" without nesting";
    open.push_back(x);
  }
  return {};
}

using ThreadKey = std::pair<std::int64_t, std::int64_t>;  // (pid, tid)

struct Parsed {
  json doc;
  std::map<ThreadKey, std::string> thread_names;
  std::map<ThreadKey, std::vector<XSlice>> slices;
  std::vector<const json*> flows_s, flows_f, instants;

  explicit Parsed(const std::string& text) : doc(json::parse(text)) {
    for (const json& ev : doc.at("traceEvents")) {
      const std::string ph = ev.at("ph");
      const ThreadKey key{ev.at("pid").get<std::int64_t>(), ev.at("tid").get<std::int64_t>()};
      if (ph == "M" && ev.at("name") == "thread_name") thread_names[key] = ev.at("args").at("name");
      if (ph == "X") slices[key].push_back({ns(ev.at("ts")), ns(ev.at("ts")) + ns(ev.at("dur")), &ev});
      if (ph == "s") flows_s.push_back(&ev);
      if (ph == "f") flows_f.push_back(&ev);
      if (ph == "i") instants.push_back(&ev);
    }
  }

  // The X events on threads whose name starts with `channel`.
  std::vector<const json*> on_channel(const std::string& channel) const {
    std::vector<const json*> out;
    for (const auto& [key, v] : slices) {
      const auto it = thread_names.find(key);
      if (it == thread_names.end() || it->second.rfind(channel, 0) != 0) continue;
      for (const XSlice& x : v) out.push_back(x.ev);
    }
    return out;
  }

  // Is the flow event inside an X slice of its own thread with that channel name?
  bool inside_slice(const json& fl, const std::string& channel) const {
    const ThreadKey key{fl.at("pid").get<std::int64_t>(), fl.at("tid").get<std::int64_t>()};
    const auto name = thread_names.find(key);
    if (name == thread_names.end() || name->second.rfind(channel, 0) != 0) return false;
    const auto it = slices.find(key);
    if (it == slices.end()) return false;
    const std::int64_t t = ns(fl.at("ts"));
    return std::any_of(it->second.begin(), it->second.end(), [&](const XSlice& x) { return x.t0 <= t && t <= x.t1; });
  }
};

void check_all_threads_nest(const Parsed& p) {
  for (const auto& [key, v] : p.slices) {
    const std::string problem = nesting_problem(v);
    CHECK_MESSAGE(problem.empty(), "pid " << key.first << " tid " << key.second << ": " << problem);
  }
}

std::filesystem::path fresh_dir(const std::string& tag) {
  std::random_device rd;
  auto dir = std::filesystem::temp_directory_path() / ("collscope-trace-" + tag + "-" + std::to_string(rd()));
  std::filesystem::create_directories(dir);
  return dir;
}

std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("trace: processes, thread names and distributedInfo") {
  const Schedule s = three_rank_program();
  RunRecord r = fast_record(s);
  r.device_labels = {"GPU 0", "GPU 1", "GPU 0"};
  r.backend = "cuda";
  const Parsed p(trace_json(s, r));

  REQUIRE(p.doc.contains("distributedInfo"));
  CHECK(p.doc["distributedInfo"]["world_size"] == 3);
  CHECK(p.doc["distributedInfo"]["rank"] == 0);
  CHECK(p.doc["distributedInfo"]["backend"] == "cuda");
  CHECK(p.doc["collscope"]["steps"] == s.steps.size());

  std::map<std::int64_t, std::vector<std::string>> names;
  std::map<std::int64_t, std::vector<std::int64_t>> sort_index;
  for (const json& ev : p.doc["traceEvents"]) {
    if (ev["ph"] != "M") continue;
    if (ev["name"] == "process_name") names[ev["pid"]].push_back(ev["args"]["name"]);
    if (ev["name"] == "process_sort_index") sort_index[ev["pid"]].push_back(ev["args"]["sort_index"]);
  }
  REQUIRE(names.size() == 3);
  CHECK(names[0] == std::vector<std::string>{"rank 0 · GPU 0"});
  CHECK(names[1] == std::vector<std::string>{"rank 1 · GPU 1"});
  CHECK(names[2] == std::vector<std::string>{"rank 2 · GPU 0"});
  for (std::int64_t rank = 0; rank < 3; ++rank) CHECK(sort_index[rank] == std::vector<std::int64_t>{rank});

  // The first lane of every channel has the documented tid (1 to 4: no thread 0).
  for (std::int64_t rank = 0; rank < 3; ++rank) {
    CHECK(p.thread_names.at({rank, 1}) == "collectives");
    CHECK(p.thread_names.at({rank, 2}) == "steps");
    CHECK(p.thread_names.at({rank, 3}) == "recv");
    CHECK(p.thread_names.at({rank, 4}) == "send");
  }
  for (const auto& [key, slices] : p.slices) CHECK(key.second != 0);
}

TEST_CASE("trace: every transfer on both ends, flows pair up, threads nest") {
  const Schedule s = three_rank_program();
  const RunRecord r = fast_record(s);
  const Parsed p(trace_json(s, r));

  std::size_t all = 0, remote = 0;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> want_recv, want_send;  // (step, transfer, pid)
  for (std::size_t k = 0; k < s.steps.size(); ++k)
    for (std::size_t i = 0; i < s.steps[k].transfers.size(); ++i) {
      const Transfer& t = s.steps[k].transfers[i];
      ++all;
      want_recv.insert({static_cast<std::int64_t>(k), static_cast<std::int64_t>(i), t.dst.rank});
      if (t.src.rank != t.dst.rank) {
        ++remote;
        want_send.insert({static_cast<std::int64_t>(k), static_cast<std::int64_t>(i), t.src.rank});
      }
    }

  const auto recv = p.on_channel("recv");
  const auto send = p.on_channel("send");
  CHECK(recv.size() == all);
  CHECK(send.size() == remote);
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> got_recv, got_send;
  for (const json* ev : recv) {
    const json& a = (*ev)["args"];
    got_recv.insert(
        {a["step"].get<std::int64_t>(), a["transfer"].get<std::int64_t>(), (*ev)["pid"].get<std::int64_t>()});
    for (const char* key : {"bytes", "step", "phase", "peer", "action", "count"}) CHECK(a.contains(key));
    CHECK((*ev)["dur"].get<double>() >= 0);
  }
  for (const json* ev : send)
    got_send.insert({(*ev)["args"]["step"].get<std::int64_t>(), (*ev)["args"]["transfer"].get<std::int64_t>(),
                     (*ev)["pid"].get<std::int64_t>()});
  CHECK(got_recv == want_recv);
  CHECK(got_send == want_send);

  // Args of one reduce of the ring: rank 1 adds chunk 0 of rank 0 in step 0.
  for (const json* ev : recv) {
    const json& a = (*ev)["args"];
    if (a["step"] != 0 || (*ev)["pid"] != 1) continue;
    CHECK(a["peer"] == 0);
    CHECK(a["action"] == "reduce");
    CHECK(a["bytes"] == 4);
    CHECK(a["count"] == 1);
    CHECK(a["phase"] == "reduce-scatter");
  }
  // Signals are zero-byte transfers with flows; local scales appear once.
  std::size_t signals = 0, scales = 0;
  for (const json* ev : recv) {
    if ((*ev)["args"]["phase"] == "signal") {
      ++signals;
      CHECK((*ev)["args"]["bytes"] == 0);
    }
    if ((*ev)["args"]["action"] == "scale") ++scales;
  }
  CHECK(signals == 3);
  CHECK(scales == 3);
  for (const json* ev : send) CHECK((*ev)["args"]["action"] != "scale");

  // Flows: one per remote transfer, each start matched by one end with the same id,
  // starts inside send slices and ends inside recv slices.
  CHECK(p.flows_s.size() == remote);
  CHECK(p.flows_f.size() == remote);
  std::map<std::int64_t, const json*> starts;
  for (const json* fl : p.flows_s) {
    CHECK(starts.emplace((*fl)["id"].get<std::int64_t>(), fl).second);
    CHECK(p.inside_slice(*fl, "send"));
  }
  for (const json* fl : p.flows_f) {
    const auto it = starts.find((*fl)["id"].get<std::int64_t>());
    REQUIRE(it != starts.end());
    CHECK((*fl)["cat"] == (*it->second)["cat"]);
    CHECK((*fl)["name"] == (*it->second)["name"]);
    CHECK((*fl)["bp"] == "e");
    CHECK(p.inside_slice(*fl, "recv"));
    CHECK((*fl)["pid"] != (*it->second)["pid"]);
    starts.erase(it);
  }
  CHECK(starts.empty());

  // The broadcast's two readers overlap on rank 0: its sends take two lanes.
  CHECK(p.thread_names.at({0, 4 + 5}) == "send (2)");  // 5 channels per lane
  check_all_threads_nest(p);
}

TEST_CASE("trace: a reduce-copy names what it adds on the receiving rank") {
  Schedule s;
  s.ranks = 2;
  s.dtype = DType::float32;
  s.buffers.push_back({"in", {4, 4}, false});
  s.buffers.push_back({"out", {4, 4}, false});
  add_call(s, Collective::allreduce, 4, "ring");
  Transfer t{{0, 0, 2}, {1, 1, 2}, 2, Action::reduce_copy, 1};
  t.aux = {1, 0, 2};
  add_step(s, "reduce-scatter", {t});
  const Parsed p(trace_json(s, fast_record(s)));
  const auto recv = p.on_channel("recv"), send = p.on_channel("send");
  REQUIRE(recv.size() == 1);
  REQUIRE(send.size() == 1);
  const json& ev = *recv[0];
  CHECK(ev["pid"] == 1);
  CHECK(ev["name"] == "reduce-copy ← rank 0");
  CHECK(ev["args"]["action"] == "reduce_copy");
  CHECK(ev["args"]["src"] == "rank 0 in[2..4)");
  CHECK(ev["args"]["aux"] == "rank 1 in[2..4)");
  CHECK(ev["args"]["dst"] == "rank 1 out[2..4)");
  CHECK(ev["args"]["bytes"] == 8);
  CHECK((*send[0])["pid"] == 0);
  CHECK((*send[0])["name"] == "send → rank 1");
  CHECK(p.flows_s.size() == 1);
}

TEST_CASE("trace: collective slices carry PyTorch's argument names") {
  const Schedule s = three_rank_program();
  const RunRecord r = fast_record(s);
  const Parsed p(trace_json(s, r));

  const auto calls = p.on_channel("collectives");
  CHECK(calls.size() == 3 * s.calls.size());
  std::map<std::string, int> seen;
  for (const json* ev : calls) {
    const json& a = (*ev)["args"];
    for (const char* key : {"Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype", "algorithm"})
      REQUIRE(a.contains(key));
    CHECK(a["Group size"] == 3);
    CHECK(a["dtype"] == "float32");
    ++seen[a["Collective name"]];
    if (a["Collective name"] == "allreduce") {
      CHECK(a["In msg nelems"] == 3);
      CHECK(a["Out msg nelems"] == 3);
      CHECK(a["algorithm"] == "ring");
    }
  }
  CHECK(seen == std::map<std::string, int>{{"allreduce", 3}, {"barrier", 3}, {"broadcast", 3}});

  // A call's slice covers the rank's steps of that call.
  for (const json* ev : calls) {
    if ((*ev)["args"]["Collective name"] != "allreduce") continue;
    const std::int64_t pid = (*ev)["pid"];
    const std::int64_t t0 = ns((*ev)["ts"]), t1 = t0 + ns((*ev)["dur"]);
    for (const json* st : p.on_channel("steps")) {
      if ((*st)["pid"] != pid || (*st)["args"]["call"] != 0) continue;
      CHECK(ns((*st)["ts"]) >= t0);
      CHECK(ns((*st)["ts"]) + ns((*st)["dur"]) <= t1);
    }
  }

  // Steps: a slice per rank and step named after the phase, and a marker per step.
  const auto steps = p.on_channel("steps");
  CHECK(steps.size() == 3 * s.steps.size());  // every rank takes part in every step here
  for (const json* ev : steps) {
    const std::size_t k = (*ev)["args"]["step"];
    CHECK((*ev)["name"] == "step " + std::to_string(k) + ": " + s.steps[k].phase);
    CHECK((*ev)["args"]["caption"] == s.steps[k].caption);
  }
  CHECK(p.instants.size() == s.steps.size());
  for (const json* ev : p.instants) CHECK((*ev)["name"].get<std::string>().rfind("step ", 0) == 0);
}

TEST_CASE("trace: in fast mode a rank's step spans the transfers it executed") {
  const Schedule s = three_rank_program();
  const RunRecord r = fast_record(s);
  const Parsed p(trace_json(s, r));
  // Expected hull per (step, rank): its own timings, or for a rank that only served
  // as a source (the broadcast root), the timings of the ranks that read from it.
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<std::int64_t, std::int64_t>> own, read_from;
  auto widen = [](auto& m, std::int64_t step, std::int64_t rank, const TransferTiming& t) {
    const std::int64_t t0 = std::llround(t.t0_us * 1000), t1 = std::llround(t.t1_us * 1000);
    auto [it, fresh] = m.try_emplace({step, rank}, t0, t1);
    if (!fresh) it->second = {std::min(it->second.first, t0), std::max(it->second.second, t1)};
  };
  for (const TransferTiming& t : r.transfers) {
    widen(own, t.step, t.rank, t);
    const Transfer& tr = s.steps[static_cast<std::size_t>(t.step)].transfers[static_cast<std::size_t>(t.transfer)];
    if (tr.src.rank != t.rank) widen(read_from, t.step, tr.src.rank, t);
  }
  std::size_t passive_only = 0;
  for (const json* ev : p.on_channel("steps")) {
    const std::pair<std::int64_t, std::int64_t> key{(*ev)["args"]["step"].get<std::int64_t>(),
                                                    (*ev)["pid"].get<std::int64_t>()};
    const auto span = std::make_pair(ns((*ev)["ts"]), ns((*ev)["ts"]) + ns((*ev)["dur"]));
    if (own.count(key)) {
      CHECK(span == own.at(key));
    } else {
      ++passive_only;
      REQUIRE(read_from.count(key));
      CHECK(span == read_from.at(key));
    }
  }
  CHECK(passive_only == 1);  // rank 0 in the broadcast
}

TEST_CASE("trace: observable mode uses the measured step times") {
  const Schedule s = three_rank_program();
  RunRecord r = fast_record(s);
  r.mode = RunMode::observable;
  // Measured steps: 10 us apart, each 9 us long; transfers inside them.
  for (auto& t : r.transfers) {
    t.t0_us = 10.0 * t.step + 1.0 + 0.5 * t.rank;
    t.t1_us = t.t0_us + 2.0;
  }
  for (std::size_t k = 0; k < s.steps.size(); ++k)
    r.steps.push_back(
        {static_cast<std::int32_t>(k), 10.0 * static_cast<double>(k), 10.0 * static_cast<double>(k) + 9.0});
  const Parsed p(trace_json(s, r));
  const auto steps = p.on_channel("steps");
  CHECK(steps.size() == 3 * s.steps.size());
  for (const json* ev : steps) {
    const std::int64_t k = (*ev)["args"]["step"];
    CHECK(ns((*ev)["ts"]) == k * 10000);
    CHECK(ns((*ev)["dur"]) == 9000);
  }
  for (const json* ev : p.instants) {
    const std::string name = (*ev)["name"];
    CHECK(ns((*ev)["ts"]) == std::stoll(name.substr(5)) * 10000);
  }
  check_all_threads_nest(p);
}

TEST_CASE("trace: a run without timings still gives a valid trace") {
  const Schedule s = three_rank_program();
  RunRecord r;
  r.backend = "cpu";
  SUBCASE("no transfers, no steps") {
    const Parsed p(trace_json(s, r));
    CHECK(p.slices.empty());
    CHECK(p.flows_s.empty());
    int processes = 0;
    for (const json& ev : p.doc["traceEvents"])
      if (ev["ph"] == "M" && ev["name"] == "process_name") {
        ++processes;
        CHECK(ev["args"]["name"] == "rank " + std::to_string(ev["pid"].get<int>()));  // no label known
      }
    CHECK(processes == 3);
  }
  SUBCASE("step times only") {
    r.mode = RunMode::observable;
    for (std::size_t k = 0; k < s.steps.size(); ++k)
      r.steps.push_back(
          {static_cast<std::int32_t>(k), 5.0 * static_cast<double>(k), 5.0 * static_cast<double>(k) + 4.0});
    const Parsed p(trace_json(s, r));
    CHECK(p.on_channel("recv").empty());
    CHECK(p.on_channel("steps").size() == 3 * s.steps.size());
    CHECK(p.on_channel("collectives").size() == 3 * s.calls.size());
    check_all_threads_nest(p);
  }
  SUBCASE("timings that name no transfer are skipped, tiny negative durations clamp to 0") {
    r.transfers.push_back({99, 0, 0, 1.0, 2.0});
    r.transfers.push_back({0, 99, 0, 1.0, 2.0});
    r.transfers.push_back({0, 0, 1, 5.0, 4.999});
    const Parsed p(trace_json(s, r));
    const auto recv = p.on_channel("recv");
    REQUIRE(recv.size() == 1);
    CHECK((*recv[0])["dur"].get<double>() == 0.0);
    CHECK(p.flows_s.size() == 1);
  }
}

namespace {

// `ranks` ranks around a ring, `steps` steps of one transfer per rank (reduce first,
// then copy), `count` elements each.
Schedule ring_program(std::int32_t ranks, int steps, std::uint64_t count) {
  Schedule s;
  s.ranks = ranks;
  s.buffers.push_back({"x", std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), count * steps), false});
  add_call(s, Collective::allreduce, count * steps, "ring");
  for (int k = 0; k < steps; ++k) {
    std::vector<Transfer> ts;
    for (std::int32_t rank = 0; rank < ranks; ++rank)
      ts.push_back(move_of((rank + ranks - 1) % ranks, static_cast<std::uint64_t>(k) * count, rank,
                           static_cast<std::uint64_t>(k) * count, count,
                           k < steps / 2 ? Action::reduce : Action::copy));
    add_step(s, k < steps / 2 ? "reduce-scatter" : "all-gather", std::move(ts));
  }
  return s;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("trace: jittery timings on many ranks still nest and pair") {
  const Schedule s = ring_program(16, 40, 8);
  RunRecord r = fast_record(s);
  // Shake every transfer's times so that a rank's steps overlap and sends pile up.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(-2.0, 2.0);
  for (auto& t : r.transfers) {
    t.t0_us += jitter(rng);
    t.t1_us = t.t0_us + std::abs(jitter(rng));
  }
  const Parsed p(trace_json(s, r));
  CHECK(p.on_channel("recv").size() == 16 * 40);
  CHECK(p.on_channel("send").size() == 16 * 40);
  CHECK(p.flows_s.size() == 16 * 40);
  for (const json* fl : p.flows_s) CHECK(p.inside_slice(*fl, "send"));
  for (const json* fl : p.flows_f) CHECK(p.inside_slice(*fl, "recv"));
  check_all_threads_nest(p);
}

TEST_CASE("trace: a large run exports every slice and flow") {
  // 64 ranks, 1600 ring steps of one transfer per rank: 102400 transfers.
  const Schedule s = ring_program(64, 1600, 64);
  const RunRecord r = fast_record(s);
  REQUIRE(r.transfers.size() == 102400);
  const std::string text = trace_json(s, r);
  CHECK(json::accept(text));
  CHECK(occurrences(text, "\"ph\":\"s\"") == 102400);
  CHECK(occurrences(text, "\"ph\":\"f\"") == 102400);
  CHECK(occurrences(text, "\"cat\":\"transfer\",\"ph\":\"X\"") == 2 * 102400);
}

TEST_CASE("trace: write_trace writes a file that parses") {
  const Schedule s = three_rank_program();
  const RunRecord r = fast_record(s);
  const auto dir = fresh_dir("write");
  const auto path = dir / "run.json";
  const Status st = write_trace(path.string(), s, r);
  REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().format()));
  const std::string text = read_all(path);
  CHECK(text == trace_json(s, r));
  CHECK(json::parse(text).is_object());
  CHECK(names_in(dir) == std::vector<std::string>{"run.json"});
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace: write_trace into a missing folder fails with trace.io and leaves nothing") {
  const Schedule s = three_rank_program();
  const RunRecord r = fast_record(s);
  const auto dir = fresh_dir("missing");
  const auto path = dir / "no-such-folder" / "run.json";
  const Status st = write_trace(path.string(), s, r);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().id == "trace.io");
  CHECK(st.error().exit == ExitCode::bad_input);
  const std::string msg = st.error().format();
  CHECK(msg.find(path.string()) != std::string::npos);
  CHECK(msg.find("No such file or directory") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(names_in(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace: write_trace replaces an existing file and leaves no temporary file") {
  const Schedule s = three_rank_program();
  const RunRecord r = fast_record(s);
  const auto dir = fresh_dir("replace");
  const auto path = dir / "run.json";
  { std::ofstream(path) << "old contents"; }
  const Status st = write_trace(path.string(), s, r);
  REQUIRE(st.ok());
  CHECK(read_all(path) == trace_json(s, r));
  CHECK(names_in(dir) == std::vector<std::string>{"run.json"});

  // A path that is a folder cannot be replaced: the error says so and the
  // temporary file is removed again.
  std::filesystem::create_directories(dir / "taken" / "inside");
  const Status bad = write_trace((dir / "taken").string(), s, r);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().id == "trace.io");
  CHECK(names_in(dir) == std::vector<std::string>{"run.json", "taken"});
  CHECK(names_in(dir / "taken") == std::vector<std::string>{"inside"});
  std::filesystem::remove_all(dir);
}
