// `collscope bench`: a size sweep with nccl-tests' flags and table.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>
#include <vector>

#include "cli.h"
#include "collscope/backend.h"
#include "collscope/collective.h"
#include "collscope/device_probe.h"
#include "collscope/machine.h"
#include "collscope/processes.h"
#include "mpi_launch.h"
#include "sweep.h"

namespace collscope::app {

namespace {

using Clock = std::chrono::steady_clock;

// Sizes above this cannot be run (the buffers of all ranks take at most kMaxTotalBytes).
constexpr std::uint64_t kMaxBenchBytes = kMaxTotalBytes;
// Rows of one sweep: -b 1 -e 16G -f 1.1 takes about 250; a sweep of more is a mistake.
constexpr std::size_t kMaxBenchRows = 1000;

const std::string kBenchLimit = "the limit of all buffers together";

// Memory bandwidth as memcpy sees it, with one thread and with one per core:
// the ceiling every cpu-backend number should be read against.
// A thread the system refuses (a thread limit) is backend.out_of_resources, as in the
// cpu backend, once the threads already started are joined.
Result<std::pair<double, double>> probe_memory(std::uint64_t bytes) {
  auto one = [](std::uint64_t n, int threads) -> Result<double> {
    std::vector<std::unique_ptr<char[]>> src, dst;
    for (int t = 0; t < threads; ++t) {
      src.emplace_back(new char[n]);
      dst.emplace_back(new char[n]);
      std::memset(src.back().get(), 1, n);
      std::memset(dst.back().get(), 0, n);
    }
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = Clock::now();
      std::vector<std::thread> pool;
      try {
        for (int t = 0; t < threads; ++t)
          pool.emplace_back([&, t] {
            std::memcpy(dst[static_cast<std::size_t>(t)].get(), src[static_cast<std::size_t>(t)].get(), n);
          });
      } catch (const std::system_error& e) {
        for (auto& th : pool) th.join();
        return make_error(
            "backend.out_of_resources",
            std::string("memory probe: cannot start thread ") + std::to_string(pool.size() + 1) + " of " +
                std::to_string(threads) + " (" + e.what() + ")",
            "the system limits threads (ulimit -u, a container's pids limit): raise the limit, or give --probe 0", {},
            ExitCode::backend_failure);
      }
      for (auto& th : pool) th.join();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      best = std::max(best, static_cast<double>(n) * threads / s / 1e9);
    }
    return best;
  };
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto single = one(bytes, 1);
  if (!single) return single.error();
  auto all = one(bytes / static_cast<std::uint64_t>(cores), cores);
  if (!all) return all.error();
  return std::pair{*single, *all};
}

// The bytes of every rank's buffers.
std::uint64_t buffer_bytes(const Schedule& s) {
  std::uint64_t n = 0;
  for (const auto& b : s.buffers)
    for (auto c : b.count) n += c;
  return n * size_of(s.dtype);
}
// Every process of a multi-process run builds the reference of every rank (run.h):
// beyond 64 MiB of buffers in all, bench leaves the check out rather than fill the machine.
bool multi_process_check_too_large(const Schedule& s) { return buffer_bytes(s) > (64ull << 20); }

struct Row {
  double time_us = 0, algbw = 0, busbw = 0;  // time_us: the median batch's, per call (run.h, time_calls)
  double mean_us = 0;                        // per call, over all -n calls
  double predicted_us = 0;                   // the model's time for the schedule that ran (fast mode, as measured)
  bool priced = true;                        // false: the model has no price for it (Prediction::unpriced)
  std::int64_t wrong = -1;                   // -1 = not checked
  std::string algorithm;
};

// One measurement of a size: an algorithm, out of place or in place. The session holds
// on to the schedule, and the inputs' function on to the scenario: a Measurement stays
// where it was made (unique_ptr).
struct Measurement {
  QuickSpec q;
  Scenario scenario;
  Schedule schedule;
  InitFn init;  // reads `scenario`
  Row row;
  std::unique_ptr<Session> session;
};

// Lowered and priced; `machine` prices the row, and `auto` picks with it, as for `collscope run`.
Result<std::unique_ptr<Measurement>> prepare(const BenchFlags& f, const QuickSpec& q, const Machine& machine) {
  auto scenario = scenario_from_spec(q);
  if (!scenario) return scenario.error();
  LowerOptions lowering = lower_options_for(capabilities_of(f.backend));
  lowering.machine = &machine;
  auto schedule = lower_scenario(*scenario, lowering);
  if (!schedule) return schedule.error();
  auto m = std::make_unique<Measurement>();
  m->q = q;
  m->scenario = std::move(*scenario);
  m->schedule = std::move(*schedule);
  m->row.algorithm = m->schedule.calls.empty() ? "" : m->schedule.calls[0].algorithm;
  const Prediction prediction = predict(m->schedule, machine, true);
  m->row.predicted_us = prediction.us;
  m->row.priced = prediction.unpriced.empty();
  m->init = scenario_init(m->scenario);
  return m;
}

Status open_session(const BenchFlags& f, Measurement& m) {
  auto backend = find_backend(f.backend);
  if (!backend) return backend.error();
  SessionOptions so;
  so.record_events = false;
  auto session = (*backend)->open(m.schedule, so);
  if (!session) return session.error();
  m.session = std::move(*session);
  return load_inputs(*m.session, m.schedule, m.init);
}

// Sessions of a size held open at once, all of them taking turns, while their buffers
// take at most this in all (the same figure in every process of a multi-process run);
// beyond it each turn opens its session and closes it, in kReopenedRounds rounds. A
// backend with devices measures one algorithm after another, each in one turn, as
// before turns were taken (its sessions set up communicators that take long to open).
constexpr std::uint64_t kHeldBytes = 2ull << 30;
constexpr std::int32_t kReopenedRounds = 2;

// Every measurement of one size, taken in turns (run.h, plan_turns), then its row
// filled: the time, the bandwidths, the check.
Status measure_in_turns(const BenchFlags& f, std::vector<std::unique_ptr<Measurement>>& ms, std::uint64_t bytes_msg) {
  std::uint64_t total = 0;
  for (const auto& m : ms) total += buffer_bytes(m->schedule);
  const bool devices = capabilities_of(f.backend).devices;
  const bool hold = !devices && total <= kHeldBytes;
  const std::int32_t rounds = devices ? 1 : hold ? kTurnRounds : kReopenedRounds;
  if (hold)
    for (auto& m : ms)
      if (auto st = open_session(f, *m); !st) return st;
  auto take = [&](std::size_t k) -> Result<Session*> {
    Measurement& m = *ms[k];
    if (!m.session)
      if (auto st = open_session(f, m); !st) return st.error();
    return m.session.get();
  };
  auto done = [&](std::size_t k) {
    if (!hold) ms[k]->session.reset();
  };
  auto timings = time_in_turns(ms.size(), take, done, std::max(1, f.iters), f.warmup, kTimingBatches, rounds,
                               min_turn_calls(bytes_msg));
  for (auto& m : ms) m->session.reset();
  if (!timings) return timings.error();
  for (std::size_t k = 0; k < ms.size(); ++k) {
    Measurement* m = ms[k].get();
    const CallTiming& timing = (*timings)[k];
    Row& row = m->row;
    row.time_us = timing.median_us;
    row.mean_us = timing.mean_us;
    const double sec = row.time_us * 1e-6;
    row.algbw = sec > 0 ? static_cast<double>(bytes_msg) / 1e9 / sec : 0;
    row.busbw = row.algbw * bus_factor(m->q.coll, m->q.ranks);
    // Several processes: each builds the whole reference, so large sizes go unchecked (N/A).
    if (f.check && !(capabilities_of(f.backend).multi_process && multi_process_check_too_large(m->schedule))) {
      RunOptions o;
      o.backend = f.backend;
      o.record_events = false;
      o.snapshot_budget = 0;
      auto out = execute(m->schedule, m->init, o);
      if (!out) return out.error();
      row.wrong = static_cast<std::int64_t>(out->numeric.wrong) + (out->symbolic.ok() ? 0 : 1);
    }
  }
  return ok_status();
}

// The calls of the sweep: one per algorithm of --algo A,B,..., every one of them at
// every size, in turn, so that all see the same machine (--algo ring,mpi: ours against
// the library's own on the same processes).
Result<std::vector<QuickSpec>> bench_specs(const BenchFlags& f) {
  RunFlags rf;
  rf.coll = f.coll;
  rf.algo = f.algo;
  rf.dtype = f.dtype;
  rf.op = f.op;
  rf.ranks = f.ranks;
  rf.root = f.root;
  std::vector<QuickSpec> specs;
  if (f.algo.find(',') == std::string::npos) {
    auto base = spec_from_flags(rf);
    if (!base) return base.error();
    specs.push_back(*base);
    return specs;
  }
  for (std::size_t at = 0;;) {
    const auto comma = f.algo.find(',', at);
    RunFlags one = rf;
    one.algo = f.algo.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    auto b = spec_from_flags(one);
    if (!b) return b.error();
    specs.push_back(*b);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return specs;
}

Error usage_error(const std::string& msg, const std::string& hint) { return make_error("cli.usage", msg, hint); }

// -b and -e as bytes, and the flags that say how to time and check, refused when they
// make no sense.
Result<std::pair<std::uint64_t, std::uint64_t>> sweep_range(const BenchFlags& f) {
  auto lo = parse_size(f.min_bytes, "-b", kMaxBenchBytes, kBenchLimit);
  if (!lo) return lo.error();
  auto hi = parse_size(f.max_bytes, "-e", kMaxBenchBytes, kBenchLimit);
  if (!hi) return hi.error();
  if (f.iters < 1)
    return usage_error("-n " + std::to_string(f.iters) + " leaves no iteration to time",
                       "give -n 1 or more timed iterations (e.g. -n 20)");
  if (f.warmup < 0)
    return usage_error("-w " + std::to_string(f.warmup) + " is negative", "give -w 0 or more warm-up iterations");
  if (f.check != 0 && f.check != 1)
    return usage_error("-c " + std::to_string(f.check) + " is neither 0 nor 1",
                       "give -c 1 to check results, -c 0 not to");
  if (!std::isfinite(f.factor) || !(f.factor > 1.0)) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", f.factor);
    return usage_error(std::string("-f ") + text + " must be a finite number greater than 1",
                       "use -f 2 to double the size each step");
  }
  if (*hi < *lo) return usage_error("-e is smaller than -b", "give -b <= -e");
  return std::pair{*lo, *hi};
}

// The memory probes: the host's memcpy with one thread and with all, and a device's own
// ceiling when the backend has devices. Only the reporting process measures.
Status print_probes(const BenchFlags& f, unsigned cores) {
  const auto probe = probe_memory(64ull << 20);
  if (!probe) return probe.error();
  const auto [one, all] = *probe;
  if (f.json)
    std::cout << nlohmann::json{{"probe", {{"memcpy_1thread_gbps", one}, {"memcpy_all_threads_gbps", all}}}}.dump()
              << "\n";
  else
    std::printf("# memory bandwidth probe (memcpy 64 MiB): 1 thread %.2f GB/s, %u threads %.2f GB/s\n", one, cores,
                all);
  if (!capabilities_of(f.backend).devices) return ok_status();
  // The GPU's own ceiling: device-to-device memcpy against our copy and reduce kernels.
  auto dev = probe_device_bandwidth(256ull << 20);
  if (!dev) {
    if (!f.json) std::printf("# device memory probe: unavailable (%s)\n", dev.error().message.c_str());
  } else if (f.json) {
    std::cout << nlohmann::json{{"device_probe",
                                 {{"device", dev->device},
                                  {"bytes", dev->bytes},
                                  {"memcpy_gbps", dev->memcpy_gbps},
                                  {"copy_kernel_gbps", dev->copy_kernel_gbps},
                                  {"reduce_kernel_gbps", dev->reduce_kernel_gbps}}}}
                     .dump()
              << "\n";
  } else {
    const double mem = std::max(dev->memcpy_gbps, 1e-9);
    std::printf(
        "# device memory probe (GPU 0, %s, 256 MiB): cudaMemcpy D2D %.1f GB/s; our copy kernel %.1f GB/s "
        "(%.0f%% of memcpy); our reduce kernel %.1f GB/s written, %.1f GB/s of traffic (%.0f%% of memcpy's)\n",
        dev->device.c_str(), dev->memcpy_gbps, dev->copy_kernel_gbps, 100 * dev->copy_kernel_gbps / mem,
        dev->reduce_kernel_gbps, dev->reduce_kernel_gbps * DeviceBandwidth::kReduceTraffic,
        100 * dev->reduce_kernel_gbps * DeviceBandwidth::kReduceTraffic / (mem * DeviceBandwidth::kCopyTraffic));
  }
  return ok_status();
}

// nccl-tests' two header lines of the table, then the predicted times (out of place,
// in place) and the algorithm: nccl-tests' columns keep their places.
void print_table_head(bool both, const Machine& machine) {
  std::printf("# predicted: %s, fast mode\n", machine.label().c_str());
  std::printf("#\n#%74s%s%s\n", "out-of-place", both ? "                        in-place" : "",
              both ? "      predicted" : " predicted");
  std::printf("# %10s %12s %8s %6s %6s %9s %7s %7s %6s", "size", "count", "type", "redop", "root", "time", "algbw",
              "busbw", "#wrong");
  if (both) std::printf(" %9s %7s %7s %6s", "time", "algbw", "busbw", "#wrong");
  std::printf(" %9s", "time");
  if (both) std::printf(" %9s", "time");
  std::printf("  algorithm\n");
  std::printf("# %10s %12s %8s %6s %6s %9s %7s %7s %6s", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)",
              "");
  if (both) std::printf(" %9s %7s %7s %6s", "(us)", "(GB/s)", "(GB/s)", "");
  std::printf(" %9s", "(us)");
  if (both) std::printf(" %9s", "(us)");
  std::printf("\n");
}

// One line of the table (or one JSON object): out of place, then in place when the
// collective has it.
void print_row(const BenchFlags& f, const QuickSpec& q0, std::uint64_t bytes, std::uint64_t count,
               const std::vector<Row>& rows, const Machine& machine) {
  const bool has_root = collscope::has_root(q0.coll);
  if (f.json) {
    nlohmann::ordered_json j{{"size", bytes},
                             {"count", count},
                             {"type", name_of(q0.dtype)},
                             {"redop", is_reducing(q0.coll) ? std::string(name_of(q0.op)) : "none"},
                             {"root", has_root ? q0.root : -1},
                             {"algorithm", rows[0].algorithm},
                             {"model", machine.label()}};
    const char* names[] = {"out_of_place", "in_place"};
    for (std::size_t k = 0; k < rows.size(); ++k)
      j[names[k]] = {{"time_us", rows[k].time_us},
                     {"mean_us", rows[k].mean_us},
                     {"algbw", rows[k].algbw},
                     {"busbw", rows[k].busbw},
                     {"wrong", rows[k].wrong},
                     {"predicted_us", rows[k].priced ? nlohmann::json(rows[k].predicted_us) : nlohmann::json(nullptr)},
                     {"algorithm", rows[k].algorithm}};
    std::cout << j.dump() << "\n";
    return;
  }
  std::printf("  %10llu %12llu %8s %6s %6d", static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(count), std::string(name_of(q0.dtype)).c_str(),
              is_reducing(q0.coll) ? std::string(name_of(q0.op)).c_str() : "none", has_root ? q0.root : -1);
  for (const auto& r : rows) {
    std::printf(" %9.2f %7.2f %7.2f", r.time_us, r.algbw, r.busbw);
    if (r.wrong < 0) std::printf(" %6s", "N/A");
    else std::printf(" %6lld", static_cast<long long>(r.wrong));
  }
  for (const auto& r : rows) {
    if (r.priced) std::printf(" %9.2f", r.predicted_us);
    else std::printf(" %9s", "-");
  }
  // `auto` may pick differently in place: then both, out-of-place first.
  std::string algo = rows[0].algorithm;
  if (rows.size() > 1 && rows[1].algorithm != algo) algo += "/" + rows[1].algorithm;
  std::printf("  %s\n", algo.c_str());
}

// A progress line on stderr for sweeps that take more than a few seconds.
class Progress {
 public:
  explicit Progress(std::size_t sizes) : sizes_(sizes) {}
  void done(std::size_t i) {
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed > 3 && i + 1 < sizes_ && std::chrono::duration<double>(now - last_).count() > (tty_ ? 0.2 : 5)) {
      std::fprintf(stderr, "%s# progress: %zu of %zu sizes done, %.0f s%s", tty_ ? "\r" : "", i + 1, sizes_, elapsed,
                   tty_ ? "" : "\n");
      last_ = now;
    }
  }
  void interrupted() const {
    if (tty_) std::fprintf(stderr, "\n");
  }
  void finish() const {
    if (tty_ && std::chrono::duration<double>(Clock::now() - start_).count() > 3) std::fprintf(stderr, "\r%60s\r", "");
  }

 private:
  std::size_t sizes_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
  bool tty_ = isatty(STDERR_FILENO) != 0;
};

int bench_here(const BenchFlags& f) {
  auto specs = bench_specs(f);
  if (!specs) return report_error(specs.error());
  auto range = sweep_range(f);
  if (!range) return report_error(range.error());
  auto backend = find_backend(f.backend);
  if (!backend) return report_error(backend.error());

  const QuickSpec q0 = specs->front();
  // What the predicted column prices with: this machine's cpu model or --topology's.
  if (auto st = check_nodes(f.nodes, q0.ranks); !st) return report_error(st.error());
  auto machine = machine_for(f.topology, f.nodes, capabilities_of(f.backend), q0.dtype, user_config_dir());
  if (!machine) return report_error(machine.error());
  machine->use_devices_found((*backend)->info().devices_found);  // the ranks share the GPUs found here
  const std::size_t e = size_of(q0.dtype);
  // Message bytes per unit of count (a barrier, which has none, sweeps like one element).
  const std::uint64_t per_count = std::max<std::uint64_t>(e, message_bytes(q0.coll, q0.ranks, 1, q0.dtype));
  auto sizes = sweep_sizes(f.min_bytes, f.max_bytes, f.factor, per_count, kMaxBenchBytes, kBenchLimit, kMaxBenchRows);
  if (!sizes) return report_error(sizes.error());
  // The largest row must fit the limits: refused now, not after the smaller rows ran.
  {
    QuickSpec q = q0;
    q.count = sizes->back() / per_count;
    if (auto sc = scenario_from_spec(q); !sc) return report_error(sc.error());
  }

  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (!f.json) {
    std::printf("# collscope bench: %s, algorithm %s, %d ranks, backend %s, %s %s, iters %d, warmup %d, check %d\n",
                std::string(name_of(q0.coll)).c_str(), f.algo.c_str(), q0.ranks, f.backend.c_str(),
                std::string(name_of(q0.dtype)).c_str(), std::string(name_of(q0.op)).c_str(), f.iters, f.warmup,
                f.check);
    std::printf("# machine: %u cores\n", cores);
    std::printf("# time: per call, the median of %d batches of the %d timed calls, run back to back\n",
                std::clamp(kTimingBatches, 1, std::max(1, f.iters)), std::max(1, f.iters));
  }
  if (f.probe && processes::reporting())  // (several processes: one measures, while the others wait)
    if (auto st = print_probes(f, cores); !st) return report_error(st.error());
  const bool both = supports_in_place(q0.coll);
  if (!f.json) print_table_head(both, *machine);

  Progress progress(sizes->size());
  std::uint64_t total_wrong = 0;
  for (std::size_t i = 0; i < sizes->size(); ++i) {
    const std::uint64_t count = (*sizes)[i] / per_count;
    const std::uint64_t bytes = message_bytes(q0.coll, q0.ranks, count, q0.dtype);
    // Every algorithm, out of place and in place, measured in turns; a row per algorithm.
    std::vector<std::unique_ptr<Measurement>> ms;
    for (const QuickSpec& qa : *specs)
      for (int in_place = 0; in_place <= (both ? 1 : 0); ++in_place) {
        QuickSpec q = qa;
        q.count = count;
        q.in_place = in_place != 0;
        auto m = prepare(f, q, *machine);
        if (!m) {
          progress.interrupted();
          return report_error(m.error());
        }
        ms.push_back(std::move(*m));
      }
    if (auto st = measure_in_turns(f, ms, bytes); !st) {
      progress.interrupted();
      return report_error(st.error());
    }
    const std::size_t modes = both ? 2 : 1;
    for (std::size_t a = 0; a < specs->size(); ++a) {
      std::vector<Row> rows;
      for (std::size_t k = 0; k < modes; ++k) {
        const Row& row = ms[a * modes + k]->row;
        if (row.wrong > 0) total_wrong += static_cast<std::uint64_t>(row.wrong);
        rows.push_back(row);
      }
      print_row(f, q0, bytes, count, rows, *machine);
    }
    std::fflush(stdout);
    progress.done(i);
  }
  progress.finish();
  if (!f.json) {
    std::printf("# Out of bounds values : %llu %s\n", static_cast<unsigned long long>(total_wrong),
                total_wrong ? "FAILED" : "OK");
  }
  return total_wrong ? 1 : 0;
}

}  // namespace

// A multi-process backend: collscope starts its processes when no launcher did; each
// process measures its rank, process 0 prints.
int cmd_bench(const BenchFlags& f) {
  if (capabilities_of(f.backend).multi_process) {
    quiet_in_job();
    if (auto code = self_launch(f.ranks, "")) return *code;
  }
  return processes::finish(bench_here(f));
}

}  // namespace collscope::app
