// Defaults that the engine, the command line and the window share, each with one
// home so that they cannot drift apart.
#pragma once

#include <cstdint>

namespace collscope {

// A run in which no rank finishes a step for this long is aborted (backend.timeout,
// exit 3): a hung or dead rank never makes a run wait forever.
inline constexpr double kDefaultTimeoutSeconds = 5.0;
// Bytes of per-step buffer snapshots an observable run keeps (beyond: every k-th step,
// re-executed from the nearest kept one when stepping back).
inline constexpr std::uint64_t kDefaultSnapshotBudget = 256ull << 20;
// Ops kept per rank in the flight record.
inline constexpr std::int32_t kDefaultFlightCapacity = 64;

}  // namespace collscope
