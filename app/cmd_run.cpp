// `collscope run`: lower, verify, execute, check, report.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "cli.h"
#include "collscope/flight_record.h"
#include "collscope/machine.h"
#include "collscope/model.h"
#include "collscope/processes.h"
#include "collscope/trace.h"
#include "collscope/verify.h"
#include "gui/view/run_file.h"
#include "mpi_launch.h"
#include "outputs.h"
#include "program_report.h"

namespace collscope::app {

namespace {

Result<Scenario> load_for_run(const RunFlags& f) {
  if (!f.file.empty()) {
    if (!f.coll.empty())
      return make_error("cli.usage", "give either a scenario file or --coll, not both",
                        "collscope run FILE, or collscope run --coll allreduce --ranks 4 --count 1024");
    if (auto st = check_file_flags(f); !st) return st.error();
    return load_scenario(f.file);
  }
  if (f.coll.empty())
    return make_error("cli.usage", "nothing to run", "collscope run FILE, or collscope run --coll allreduce ...");
  auto q = spec_from_flags(f);
  if (!q) return q.error();
  return scenario_from_spec(*q);
}

// "allreduce", or "point-to-point" for a run of a program's messages.
std::string call_name(const Call& c) {
  return c.kind == CallKind::program ? "point-to-point" : std::string(name_of(c.args.coll));
}

std::string joined_calls(const Schedule& s, bool algorithms) {
  std::string out;
  for (const auto& c : s.calls) {
    const std::string name = algorithms ? c.algorithm : call_name(c);
    out += (out.empty() ? "" : "+") + name;
  }
  return out.empty() ? "none" : out;
}

std::uint64_t moved_bytes(const Schedule& s) {
  std::uint64_t n = 0;
  for (const auto& st : s.steps) n += step_bytes(s, st);
  return n;
}

void print_explain(const Schedule& s) {
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const auto& st = s.steps[k];
    const Call& c = s.calls[static_cast<std::size_t>(st.call)];
    // The parts of a split group's call start together: one heading names them all.
    if (static_cast<std::int32_t>(k) == c.first_step && !c.group.empty())
      std::cout << "  call " << c.program_index << ", " << parts_text(s, st) << ":\n";
    std::cout << "  step " << k << "  [" << st.phase << "]  " << st.caption << "  (" << st.transfers.size()
              << " transfers, " << human_bytes(static_cast<double>(step_bytes(s, st))) << ")\n";
  }
}

nlohmann::ordered_json calls_json(const Schedule& s) {
  auto arr = nlohmann::ordered_json::array();
  for (const auto& c : s.calls) {
    if (c.kind == CallKind::program) {
      arr.push_back({{"collective", "point-to-point"},
                     {"algorithm", c.algorithm},
                     {"first_step", c.first_step},
                     {"steps", c.num_steps}});
      continue;
    }
    nlohmann::ordered_json call = {{"collective", name_of(c.args.coll)},
                                   {"algorithm", c.algorithm},
                                   {"auto_picked", c.auto_picked},
                                   {"count", c.args.count},
                                   {"root", c.args.root},
                                   {"op", name_of(c.args.op)},
                                   {"in_place", c.args.in_place},
                                   {"first_step", c.first_step},
                                   {"steps", c.num_steps},
                                   {"caption", c.caption}};
    if (!c.group.empty()) {
      call["group"] = c.group;
      if (c.part >= 0) call["part"] = c.part;
      call["ranks"] = c.args.world_rank;
      // The other parts of a split group whose steps this call's steps are.
      if (c.num_steps > 0) {
        auto others = calls_of(s.steps[static_cast<std::size_t>(c.first_step)]);
        others.erase(std::remove(others.begin(), others.end(), static_cast<std::int32_t>(arr.size())), others.end());
        if (!others.empty()) call["shares_steps_with"] = others;
      }
    }
    arr.push_back(std::move(call));
  }
  return arr;
}

// With --json, an error that stops the run before it starts is also one JSON object on
// stdout, so that a script reading it learns why. In a job (`job`) every process says
// what stopped it and process 0 reports.
int run_error(const RunFlags& f, const Error& e, bool job = false) {
  if (f.json && (!job || processes::reporting())) {
    nlohmann::ordered_json j;
    j["verified"] = false;
    j["error"] = {{"id", e.id},
                  {"message", e.message},
                  {"hint", e.hint},
                  {"file", e.where.file},
                  {"line", e.where.line},
                  {"col", e.where.col},
                  {"pointer", e.where.pointer},
                  {"exit", static_cast<int>(e.exit)}};
    std::cout << j.dump(2) << "\n";
  }
  return job ? input_error_in_job(e) : report_error(e);
}

// --ops all|N: how many of a program's ops per rank the text report shows.
Result<std::size_t> ops_shown_for(const RunFlags& f) {
  if (f.ops == "all") return SIZE_MAX;
  if (f.ops.empty()) return f.explain ? SIZE_MAX : std::size_t{16};
  if (f.ops.size() > 9 || f.ops.find_first_not_of("0123456789") != std::string::npos)
    return make_error("cli.usage", "--ops \"" + f.ops + "\" is neither all nor a number",
                      "give --ops all, or how many ops to show per rank, e.g. --ops 40");
  return static_cast<std::size_t>(std::stoul(f.ops));
}

// The faults of the run: the scenario's, each checked where it was written, then the
// --fault flags. One check (check_fault) for both; the error keeps its source's id.
Result<std::vector<Fault>> faults_for(const RunFlags& f, const Scenario& scenario, const Schedule& s) {
  std::vector<Fault> out;
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    const Fault& fault = scenario.faults[i];
    const Location where = i < scenario.fault_where.size() ? scenario.fault_where[i] : Location{};
    if (auto st = check_fault(s, fault, {"scenario.out_of_range", "fault " + fault_text(fault), where}); !st)
      return st.error();
    out.push_back(fault);
  }
  for (const auto& text : f.faults) {
    auto fault = parse_fault(text);
    if (!fault) return fault.error();
    if (auto st = check_fault(s, *fault, {"cli.bad_fault", "--fault " + text, {}}); !st) return st.error();
    out.push_back(*fault);
  }
  return out;
}

// What a run gave, executed or not (a dry run only checks symbolically).
struct Verdicts {
  Status symbolic = ok_status();
  NumericReport numeric;
  RunRecord record;
  bool executed = false;
};

// Executes the schedule and writes the outputs asked for (run record, trace, flight
// record; in a job only the reporting process writes). Errors go through run_error.
std::optional<int> execute_and_write(const RunFlags& f, bool job, RunMode mode, const Scenario& scenario,
                                     const Schedule& s, Verdicts& v) {
  RunOptions o;
  o.backend = f.backend;
  o.mode = mode;
  o.snapshot_budget = f.run_record.empty() ? 0 : f.snapshot_budget;  // the command line shows no snapshots
  if (!(f.timeout_s >= 0) || f.timeout_s > 86400)
    return run_error(f, make_error("cli.usage", "--timeout " + std::to_string(f.timeout_s) + " is out of range",
                                   "give seconds between 0 (wait forever) and 86400, e.g. --timeout 0.5"));
  o.timeout_s = f.timeout_s;
  o.failure_record_path = failure_record_path(f);  // a completed run's is written below, after the trace
  auto faults = faults_for(f, scenario, s);
  if (!faults) return run_error(f, faults.error());
  o.faults = std::move(*faults);
  auto out = execute(s, scenario_init(scenario), o);
  if (!out) return run_error(f, out.error());
  const bool writes = !job || processes::reporting();
  if (!f.run_record.empty() && writes)  // the window's child run
    if (auto st = view::write_run_file(f.run_record, *out); !st) return run_error(f, st.error());
  v.symbolic = out->symbolic;
  v.numeric = out->numeric;
  v.record = std::move(out->record);
  v.executed = true;
  if (!f.trace.empty() && writes)
    if (auto st = write_trace(f.trace, s, v.record); !st) return run_error(f, st.error());
  if (!f.flight_record.empty() && !v.record.flight.ranks.empty() && writes)
    if (auto st = write_flight_record(f.flight_record, v.record.flight); !st) return run_error(f, st.error());
  return std::nullopt;
}

// What the report says besides the verdicts.
struct ReportContext {
  const Scenario& scenario;
  const Schedule& s;
  const Machine& machine;
  RunMode mode;
  double predicted_us;
  const std::vector<double>& predicted_step_us;  // the model's time of every step (observable mode's own)
  std::size_t ops_shown;
  const std::string& unpriced;  // why there is no prediction (Prediction::unpriced); empty when there is
};

// Observable mode, step by step: what each step took (from before the step starts on
// every rank to after the barrier that ends it) against what the model predicts for it.
nlohmann::ordered_json step_times_json(const ReportContext& c, const RunRecord& record) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const StepTiming& t : record.steps) {
    const auto k = static_cast<std::size_t>(t.step);
    out.push_back({{"step", t.step},
                   {"phase", k < c.s.steps.size() ? c.s.steps[k].phase : ""},
                   {"measured_us", t.t1_us - t.t0_us},
                   {"predicted_us", k < c.predicted_step_us.size() ? c.predicted_step_us[k] : 0.0}});
  }
  return out;
}

// The medians of the measured and the predicted step times of an observable run.
std::pair<double, double> median_step_times(const ReportContext& c, const RunRecord& record) {
  std::vector<double> measured, predicted;
  for (const StepTiming& t : record.steps) {
    measured.push_back(t.t1_us - t.t0_us);
    const auto k = static_cast<std::size_t>(t.step);
    if (k < c.predicted_step_us.size()) predicted.push_back(c.predicted_step_us[k]);
  }
  auto median = [](std::vector<double>& v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  return {median(measured), median(predicted)};
}

void print_json_report(const RunFlags& f, const ReportContext& c, const Verdicts& v, bool verified) {
  const Schedule& s = c.s;
  nlohmann::ordered_json j;
  j["verified"] = verified;
  j["covers"] = verdict_scope(s);  // what "verified" means here
  j["wrong"] = v.numeric.wrong;
  j["steps"] = s.steps.size();
  j["backend"] = f.backend;
  if (!v.record.backend_detail.empty()) j["backend_detail"] = v.record.backend_detail;
  j["ranks"] = s.ranks;
  j["collective"] = joined_calls(s, false);
  j["algorithm"] = joined_calls(s, true);
  // Nothing ran (--dry-run): no time, as the text's "time -" says.
  if (v.executed) j["time_us"] = v.record.time_us;
  else j["time_us"] = nullptr;
  if (c.unpriced.empty()) {
    j["predicted_us"] = c.predicted_us;
  } else {
    j["predicted_us"] = nullptr;
    j["unpriced"] = c.unpriced;
  }
  j["model"] = c.machine.label();
  j["executed"] = v.executed;
  j["mode"] = f.dry_run ? "dry-run" : f.mode;
  j["dtype"] = name_of(s.dtype);
  j["title"] = c.scenario.title;
  j["transfers"] = s.total_transfers();
  j["bytes_moved"] = moved_bytes(s);
  j["symbolic"] = {{"ok", v.symbolic.ok()}, {"error", v.symbolic.ok() ? "" : v.symbolic.error().format()}};
  j["numeric"] = {{"checked", v.numeric.checked}, {"wrong", v.numeric.wrong}, {"first_wrong", v.numeric.message()}};
  j["calls"] = calls_json(s);
  if (v.executed && c.mode == RunMode::observable) j["step_times"] = step_times_json(c, v.record);
  if (!s.ops.empty()) j["program"] = program_json(s, v.executed ? &v.record : nullptr);
  if (!f.trace.empty()) j["trace"] = f.trace;
  if (!f.flight_record.empty()) j["flight_record"] = f.flight_record;
  std::cout << j.dump(2) << "\n";
}

void print_calls(const Schedule& s) {
  for (const auto& c : s.calls) {
    if (c.kind == CallKind::program) {
      std::cout << "  point-to-point: steps " << c.first_step << ".." << c.first_step + c.num_steps - 1 << "\n";
      continue;
    }
    std::cout << "  call " << c.program_index << (c.group.empty() ? "" : " (" + group_text(c) + ")") << ": "
              << name_of(c.args.coll) << (c.args.peers ? " counts per peer, largest block " : " count ")
              << c.args.count;
    if (is_reducing(c.args.coll)) std::cout << " op " << name_of(c.args.op);
    if (has_root(c.args.coll)) std::cout << " root " << c.args.root;
    std::cout << (c.args.in_place ? " in place" : "") << ", algorithm " << c.algorithm
              << (c.auto_picked ? " (picked by auto)" : "") << ", " << c.num_steps << " steps";
    if (c.num_steps > 0 && !s.steps[static_cast<std::size_t>(c.first_step)].shared.empty())
      std::cout << " (steps " << c.first_step << "-" << c.first_step + c.num_steps - 1
                << ", shared with the other parts)";
    std::cout << "\n";
  }
}

void print_text_report(const RunFlags& f, const ReportContext& c, const Verdicts& v, bool verified) {
  const Schedule& s = c.s;
  const RunRecord& record = v.record;
  std::cout << "collscope run: " << (c.scenario.title.empty() ? f.file : c.scenario.title) << "\n";
  std::cout << "  " << s.ranks << " ranks, " << name_of(s.dtype) << ", backend " << f.backend
            << (record.backend_detail.empty() ? "" : " (" + record.backend_detail + ")")
            << (f.dry_run                 ? " (dry run: nothing executed)"
                : c.mode == RunMode::fast ? " (fast mode)"
                                          : " (observable mode)")
            << "\n";
  print_calls(s);
  if (f.explain) print_explain(s);
  print_program(s, v.executed ? &record : nullptr, f.explain || f.ops == "all", c.ops_shown);
  std::cout << "  steps " << s.steps.size() << ", transfers " << s.total_transfers() << ", bytes moved "
            << human_bytes(static_cast<double>(moved_bytes(s))) << "\n";
  std::cout << "  time " << (v.executed ? std::to_string(record.time_us) + " us" : std::string("-"));
  if (c.unpriced.empty()) std::cout << ", predicted " << c.predicted_us << " us (" << c.machine.label() << ")\n";
  else std::cout << ", predicted - (" << c.unpriced << ")\n";
  if (v.executed && c.mode == RunMode::observable && !record.steps.empty() && c.unpriced.empty()) {
    const auto [measured, predicted] = median_step_times(c, record);
    std::cout << "  per step (median of " << record.steps.size() << "): measured " << measured << " us, predicted "
              << predicted << " us (barrier and wake-ups included)\n";
  }
  std::cout << "  symbolic check: " << (v.symbolic.ok() ? "ok" : v.symbolic.error().format()) << "\n";
  if (v.executed)
    std::cout << "  numeric check: " << v.numeric.wrong << " wrong of " << v.numeric.checked
              << (v.numeric.wrong ? " - " + v.numeric.message() : std::string()) << "\n";
  if (!f.trace.empty()) std::cout << "  trace written to " << f.trace << "\n";
  if (!f.flight_record.empty() && v.executed) std::cout << "  flight record written to " << f.flight_record << "\n";
  std::cout << (verified ? "  verified: " : "  NOT VERIFIED (checked: ") << verdict_scope(s)
            << (verified ? "\n" : ")\n");
}

int run_here(const RunFlags& f) {
  // Several processes (the mpi backend): each prepares the same run; process 0 reports.
  const bool job = capabilities_of(f.backend).multi_process && !f.dry_run;
  if (job) quiet_in_job();
  auto ops_shown = ops_shown_for(f);
  if (!ops_shown) return run_error(f, ops_shown.error(), job);
  auto scenario = load_for_run(f);
  if (!scenario) return run_error(f, scenario.error(), job);
  if (auto st = check_run_outputs(f); !st) return run_error(f, st.error(), job);
  // The model this run is predicted with (machine.h), named in the report; `auto`
  // picks with it too, so the pick and the prediction agree.
  auto machine = machine_for(f.topology, f.nodes, capabilities_of(f.backend), scenario->dtype, user_config_dir());
  if (!machine) return run_error(f, machine.error(), job);
  if (!f.dry_run) machine->use_devices_found(devices_found(f.backend));  // the ranks share the GPUs found here
  LowerOptions lowering = lower_options_for(capabilities_of(f.backend));
  lowering.machine = &*machine;
  if (auto st = check_ranks_per_node(f, scenario->ranks); !st) return run_error(f, st.error(), job);
  if (auto st = check_nodes(f.nodes, scenario->ranks); !st) return run_error(f, st.error(), job);
  lowering.ranks_per_node = f.ranks_per_node;
  auto schedule_r = lower_scenario(*scenario, lowering);
  if (!schedule_r) return run_error(f, schedule_r.error(), job);
  const Schedule& s = *schedule_r;
  if (job)
    if (auto code = self_launch(s.ranks, f.hostfile)) return *code;

  RunMode mode = RunMode::fast;
  if (f.mode == "observable") mode = RunMode::observable;
  else if (f.mode != "fast")
    return run_error(f, make_error("cli.usage", "unknown --mode \"" + f.mode + "\"", "use fast or observable"));
  const Prediction prediction = predict(s, *machine, mode == RunMode::fast);

  Verdicts v;
  if (f.dry_run) {
    v.symbolic = verify_symbolic(s);
  } else if (auto code = execute_and_write(f, job, mode, *scenario, s, v)) {
    return *code;
  }
  const bool verified = v.symbolic.ok() && v.numeric.wrong == 0;
  const ReportContext context{*scenario,          s,          *machine,           mode, prediction.us,
                              prediction.step_us, *ops_shown, prediction.unpriced};
  if (f.json) print_json_report(f, context, v, verified);
  else print_text_report(f, context, v, verified);
  return verified ? 0 : 1;
}

}  // namespace

// (A process of a job leaves through processes::finish: MPI is finalized, or after a
// failure every process exits at once.)
int cmd_run(const RunFlags& f) { return processes::finish(run_here(f)); }

}  // namespace collscope::app
