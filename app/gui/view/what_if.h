// The "what if" picture: every algorithm of a collective, its predicted time against
// the message size on a chosen topology, and where the fastest changes (the
// crossovers). It answers "why ring here and tree there" for the current lesson's call.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collscope/result.h"
#include "collscope/types.h"

namespace collscope::view {

struct WhatIfQuery {
  Collective coll = Collective::allreduce;
  std::int32_t ranks = 8;
  std::int64_t nodes = 0;  // 0: the topology's own count
  std::string topology;    // "" or "this-machine": this machine's cpu model
  DType dtype = DType::float32;
  ReduceOp op = ReduceOp::sum;
  std::uint64_t min_bytes = 8, max_bytes = 64u << 20;  // message sizes, as nccl-tests counts them
  double factor = 4;                                   // each size this many times the one before
  bool fast = true;                                    // fast mode's estimate (else observable mode's)
};

// On a topology of devices, up to this many ranks every algorithm is lowered and priced
// step by step; beyond, each is priced from its shape (algorithm_shape: its distinct
// steps once each), up to kWhatIfMaxRanks. Shapes and lowered schedules agree to 2%
// (tests/test_shapes.cpp). This machine's cpu model prices lowered schedules of up to
// kMaxRanks (a run's most); the window's ranks box offers it up to kWhatIfLoweredRanks.
constexpr std::int32_t kWhatIfLoweredRanks = 256;
constexpr std::int32_t kWhatIfMaxRanks = 65536;

struct WhatIfSeries {
  std::string algorithm;
  std::vector<double> us;  // per size (0 where the size holds no element per rank)
  std::string same_as;     // an algorithm before it that runs the very same steps at every size ("": none)
  bool priced = true;      // false: beyond kWhatIfLoweredRanks it has no shape, so no curve
  // The most messages one rank handles in a step, at any size: beyond kManyMessages
  // (model.h) the curve is too low, the model having no cost per message.
  std::uint64_t busiest_messages = 0;
};

struct Crossover {
  std::size_t index = 0;  // the first size at which `to` is the fastest
  std::uint64_t bytes = 0;
  std::string from, to;
};

struct WhatIf {
  std::string model;                  // Machine::label()
  std::string method;                 // how it was priced, for the caption
  std::vector<std::uint64_t> bytes;   // the message sizes
  std::vector<std::uint64_t> counts;  // the `count` each size is
  std::vector<WhatIfSeries> series;   // one per algorithm, in the registry's order
  std::vector<std::string> fastest;   // per size (within 2%, the one fastest at the size before)
  std::vector<Crossover> crossovers;
};

// How far the pricing has come (sizes x algorithms priced of all of them), and a way to
// stop it: a window that asks again does not wait for the answer it no longer wants.
struct WhatIfProgress {
  std::atomic<std::size_t> done{0};
  std::atomic<std::size_t> total{0};
  std::atomic<bool> cancel{false};
};

// Prices every algorithm at every size (blocking: seconds for many ranks; call it off
// the window's thread). Errors: an unknown topology, a bad rank count, a cancelled run.
Result<WhatIf> build_what_if(const WhatIfQuery& q, const std::string& config_dir, WhatIfProgress* progress = nullptr);

// Where the lesson's call sits on the picture: the index of the size nearest to
// `bytes` (on a log scale) and the fraction of the way to the next size.
struct Placing {
  std::size_t index = 0;
  double frac = 0;
};
Placing place_on(const WhatIf& w, std::uint64_t bytes);

// "8 B", "256 KiB", "64 MiB".
std::string size_label(std::uint64_t bytes);

}  // namespace collscope::view
