// `collscope calibrate`: measure this machine for the cost model and keep the result
// in the user's config folder, where every later prediction finds it.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "collscope/calibration.h"
#include "collscope/files.h"

namespace collscope::app {

void add_calibrate_command(CLI::App& app, CalibrateFlags& f) {
  f.command = app.add_subcommand("calibrate", "measure this machine for the cost model (at most 60 s) and keep it");
  f.command->add_option("--seconds", f.seconds, "time to spend measuring, 10 to 60 (default 30)");
  f.command->add_option("-o,--output", f.output, "write here instead of the config folder's calibration.json");
  f.command->add_flag("--json", f.json, "print the calibration as JSON");
  f.command->add_flag("--placement", f.placement,
                      "measure again, in about a second, only what the host's placement of the cores changes "
                      "(memory shared by the cores, lines between cores, wake-ups) on top of the kept calibration");
}

namespace {

// `calibrate --placement`: the kept calibration (-o FILE's, else the config folder's),
// its placement figures measured again.
int cmd_placement(const CalibrateFlags& f, const std::string& path) {
  auto base = load_calibration(path);
  if (!base) {
    Error e = base.error();
    if (e.id == "calibration.missing") e.hint = "run `collscope calibrate` first: --placement refreshes a calibration";
    return report_error(e);
  }
  const Calibration c = measure_placement(*base, 0.5);
  if (auto st = save_calibration(c, path); !st) return report_error(st.error());
  if (f.json) {
    std::cout << to_json(c);
    return 0;
  }
  std::printf("placement measured again in %.2f s (%s), the rest kept from %s\n", c.seconds, c.date.c_str(),
              base->date.empty() ? "(undated)" : base->date.c_str());
  std::printf("  wake-up:                %7.2f us (was %.2f)\n", c.wake_us, base->wake_us);
  std::printf(
      "  lines another core holds: %.2f GB/s copied into them (was %.2f), %.2f beyond its own cache (was %.2f), "
      "%.2f within its first level (was %.2f)\n",
      c.held_gbps, base->held_gbps, c.held_far_gbps, base->held_far_gbps, c.held_first_gbps, base->held_first_gbps);
  std::printf("  memory, %d cores:       %7.2f GB/s copied (was %.2f)\n", c.cores, c.shared_gbps, base->shared_gbps);
  std::printf("written to %s\n", path.c_str());
  return 0;
}

}  // namespace

int cmd_calibrate(const CalibrateFlags& f) {
  // Every figure takes a few runs however short the budget: below 10 s the whole takes
  // about 9 s on a 2-core machine, so a shorter budget would not be kept.
  const bool seconds_given = f.command && f.command->count("--seconds") > 0;
  if (f.placement && seconds_given)
    return report_error(make_error("cli.usage", "--placement measures for about a second: --seconds does not apply",
                                   "drop --seconds, or --placement for a whole calibration"));
  if (!(f.seconds >= 10 && f.seconds <= 60))
    return report_error(make_error("cli.usage", "--seconds " + std::to_string(f.seconds) + " is out of range",
                                   "give 10 to 60 seconds"));
  const std::string path = f.output.empty() ? calibration_path(user_config_dir()) : f.output;
  if (path.empty())
    return report_error(make_error("calibration.io", "no config folder: neither $XDG_CONFIG_HOME nor $HOME is set",
                                   "set one, or pass -o FILE"));
  // A path that cannot be written is refused before the measuring, not after it: its
  // folder is made now (as writing it would), then the file itself is checked.
  if (const auto dir = std::filesystem::path(path).parent_path(); !dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return report_error(make_error("calibration.io",
                                     "cannot make the folder \"" + dir.string() + "\": " + ec.message(),
                                     "give -o a path in a folder you can write"));
  }
  if (auto st = check_output_target(path, "calibration.io"); !st) return report_error(st.error());
  if (f.placement) return cmd_placement(f, path);
  int last = -1;
  const Calibration c = measure_machine(f.seconds, [&](double done, const std::string& what) {
    const int pct = static_cast<int>(done * 100);
    if (pct == last) return;
    last = pct;
    std::fprintf(stderr, "\rcalibrating: %3d%%  %-60s", pct, what.c_str());
    std::fflush(stderr);
  });
  std::fprintf(stderr, "\n");
  if (auto st = save_calibration(c, path); !st) return report_error(st.error());
  if (f.json) {
    std::cout << to_json(c);
    return 0;
  }
  std::printf("calibrated %s in %.1f s (%s)\n", c.machine.c_str(), c.seconds, c.date.c_str());
  std::printf("  (from memory: one thread; in the cache: each of %d cores at once, a typical call)\n", c.cores);
  std::printf("  copy                   %7.2f GB/s from memory, %7.2f GB/s in the cache\n", c.copy_gbps,
              c.copy_in_cache_gbps);
  std::printf("  (reduce-copy: dst = a + b, a third buffer written)\n");
  for (std::size_t i = 0; i < kCalibratedDTypes; ++i)
    std::printf(
        "  reduce %-9s         %7.2f GB/s from memory, %7.2f GB/s in the cache; reduce-copy %7.2f, %7.2f GB/s\n",
        std::string(name_of(static_cast<DType>(i))).c_str(), c.reduce_gbps[i], c.reduce_in_cache_gbps[i],
        c.reduce_copy_gbps[i], c.reduce_copy_in_cache_gbps[i]);
  if (c.near_cache_bytes > 0)
    std::printf(
        "  a core's own cache:    %7.1f MiB; beyond it, in the shared cache: copy %.2f GB/s, reduce float32 "
        "%.2f GB/s, reduce-copy %.2f GB/s\n",
        c.near_cache_bytes / (1 << 20), c.copy_far_cache_gbps, c.reduce_far_cache_gbps, c.reduce_copy_far_cache_gbps);
  if (c.held_gbps > 0)
    std::printf(
        "  lines another core holds: %.2f GB/s copied into them (just read there, in its own cache), %.2f GB/s "
        "beyond it, %.2f GB/s within its first level (%.0f KiB)\n",
        c.held_gbps, c.held_far_gbps, c.held_first_gbps, c.first_cache_bytes / 1024);
  std::printf("  memory, %d cores:       %7.2f GB/s copied, %.2f GB/s summed, %.2f GB/s reduce-copied (float32)\n",
              c.cores, c.shared_gbps, c.shared_reduce_gbps, c.shared_reduce_copy_gbps);
  std::printf("  last-level cache:      %7.1f MiB (%s)\n", c.cache_bytes / (1 << 20),
              CostModel::cpu_default().cache_bytes > 0 ? "as the kernel gives it" : "measured");
  if (c.cache_seen_bytes > 0)
    std::printf(
        "  as a copy sees it:     %7.1f MiB touched before one core's copy is halfway to the memory's rate "
        "(priced as %.1f MiB)\n",
        c.cache_seen_bytes / (1 << 20), c.priced_cache_bytes() / (1 << 20));
  std::printf("  wake-up:               %7.2f us with a core per rank, %.2f us per rank per core beyond\n", c.wake_us,
              c.switch_us);
  std::printf("  a step's own cost:     %7.2f us (fast mode, nothing to wait for)\n", c.step_us);
  if (c.remote_look_us > 0)
    std::printf(
        "  a look across cores:   %7.2f us (a rank waiting for a rank on another core, ranks beyond the cores)\n",
        c.remote_look_us);
  std::printf("  observable barrier:    %7.2f us, +%.2f us per rank beyond the cores\n", c.barrier_us,
              c.barrier_per_rank_us);
  std::printf("written to %s\n", path.c_str());
  return 0;
}

}  // namespace collscope::app
