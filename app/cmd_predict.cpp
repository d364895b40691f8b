// `collscope predict`: what the cost model says a collective (or a scenario) takes on
// this machine or on a topology, for one algorithm, auto's pick, or every algorithm.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "collscope/algorithms.h"
#include "collscope/backend.h"
#include "collscope/collective.h"
#include "collscope/machine.h"
#include "collscope/scenario.h"
#include "flags.h"
#include "sweep.h"

namespace collscope::app {

void add_predict_command(CLI::App& app, PredictFlags& f) {
  f.command =
      app.add_subcommand("predict", "predicted time, algbw and busbw of a collective or scenario on a topology");
  f.command->add_option("scenario", f.run.file, "scenario JSON file (or describe one collective with the flags)");
  f.command->add_option("--coll", f.run.coll, "collective (default allreduce)");
  f.command->add_option("--algo", f.run.algo, "algorithm, auto (default) or all");
  f.command->add_option("--ranks", f.run.ranks, "number of ranks (default 4)")
      ->check(whole_number<std::int32_t>(std::numeric_limits<std::int32_t>::min(), "",
                                         "1..262144 (1024 on this machine's cpu model)"));
  f.command->add_option("--count", f.run.count, "elements, with NCCL's meaning per collective (default 1024)")
      ->check(whole_number<std::int64_t>());
  f.command->add_option("-b,--minbytes", f.min_bytes, "a sweep of sizes as bench's: the smallest (e.g. 8, 1K, 32M)");
  f.command->add_option("-e,--maxbytes", f.max_bytes, "the largest size of the sweep (default: -b's)");
  f.command->add_option("-f,--stepfactor", f.factor, "multiply the size by this each step (default 2)");
  f.command->add_option("--dtype", f.run.dtype, "dtype (default float32)");
  f.command->add_option("--op", f.run.op, "reduction (default sum)");
  f.command->add_option("--root", f.run.root, "root rank (default 0)")->check(whole_number<std::int32_t>());
  f.command->add_flag("--in-place", f.run.in_place, "in place");
  f.command->add_option("--topology", f.run.topology,
                        "this-machine (default), a preset (see `collscope list`) or a file");
  f.command->add_option("--nodes", f.run.nodes, "nodes the ranks fill (default: the topology's)")
      ->check(one_or_more<std::int64_t>());
  f.command
      ->add_option("--ranks-per-node", f.run.ranks_per_node,
                   "ranks per node for the node-aware algorithms (default: from the topology)")
      ->check(one_or_more<std::int32_t>());
  f.command->add_option("--backend", f.run.backend, "price for this backend (default cpu)");
  f.command->add_option("--mode", f.run.mode, "fast (default) or observable");
  f.command->add_flag("--json", f.run.json, "print one JSON object per row");
}

namespace {

// Is the call of these flags priced on a topology (not this machine's cpu model)? There
// it is priced, never run, and its buffers' bytes are not bound by a run's limits.
bool on_topology(const RunFlags& f) {
  auto q = spec_from_flags(f);
  if (!q) return false;
  auto m = machine_for(f.topology, f.nodes, capabilities_of(f.backend), q->dtype, user_config_dir());
  return m && !m->cpu;
}

Result<Scenario> load_scenario_or_spec(const RunFlags& f, bool unbounded_bytes) {
  if (!f.file.empty()) return load_scenario(f.file);
  auto q = spec_from_flags(f);
  if (!q) return q.error();
  q->unbounded_bytes = unbounded_bytes;
  return scenario_from_spec(*q);
}

struct Row {
  std::string algorithm;
  Prediction p;
  double algbw = 0, busbw = 0;
  std::uint64_t transfers = 0;
  std::uint64_t steps = 0;          // steps_digest of the schedule priced (0: none, priced from a shape)
  std::string same_as;              // an earlier row whose schedule runs the very same steps
  const char* method = "schedule";  // "shape": each distinct step once; "flow": every transfer of a schedule
};

// One row as one line of JSON; `bytes` 0: a scenario, no algbw or busbw.
void print_row_json(const Row& r, std::uint64_t bytes, bool auto_pick, const char* method, const std::string& model,
                    const std::string& mode) {
  nlohmann::ordered_json j;
  j["algorithm"] = r.algorithm;
  if (!r.p.library_algorithm.empty()) j["library_algorithm"] = r.p.library_algorithm;
  j["predicted_us"] = r.p.us;
  if (bytes > 0) {
    j["algbw_gbps"] = r.algbw;
    j["busbw_gbps"] = r.busbw;
    j["bytes"] = bytes;
  }
  j["auto_pick"] = auto_pick;
  // On a topology: the most messages one rank handles in a step, and whether that makes
  // the price too low (the model has no cost per message).
  if (r.p.busiest_messages > 0) {
    j["busiest_messages"] = r.p.busiest_messages;
    j["priced_too_low"] = priced_too_low(r.p.busiest_messages);
  }
  if (!r.same_as.empty()) j["same_steps_as"] = r.same_as;
  j["method"] = method;
  j["model"] = model;
  j["mode"] = mode;
  nlohmann::ordered_json lv = nlohmann::ordered_json::object();
  for (const auto& l : r.p.levels) lv[l.level] = l.us;
  j["levels"] = lv;
  std::cout << j.dump() << "\n";
}

// The table of rows; row `marked` gets "<- auto".
void print_rows(const std::vector<Row>& rows, std::size_t marked) {
  std::printf("%-20s %14s %12s %12s  %s\n", "algorithm", "time (us)", "algbw (GB/s)", "busbw (GB/s)",
              "time by what bounds each step");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string levels;
    for (const auto& l : rows[i].p.levels) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s %.3g us", levels.empty() ? "" : ", ", l.level.c_str(), l.us);
      levels += buf;
    }
    // A library's own collective names the algorithm of the library it was priced as.
    const std::string name = rows[i].p.library_algorithm.empty()
                                 ? rows[i].algorithm
                                 : rows[i].algorithm + " (" + rows[i].p.library_algorithm + ")";
    const std::string same = rows[i].same_as.empty() ? "" : "  (the same steps as " + rows[i].same_as + ")";
    // A file's calls have no one message size: no bandwidths (as --json leaves them out).
    char algbw[32] = "-", busbw[32] = "-";
    if (rows[i].algbw > 0 || rows[i].busbw > 0) {
      std::snprintf(algbw, sizeof algbw, "%.3f", rows[i].algbw);
      std::snprintf(busbw, sizeof busbw, "%.3f", rows[i].busbw);
    }
    std::printf("%-20s %14.3f %12s %12s  %s%s%s\n", name.c_str(), rows[i].p.us, algbw, busbw, levels.c_str(),
                same.c_str(), i == marked ? "  <- auto" : "");
  }
  // The model has no cost per message: say where one rank handles many in a step.
  std::string many;
  for (const auto& r : rows)
    if (priced_too_low(r.p.busiest_messages))
      many += (many.empty() ? "" : "; ") + r.algorithm + ", where one rank sends or receives " +
              std::to_string(r.p.busiest_messages) + " messages in a step";
  if (!many.empty())
    std::printf("# priced too low (the model has no cost per message, docs/TOPOLOGY.md): %s\n", many.c_str());
}

// Observable mode on a topology: a device's steps are priced one way in either mode.
constexpr const char* kModesAlike =
    "# on a topology the two modes are priced alike: every step of a device ends in a synchronisation either way\n";

// Beyond the ranks a schedule can hold, a single collective on a topology is priced
// from its algorithms' shapes (algorithm_shape): every distinct step once.
constexpr std::int32_t kMaxShapeRanks = 262144;
// An algorithm without a shape (an irregular pattern: all-to-all's, say) is lowered
// anyway up to this many ranks, and every transfer of every step priced: a flow-level
// simulation (price_on_topology). Such a schedule is never run, only priced.
constexpr std::int32_t kMaxFlowRanks = 4096;

// The collective lowered with `algorithm` onto in/out buffers of its shape, and priced
// transfer by transfer on the topology.
Result<Prediction> predict_flow(const CollArgs& args, const std::string& algorithm, const Machine& m,
                                std::int32_t ranks_per_node) {
  const Placement p = m.placement(args.ranks);
  Schedule s;
  s.ranks = args.ranks;
  s.dtype = args.dtype;
  s.ranks_per_node = ranks_per_node > 0 ? ranks_per_node : p.nodes > 1 ? p.ranks_per_node : 0;
  std::vector<std::uint64_t> in(static_cast<std::size_t>(args.ranks)), out(in.size());
  for (std::int32_t r = 0; r < args.ranks; ++r) {
    const CollectiveShape sh = shape_of(args, r);
    in[static_cast<std::size_t>(r)] = sh.in_count;
    out[static_cast<std::size_t>(r)] = sh.out_count;
  }
  CollArgs a = args;
  a.in_buf = 0;
  if (a.in_place) {
    for (std::size_t r = 0; r < in.size(); ++r) in[r] = std::max(in[r], out[r]);
    s.buffers.push_back({"x", in, false});
    a.out_buf = 0;
  } else {
    s.buffers.push_back({"in", in, false});
    s.buffers.push_back({"out", out, false});
    a.out_buf = 1;
  }
  if (auto st = lower_call(s, a, algorithm, {}, 0, &m); !st) return st.error();
  return price_on_topology(s, m.topology, p);
}

// Notes on where the ranks sit: nodes the node-aware algorithms cannot split evenly, and
// more ranks than the topology's devices (they share them, and the price says so).
void print_placement_notes(const Machine& m, std::int32_t ranks, std::int64_t ranks_per_node,
                           std::optional<Collective> coll) {
  const Placement placed = m.placement(ranks);
  const std::int64_t per_node = ranks_per_node > 0           ? ranks_per_node
                                : !m.cpu && placed.nodes > 1 ? placed.ranks_per_node
                                                             : 0;
  // (A scenario file's calls may be of any collective; one call's may have no node-aware
  // algorithm at all.)
  const bool node_aware = !coll || std::any_of(all_algorithms().begin(), all_algorithms().end(),
                                               [&](const AlgorithmInfo& i) { return i.coll == *coll && i.node_aware; });
  if (node_aware && per_node > 0 && ranks % per_node != 0)
    std::printf(
        "# uneven nodes: %d ranks on nodes of %lld; the node-aware algorithms run as one ring (double_tree: "
        "one tree over every rank)\n",
        ranks, static_cast<long long>(per_node));
  const std::int64_t devices = placed.nodes * placed.devices_per_node;
  if (!m.cpu && ranks > devices) {
    const bool gpu = m.topology.device_kind == "gpu";
    std::printf("# %d ranks on %lld %s: up to %lld share each one (give --nodes %lld for one rank a %s)\n", ranks,
                static_cast<long long>(devices),
                gpu ? (devices == 1 ? "GPU" : "GPUs") : (devices == 1 ? "device" : "devices"),
                static_cast<long long>((ranks + devices - 1) / devices),
                static_cast<long long>((ranks + placed.devices_per_node - 1) / placed.devices_per_node),
                gpu ? "GPU" : "device");
  }
}

// Does `name` have a shape on some machine? An algorithm whose every step is its own
// (pairwise, a chain) has one where the machine repeats itself in small groups of ranks
// (ShapeRepeat) and none that prices quickly elsewhere; a few ranks always fit.
bool has_shape_somewhere(const CollArgs& a, const std::string& name) {
  CollArgs small = a;
  small.ranks = 16;
  small.root = 0;
  return algorithm_shape(small, name, 0).has_value();
}

int predict_by_shapes(const RunFlags& rf, bool all, bool header) {
  auto q = spec_from_flags(rf);
  if (!q) return report_error(q.error());
  if (rf.ranks > kMaxShapeRanks)
    return report_error(make_error("cli.usage",
                                   "--ranks " + std::to_string(rf.ranks) + " is beyond what predict prices",
                                   "give at most " + std::to_string(kMaxShapeRanks) + " ranks"));
  if (has_root(q->coll) && (rf.root < 0 || rf.root >= rf.ranks))
    return report_error(make_error(
        "scenario.out_of_range", "--root " + std::to_string(rf.root) + " is outside 0.." + std::to_string(rf.ranks - 1),
        "give a root rank of the world"));
  auto machine = machine_for(rf.topology, rf.nodes, capabilities_of(rf.backend), q->dtype, user_config_dir());
  if (!machine) return report_error(machine.error());
  if (auto st = check_ranks_per_node(rf, rf.ranks); !st) return report_error(st.error());
  if (auto st = check_nodes(rf.nodes, rf.ranks); !st) return report_error(st.error());
  if (machine->cpu)
    return report_error(
        make_error("cli.usage",
                   "this machine's cpu model prices schedules of at most " + std::to_string(kMaxRanks) +
                       " ranks, not " + std::to_string(rf.ranks),
                   "pass a topology of nodes, e.g. --topology dgx-h100 --nodes " + std::to_string((rf.ranks + 7) / 8)));
  CollArgs a;
  a.coll = q->coll;
  a.ranks = rf.ranks;
  a.count = q->count;
  a.dtype = q->dtype;
  a.op = q->op;
  a.root = rf.root;
  a.in_place = q->in_place;
  const bool pick_auto = all || rf.algo == "auto";
  std::vector<std::string> algos = pick_auto ? algorithm_names(a.coll) : std::vector<std::string>{rf.algo};
  std::vector<Row> rows;
  std::vector<std::string> unshaped;
  for (const auto& name : algos) {
    Row r;
    r.algorithm = name;
    r.method = "shape";
    auto p = predict_shape(a, name, *machine, rf.ranks_per_node);
    if (!p && find_native(name)) {
      // A library's own collective: priced as the library runs it, at any scale.
      p = price_native(a, name, machine->topology, machine->placement(a.ranks));
      r.method = "library model";
    }
    if (!p && a.ranks <= kMaxFlowRanks && name != kNativeAlgorithm && !find_native(name)) {
      auto flow = predict_flow(a, name, *machine, rf.ranks_per_node);
      if (!flow) return report_error(flow.error());
      p = std::move(*flow);
      r.method = "flow";
    }
    if (!p) {
      unshaped.push_back(name);
      continue;
    }
    r.p = std::move(*p);
    const double bytes = static_cast<double>(message_bytes(a.coll, a.ranks, a.count, a.dtype));
    if (r.p.us > 0) {
      r.algbw = bytes / (r.p.us * 1e3);
      r.busbw = r.algbw * bus_factor(a.coll, a.ranks);
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty() && !pick_auto && find_native(rf.algo))
    // A library's own collective that has no model on a topology: as at any scale.
    return report_error(make_error("predict.no_model", unpriced_native(rf.algo, "on a topology"),
                                   "price NCCL's own collective (--algo nccl) on a topology, or one of collscope's "
                                   "algorithms (--algo all)"));
  if (rows.empty()) {
    // Up to kMaxFlowRanks only a library's own collective goes unpriced (it has no
    // steps); beyond, every algorithm without a shape.
    const bool flows = a.ranks <= kMaxFlowRanks;
    std::string priced;
    for (const auto& name : algorithm_names(a.coll))
      if (!find_native(name) && (flows || algorithm_shape(CollArgs{a}, name, 0, shape_repeat(*machine, a.ranks))))
        priced += (priced.empty() ? "" : ", ") + name;
    const std::string what = pick_auto ? std::string("no algorithm of ") + std::string(name_of(a.coll)) + " can"
                                       : "algorithm \"" + rf.algo + "\" cannot";
    bool shaped_elsewhere = false;
    for (const auto& name : algos) shaped_elsewhere = shaped_elsewhere || has_shape_somewhere(a, name);
    const std::string why =
        flows
            ? " ranks predict prices the engine's algorithms from their steps, and a library's own collective has none"
            : " ranks predict prices algorithms from their shapes, and " +
                  (pick_auto ? std::string("none has one") : std::string("it has none")) +
                  (shaped_elsewhere ? " that prices in seconds on this topology and nodes" : "");
    return report_error(make_error(
        "predict.no_shape",
        what + " be priced at " + std::to_string(a.ranks) + " ranks: beyond " +
            std::to_string(flows ? kMaxRanks : kMaxFlowRanks) + why,
        priced.empty() ? "give at most " + std::to_string(flows ? kMaxRanks : kMaxFlowRanks) + " ranks"
                       : (flows ? "algorithms it prices: " : "algorithms with a shape: ") + priced +
                             "; or give at most " + std::to_string(flows ? kMaxRanks : kMaxFlowRanks) + " ranks"));
  }
  // auto at this scale: the fastest of the priced algorithms (no run can be this large),
  // one priced too low only where every one is, as the tuner picks.
  std::size_t pick = 0;
  auto too_low = [&](std::size_t i) { return priced_too_low(rows[i].p.busiest_messages); };
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (too_low(pick) > too_low(i) || (too_low(pick) == too_low(i) && rows[i].p.us < rows[pick].p.us)) pick = i;
  // Was a faster price passed over as too low?
  bool passed_over = false;
  for (std::size_t i = 0; i < rows.size(); ++i)
    passed_over = passed_over || (too_low(i) && !too_low(pick) && rows[i].p.us < rows[pick].p.us);
  if (!all && rf.algo == "auto") rows = {rows[pick]}, pick = 0;
  const std::string label = machine->label();
  const std::uint64_t bytes = message_bytes(a.coll, a.ranks, a.count, a.dtype);
  if (rf.json) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      print_row_json(rows[i], bytes, pick_auto && i == pick, rows[i].method, label, rf.mode);
    }
    return 0;
  }
  if (header) std::printf("# predicted with the %s, %s mode\n", label.c_str(), rf.mode.c_str());
  const bool shaped =
      std::any_of(rows.begin(), rows.end(), [](const Row& r) { return std::string(r.method) == "shape"; });
  // A barrier moves no data: no count, no dtype.
  const std::string what = collective_descriptor(a.coll).moves_data
                               ? ", count " + std::to_string(a.count) + " " + std::string(name_of(a.dtype))
                               : "";
  std::printf("# %s, %d ranks%s: %s (no\n# schedule is run beyond %d ranks)\n", std::string(name_of(a.coll)).c_str(),
              a.ranks, what.c_str(),
              shaped                                  ? "priced from the algorithms' shapes, each distinct step once"
              : std::string(rows[0].method) == "flow" ? "priced transfer by transfer (flow level)"
                                                      : "priced as the library runs it",
              kMaxRanks);
  print_placement_notes(*machine, a.ranks, rf.ranks_per_node, a.coll);
  if (rf.mode != "fast") std::printf("%s", kModesAlike);
  std::string flowed;
  for (const auto& r : rows)
    if (std::string(r.method) == "flow") flowed += (flowed.empty() ? "" : ", ") + r.algorithm;
  if (!flowed.empty())
    std::printf("# without a shape here, priced transfer by transfer on the whole schedule (flow level): %s\n",
                flowed.c_str());
  for (const auto& r : rows)
    if (std::string(r.method) == "library model")
      std::printf("# %s: the library's own collective, priced as it runs it (no steps of collscope's)\n",
                  r.algorithm.c_str());
  print_rows(rows, all ? pick : rows.size());
  if (!unshaped.empty()) {
    // Those with a shape elsewhere have too many distinct steps on this machine.
    std::string none, here;
    for (const auto& n : unshaped) {
      std::string& list = has_shape_somewhere(a, n) ? here : none;
      list += (list.empty() ? "" : ", ") + n;
    }
    if (!none.empty()) std::printf("# not priced at this scale (no shape): %s\n", none.c_str());
    if (!here.empty())
      std::printf("# not priced at this scale (every step its own, too many to price on this topology and nodes): %s\n",
                  here.c_str());
  }
  if (!all && rf.algo == "auto")
    std::printf("auto picks %s (the fastest algorithm priced%s)\n", rows[0].algorithm.c_str(),
                passed_over ? " but for those priced too low, docs/TOPOLOGY.md" : "");
  return 0;
}

// One size: the collective of the flags (or the scenario file) priced; `header`: print
// the model's line first (once per sweep).
int predict_one(const RunFlags& rf, bool all, bool header) {
  const bool fast = rf.mode == "fast";
  if (rf.file.empty() && rf.ranks > kMaxRanks) return predict_by_shapes(rf, all, header);
  const bool unbounded = rf.file.empty() && on_topology(rf);
  auto scenario = load_scenario_or_spec(rf, unbounded);
  if (!scenario) return report_error(scenario.error());
  if (auto st = check_ranks_per_node(rf, scenario->ranks); !st) return report_error(st.error());
  if (auto st = check_nodes(rf.nodes, scenario->ranks); !st) return report_error(st.error());
  const BackendCapabilities caps = capabilities_of(rf.backend);
  auto machine = machine_for(rf.topology, rf.nodes, caps, scenario->dtype, user_config_dir());
  if (!machine) return report_error(machine.error());
  if (machine->cpu && scenario->ranks > kMaxRanks)
    return report_error(make_error(
        "cli.usage",
        "this machine's cpu model prices schedules of at most " + std::to_string(kMaxRanks) + " ranks, not " +
            std::to_string(scenario->ranks),
        "pass a topology of nodes, e.g. --topology dgx-h100 --nodes " + std::to_string((scenario->ranks + 7) / 8)));

  // The algorithms to price: the scenario as written, or every algorithm of the one call.
  std::vector<std::string> algos;
  const bool one_call = rf.file.empty();
  std::optional<QuickSpec> spec;
  if (one_call) {
    auto q = spec_from_flags(rf);
    if (!q) return report_error(q.error());
    spec = *q;
    spec->unbounded_bytes = unbounded;
    if (all || rf.algo == "auto") algos = algorithm_names(q->coll);
    else algos = {rf.algo};
  } else {
    if (all)
      return report_error(make_error("cli.usage", "--algo all needs one collective described by flags",
                                     "drop the scenario file, or --algo"));
    algos = {""};
  }

  // A device topology is priced on schedules lowered for devices: whole transfers, no
  // cache slices (the rows and auto's pick alike).
  BackendCapabilities lowering = caps;
  if (!machine->cpu) lowering.cache_slices = false;
  std::vector<Row> rows;
  for (const auto& a : algos) {
    Result<Scenario> sc = *scenario;
    if (one_call) {
      QuickSpec q = *spec;
      q.algorithm = a;
      sc = scenario_from_spec(q);
      if (!sc) return report_error(sc.error());
    }
    LowerOptions options = lower_options_for(lowering);
    options.machine = &*machine;
    options.ranks_per_node = rf.ranks_per_node;
    options.price_only = true;  // predict never runs what it lowers
    options.unbounded_bytes = unbounded;
    auto s = lower_scenario(*sc, options);
    if (!s) return report_error(s.error());
    Row r;
    r.algorithm = one_call ? a : "(as written)";
    r.p = predict(*s, *machine, fast);
    if (!r.p.unpriced.empty())
      return report_error(make_error("predict.no_model", r.p.unpriced,
                                     "price NCCL's own collective (--algo nccl) on a topology, or one of collscope's "
                                     "algorithms (--algo all)"));
    r.transfers = s->total_transfers();
    r.steps = steps_digest(*s);
    for (const Row& earlier : rows)
      if (earlier.steps == r.steps) {
        r.same_as = earlier.algorithm;
        break;
      }
    if (one_call && r.p.us > 0) {
      const double bytes = static_cast<double>(message_bytes(spec->coll, spec->ranks, spec->count, spec->dtype));
      r.algbw = bytes / (r.p.us * 1e3);
      r.busbw = r.algbw * bus_factor(spec->coll, spec->ranks);
    }
    rows.push_back(std::move(r));
  }
  // auto's pick on this model: what the tuner lowers `auto` to (algorithms.h); none
  // of the rows when one algorithm other than auto's was asked for.
  std::size_t pick = rows.size();
  if (one_call) {
    QuickSpec q = *spec;
    q.algorithm = "auto";
    auto sc = scenario_from_spec(q);
    if (!sc) return report_error(sc.error());
    LowerOptions options = lower_options_for(lowering);
    options.machine = &*machine;
    options.ranks_per_node = rf.ranks_per_node;
    options.price_only = true;  // predict never runs what it lowers
    options.unbounded_bytes = unbounded;
    auto s = lower_scenario(*sc, options);
    if (!s) return report_error(s.error());
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (!s->calls.empty() && rows[i].algorithm == s->calls[0].algorithm) pick = i;
  }
  if (one_call && !all && rf.algo == "auto") {
    if (pick == rows.size()) pick = 0;  // (the tuner's pick is among the algorithms priced)
    rows = {rows[pick]}, pick = 0;
  }

  const std::string label = machine->label();
  if (rf.json) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      print_row_json(rows[i], one_call ? message_bytes(spec->coll, spec->ranks, spec->count, spec->dtype) : 0,
                     one_call && i == pick, "schedule", label, rf.mode);
    }
    return 0;
  }
  if (header) std::printf("# predicted with the %s, %s mode\n", label.c_str(), rf.mode.c_str());
  if (one_call && !collective_descriptor(spec->coll).moves_data)  // a barrier: no count, no dtype
    std::printf("# %s, %d ranks\n", std::string(name_of(spec->coll)).c_str(), spec->ranks);
  else if (one_call)
    std::printf("# %s, %d ranks, count %llu %s\n", std::string(name_of(spec->coll)).c_str(), spec->ranks,
                static_cast<unsigned long long>(spec->count), std::string(name_of(spec->dtype)).c_str());
  print_placement_notes(*machine, scenario->ranks, rf.ranks_per_node,
                        one_call ? std::optional<Collective>(spec->coll) : std::nullopt);
  if (!fast && !machine->cpu) std::printf("%s", kModesAlike);
  else if (one_call && !fast && (all || rf.algo == "auto"))
    std::printf("# auto picks by fast mode's prices, as a run's auto does in either mode\n");
  print_rows(rows, one_call && all ? pick : rows.size());
  if (one_call && !all && rf.algo == "auto") std::printf("auto picks %s\n", rows[0].algorithm.c_str());
  return 0;
}

// The largest message predict prices, a sweep's -e included.
constexpr std::uint64_t kMaxPredictBytes = std::uint64_t{1} << 40;

}  // namespace

int cmd_predict(const PredictFlags& f) {
  RunFlags rf = f.run;
  if (!rf.file.empty() && !rf.coll.empty())
    return report_error(make_error("cli.usage", "give either a scenario file or --coll, not both",
                                   "collscope predict FILE, or collscope predict --coll allreduce ..."));
  rf.command = f.command;
  if (auto st = check_file_flags(rf); !st) return report_error(st.error());
  if (rf.coll.empty() && rf.file.empty()) rf.coll = "allreduce";
  const bool all = rf.algo == "all";
  if (all) rf.algo = "auto";
  if (rf.mode != "fast" && rf.mode != "observable")
    return report_error(
        make_error("cli.usage", "unknown mode \"" + rf.mode + "\" for --mode", "use fast or observable"));
  // Any backend this build knows may be priced, available here or not.
  if (auto st = known_backend(rf.backend); !st) return report_error(st.error());
  if (rf.file.empty() && rf.ranks < 1)
    return report_error(make_error("cli.usage", "--ranks " + std::to_string(rf.ranks) + " is below 1",
                                   "give 1 to " + std::to_string(kMaxRanks) + " ranks on this machine, up to " +
                                       std::to_string(kMaxShapeRanks) + " on a topology of nodes"));
  const auto* cmd = f.command;
  const bool count_given = cmd && cmd->count("--count") > 0;
  const bool sweep = !f.min_bytes.empty() || !f.max_bytes.empty();
  if (!sweep) {
    if (cmd && cmd->count("--stepfactor") > 0)
      return report_error(make_error("cli.usage", "-f sets the step of a sweep, and there is none",
                                     "give the sweep's sizes with -b and -e, e.g. -b 8 -e 64M -f 2"));
    return predict_one(rf, all, true);
  }
  if (!rf.file.empty())
    return report_error(make_error("cli.usage", "a sweep of sizes (-b, -e) needs one collective described by flags",
                                   "drop the scenario file, or -b and -e"));
  if (count_given)
    return report_error(make_error("cli.usage", "give either --count or a sweep of sizes (-b, -e), not both",
                                   "drop --count: -b and -e say the sizes in bytes"));
  auto q = spec_from_flags(rf);
  if (!q) return report_error(q.error());
  // Message bytes per unit of count, as bench sweeps (a barrier sweeps like one element).
  const std::uint64_t per_count =
      std::max<std::uint64_t>(size_of(q->dtype), message_bytes(q->coll, rf.ranks, 1, q->dtype));
  auto sizes =
      sweep_sizes(f.min_bytes.empty() ? std::string("8") : f.min_bytes, f.max_bytes.empty() ? f.min_bytes : f.max_bytes,
                  f.factor, per_count, kMaxPredictBytes, "the largest message predict prices");
  if (!sizes) return report_error(sizes.error());
  // A count no buffer holds, at any scale, refused before the first row and in the sweep's terms.
  if (sizes->back() / per_count > kMaxBufferBytes)
    return report_error(make_error("cli.usage",
                                   "-e " + (f.max_bytes.empty() ? f.min_bytes : f.max_bytes) + " is a count of " +
                                       std::to_string(sizes->back() / per_count) +
                                       ", larger than any buffer can hold (" + std::to_string(kMaxBufferBytes) +
                                       " elements)",
                                   "give -e " + std::to_string(kMaxBufferBytes * per_count) + " or less"));
  // The largest size first, quietly for a schedule's limits: an error comes before any row.
  if (rf.ranks <= kMaxRanks && !on_topology(rf)) {
    QuickSpec big = *q;
    big.count = sizes->back() / per_count;
    if (auto sc = scenario_from_spec(big); !sc) return report_error(sc.error());
  }
  for (std::size_t i = 0; i < sizes->size(); ++i) {
    RunFlags one = rf;
    one.count = static_cast<std::int64_t>((*sizes)[i] / per_count);
    if (i > 0 && !rf.json) std::printf("\n");
    if (const int rc = predict_one(one, all, i == 0); rc != 0) return rc;
  }
  return 0;
}

}  // namespace collscope::app
