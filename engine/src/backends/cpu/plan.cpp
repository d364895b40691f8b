// Memory and plans of a cpu session (plan.h).
#include "backends/cpu/plan.h"

#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

namespace collscope::cpu {

namespace {

constexpr std::uint64_t kHugePage = 2u << 20;  // x86-64's large page
constexpr std::uint64_t kHugeFrom = 4u << 20;  // buffers from this size on use them

std::uint8_t* ptr(const RankMemory& mem, const Loc& l, std::size_t esize) {
  return mem[static_cast<std::size_t>(l.rank)][static_cast<std::size_t>(l.buf)].get() + l.offset * esize;
}

}  // namespace

Memory allocate_memory(std::uint64_t bytes) {
  if (bytes == 0) return nullptr;
  // Large buffers on 2 MiB pages where the kernel has them (transparent huge pages): a
  // 1 MiB slice then costs one TLB entry instead of 256.
  const std::uint64_t align = bytes >= kHugeFrom ? kHugePage : 64;
  const std::uint64_t rounded = (bytes + align - 1) / align * align;
  Memory m(static_cast<std::uint8_t*>(std::aligned_alloc(align, rounded)));
  if (!m) return m;
  if (align == kHugePage && !std::getenv("COLLSCOPE_NO_HUGE")) madvise(m.get(), rounded, MADV_HUGEPAGE);
  std::memset(m.get(), 0, rounded);
  return m;
}

Result<RankMemory> allocate_buffers(const Schedule& s) {
  const std::size_t esize = size_of(s.dtype);
  RankMemory mem(static_cast<std::size_t>(s.ranks));
  for (std::size_t r = 0; r < mem.size(); ++r)
    for (const auto& b : s.buffers) {
      const std::uint64_t bytes = b.count[r] * esize;
      Memory m = allocate_memory(bytes);
      if (bytes && !m)
        return make_error("backend.out_of_memory",
                          "cpu backend: cannot allocate " + std::to_string(bytes) + " bytes for rank " +
                              std::to_string(r) + "'s " + b.name,
                          "use fewer ranks or a smaller count", {}, ExitCode::backend_failure);
      mem[r].push_back(std::move(m));
    }
  return mem;
}

std::vector<RankPlan> build_plans(const Schedule& s, const RankMemory& mem) {
  const std::size_t esize = size_of(s.dtype);
  auto deps = dataflow::compute_deps(s);
  std::vector<RankPlan> plans(static_cast<std::size_t>(dataflow::lane_count(s)));
  for (std::size_t r = 0; r < plans.size(); ++r) {
    plans[r].ops.resize(s.steps.size());
    plans[r].deps = std::move(deps[r]);
  }
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const auto& st = s.steps[k];
    for (std::size_t t = 0; t < st.transfers.size(); ++t) {
      const auto& x = st.transfers[t];
      // A signal (count 0) moves nothing; it is kept as an op so that it is timed.
      const bool data = x.count && x.action != Action::compute;
      Op op{x.action,
            data ? ptr(mem, x.src, esize) : nullptr,
            data ? ptr(mem, x.dst, esize) : nullptr,
            data && x.action == Action::reduce_copy ? ptr(mem, x.aux, esize) : nullptr,
            x.count,
            x.divisor,
            static_cast<std::int32_t>(t),
            x.duration_us};
      plans[static_cast<std::size_t>(dataflow::lane_of(s, x))].ops[k].push_back(op);
    }
  }
  return plans;
}

std::size_t core_for_lane(std::size_t lane, std::size_t lanes, std::size_t cores) {
  if (cores == 0 || lanes == 0) return 0;
  return lanes <= cores ? lane : lane * cores / lanes;
}

bool pin_this_thread(int core) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(core, &one);
  return sched_setaffinity(0, sizeof one, &one) == 0;
}

std::vector<int> cores_to_pin() {
  std::vector<int> cores;
  if (const char* pin = std::getenv("COLLSCOPE_PIN"); pin && std::string(pin) == "0") return cores;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cores.push_back(c);
  return cores;
}

WaitTuning wait_tuning(std::int32_t ranks, int cores) {
  if (cores <= 0) cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Spin only when every rank can have a core (the launching thread sleeps while
  // the ranks run); otherwise a spinning rank steals the core of the rank it waits for.
  const bool own_core = ranks <= cores;
  // Both budgets outlast a virtual machine's wake-up of an idle core (wait.h).
  WaitTuning w = own_core ? WaitTuning{500, 20} : WaitTuning{0, 300};
  // COLLSCOPE_WAIT=spin|yield|sleep forces one strategy, to measure them (bench/RESULTS.md).
  if (const char* how = std::getenv("COLLSCOPE_WAIT")) {
    const std::string h(how);
    if (h == "spin") w = {500, 0};
    if (h == "yield") w = {0, 500};
    if (h == "sleep") w = {0, 0};
  }
  return w;
}

}  // namespace collscope::cpu
