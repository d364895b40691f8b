// A build without MPI: a process is always on its own (collscope/processes.h), and the
// mpi backend is listed as not built (backends/registry.cpp).
#include <cstdio>

#include "collscope/processes.h"

namespace collscope::processes {

bool built() { return false; }
std::string launcher() { return {}; }
bool launcher_is_open_mpi() { return false; }
std::string library_version() { return {}; }

Status join() {
  return make_error(
      "backend.unavailable",
      "the mpi backend is not built (configure with -DCOLLSCOPE_MPI=ON where Open MPI or MPICH is installed)",
      "use --backend cpu, or see `collscope list`", {}, ExitCode::backend_failure);
}
bool joined() { return false; }
bool reporting() { return from_environment().rank == 0; }
void quiet_unless_reporting() {}
void own_error(const std::string& text) { std::fprintf(stderr, "%s\n", text.c_str()); }
Status agree(std::uint64_t, const std::string&) { return ok_status(); }
Status agree_on_error(const Error&) { return ok_status(); }
int finish(int code) { return code; }

}  // namespace collscope::processes
