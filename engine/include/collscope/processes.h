// One run as several processes: the job the mpi backend runs in (docs/ARCHITECTURE.md, "Processes").
//
// Every process of a job parses the same input and lowers the same Schedule (SPMD);
// each executes only its own rank's part. Process 0 prints the report; the others print
// nothing unless they fail on their own. A job starts in one of two ways:
//   - under a launcher: `mpirun -np 8 collscope run FILE --backend mpi` (or srun,
//     mpiexec); from_environment() sees the launcher's variables;
//   - from a plain shell: `collscope run FILE --backend mpi` starts the launcher itself
//     (app/mpi_launch.cpp) with the right number of processes.
// In a build without MPI every function here still works and describes a process on its
// own; join() then says MPI is not built.
#pragma once

#include <cstdint>
#include <string>

#include "collscope/result.h"

namespace collscope::processes {

// What the environment says about this process, read without starting MPI.
struct Launch {
  bool launched = false;  // a launcher started it as one process of a job
  std::int32_t rank = 0;  // its rank in the job
  std::int32_t size = 1;  // processes in the job
  std::string via;        // the variable that told: "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", ...
};
Launch from_environment();

// This build has the mpi backend.
bool built();
// The launcher of the MPI library this build uses (mpirun or mpiexec, found when it was
// configured, else on PATH); "" when there is none.
std::string launcher();
// Its flags are Open MPI's (--oversubscribe, --allow-run-as-root, -x VAR); else MPICH's
// Hydra (which needs neither and forwards the environment itself).
bool launcher_is_open_mpi();
// "Open MPI v4.1.4" (the library's own version line, shortened); "" without MPI.
std::string library_version();

// Joins the job (MPI_Init_thread); idempotent. Errors: backend.unavailable (not built),
// backend.mpi (the library failed), exit 3.
Status join();
bool joined();
// Process 0 of a job (from the launcher's variables, before join), or a process on its own.
bool reporting();

// In a launched job, the processes other than 0 send stdout and stderr to /dev/null, so
// that only process 0 prints; own_error() still reaches the terminal.
void quiet_unless_reporting();
void own_error(const std::string& text);

// Every process of the job says what it is about to run (a digest of its Schedule and of
// the options that change the run, and a one-line description) or the error that stopped
// it. When they differ the processes would deadlock; instead every process gets the
// same error (processes.mismatch, exit 2) naming the ranks of each version, e.g.
//   ranks 0, 1 and 3 run allreduce ring count 1024 (6 steps); rank 2 runs allreduce ring count 512 (6 steps)
// Joins the job first. Outside a job: ok.
Status agree(std::uint64_t digest, const std::string& description);
// The same, for a process that could not prepare the run: it says which error stopped it.
Status agree_on_error(const Error& e);

// Ends this process's part of a job and returns the exit code to leave with. A job that
// ended normally finalizes MPI (every process does so). After a backend failure the
// processes of a job cannot meet again: this one tells the others it is done and exits
// at once, so that none is left behind. Outside a job: returns `code`.
int finish(int code);

}  // namespace collscope::processes
