// The MPI job of this process (job.h) and collscope/processes.h on top of it.
#include "backends/mpi/job.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "backends/cpu/plan.h"
#include "backends/flight.h"
#include "collscope/processes.h"
#include "ir/digest.h"

namespace collscope::mpi {

std::atomic<int> session_active{0};
std::atomic<int> terminate_requested{0};

namespace {

// Each process on one core of its host, as the cpu backend pins its rank threads
// (backends/cpu/worker.cpp, core_for_lane): left to itself the scheduler moves the
// processes between cores, and a process that spins for a peer can find that peer
// waiting behind it on the same core while another core idles. A launcher that bound
// the process already (Open MPI binds up to 2 processes to a core each) is left alone:
// the process may use one core only. COLLSCOPE_PIN=0 leaves it where the scheduler puts
// it. Returns the core, or -1.
int pin_to_core(int host_rank, int host_size) {
  const std::vector<int> cores = cpu::cores_to_pin();
  if (host_size < 2 || cores.size() < 2) return -1;
  const int core =
      cores[cpu::core_for_lane(static_cast<std::size_t>(host_rank), static_cast<std::size_t>(host_size), cores.size())];
  // This thread only: the session's threads, started later, inherit it.
  return cpu::pin_this_thread(core) ? core : -1;
}

void on_sigterm(int sig) {
  if (session_active.load() != 0) {
    terminate_requested.store(1);
    return;
  }
  // Not in a run: end as the launcher asked.
  signal(sig, SIG_DFL);
  raise(sig);
}

std::string short_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int n = 0;
  if (MPI_Get_library_version(text, &n) != MPI_SUCCESS) return "MPI";
  std::string v(text, static_cast<std::size_t>(std::max(0, n)));
  // "Open MPI v4.1.4, package: ..." / "MPICH Version:\t4.0.2\nMPICH Release date: ..."
  v = v.substr(0, v.find_first_of("\n,"));
  for (auto& c : v)
    if (c == '\t') c = ' ';
  if (auto at = v.find("Version: "); at != std::string::npos) v = v.substr(0, at) + v.substr(at + 9);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

}  // namespace

Job& job() {
  // MPI is initialized once per process and lives until it exits: its state is the
  // process's, not a session's (see job.h).
  static Job j;
  return j;
}

double steady_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status wait_politely(MPI_Request& r, const char* what) {
  for (int round = 0;; ++round) {
    int done = 0;
    COLLSCOPE_MPI_CALL(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
    if (done) return ok_status();
    (void)what;
    if (round < 32) {
      std::this_thread::yield();
      continue;
    }
    // 10 us between looks for the first millisecond or so, then up to 1 ms: cheap while
    // waiting long, quick when it is short (a library moves a request on only when called).
    std::this_thread::sleep_for(std::chrono::microseconds(round < 132 ? 10 : round < 1032 ? 50 : 1000));
  }
}

Error mpi_error(int code, const char* call) {
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  std::string why = "error " + std::to_string(code);
  if (MPI_Error_string(code, text, &n) == MPI_SUCCESS)
    why = std::string(text, static_cast<std::size_t>(std::max(0, n)));
  return make_error("backend.mpi", std::string(call) + " failed: " + why,
                    "a process of the job may have died; see the launcher's messages", {}, ExitCode::backend_failure);
}

Status join() {
  Job& j = job();
  if (j.initialized) return ok_status();
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    // Only the thread that joined calls MPI (the session's other threads never do).
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      return make_error("backend.mpi", "MPI_Init_thread failed", "see the launcher's messages", {},
                        ExitCode::backend_failure);
  }
  j.initialized = true;
  COLLSCOPE_MPI_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &j.world));
  COLLSCOPE_MPI_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &j.control));
  MPI_Comm_set_errhandler(j.world, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(j.control, MPI_ERRORS_RETURN);
  MPI_Comm_rank(j.world, &j.rank);
  MPI_Comm_size(j.world, &j.size);
  const char* apart = std::getenv("COLLSCOPE_MPI_SEPARATE_NODES");
  j.separate_nodes = apart && *apart && std::string(apart) != "0";
  if (j.separate_nodes) COLLSCOPE_MPI_CALL(MPI_Comm_split(j.world, j.rank, 0, &j.node));
  else COLLSCOPE_MPI_CALL(MPI_Comm_split_type(j.world, MPI_COMM_TYPE_SHARED, j.rank, MPI_INFO_NULL, &j.node));
  MPI_Comm_set_errhandler(j.node, MPI_ERRORS_RETURN);
  MPI_Comm_rank(j.node, &j.node_rank);
  MPI_Comm_size(j.node, &j.node_size);

  // Who is where: every rank's node leader (the world rank of its node's rank 0), node
  // rank, pid and host.
  const auto n = static_cast<std::size_t>(j.size);
  int leader = j.rank;
  MPI_Bcast(&leader, 1, MPI_INT, 0, j.node);
  std::vector<int> mine = {leader, j.node_rank, static_cast<int>(getpid())}, all(3 * n);
  COLLSCOPE_MPI_CALL(MPI_Allgather(mine.data(), 3, MPI_INT, all.data(), 3, MPI_INT, j.world));
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(host, &len);
  std::vector<char> hosts(n * MPI_MAX_PROCESSOR_NAME);
  COLLSCOPE_MPI_CALL(
      MPI_Allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, j.world));
  std::map<int, int> node_by_leader;
  j.node_of.assign(n, 0);
  j.node_rank_of.assign(n, 0);
  j.pid_of.assign(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    const int lead = all[3 * r];
    auto [it, fresh] = node_by_leader.emplace(lead, static_cast<int>(node_by_leader.size()));
    if (fresh) {
      std::string name(&hosts[static_cast<std::size_t>(lead) * MPI_MAX_PROCESSOR_NAME]);
      // Forced apart on one host: each process is a node, told apart by its rank.
      if (j.separate_nodes) name += "#" + std::to_string(lead);
      j.node_names.push_back(name);
    }
    j.node_of[r] = it->second;
    j.node_rank_of[r] = all[3 * r + 1];
    j.pid_of[r] = all[3 * r + 2];
  }
  // This process's place among the processes of its host (the same name; forced-apart
  // nodes on one host still share its cores).
  int host_rank = 0, host_size = 0;
  const char* me = &hosts[static_cast<std::size_t>(j.rank) * MPI_MAX_PROCESSOR_NAME];
  for (std::size_t r = 0; r < n; ++r)
    if (std::strncmp(&hosts[r * MPI_MAX_PROCESSOR_NAME], me, MPI_MAX_PROCESSOR_NAME) == 0) {
      if (static_cast<int>(r) < j.rank) ++host_rank;
      ++host_size;
    }
  const int core = pin_to_core(host_rank, host_size);
  j.core_of.assign(n, -1);
  COLLSCOPE_MPI_CALL(MPI_Allgather(&core, 1, MPI_INT, j.core_of.data(), 1, MPI_INT, j.world));
  int* ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(j.world, MPI_TAG_UB, &ub, &flag);
  if (flag && ub && *ub >= 32767) j.tag_ub = *ub;
  j.version = short_version();
  struct sigaction sa {};
  sa.sa_handler = on_sigterm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  return ok_status();
}

Status estimate_clocks() {
  Job& j = job();
  if (j.clocks_known) return ok_status();
  // Rank 0 and each other rank in turn: ping, the other's clock comes back, and the
  // offset is read from the fastest of a dozen round trips (the middle of it is when the
  // other clock was read; half that round trip is what is left unknown).
  constexpr int kRounds = 12;
  const int tag = 7;
  double worst = 0;
  if (j.rank == 0) {
    for (int p = 1; p < j.size; ++p) {
      double best = 1e300, offset = 0;
      for (int i = 0; i < kRounds; ++i) {
        const double t0 = steady_us();
        double theirs = 0;
        COLLSCOPE_MPI_CALL(MPI_Send(&t0, 1, MPI_DOUBLE, p, tag, j.control));
        COLLSCOPE_MPI_CALL(MPI_Recv(&theirs, 1, MPI_DOUBLE, p, tag, j.control, MPI_STATUS_IGNORE));
        const double t1 = steady_us();
        if (t1 - t0 < best) best = t1 - t0, offset = theirs - (t0 + t1) / 2;
      }
      double reply[2] = {offset, best / 2};
      COLLSCOPE_MPI_CALL(MPI_Send(reply, 2, MPI_DOUBLE, p, tag, j.control));
      worst = std::max(worst, best / 2);
    }
  } else {
    for (int i = 0; i < kRounds; ++i) {
      double ping = 0;
      COLLSCOPE_MPI_CALL(MPI_Recv(&ping, 1, MPI_DOUBLE, 0, tag, j.control, MPI_STATUS_IGNORE));
      const double now = steady_us();
      COLLSCOPE_MPI_CALL(MPI_Send(&now, 1, MPI_DOUBLE, 0, tag, j.control));
    }
    double reply[2] = {0, 0};
    COLLSCOPE_MPI_CALL(MPI_Recv(reply, 2, MPI_DOUBLE, 0, tag, j.control, MPI_STATUS_IGNORE));
    j.clock_offset_us = reply[0];
  }
  COLLSCOPE_MPI_CALL(MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, j.control));
  j.clock_uncertainty_us = worst;
  j.clocks_known = true;
  return ok_status();
}

}  // namespace collscope::mpi

namespace collscope::processes {

using mpi::job;

bool built() { return true; }

std::string launcher() {
  namespace fs = std::filesystem;
  std::error_code ec;
#ifdef COLLSCOPE_MPIEXEC
  if (fs::exists(COLLSCOPE_MPIEXEC, ec)) return COLLSCOPE_MPIEXEC;
#endif
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (const char* name : {"mpirun", "mpiexec"}) {
    std::size_t start = 0;
    for (;;) {
      const auto colon = dirs.find(':', start);
      const fs::path p = fs::path(dirs.substr(start, colon - start)) / name;
      if (access(p.c_str(), X_OK) == 0) return p.string();
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  return {};
}

bool launcher_is_open_mpi() {
#ifdef OMPI_MAJOR_VERSION
  return true;
#else
  return false;
#endif
}

std::string library_version() {
  if (job().initialized) return job().version;
#ifdef OMPI_MAJOR_VERSION
  return "Open MPI v" + std::to_string(OMPI_MAJOR_VERSION) + "." + std::to_string(OMPI_MINOR_VERSION) + "." +
         std::to_string(OMPI_RELEASE_VERSION);
#elif defined(MPICH_VERSION)
  return std::string("MPICH ") + MPICH_VERSION;
#else
  return "MPI";
#endif
}

Status join() { return mpi::join(); }
bool joined() { return job().initialized; }

bool reporting() {
  if (job().initialized) return job().rank == 0;
  return from_environment().rank == 0;
}

void quiet_unless_reporting() {
  const Launch l = from_environment();
  if (!l.launched || l.rank == 0 || job().saved_stderr >= 0) return;
  std::fflush(stdout);
  std::fflush(stderr);
  job().saved_stderr = dup(STDERR_FILENO);
  const int null = open("/dev/null", O_WRONLY);
  if (null < 0) return;
  dup2(null, STDOUT_FILENO);
  dup2(null, STDERR_FILENO);
  close(null);
}

void own_error(const std::string& text) {
  const int fd = job().saved_stderr >= 0 ? job().saved_stderr : STDERR_FILENO;
  const std::string line = text + "\n";
  for (std::size_t at = 0; at < line.size();) {
    const ssize_t n = write(fd, line.data() + at, line.size() - at);
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
}

Status agree(std::uint64_t digest, const std::string& description) {
  if (!from_environment().launched && !job().initialized) return ok_status();
  if (auto st = mpi::join(); !st) return st;
  auto& j = job();
  const auto n = static_cast<std::size_t>(j.size);
  std::vector<std::uint64_t> all(n);
  MPI_Request gathered;
  COLLSCOPE_MPI_CALL(MPI_Iallgather(&digest, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, j.world, &gathered));
  if (auto st = mpi::wait_politely(gathered, "the digests"); !st) return st;
  if (std::all_of(all.begin(), all.end(), [&](std::uint64_t d) { return d == all[0]; })) return ok_status();
  // They differ: every process learns every description, and says the same.
  int len = static_cast<int>(std::min<std::size_t>(description.size(), 4000));
  std::vector<int> lens(n), at(n, 0);
  COLLSCOPE_MPI_CALL(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, j.world));
  int total = 0;
  for (std::size_t r = 0; r < n; ++r) at[r] = total, total += lens[r];
  std::vector<char> text(static_cast<std::size_t>(std::max(1, total)));
  COLLSCOPE_MPI_CALL(
      MPI_Allgatherv(description.data(), len, MPI_CHAR, text.data(), lens.data(), at.data(), MPI_CHAR, j.world));
  std::vector<std::pair<std::uint64_t, std::vector<std::int32_t>>> groups;
  for (std::size_t r = 0; r < n; ++r) {
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == all[r]; });
    if (g == groups.end()) groups.push_back({all[r], {}}), g = groups.end() - 1;
    g->second.push_back(static_cast<std::int32_t>(r));
  }
  std::string msg;
  std::vector<std::string> seen;
  for (const auto& group : groups) {
    const auto d = group.first;  // (a lambda below needs it: structured bindings cannot be captured in C++17)
    const auto& ranks = group.second;
    const auto first = static_cast<std::size_t>(ranks[0]);
    std::string what(text.data() + at[first], static_cast<std::size_t>(lens[first]));
    // Two versions that read the same in words differ somewhere deeper: their digests tell.
    if (std::count(seen.begin(), seen.end(), what) || std::count_if(groups.begin(), groups.end(), [&](const auto& g) {
          const auto f = static_cast<std::size_t>(g.second[0]);
          return g.first != d && std::string(text.data() + at[f], static_cast<std::size_t>(lens[f])) == what;
        })) {
      char hex[32];
      std::snprintf(hex, sizeof hex, " (digest %016llx)", static_cast<unsigned long long>(d));
      what += hex;
    }
    seen.push_back(what);
    msg += (msg.empty() ? "" : "; ") + ranks_text(ranks) + (ranks.size() == 1 ? " has " : " have ") + what;
  }
  return make_error("processes.mismatch", "the processes of the job would not run the same thing: " + msg,
                    "start every process with the same collscope, the same file and the same flags");
}

Status agree_on_error(const Error& e) {
  return agree(digest_more(0x6572726f72ull, e.format()), "error: " + e.format());
}

int finish(int code) {
  auto& j = job();
  // For a collscope that started this job itself (app/mpi_launch.cpp): how it ended.
  if (const char* dir = std::getenv("COLLSCOPE_JOB_DIR"); dir && *dir && from_environment().launched && reporting()) {
    if (std::FILE* out = std::fopen((std::string(dir) + "/outcome").c_str(), "w")) {
      std::fprintf(out, "%d\n", code);
      std::fclose(out);
    }
  }
  if (!j.initialized) return code;
  std::fflush(stdout);
  std::fflush(stderr);
  if (j.failed || code == static_cast<int>(ExitCode::backend_failure)) {
    // The processes cannot meet in MPI_Finalize any more: tell the others this one is
    // done (they wait for that before leaving, so that the report is out first), then go.
    int dummy = code;
    std::vector<MPI_Request> sent;
    for (int p : j.alive) {
      if (p == j.rank) continue;
      MPI_Request r;
      if (MPI_Isend(&dummy, 1, MPI_INT, p, mpi::kDone, j.control, &r) == MPI_SUCCESS) sent.push_back(r);
    }
    const double until = mpi::steady_us() + 300000;
    while (!sent.empty() && mpi::steady_us() < until) {
      int done = 0;
      MPI_Testall(static_cast<int>(sent.size()), sent.data(), &done, MPI_STATUSES_IGNORE);
      if (done) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    _exit(code);
  }
  MPI_Finalize();
  j.initialized = false;
  return code;
}

}  // namespace collscope::processes
