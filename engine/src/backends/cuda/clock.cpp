#include "clock.h"

#include "check.h"

namespace collscope::gpu {

TransferClock::~TransferClock() {
  release();
  for (cudaEvent_t e : base_)
    if (e) cudaEventDestroy(e);
}

Status TransferClock::open(int devices) {
  base_.assign(static_cast<std::size_t>(devices), nullptr);
  for (int g = 0; g < devices; ++g) {
    COLLSCOPE_CUDA(cudaSetDevice(g));
    COLLSCOPE_CUDA(cudaEventCreate(&base_[static_cast<std::size_t>(g)]));
  }
  return ok_status();
}

Status TransferClock::mark(const DeviceWorld& w, std::int32_t ranks, double host_us) {
  base_host_us_ = host_us;
  for (std::size_t g = 0; g < base_.size(); ++g)
    for (std::int32_t r = 0; r < ranks; ++r)
      if (w.device_of(r) == static_cast<int>(g)) {
        COLLSCOPE_CUDA(cudaSetDevice(static_cast<int>(g)));
        COLLSCOPE_CUDA(cudaEventRecord(base_[g], w.stream(r)));
        break;
      }
  return ok_status();
}

Status TransferClock::start(cudaStream_t stream, std::int32_t step, std::int32_t transfer, std::int32_t rank,
                            int device, std::size_t* index) {
  Timed t{step, transfer, rank, device, nullptr, nullptr};
  COLLSCOPE_CUDA(cudaEventCreate(&t.start));
  COLLSCOPE_CUDA(cudaEventCreate(&t.end));
  timed_.push_back(t);  // owned from here on: release() destroys both events
  COLLSCOPE_CUDA(cudaEventRecord(t.start, stream));
  if (index) *index = timed_.size() - 1;
  return ok_status();
}

Status TransferClock::stop(cudaStream_t stream) { return stop(stream, timed_.size() - 1); }

Status TransferClock::stop(cudaStream_t stream, std::size_t index) {
  COLLSCOPE_CUDA(cudaEventRecord(timed_[index].end, stream));
  return ok_status();
}

std::vector<TransferTiming> TransferClock::take() {
  std::vector<TransferTiming> out;
  out.reserve(timed_.size());
  for (const Timed& t : timed_) {
    float a = 0, b = 0;
    if (cudaEventElapsedTime(&a, base_[static_cast<std::size_t>(t.device)], t.start) != cudaSuccess) continue;
    if (cudaEventElapsedTime(&b, base_[static_cast<std::size_t>(t.device)], t.end) != cudaSuccess) continue;
    out.push_back({t.step, t.transfer, t.rank, base_host_us_ + a * 1000.0, base_host_us_ + b * 1000.0});
  }
  release();
  return out;
}

void TransferClock::release() {
  for (const Timed& t : timed_) {
    cudaEventDestroy(t.start);
    cudaEventDestroy(t.end);
  }
  timed_.clear();
}

}  // namespace collscope::gpu
