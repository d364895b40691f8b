#include "backends/mpi/mpi_backend.h"

#include "backends/mpi/session.h"
#include "collscope/processes.h"

namespace collscope::mpi {

namespace {

class MpiBackend final : public Backend {
 public:
  BackendInfo info() const override {
    return {"mpi",
            "one process per rank (" + processes::library_version() +
                "): shared memory within a node, messages between nodes",
            true, "", BackendCapabilities{"mpi", true, false, true}};
  }
  Result<std::unique_ptr<Session>> open(const Schedule& s, const SessionOptions& o) const override {
    auto session = std::make_unique<MpiSession>(s, o);
    if (auto st = session->start(); !st) return st.error();
    return std::unique_ptr<Session>(std::move(session));
  }
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend() { return std::make_unique<MpiBackend>(); }

}  // namespace collscope::mpi
