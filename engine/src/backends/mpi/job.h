// The MPI job this process belongs to (collscope/processes.h): MPI is initialized once
// per process, so this is the one piece of process-wide state of the mpi backend. It
// holds the communicators every session uses and what is known about every rank (its
// node, host, pid), and the clock offsets between the processes.
//
// Communicators:
//   world    every process, for the data plane (point-to-point messages between nodes,
//            the library's own collectives) and the session's collectives;
//   control  every process, for failure notices and flight records: messages on it never
//            mix with the data plane's, so a failure can be told while data is in flight;
//   node     the processes that share memory (MPI_COMM_TYPE_SHARED). With
//            COLLSCOPE_MPI_SEPARATE_NODES=1 every process is a node of its own, so that one
//            machine exercises the path between nodes (messages instead of shared memory).
// Every communicator returns errors instead of aborting: a peer that died must become an
// error message, not an abort by the library.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "collscope/result.h"

namespace collscope::mpi {

struct Job {
  bool initialized = false;
  int rank = 0, size = 1;
  MPI_Comm world = MPI_COMM_NULL;
  MPI_Comm control = MPI_COMM_NULL;
  MPI_Comm node = MPI_COMM_NULL;
  int node_rank = 0, node_size = 1;
  bool separate_nodes = false;
  std::vector<int> node_of;             // per world rank: its node (0, 1, ... in order of first rank)
  std::vector<int> node_rank_of;        // per world rank: its rank in its node's communicator
  std::vector<std::string> node_names;  // per node: the host ("vm", or "vm#3" when forced apart)
  std::vector<int> pid_of;              // per world rank
  std::vector<int> core_of;             // per world rank: the core it stays on, or -1 (pin_to_core)
  int tag_ub = 32767;
  std::string version;  // "Open MPI v4.1.4"
  // Clocks: this process's steady clock minus rank 0's, in microseconds, and the
  // largest uncertainty of any rank's estimate (half its fastest round trip).
  bool clocks_known = false;
  double clock_offset_us = 0;
  double clock_uncertainty_us = 0;
  // A backend failure happened: the processes cannot meet again (finish() exits at once).
  bool failed = false;
  std::vector<int> alive;  // after a failure: the processes known to be alive
  int saved_stderr = -1;   // the real stderr of a quieted process
};

Job& job();
Status join();

// A failure of an MPI call, as an Error (backend.mpi, exit 3) naming the call and the
// library's own explanation.
Error mpi_error(int code, const char* call);
#define COLLSCOPE_MPI_CALL(call)                                                                      \
  do {                                                                                                \
    const int collscope_mpi_rc = (call);                                                              \
    if (collscope_mpi_rc != MPI_SUCCESS) return ::collscope::mpi::mpi_error(collscope_mpi_rc, #call); \
  } while (0)

// Estimates the clock offsets (a ping-pong between rank 0 and every other rank); once per
// job, collective over `world`.
Status estimate_clocks();

// microseconds on this process's steady clock
double steady_us();

// Waits for a request without spinning on the core: some libraries' blocking calls spin,
// and a process that waits for a peer who computes on the same core only slows it down.
Status wait_politely(MPI_Request& r, const char* what);

// SIGTERM from the launcher while a session runs: the launcher is ending the job (a
// process failed). The session's watchdog turns it into an error and the processes write
// their flight records before the launcher's SIGKILL; outside a session SIGTERM ends the
// process as usual.
extern std::atomic<int> session_active;
extern std::atomic<int> terminate_requested;

// Messages on the control communicator.
enum ControlTag : int { kNotice = 11, kRecord = 12, kDone = 13 };

}  // namespace collscope::mpi
