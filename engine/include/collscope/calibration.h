// What the cost model needs to know about the machine it runs on, measured by
// `collscope calibrate` and kept in the user's config folder
// ($XDG_CONFIG_HOME/collscope/calibration.json, else ~/.config/collscope/).
// Without one, predictions use CostModel's defaults and say so.
#pragma once

#include <array>
#include <functional>
#include <string>

#include "collscope/model.h"
#include "collscope/result.h"
#include "collscope/types.h"

namespace collscope {

inline constexpr std::size_t kCalibratedDTypes = 8;  // every DType, indexed by its value
static_assert(static_cast<std::size_t>(DType::float64) + 1 == kCalibratedDTypes);

struct Calibration {
  std::string date;     // UTC, "2026-12-01T21:40Z"
  std::string machine;  // "2 cores, x86_64, AMD EPYC 7B13"
  double seconds = 0;   // how long the measurement took
  int cores = 0;
  double cache_bytes = 0;  // last-level cache, shared by the cores
  // The bytes one core's copy streams through the last level before it slows to halfway
  // from the cache's rate to the memory's (source and destination; 0: not measured). A
  // host's other tenants share the last level: on the machine of bench/RESULTS.md, with a
  // 32 MiB L3, 14-26 MiB. The model counts the cache it implies (priced_cache_bytes).
  double cache_seen_bytes = 0;
  double copy_in_cache_gbps = 0;  // every core at once, each on buffers that stay in its cache
  double copy_gbps = 0;           // one thread, from memory to memory
  // Reduce (dst = dst + src, per dtype): one thread from memory, and every core at once
  // in the cache; reduce-copy (dst = aux + src), the same (0: not measured, priced as a
  // reduce).
  std::array<double, kCalibratedDTypes> reduce_gbps{};
  std::array<double, kCalibratedDTypes> reduce_copy_gbps{};
  std::array<double, kCalibratedDTypes> reduce_in_cache_gbps{};
  std::array<double, kCalibratedDTypes> reduce_copy_in_cache_gbps{};
  // A core's own cache inside the shared one (an L2; 0: none known) and the kernels on
  // buffers too big for it that stay in the shared cache, every core at once (float32
  // for the reduce and the reduce-copy; 0: not measured, priced as in the core's cache).
  double near_cache_bytes = 0;
  double copy_far_cache_gbps = 0;
  double reduce_far_cache_gbps = 0;
  double reduce_copy_far_cache_gbps = 0;
  // A core copying into lines another core has just read and still holds in its own
  // cache (0: not measured).
  double held_gbps = 0;
  double held_far_gbps = 0;  // the same, lines beyond the other core's own cache (in the last level)
  // A core's first-level data cache (0: unknown), and the copy into lines another core
  // holds within it, where they come faster (0: not measured, priced as held_gbps).
  double first_cache_bytes = 0;
  double held_first_gbps = 0;
  double shared_gbps = 0;  // every core copying at once: the memory system's bandwidth
  // Every core summing float32 at once from memory (a reduce; a reduce-copy), GB/s written
  // (0: not measured, their traffic priced at the copy's rate).
  double shared_reduce_gbps = 0;
  double shared_reduce_copy_gbps = 0;
  double wake_us = 0;    // one thread waking another that spins on its own core
  double switch_us = 0;  // the same when threads outnumber cores (a scheduler round trip)
  double step_us = 0;    // fast mode: a step of local copies, no waiting (ranks = cores)
  double remote_look_us =
      0;                  // ranks outnumbering cores: a look at a rank on another core, a line's trip (0: not measured)
  double barrier_us = 0;  // observable mode's barrier after a step, ranks = cores
  double barrier_per_rank_us = 0;  // and what each rank beyond the cores adds

  // The cost model these figures give (dtype: the reduce bandwidth's).
  CostModel model(DType dtype) const;
  // The last level the model counts: the kernel's cache_bytes, or where calibrate saw
  // one core's copy slow (cache_seen_bytes), the size at which the model's reuse fade
  // prices that copy halfway between the shared cache's rate and the memory's, never
  // above the kernel's size.
  double priced_cache_bytes() const;
};

// "" when neither $XDG_CONFIG_HOME nor $HOME is set.
std::string user_config_dir();
std::string calibration_path(const std::string& config_dir);

std::string to_json(const Calibration& c);
// calibration.parse / calibration.io with the file's place on a bad file.
Result<Calibration> parse_calibration(const std::string& text, const std::string& file);
// Missing file: an error with id calibration.missing (callers fall back to defaults).
Result<Calibration> load_calibration(const std::string& path);

// The cpu cost model every prediction on this machine uses, and where it came from:
// "calibrated 2026-12-01T21:40Z" or "defaults (not calibrated: run `collscope calibrate`)".
struct CpuModel {
  CostModel model;
  std::string origin;
  bool calibrated = false;
};
CpuModel cpu_model_for(DType dtype, const std::string& config_dir);

// Measures this machine in about `budget_s` seconds (10 to 60 from the command line; below about 10 s every figure's
// minimum of runs takes over), with the element-wise kernels and the cpu backend (calibrate/measure.cpp); `progress`
// hears the fraction done and what is being measured.
Calibration measure_machine(double budget_s, const std::function<void(double, const std::string&)>& progress);
// What the host's placement of the cores changes, measured again on top of `base` in
// about `budget_s` seconds (0.2 to 10): the memory bandwidth all cores share, copies
// into lines another core holds, the 2-rank wake-up and a look across cores. On a virtual
// machine the host moves the cores near each other and apart for minutes at a time
// (bench/RESULTS.md: wake-ups 0.14 against 0.49 us, lines between cores 9 against 2.3
// GB/s); the rest of a calibration stays.
Calibration measure_placement(const Calibration& base, double budget_s);
// Written atomically; calibration.io on failure.
Status save_calibration(const Calibration& c, const std::string& path);

}  // namespace collscope
