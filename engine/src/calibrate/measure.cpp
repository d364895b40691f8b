// `collscope calibrate`: measures what the cost model needs on this machine (model.h).
//
// Bandwidths are measured with the element-wise kernels the cpu backend runs, in and
// out of the cache; wake-ups and barriers with the cpu backend itself, on schedules
// written for the purpose:
//
//   an exchange  step k: every rank r copies one element from rank r-1 mod R, all at
//             once, as most algorithms' steps do. In fast mode every step waits for
//             the one before it on another rank: with 2 ranks (a core each, two steps
//             called back to back) a step is one wake-up; with 4 ranks a core it is
//             the scheduler running each rank in turn. (A chain, where one rank at a
//             time has work, priced algorithms' steps 1.5x too cheap with ranks
//             outnumbering the cores: bench/RESULTS.md.)
//   a barrier every rank copies one element locally, in observable mode, where the
//             backend waits for every rank after every step; in fast mode, where
//             nothing waits, the same steps give a step's own cost.
//   looks     every rank, 4 a core, copies one element from every rank on another
//             core at every step: beside the exchange's steps, what a rank's look at
//             the progress of a rank on another core costs.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <new>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/plan.h"
#include "collscope/backend.h"
#include "collscope/calibration.h"
#include "kernels/host_kernels.h"

namespace collscope {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Repeats f until `budget_s` has passed or `reps` runs are done (at least one run);
// the best rate in GB/s of `bytes` per run.
template <class F>
double best_gbps(double bytes, int reps, double budget_s, F&& f) {
  double best = 0;
  const auto start = Clock::now();
  for (int i = 0; i < reps && (i < 1 || seconds_since(start) < budget_s); ++i) {
    const auto t0 = Clock::now();
    f();
    const double s = seconds_since(t0);
    if (s > 0) best = std::max(best, bytes / s / 1e9);
  }
  return best;
}

enum class Kernel { copy, reduce, reduce_copy };

// A kernel's buffers, zeroed (no denormals or infinities slow a floating sum down), in
// memory the cpu backend's own allocator gives (cpu::allocate_memory: large buffers on
// huge pages): on the machine of bench/RESULTS.md a copy from memory on 4 KiB pages ran
// 1.1-1.4x slower than on the backend's, and calls from 16 MiB up were priced 1.15-1.2x
// too slow until the calibration measured on the same memory.
struct Buffers {
  cpu::Memory dst, aux, src;
  Buffers(std::size_t n, Kernel k)
      : dst(cpu::allocate_memory(n)),
        aux(k == Kernel::reduce_copy ? cpu::allocate_memory(n) : nullptr),
        src(cpu::allocate_memory(n)) {
    if (!dst || !src || (k == Kernel::reduce_copy && !aux)) throw std::bad_alloc();
  }
  void run(Kernel k, DType t, std::size_t bytes) {
    const std::uint64_t n = bytes / size_of(t);
    if (k == Kernel::copy) std::memcpy(dst.get(), src.get(), bytes);
    else if (k == Kernel::reduce) kernels::reduce_bytes(t, OpKind::sum, dst.get(), src.get(), n);
    else kernels::reduce_copy_bytes(t, OpKind::sum, dst.get(), aux.get(), src.get(), n);
  }
};

// The sizes of the data caches of CPU 0 that no other CPU shares (Linux sysfs), in bytes.
std::vector<double> private_data_caches() {
  std::vector<double> sizes;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream size_in(dir + "size"), shared_in(dir + "shared_cpu_list"), type_in(dir + "type");
    std::string text, shared, type;
    if (!(size_in >> text) || text.empty() || !(shared_in >> shared) || !(type_in >> type)) continue;
    if (type == "Instruction" || shared != "0") continue;  // code only, or shared with another CPU
    double v = std::strtod(text.c_str(), nullptr);
    if (text.back() == 'K') v *= 1024;
    if (text.back() == 'M') v *= 1024 * 1024;
    if (v > 0) sizes.push_back(v);
  }
  return sizes;
}

// A core's own cache inside the last level: the largest private one (an L2 on most
// machines), in bytes; 0 when sysfs has none or it is the last level itself.
double own_cache_bytes(double last_level) {
  const std::vector<double> sizes = private_data_caches();
  const double best = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
  return best >= last_level ? 0 : best;
}

// A core's first-level data cache: the smallest private one, where it is smaller than
// the core's own cache above; 0 otherwise.
double first_cache_bytes(double own) {
  const std::vector<double> sizes = private_data_caches();
  const double least = sizes.empty() ? 0 : *std::min_element(sizes.begin(), sizes.end());
  return least < own ? least : 0;
}

// The last-level cache, measured: copy bandwidth for buffers from 256 KiB up, doubling;
// the cache ends where a copy falls below halfway between the smallest buffer's rate
// and the largest's (which comes from memory). 0 when no step is seen.
double measured_cache_bytes(std::size_t largest, double budget_s);

// One thread, `inner` calls of kernel k on `bytes` a call: the best rate in GB/s written.
double one_thread_gbps(Kernel k, DType t, std::size_t bytes, int inner, double budget_s) {
  Buffers m(bytes, k);
  return best_gbps(static_cast<double>(bytes) * inner, 40, budget_s, [&] {
    for (int i = 0; i < inner; ++i) m.run(k, t, bytes);
  });
}

double copy_gbps(std::size_t bytes, int inner, double budget_s) {
  return one_thread_gbps(Kernel::copy, DType::uint8, bytes, inner, budget_s);
}

// The kernels inside the caches, the way a collective's ranks run them: every core at
// once, each on buffers of its own (three of `small` bytes, inside a core's own cache,
// and three of `far`, in the shared one; zeros: no denormals), the rate of the mean
// call on the slowest core, in GB/s of the bytes written per call. A step waits for its
// slowest rank, and on the machine of bench/RESULTS.md one thread's best call was
// 1.2-1.7x faster than what each of two cores gets at once (a virtual machine's cores
// share more than their caches say).
//
// The kernels take turns, round after round (a warm-up call, then a few timed ones
// each, the cores starting each kernel together), so that every rate sees the same
// stretches of the host; and the mean, not the median: there a core's calls of one
// kernel came in two kinds, one twice as long as the other (the host's other work on
// the core), about half of each, and the median fell on one side or the other kernel
// by kernel. Measured one kernel after the other, with the median, a float32 sum in the
// cache read 11 GB/s in one calibration and 25 in the next (an int32 sum the reverse),
// and algorithms were priced against each other with rates from different stretches.
struct CacheKernel {
  Kernel k;
  DType t;
  bool far;     // on the `far` buffers
  double* out;  // the rate, GB/s
};

void cache_rates(int cores, std::size_t small, std::size_t far, const std::vector<CacheKernel>& kernels,
                 double budget_s) {
  if (kernels.empty()) return;
  const std::vector<int> pin = cpu::cores_to_pin();
  const std::size_t K = kernels.size();
  // us[c][i]: core c's timed calls of kernel i.
  std::vector<std::vector<std::vector<double>>> us(static_cast<std::size_t>(cores),
                                                   std::vector<std::vector<double>>(K));
  std::atomic<std::size_t> arrived{0};
  std::atomic<bool> stop{false};
  const auto n = static_cast<std::size_t>(cores);
  const auto start = Clock::now();
  constexpr int kMinRounds = 5, kMaxRounds = 2000;
  std::vector<std::thread> pool;
  for (int c = 0; c < cores; ++c)
    pool.emplace_back([&, c] {
      if (pin.size() >= n) cpu::pin_this_thread(pin[static_cast<std::size_t>(c)]);  // best effort
      Buffers near_b(small, Kernel::reduce_copy);
      std::unique_ptr<Buffers> far_b = far > 0 ? std::make_unique<Buffers>(far, Kernel::reduce_copy) : nullptr;
      std::size_t passed = 0;
      auto together = [&] {  // every core here before any goes on
        ++passed;
        arrived.fetch_add(1);
        while (arrived.load() < passed * n) std::this_thread::yield();
      };
      auto& mine = us[static_cast<std::size_t>(c)];
      for (int round = 0; round < kMaxRounds; ++round) {
        if (c == 0 && round >= kMinRounds && seconds_since(start) >= budget_s) stop.store(true);
        together();
        if (stop.load()) break;
        for (std::size_t i = 0; i < K; ++i) {
          const CacheKernel& e = kernels[i];
          Buffers& b = e.far && far_b ? *far_b : near_b;
          const std::size_t bytes = e.far && far_b ? far : small;
          together();
          b.run(e.k, e.t, bytes);  // back into this cache after the others' turns
          for (int j = 0; j < (e.far ? 2 : 4); ++j) {
            const auto t0 = Clock::now();
            b.run(e.k, e.t, bytes);
            mine[i].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
          }
        }
      }
    });
  for (auto& th : pool) th.join();
  for (std::size_t i = 0; i < K; ++i) {
    double slowest = 0;
    for (std::size_t c = 0; c < n; ++c) {
      auto& v = us[c][i];
      if (v.empty()) continue;
      // The mean call, without the slowest twentieth (a call the host interrupted).
      std::sort(v.begin(), v.end());
      const std::size_t kept = std::max<std::size_t>(1, v.size() - v.size() / 20);
      const double mean =
          std::accumulate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(kept), 0.0) / static_cast<double>(kept);
      const double bytes = static_cast<double>(kernels[i].far ? far : small);
      const double rate = mean > 0 ? bytes / mean / 1e3 : 0;
      slowest = slowest == 0 ? rate : std::min(slowest, rate);
    }
    *kernels[i].out = slowest;
  }
}

// The shared cache's buffers, where a core has one of its own inside it (`near` bytes):
// per core three buffers that together are at least twice its own cache, all cores'
// buffers at most half the shared one (2 MiB each on 2 cores with 1 MiB L2s and a 32 MiB
// L3); 0 where there is no room between the two caches to measure.
std::size_t far_bytes(double near, double cache, int cores) {
  if (near <= 0) return 0;
  std::size_t far = 256 << 10;
  while (3.0 * static_cast<double>(far) < 2 * near) far *= 2;
  return 3.0 * static_cast<double>(far) * cores <= cache / 2 ? far : 0;
}

// Every in-cache rate of c, in one cache_rates run: a copy and per dtype a reduce and a
// reduce-copy on `small` bytes, and on `far` bytes (where > 0) a copy, and a float32
// reduce and reduce-copy.
void in_cache_rates(Calibration& c, std::size_t small, std::size_t far, double budget_s) {
  std::vector<CacheKernel> kernels{{Kernel::copy, DType::uint8, false, &c.copy_in_cache_gbps}};
  for (std::size_t i = 0; i < kCalibratedDTypes; ++i) {
    const auto t = static_cast<DType>(i);
    kernels.push_back({Kernel::reduce, t, false, &c.reduce_in_cache_gbps[i]});
    kernels.push_back({Kernel::reduce_copy, t, false, &c.reduce_copy_in_cache_gbps[i]});
  }
  if (far > 0) {
    kernels.push_back({Kernel::copy, DType::uint8, true, &c.copy_far_cache_gbps});
    kernels.push_back({Kernel::reduce, DType::float32, true, &c.reduce_far_cache_gbps});
    kernels.push_back({Kernel::reduce_copy, DType::float32, true, &c.reduce_copy_far_cache_gbps});
  }
  cache_rates(c.cores > 0 ? c.cores : 1, small, far, kernels, budget_s);
}

// Each core's buffers (three: a reduce-copy's), for every kernel of shared_rates.
using CoreBuffers = std::vector<std::unique_ptr<Buffers>>;
CoreBuffers core_buffers(int cores, std::size_t bytes_per_core) {
  CoreBuffers bufs;
  for (int c = 0; c < cores; ++c) bufs.push_back(std::make_unique<Buffers>(bytes_per_core, Kernel::reduce_copy));
  return bufs;
}

// Every core at once out of memory, each on buffers of its own (`bytes_per_core` each,
// far beyond the cache), the best of up to 20 runs: GB/s of bytes written, all cores
// together. The kernel matters: on the machine of bench/RESULTS.md two cores' memcpy
// wrote 15-16 GB/s, two sums (a read of the destination, one of the source, a write)
// 18-19 GB/s and two reduce-copies (two reads, a write to a third buffer) 13 GB/s: the
// memory serves each kernel's mix of reads and writes at a rate of its own.
double shared_gbps(Kernel k, CoreBuffers& bufs, std::size_t bytes_per_core, double budget_s) {
  const auto cores = bufs.size();
  return best_gbps(static_cast<double>(bytes_per_core) * static_cast<double>(cores), 20, budget_s, [&] {
    std::vector<std::thread> pool;
    for (std::size_t c = 0; c < cores; ++c)
      pool.emplace_back([&, c] { bufs[c]->run(k, DType::float32, bytes_per_core); });
    for (auto& th : pool) th.join();
  });
}

// The three kernels' shared rates into c (each `budget_s`).
void shared_rates(Calibration& c, int cores, std::size_t bytes_per_core, double budget_s) {
  CoreBuffers bufs = core_buffers(cores, bytes_per_core);
  c.shared_gbps = shared_gbps(Kernel::copy, bufs, bytes_per_core, budget_s);
  c.shared_reduce_gbps = shared_gbps(Kernel::reduce, bufs, bytes_per_core, budget_s);
  c.shared_reduce_copy_gbps = shared_gbps(Kernel::reduce_copy, bufs, bytes_per_core, budget_s);
}

// A copy into lines another core has just read and still holds in its own cache: one
// thread on one core reads `bytes` (well inside its own cache), a thread on another core
// then overwrites them, turn by turn; the rate of a typical overwrite (the median of up
// to `rounds`), in GB/s written. Every line is taken from the other core before it is
// written: on the machine of bench/RESULTS.md 8-9 GB/s, where the same copy into lines
// nobody else holds ran at 30-50 (and reading lines another core had just written ran
// at 35-45). 0 with one core.
double held_gbps(std::size_t bytes, int rounds, double budget_s, std::size_t evict = 0) {
  const std::vector<int> pin = cpu::cores_to_pin();
  if (pin.size() < 2 || rounds < 1) return 0;
  // The writer's source, the lines both touch, the reader's copy of them; what the reader
  // streams through its own cache after its read (`evict` bytes, from and to).
  const cpu::Memory src = cpu::allocate_memory(bytes), line = cpu::allocate_memory(bytes),
                    copy = cpu::allocate_memory(bytes);
  const cpu::Memory away = cpu::allocate_memory(std::max<std::size_t>(evict, 64)),
                    away_to = cpu::allocate_memory(std::max<std::size_t>(evict, 64));
  if (!src || !line || !copy || !away || !away_to) throw std::bad_alloc();
  std::atomic<int> turn{0};  // 2i: the reader's i-th turn, 2i + 1: the writer's
  std::atomic<bool> stop{false};
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(rounds));
  std::thread reader([&] {
    cpu::pin_this_thread(pin[1]);
    for (int i = 0; i < rounds; ++i) {
      while (turn.load(std::memory_order_acquire) != 2 * i)
        if (stop.load(std::memory_order_relaxed)) return;
      std::memcpy(copy.get(), line.get(), bytes);
      if (evict > 0) std::memcpy(away_to.get(), away.get(), evict);
      turn.store(2 * i + 1, std::memory_order_release);
    }
  });
  std::thread writer([&] {
    cpu::pin_this_thread(pin[0]);
    const auto start = Clock::now();
    for (int i = 0; i < rounds; ++i) {
      while (turn.load(std::memory_order_acquire) != 2 * i + 1) std::this_thread::yield();
      const auto t0 = Clock::now();
      std::memcpy(line.get(), src.get(), bytes);
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      if (i >= 10 && seconds_since(start) > budget_s) break;
      turn.store(2 * i + 2, std::memory_order_release);
    }
    stop.store(true);
  });
  writer.join();
  reader.join();
  if (us.empty()) return 0;
  std::nth_element(us.begin(), us.begin() + static_cast<std::ptrdiff_t>(us.size() / 2), us.end());
  const double median = us[us.size() / 2];
  return median > 0 ? static_cast<double>(bytes) / median / 1e3 : 0;
}

// The rates of lines another core holds into c, where a core's own cache is known
// (each `budget_s`): an eighth of that cache (the reduce-scatter step of a 2-rank
// all-reduce of 256 KiB overwrites 128 KiB the other core read, from a 1 MiB L2), and four
// times it, beyond it in the last level, where that fits in a quarter of the last level;
// and a quarter of the first-level data cache, within it (on the machine of
// bench/RESULTS.md 4-16 KiB overwrites came at 29-31 GB/s against 9 for 128 KiB, the
// other core's lines then in its L1, not its L2). Beyond it means beyond it: the reader
// streams twice its own cache of other bytes after its read, so none of the lines is
// left there. Measured right after the read, the last of them still sat in the reader's
// own cache and paid its trip; on the machine of bench/RESULTS.md, with the two cores
// side by side, 4 MiB came at 25-30 GB/s that way and at 42-48 (a copy's rate in the last
// level) once the reader had moved on, and a 2-rank ring all-reduce of 2 MiB, whose
// reduce-scatter overwrites what the other core read three of its megabytes before,
// took 0.65x the time the first rate predicted.
void held_rates(Calibration& c, double last_level, double budget_s) {
  if (c.near_cache_bytes <= 0) return;
  c.held_gbps = held_gbps(static_cast<std::size_t>(c.near_cache_bytes / 8), 400, budget_s);
  if (4 * c.near_cache_bytes <= last_level / 4)
    c.held_far_gbps = held_gbps(static_cast<std::size_t>(4 * c.near_cache_bytes), 100, budget_s,
                                static_cast<std::size_t>(2 * c.near_cache_bytes));
  // And within the first level: the reader's copy touches twice the lines, half of it.
  c.first_cache_bytes = first_cache_bytes(c.near_cache_bytes);
  c.held_first_gbps =
      c.first_cache_bytes >= 4096 ? held_gbps(static_cast<std::size_t>(c.first_cache_bytes / 4), 400, budget_s / 2) : 0;
}

// Buffers out of the cache for the memory's rates: four times the cache, 64 to 256 MiB.
std::size_t memory_bytes(double last_level) {
  return static_cast<std::size_t>(std::clamp(4 * last_level, 64.0 * (1 << 20), 256.0 * (1 << 20)));
}

// The last level as one core's copy sees it (Calibration::cache_seen_bytes): copies
// over buffers from four of a core's own caches (at least an eighth of the last level)
// to twice the last level, a sixteenth of it apart; the rate of each size is the median
// of it and its two neighbours' (a host's other work makes single sizes slow), and the
// cache ends after the last size at least halfway between the smallest sizes' rate and
// the largest's. Bytes touched, source and destination; 0 when no step is seen.
double seen_cache_bytes(double cache, double near, double budget_s) {
  if (cache <= 0) return 0;
  const double step = cache / 16;
  std::vector<std::pair<double, double>> rates;  // (bytes touched, GB/s)
  const double first = std::max(4 * near, cache / 8);
  const auto sizes = static_cast<int>((2 * cache - first) / step) + 1;
  if (sizes < 6) return 0;
  for (int k = 0; k < sizes; ++k) {
    const auto n = static_cast<std::size_t>((first + k * step) / 2) & ~std::size_t{4095};
    // Enough repetitions to move at least 128 MiB a run.
    const int inner = static_cast<int>(std::max<std::size_t>(1, (128u << 20) / n));
    rates.push_back({2.0 * static_cast<double>(n), copy_gbps(n, inner, budget_s / sizes)});
  }
  auto median3 = [](double a, double b, double c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); };
  std::vector<double> smooth(rates.size());
  for (std::size_t k = 0; k < rates.size(); ++k)
    smooth[k] =
        median3(rates[k > 0 ? k - 1 : k].second, rates[k].second, rates[k + 1 < rates.size() ? k + 1 : k].second);
  const double hi = smooth.front(), lo = smooth.back();
  if (hi < 1.3 * lo) return 0;  // no step: the cache is not seen from here
  const double mid = (hi + lo) / 2;
  double last = 0;
  for (std::size_t k = 0; k < rates.size(); ++k)
    if (smooth[k] >= mid) last = rates[k].first;
  return last;
}

double measured_cache_bytes(std::size_t largest, double budget_s) {
  std::vector<std::pair<std::size_t, double>> rates;
  const double each = budget_s / 12;
  for (std::size_t n = 256 << 10; n <= largest; n *= 2) {
    // Enough repetitions to move at least 64 MiB, so small buffers are timed well.
    const int inner = static_cast<int>(std::max<std::size_t>(1, (64u << 20) / n));
    rates.push_back({n, copy_gbps(n, inner, each)});
  }
  if (rates.size() < 3) return 0;
  const double hi = rates.front().second, lo = rates.back().second;
  if (hi < 1.5 * lo) return 0;  // no step: the cache is not seen from here
  const double mid = (hi + lo) / 2;
  std::size_t last = 0;
  for (const auto& [n, r] : rates)
    if (r >= mid) last = n;
  // The copy touches source and destination: both fit in the cache at `last`.
  return static_cast<double>(2 * last);
}

Schedule one_element_world(std::int32_t ranks) {
  Schedule s;
  s.ranks = ranks;
  s.dtype = DType::int32;
  s.slice_bytes = 0;
  s.buffers.push_back(BufferDecl{"x", std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), 2), false});
  Call c;
  c.kind = CallKind::program;
  c.algorithm = "calibration";
  s.calls.push_back(c);
  return s;
}

Schedule exchange(std::int32_t ranks, std::int32_t steps) {
  Schedule s = one_element_world(ranks);
  for (std::int32_t k = 0; k < steps; ++k) {
    Step st;
    st.phase = "exchange";
    for (std::int32_t r = 0; r < ranks; ++r) {
      Transfer t;
      t.dst = {r, 0, static_cast<std::uint64_t>(k % 2)};
      t.src = {(r + ranks - 1) % ranks, 0, static_cast<std::uint64_t>((k + 1) % 2)};
      t.count = 1;
      st.transfers.push_back(t);
    }
    s.steps.push_back(std::move(st));
  }
  s.calls[0].num_steps = steps;
  return s;
}

// Looks across cores: at step k every rank copies one element from every rank pinned to
// another core (cpu::core_for_lane), written at step k-1, so each rank waits for all of
// them at every step. Rank r's slot for rank q is 2q + k % 2.
Schedule cross_looks(std::int32_t ranks, std::int32_t cores, std::int32_t steps) {
  Schedule s = one_element_world(ranks);
  s.buffers[0].count.assign(static_cast<std::size_t>(ranks), 2 * static_cast<std::uint64_t>(ranks));
  const auto R = static_cast<std::size_t>(ranks), C = static_cast<std::size_t>(cores);
  for (std::int32_t k = 0; k < steps; ++k) {
    Step st;
    st.phase = "looks";
    for (std::int32_t r = 0; r < ranks; ++r)
      for (std::int32_t q = 0; q < ranks; ++q) {
        if (cpu::core_for_lane(static_cast<std::size_t>(q), R, C) ==
            cpu::core_for_lane(static_cast<std::size_t>(r), R, C))
          continue;
        Transfer t;
        t.dst = {r, 0, static_cast<std::uint64_t>(2 * q + k % 2)};
        t.src = {q, 0, static_cast<std::uint64_t>(2 * r + (k + 1) % 2)};
        t.count = 1;
        st.transfers.push_back(t);
      }
    s.steps.push_back(std::move(st));
  }
  s.calls[0].num_steps = steps;
  return s;
}

Schedule barrier_steps(std::int32_t ranks, std::int32_t steps) {
  Schedule s = one_element_world(ranks);
  for (std::int32_t k = 0; k < steps; ++k) {
    Step st;
    st.phase = "local";
    for (std::int32_t r = 0; r < ranks; ++r) {
      Transfer t;
      t.src = {r, 0, 0};
      t.dst = {r, 0, 1};
      t.count = 1;
      st.transfers.push_back(t);
    }
    s.steps.push_back(std::move(st));
  }
  s.calls[0].num_steps = steps;
  return s;
}

// Microseconds per step of a fast-mode run of `s` (best of a few runs).
double fast_us_per_step(const Schedule& s, double budget_s, std::int32_t iterations = 1) {
  auto backend = make_cpu_backend();
  SessionOptions o;
  o.record_events = false;
  auto session = backend->open(s, o);
  if (!session) return 0;
  double best = 0;
  const auto start = Clock::now();
  for (int i = 0; i < 20 && (i < 2 || seconds_since(start) < budget_s); ++i) {
    if (!(*session)->run_all(iterations)) return 0;
    const double us = (*session)->last_run_us() / static_cast<double>(s.steps.size() * iterations);
    best = best == 0 ? us : std::min(best, us);
  }
  return best;
}

// A look at a rank pinned to another core, with ranks outnumbering cores (4 a core): the
// steps of cross_looks against the exchange's (of as many ranks), per look a core's ranks make in a step
// (the exchange makes 2: the ranks at each end of a core's run of neighbours). Each of
// these looks fetches two lines another core wrote, the rank's progress counter and the
// element copied; the model's look is the counter's line alone, so half of it. (On the
// machine of bench/RESULTS.md: 0.13-0.14 us a look here, and 41-75 ns for one line passed
// between two threads spinning on two cores.)
double remote_look_us(int cores, double switch_us, double budget_s) {
  if (cores < 2 || switch_us <= 0) return 0;
  const std::int32_t crowd = 4 * cores;
  const double looks = 4.0 * (crowd - 4);  // 4 ranks a core, each looking at every rank elsewhere
  // The two kinds of steps measured in turns, each kind's best kept: a machine busy for a
  // moment slows the one measured then, not the difference.
  double all = 0, ex = 0;
  const auto start = Clock::now();
  for (int round = 0; round < 5 && (round < 2 || seconds_since(start) < budget_s); ++round) {
    const double a = fast_us_per_step(cross_looks(crowd, cores, 400), budget_s / 10);
    const double e = fast_us_per_step(exchange(crowd, 400), budget_s / 10);
    if (a <= 0 || e <= 0) return 0;
    all = all == 0 ? a : std::min(all, a);
    ex = ex == 0 ? e : std::min(ex, e);
  }
  // A look never costs more than handing the core over (switch_us, per rank per core):
  // beyond that the measurement saw something else.
  return std::min(switch_us, std::max(0.0, (all - ex) / (looks - 2)) / 2);
}

// A step of two ranks that each wait for the other: an exchange of two steps, called
// back to back as a benchmark or a training loop calls a collective. (One long chain
// of such hops measured 2.3x more per hop on a virtual machine, in two calibrations of
// three, than the same machine's 2-rank all-reduces take a step.)
double wake_us(std::int32_t ranks, double budget_s) { return fast_us_per_step(exchange(ranks, 2), budget_s, 1000); }

// A step of local copies in fast mode: nothing to wait for, only each rank's own cost
// of a step.
double own_step_us(std::int32_t ranks, std::int32_t steps, double budget_s) {
  return fast_us_per_step(barrier_steps(ranks, steps), budget_s);
}

// Microseconds per observable-mode step (the barrier) with `ranks` ranks.
double barrier_us(std::int32_t ranks, std::int32_t steps, double budget_s) {
  const Schedule s = barrier_steps(ranks, steps);
  auto backend = make_cpu_backend();
  SessionOptions o;
  o.record_events = false;
  auto session = backend->open(s, o);
  if (!session) return 0;
  double best = 0;
  const auto start = Clock::now();
  for (int round = 0; round < 5 && (round < 1 || seconds_since(start) < budget_s); ++round) {
    const auto t0 = Clock::now();
    for (std::int32_t k = 0; k < steps; ++k)
      if (!(*session)->run_step(k)) return 0;
    const double us = seconds_since(t0) * 1e6 / steps;
    best = best == 0 ? us : std::min(best, us);
  }
  return best;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%MZ", &tm);
  return buf;
}

std::string machine_text(int cores) {
  std::string model;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  return std::to_string(cores) + " cores" + (model.empty() ? "" : ", " + model);
}

}  // namespace

Calibration measure_machine(double budget_s, const std::function<void(double, const std::string&)>& progress) {
  budget_s = std::clamp(budget_s, 2.0, 60.0);
  const auto start = Clock::now();
  Calibration c;
  c.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c.date = utc_now();
  c.machine = machine_text(c.cores);
  auto say = [&](const std::string& what) {
    if (progress) progress(std::min(0.99, seconds_since(start) / budget_s), what);
  };
  // The budget's shares: the cache 15% (where it is measured; else 10% for the copy's view
  // of it), bandwidths 45%, wake-ups 25%, barriers 15%.
  say("cache size");
  // The last level as the kernel describes it (sysfs), measured only where it says
  // nothing: the copy rate falls in two steps (a private L2, then the shared L3), and
  // from one run to the next the measurement found one step or the other (8, 16 or
  // 32 MiB on the machine of bench/RESULTS.md, whose L3 is 32 MiB). Beside it, from the
  // step above a core's own cache only, how much of it a copy uses (cache_seen_bytes:
  // smaller where the host's other tenants share it), which the model counts
  // (Calibration::priced_cache_bytes).
  const double sysfs_cache = CostModel::cpu_default().cache_bytes;
  c.cache_bytes = sysfs_cache > 0 ? sysfs_cache : measured_cache_bytes(256u << 20, budget_s * 0.15);
  const double own_cache = own_cache_bytes(c.cache_bytes);
  if (sysfs_cache > 0) {
    say("the last-level cache as a copy sees it");
    c.cache_seen_bytes = seen_cache_bytes(c.cache_bytes, own_cache, budget_s * 0.1);
  }
  const std::size_t big = memory_bytes(c.cache_bytes);
  const std::size_t small = 256 << 10;  // inside any L2
  const double share = budget_s * 0.45 / (4 + 2 * static_cast<double>(kCalibratedDTypes));

  say("copy bandwidth");
  c.copy_gbps = copy_gbps(big, 1, share);
  for (std::size_t i = 0; i < kCalibratedDTypes; ++i) {
    const auto t = static_cast<DType>(i);
    say("reduce bandwidth, " + std::string(name_of(t)));
    c.reduce_gbps[i] = one_thread_gbps(Kernel::reduce, t, big, 1, share * 0.6);
    c.reduce_copy_gbps[i] = one_thread_gbps(Kernel::reduce_copy, t, big, 1, share * 0.4);
  }
  c.near_cache_bytes = own_cache;
  const std::size_t far = far_bytes(c.near_cache_bytes, c.cache_bytes, c.cores);
  if (far == 0) c.near_cache_bytes = 0;  // no room between the two caches to measure: one level
  say(far > 0 ? "copy and reduce bandwidth in a core's own cache and in the shared cache"
              : "copy and reduce bandwidth in the cache");
  in_cache_rates(c, small, far, share * (0.5 + 0.6 * static_cast<double>(kCalibratedDTypes) + 1.5));
  if (c.near_cache_bytes > 0) say("copy into lines another core holds");
  held_rates(c, c.cache_bytes, share * 0.5);
  say("memory bandwidth shared by " + std::to_string(c.cores) + " cores");
  shared_rates(c, c.cores, big / static_cast<std::size_t>(c.cores), share * 0.7);

  say("wake-up latency");
  const double wake_budget = budget_s * 0.25 / 2;
  c.wake_us = wake_us(std::min(2, c.cores), wake_budget);
  say("a step's own cost");
  c.step_us = own_step_us(c.cores, 2000, wake_budget / 2);
  say("wake-up latency, ranks outnumbering cores");
  // Every rank waits for its neighbour at once, 4 ranks per core: each step waits for
  // the scheduler to run the ranks in turn. The model's switch_us is per rank per core.
  const std::int32_t crowd = 4 * c.cores;
  c.switch_us = fast_us_per_step(exchange(crowd, 400), wake_budget) / (static_cast<double>(crowd) / c.cores);
  say("a look at a rank on another core");
  c.remote_look_us = remote_look_us(c.cores, c.switch_us, wake_budget / 2);

  say("observable mode's barrier");
  const double bar_budget = budget_s * 0.15 / 2;
  const double at_cores = barrier_us(c.cores, 200, bar_budget);
  const double at_crowd = barrier_us(crowd, 100, bar_budget);
  c.barrier_us = at_cores;
  c.barrier_per_rank_us = std::max(0.0, (at_crowd - at_cores) / (crowd - c.cores));
  c.seconds = seconds_since(start);
  if (progress) progress(1.0, "done");
  return c;
}

Calibration measure_placement(const Calibration& base, double budget_s) {
  budget_s = std::clamp(budget_s, 0.2, 10.0);
  const auto start = Clock::now();
  Calibration c = base;
  const int cores = c.cores > 0 ? c.cores : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const double cache = c.cache_bytes > 0 ? c.cache_bytes : CostModel::cpu_default().cache_bytes;
  const double share = budget_s / 8;
  shared_rates(c, cores, memory_bytes(cache) / static_cast<std::size_t>(cores), share);
  held_rates(c, cache, share);
  c.wake_us = wake_us(std::min(2, cores), share);
  if (c.remote_look_us > 0 && c.switch_us > 0) c.remote_look_us = remote_look_us(cores, c.switch_us, share);
  c.date = utc_now();
  c.seconds = seconds_since(start);
  return c;
}

}  // namespace collscope
