// The Backend around a GPU session type: available when the probe found a GPU,
// opening a session of type S (constructed from the schedule, the options and the
// number of GPUs, then started).
#pragma once

#include <memory>
#include <string>

#include "collscope/backend.h"
#include "probe.h"

namespace collscope::gpu {

template <class S>
class GpuBackend final : public Backend {
 public:
  GpuBackend(GpuProbe p, std::string name, std::string description, BackendCapabilities caps)
      : probe_(std::move(p)), name_(std::move(name)), description_(std::move(description)), caps_(std::move(caps)) {}

  BackendInfo info() const override {
    BackendInfo i{name_, description_, probe_.devices > 0, probe_.problem, caps_, probe_.devices};
    if (probe_.devices > 0) i.description += " (" + std::to_string(probe_.devices) + " GPU(s))";
    return i;
  }

  Result<std::unique_ptr<Session>> open(const Schedule& s, const SessionOptions& o) const override {
    if (probe_.devices <= 0)
      return make_error("backend.unavailable", "backend \"" + name_ + "\" is not available: " + probe_.problem,
                        "use --backend cpu, or see `collscope list`", {}, ExitCode::backend_failure);
    auto session = std::make_unique<S>(s, o, probe_.devices);
    if (auto st = session->start(); !st) return st.error();
    return std::unique_ptr<Session>(std::move(session));
  }

 private:
  GpuProbe probe_;
  std::string name_, description_;
  BackendCapabilities caps_;
};

}  // namespace collscope::gpu
