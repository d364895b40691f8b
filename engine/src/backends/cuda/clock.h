// GPU times on the session's host clock: CUDA events around every transfer, read
// relative to one event per GPU recorded when a run starts, whose host time is known.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "collscope/backend.h"
#include "world.h"

namespace collscope::gpu {

class TransferClock {
 public:
  ~TransferClock();
  Status open(int devices);
  // A run starts: one base event per GPU on a stream of that GPU, at host time `host_us`.
  Status mark(const DeviceWorld& w, std::int32_t ranks, double host_us);
  // Around one transfer on `stream` (the current device must be the stream's). `index`,
  // when given, receives the transfer's number for stop(stream, index): transfers whose
  // timings overlap (NCCL receives, started together before a group) are stopped by it.
  Status start(cudaStream_t stream, std::int32_t step, std::int32_t transfer, std::int32_t rank, int device,
               std::size_t* index = nullptr);
  Status stop(cudaStream_t stream);  // the transfer started last
  Status stop(cudaStream_t stream, std::size_t index);
  // After the streams finished: every timed transfer, on the host clock.
  std::vector<TransferTiming> take();

 private:
  struct Timed {
    std::int32_t step, transfer, rank, device;
    cudaEvent_t start, end;
  };
  void release();
  std::vector<cudaEvent_t> base_;
  double base_host_us_ = 0;
  std::vector<Timed> timed_;
};

}  // namespace collscope::gpu
