// What the cuda and nccl sessions share: the schedule and options, every rank's device
// memory and streams, the GPU transfer clock and the host clock, and the state of a run
// that was aborted (an aborted session runs nothing more).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "clock.h"
#include "collscope/backend.h"
#include "park.h"
#include "world.h"

namespace collscope::gpu {

class GpuSession : public Session {
 public:
  GpuSession(const Schedule& s, const SessionOptions& o, int devices)
      : s_(s), o_(o), devices_(devices), origin_(Clock::now()) {}

  std::string device_label(std::int32_t rank) const override { return world_.label(rank); }
  Status write_buffer(std::int32_t rank, std::int32_t buf, const void* data, std::uint64_t bytes) override {
    return world_.write(rank, buf, data, bytes);
  }
  Status read_buffer(std::int32_t rank, std::int32_t buf, void* data, std::uint64_t bytes) override {
    return world_.read(rank, buf, data, bytes);
  }
  double last_run_us() const override { return last_us_; }
  std::vector<TransferTiming> take_events() override {
    if (!world_.synchronize().ok()) return {};
    return clock_.take();
  }
  double now_us() const override { return std::chrono::duration<double, std::micro>(Clock::now() - origin_).count(); }

 protected:
  using Clock = std::chrono::steady_clock;

  const Schedule& s_;
  SessionOptions o_;
  int devices_;
  Clock::time_point origin_;
  DeviceWorld world_;
  TransferClock clock_;
  double last_us_ = 0;
  std::optional<Parked> parked_;  // the first crash or hang fault enqueued
  std::optional<Error> failure_;  // set when a run was aborted
};

}  // namespace collscope::gpu
