#include "gui/view/lesson.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "collscope/backend.h"
#include "collscope/elementwise.h"
#include "collscope/machine.h"
#include "collscope/model.h"
#include "collscope/verify.h"
#include "gui/view/processes_run.h"

namespace collscope::view {

Result<std::shared_ptr<LessonRun>> run_lesson(const Scenario& scenario, const std::string& backend,
                                              std::uint64_t snapshot_budget, double timeout_s,
                                              const LessonPlace& place) {
  auto run = std::make_shared<LessonRun>();
  run->scenario = scenario;
  const BackendCapabilities caps = capabilities_of(backend);
  auto machine = machine_for(place.topology, place.nodes, caps, run->scenario.dtype, user_config_dir());
  if (!machine) return machine.error();
  machine->use_devices_found(devices_found(backend));  // the ranks share the GPUs found here
  LowerOptions lowering = lower_options_for(caps);
  lowering.machine = &*machine;
  lowering.ranks_per_node = place.ranks_per_node;
  auto lowered = lower_scenario(run->scenario, lowering);
  if (!lowered) return lowered.error();
  run->schedule = std::move(*lowered);
  // The window runs in observable mode: a barrier after every step, priced as such.
  run->model = machine->short_label();
  const Prediction p = predict(run->schedule, *machine, false);
  run->predicted_us = p.us;
  run->predicted_step_us = p.step_us;
  if (!p.unpriced.empty()) {
    // A library's own collective the model cannot price: unknown, not 0.
    run->predicted_us = -1;
    run->predicted_step_us.clear();
    run->model = "no model of a library's own collective";
  }

  if (caps.multi_process) {
    // Real processes: a child collscope starts them and hands the run back in a file.
    auto out = run_in_processes(run->scenario, backend, snapshot_budget, timeout_s);
    if (!out) return out.error();
    run->outcome = std::move(*out);
    run->backend = run->outcome.record.backend;
    return std::shared_ptr<LessonRun>(std::move(run));
  }
  RunOptions o;
  o.backend = backend;
  o.mode = RunMode::observable;
  o.snapshot_budget = snapshot_budget;
  o.faults = scenario.faults;
  o.timeout_s = timeout_s;
  const Scenario& sc = run->scenario;  // the init function reads the scenario's buffers
  auto out = execute(
      run->schedule,
      [&sc](std::int32_t b, std::int32_t r, std::uint64_t i) {
        if (b < 0 || static_cast<std::size_t>(b) >= sc.buffers.size()) return 0.0;
        return initial_value(sc.buffers[static_cast<std::size_t>(b)], r, i);
      },
      o);
  if (!out) return out.error();
  run->outcome = std::move(*out);
  run->backend = run->outcome.record.backend;
  return std::shared_ptr<LessonRun>(std::move(run));
}

MemoryTimeline::MemoryTimeline(std::shared_ptr<const LessonRun> run) : run_(std::move(run)) {}

Result<HostMemory> MemoryTimeline::at(std::int32_t applied) const {
  const Schedule& s = run_->schedule;
  const auto& snaps = run_->outcome.record.snapshots;
  applied = std::clamp<std::int32_t>(applied, 0, steps());
  const Snapshot* base = nullptr;
  for (const auto& sn : snaps)
    if (sn.after_step + 1 <= applied && (!base || sn.after_step > base->after_step)) base = &sn;
  if (!base)
    return make_error("gui.no_snapshot", "this run kept no snapshot to step back to",
                      "run it again with a larger snapshot budget", {}, ExitCode::backend_failure);
  last_replayed_ = applied - (base->after_step + 1);
  if (last_replayed_ == 0) return base->memory;

  // A run of several processes is replayed on threads: the same bytes (the tests hold the
  // backends to that), without starting processes for a step back.
  auto backend = find_backend(capabilities_of(run_->backend).multi_process ? "cpu" : run_->backend);
  if (!backend) return backend.error();
  SessionOptions so;
  so.record_events = false;
  // The same bytes as the run: a corrupting fault corrupts the replay too (delays
  // change no byte; a run with a crash or hang has no snapshots to replay from).
  for (const Fault& f : run_->scenario.faults)
    if (f.kind == Fault::Kind::corrupt) so.faults.push_back(f);
  auto session = (*backend)->open(s, so);
  if (!session) return session.error();
  for (std::size_t b = 0; b < s.buffers.size(); ++b)
    for (std::int32_t r = 0; r < s.ranks; ++r) {
      const auto& v = base->memory[b][static_cast<std::size_t>(r)];
      if (v.empty()) continue;
      if (auto st = (*session)->write_buffer(r, static_cast<std::int32_t>(b), v.data(), v.size()); !st)
        return st.error();
    }
  for (std::int32_t k = base->after_step + 1; k < applied; ++k)
    if (auto st = (*session)->run_step(k); !st) return st.error();
  HostMemory mem = base->memory;
  for (std::size_t b = 0; b < s.buffers.size(); ++b)
    for (std::int32_t r = 0; r < s.ranks; ++r) {
      auto& v = mem[b][static_cast<std::size_t>(r)];
      if (v.empty()) continue;
      if (auto st = (*session)->read_buffer(r, static_cast<std::int32_t>(b), v.data(), v.size()); !st)
        return st.error();
    }
  return mem;
}

struct ContributionCursor::Impl {
  std::int32_t call = -1;
  std::unique_ptr<SymbolicState> state;
};

ContributionCursor::ContributionCursor(const Schedule& s, ColourScope scope)
    : s_(s), scope_(scope), impl_(std::make_unique<Impl>()) {}
ContributionCursor::~ContributionCursor() = default;

void ContributionCursor::seek(std::int32_t applied) {
  const auto n = static_cast<std::int32_t>(s_.steps.size());
  applied = std::clamp<std::int32_t>(applied, 0, n);
  if (s_.calls.empty()) {
    applied_ = applied;
    return;
  }
  if (scope_ == ColourScope::program) {
    // One state from the program's inputs: forward is incremental, backward starts over.
    if (!impl_->state || impl_->state->next_step() > applied) {
      impl_->state = std::make_unique<SymbolicState>(s_, SymbolicState::WholeProgram{});
      impl_->call = -1;
    }
    // An input counted twice marks the element inexact instead of failing; an error
    // here is a step the sets cannot follow: show what we have (the run reports it).
    while (!impl_->state->done() && impl_->state->next_step() < applied)
      if (!impl_->state->advance()) break;
    applied_ = applied;
    return;
  }
  // The call whose state we show: the one of the next step to run, or the last one
  // when every step has run (its finished result is what the lesson ends on).
  std::int32_t call = 0;
  if (applied < n) call = s_.steps[static_cast<std::size_t>(applied)].call;
  else call = static_cast<std::int32_t>(s_.calls.size()) - 1;
  // The parts of a split group's call share their steps and start over together: the
  // state is that of their steps, keyed by its first step (one part may end earlier,
  // and the step's first call changes then, but not the span).
  const Call& cl = s_.calls[static_cast<std::size_t>(call)];
  const bool together = cl.num_steps > 0 && !s_.steps[static_cast<std::size_t>(cl.first_step)].shared.empty();
  const auto [first, end] = shared_span(s_, call);
  const std::int32_t key = together ? -2 - first : call;
  // A call that starts right at `applied` but is not the step's call (empty calls): fine either way.
  const bool reuse = impl_->state && impl_->call == key && impl_->state->next_step() <= applied;
  if (!reuse) {
    if (together) impl_->state = std::make_unique<SymbolicState>(s_, SymbolicState::Steps{first, end});
    else impl_->state = std::make_unique<SymbolicState>(s_, call);
    impl_->call = key;
  }
  while (!impl_->state->done() && impl_->state->next_step() < applied)
    if (!impl_->state->advance()) break;  // double counting: show what we have (the run reports it)
  applied_ = applied;
}

std::vector<std::int32_t> ContributionCursor::ranks_of(std::int32_t rank, std::int32_t buf, std::uint64_t index) const {
  std::vector<std::int32_t> out;
  if (!impl_->state) return out;
  auto contents = impl_->state->contents(rank, buf, index);
  if (contents.size() == 1) return std::move(contents[0].ranks);  // one term: sorted and unique already
  for (const auto& c : contents) out.insert(out.end(), c.ranks.begin(), c.ranks.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void ContributionCursor::bits_of(std::int32_t rank, std::int32_t buf, std::uint64_t index,
                                 std::vector<std::uint64_t>& words) const {
  if (!impl_->state) {
    words.assign(static_cast<std::size_t>((s_.ranks + 63) / 64), 0);
    return;
  }
  impl_->state->holders(rank, buf, index, words);
}

double element_value(const std::vector<std::uint8_t>& bytes, DType t, std::uint64_t index) {
  const std::size_t e = size_of(t);
  if ((index + 1) * e > bytes.size()) return 0;
  const std::uint8_t* p = bytes.data() + index * e;
  auto load = [p]<class T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return to_double(v);
  };
  switch (t) {
    case DType::int8:
      return load(std::int8_t{});
    case DType::uint8:
      return load(std::uint8_t{});
    case DType::int32:
      return load(std::int32_t{});
    case DType::int64:
      return load(std::int64_t{});
    case DType::float16:
      return load(f16{});
    case DType::bfloat16:
      return load(bf16{});
    case DType::float32:
      return load(float{});
    case DType::float64:
      return load(double{});
  }
  return 0;
}

std::string format_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace collscope::view
