// The "what if" picture: every algorithm of a collective, its predicted time against
// the message size on a chosen topology, and where the fastest changes (the
// crossovers). It answers "why ring here and tree there" for the current lesson's call.
#pragma once

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

struct WhatIfSeries {
  std::string algorithm;
  std::vector<double> us;  // per size (0 where the size holds no element per rank)
  std::string same_as;     // an algorithm before it that runs the very same steps at every size ("": none)
};

struct Crossover {
  std::size_t index = 0;  // the first size at which `to` is the fastest
  std::uint64_t bytes = 0;
  std::string from, to;
};

struct WhatIf {
  std::string model;                  // Machine::label()
  std::vector<std::uint64_t> bytes;   // the message sizes
  std::vector<std::uint64_t> counts;  // the `count` each size is
  std::vector<WhatIfSeries> series;   // one per algorithm, in the registry's order
  std::vector<std::string> fastest;   // per size (within 2%, the one fastest at the size before)
  std::vector<Crossover> crossovers;
};

// Prices every algorithm at every size (blocking: seconds for many ranks; call it off
// the window's thread). Errors: an unknown topology, a bad rank count.
Result<WhatIf> build_what_if(const WhatIfQuery& q, const std::string& config_dir);

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
