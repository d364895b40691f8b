// The cpu backend's memory and plans, set up once when a session opens
// (docs/ARCHITECTURE.md, "Backends"): every rank's buffers in host memory, and for every
// lane (a rank's communication thread, or its compute thread) the ops it executes at each
// step with direct pointers into that memory, and the dependencies it waits for (ir/deps.h).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "backends/cpu/wait.h"
#include "collscope/result.h"
#include "collscope/schedule.h"
#include "ir/deps.h"

namespace collscope::cpu {

// One transfer, resolved to pointers: the receiver's lane executes it.
struct Op {
  Action action;
  const std::uint8_t* src;
  std::uint8_t* dst;
  const std::uint8_t* aux;  // reduce_copy only
  std::uint64_t count;
  std::uint32_t divisor;
  std::int32_t transfer;
  std::uint32_t duration_us;
};

struct RankPlan {
  std::vector<std::vector<Op>> ops;              // per step
  std::vector<std::vector<dataflow::Dep>> deps;  // per step
};

struct FreeDeleter {
  void operator()(std::uint8_t* p) const { std::free(p); }
};
using Memory = std::unique_ptr<std::uint8_t, FreeDeleter>;
using RankMemory = std::vector<std::vector<Memory>>;  // [rank][buf]

// `bytes` of zeroed memory as a rank's buffer gets it (large ones on huge pages where
// the kernel has them); null when there is none.
Memory allocate_memory(std::uint64_t bytes);

// Every rank's buffers, zeroed. Error: backend.out_of_memory (exit 3), naming the buffer.
Result<RankMemory> allocate_buffers(const Schedule& s);

// Per lane (dataflow::lane_count(s) of them): its ops and dependencies per step.
std::vector<RankPlan> build_plans(const Schedule& s, const RankMemory& mem);

// How a waiting lane spends its time before it sleeps (wait.h), for `ranks` ranks (or
// processes of one machine) on `cores` cores; the mpi backend's processes wait the same
// way. `cores` <= 0: the machine's. COLLSCOPE_WAIT=spin|yield|sleep forces one strategy.
WaitTuning wait_tuning(std::int32_t ranks, int cores);

// Which of `cores` usable cores lane `lane` of `lanes` stays on (worker.cpp pins it
// there): a core each while there are enough, otherwise neighbouring lanes share one,
// the lanes spread as evenly as they divide.
std::size_t core_for_lane(std::size_t lane, std::size_t lanes, std::size_t cores);
// The cores this process may use, in order, for placing lanes (or a machine's processes)
// on them; empty when COLLSCOPE_PIN=0 asks to leave them to the scheduler, or when the
// process's cores cannot be read.
std::vector<int> cores_to_pin();
// Keeps the calling thread on `core` (threads it starts later inherit it); false when
// the kernel refuses.
bool pin_this_thread(int core);

}  // namespace collscope::cpu
