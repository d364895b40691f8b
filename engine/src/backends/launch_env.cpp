// Is this process one of a job started by a launcher? Read from the variables the
// launchers set, without starting MPI (collscope/processes.h).
#include <cstdlib>
#include <string>

#include "collscope/processes.h"

namespace collscope::processes {

namespace {

bool number(const char* name, std::int32_t& out) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > (1 << 24)) return false;
  out = static_cast<std::int32_t>(n);
  return true;
}

}  // namespace

Launch from_environment() {
  Launch l;
  // (rank variable, size variable) of Open MPI, PMIx (Open MPI 4+, srun --mpi=pmix),
  // PMI and PMI-2 (MPICH's Hydra, srun --mpi=pmi2) and MVAPICH.
  const std::pair<const char*, const char*> vars[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMIX_RANK", "PMIX_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},
  };
  for (const auto& [rank, size] : vars) {
    std::int32_t r = 0, n = 0;
    if (!number(rank, r)) continue;
    // PMIx does not always export a size; the rank alone says a launcher is there.
    if (!number(size, n)) n = 0;
    l.launched = true;
    l.rank = r;
    l.size = n;
    l.via = n ? size : rank;
    return l;
  }
  return l;
}

}  // namespace collscope::processes
