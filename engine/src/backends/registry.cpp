// The backends this build knows, available or not, and why.
#include <string>

#include "collscope/backend.h"
#include "collscope/device_probe.h"
#if defined(COLLSCOPE_HAVE_CUDA)
#include "cuda/cuda_backend.h"
#endif
#if defined(COLLSCOPE_HAVE_MPI)
#include "mpi/mpi_backend.h"
#endif

namespace collscope {

namespace {

// A GPU backend this build cannot run: `list` shows it with the reason.
class UnavailableBackend final : public Backend {
 public:
  UnavailableBackend(std::string name, std::string description, std::string reason, BackendCapabilities caps)
      : info_{std::move(name), std::move(description), false, std::move(reason), std::move(caps)} {}
  BackendInfo info() const override { return info_; }
  Result<std::unique_ptr<Session>> open(const Schedule&, const SessionOptions&) const override {
    return make_error("backend.unavailable", "backend \"" + info_.name + "\" is not available: " + info_.reason,
                      "use --backend cpu, or see `collscope list`", {}, ExitCode::backend_failure);
  }

 private:
  BackendInfo info_;
};

#if !defined(COLLSCOPE_HAVE_CUDA)
const char* kNotBuilt = "not built (configure with -DCOLLSCOPE_CUDA=ON where the CUDA toolkit is installed)";
#endif

}  // namespace

std::vector<std::unique_ptr<Backend>> make_backends() {
  std::vector<std::unique_ptr<Backend>> all;
  all.push_back(make_cpu_backend());
#if defined(COLLSCOPE_HAVE_CUDA)
  const GpuProbe probe = probe_gpus();
  all.push_back(gpu::make_cuda_backend(probe));
  all.push_back(gpu::make_nccl_backend(probe));
#else
  all.push_back(std::make_unique<UnavailableBackend>("cuda", "our CUDA kernels, rank r on GPU r mod G", kNotBuilt,
                                                     BackendCapabilities{{}, false, true, false, true}));
  all.push_back(std::make_unique<UnavailableBackend>("nccl", "NCCL send/recv per step, one rank per GPU", kNotBuilt,
                                                     BackendCapabilities{"nccl", false, true, false}));
#endif
#if defined(COLLSCOPE_HAVE_MPI)
  all.push_back(mpi::make_mpi_backend());
#else
  all.push_back(std::make_unique<UnavailableBackend>(
      "mpi", "one process per rank: shared memory within a node, messages between nodes",
      "not built (configure with -DCOLLSCOPE_MPI=ON where Open MPI or MPICH is installed)",
      BackendCapabilities{"mpi", true, false, true}));
#endif
  return all;
}

#if !defined(COLLSCOPE_HAVE_CUDA)
Result<DeviceBandwidth> probe_device_bandwidth(std::uint64_t) {
  return make_error("backend.unavailable", std::string("no GPU to measure: the GPU backends are ") + kNotBuilt,
                    "see `collscope list`", {}, ExitCode::backend_failure);
}
#endif

Status known_backend(const std::string& name) {
  std::string names;
  for (auto& b : make_backends()) {
    const auto info = b->info();
    if (info.name == name) return ok_status();
    names += (names.empty() ? "" : ", ") + info.name;
  }
  return make_error("backend.unknown", "unknown backend \"" + name + "\"", "valid backends: " + names);
}

Result<std::unique_ptr<Backend>> find_backend(const std::string& name) {
  for (auto& b : make_backends()) {
    const auto info = b->info();
    if (info.name == name) {
      if (!info.available)
        return make_error("backend.unavailable", "backend \"" + name + "\" is not available: " + info.reason,
                          "use --backend cpu, or see `collscope list`", {}, ExitCode::backend_failure);
      return std::move(b);
    }
  }
  return known_backend(name).error();
}

int devices_found(const std::string& name) {
  auto b = find_backend(name);
  return b ? (*b)->info().devices_found : 0;
}

BackendCapabilities capabilities_of(const std::string& name) {
  for (auto& b : make_backends()) {
    auto info = b->info();
    if (info.name == name) return info.caps;
  }
  return {};
}

}  // namespace collscope
