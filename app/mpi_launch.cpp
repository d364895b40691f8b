// Starting a job of processes from a plain shell (mpi_launch.h).
//
// `collscope run FILE --backend mpi` with no launcher around it runs the same command
// line under mpirun with one process per rank, as a newcomer expects the thread backend's
// command to just work. collscope stays the parent: it waits for the launcher, and when
// the job ended without saying why (a process killed from outside, say) it says so and
// exits 3. The job tells it that it reported a failure itself through a file in a folder
// of its own (COLLSCOPE_JOB_DIR).
#include "mpi_launch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

#include "cli.h"
#include "collscope/processes.h"

extern char** environ;

namespace collscope::app {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string a;
  for (char c; in.get(c);) {
    if (c == '\0') {
      args.push_back(a);
      a.clear();
    } else {
      a += c;
    }
  }
  if (!a.empty()) args.push_back(a);
  return args;
}

// The launcher's command line: the processes, what Open MPI needs told (root, more
// processes than cores, the variables to pass on), the hostfile, then this very
// collscope with its own arguments less --hostfile.
std::vector<std::string> launcher_argv(const std::string& launcher, std::int32_t ranks, const std::string& hostfile) {
  std::vector<std::string> argv = {launcher};
  const bool ompi = processes::launcher_is_open_mpi();
  argv.insert(argv.end(), {"-n", std::to_string(ranks)});
  if (ompi) {
    // Open MPI refuses root and more processes than cores unless told; collscope's
    // processes mostly sleep while they wait, so more ranks than cores is a normal case.
    if (geteuid() == 0) argv.push_back("--allow-run-as-root");
    if (hostfile.empty()) argv.push_back("--oversubscribe");
    for (const char* var : {"COLLSCOPE_JOB_DIR", "COLLSCOPE_MPI_SEPARATE_NODES", "COLLSCOPE_SCENARIOS", "TMPDIR"})
      argv.insert(argv.end(), {"-x", var});
  }
  // MPICH's Hydra kills every process at once when one fails: the others are to tell
  // what happened first (they end themselves, within the timeout).
  if (!ompi) argv.push_back("-disable-auto-cleanup");
  if (!hostfile.empty()) argv.insert(argv.end(), {ompi ? "--hostfile" : "-f", hostfile});
  std::vector<std::string> own = own_arguments();
  std::error_code ec;
  argv.push_back(fs::read_symlink("/proc/self/exe", ec).string());
  for (std::size_t i = 1; i < own.size(); ++i) {
    if (own[i] == "--hostfile") {
      ++i;
      continue;
    }
    if (own[i].rfind("--hostfile=", 0) == 0) continue;
    argv.push_back(own[i]);
  }
  return argv;
}

// The job's environment: this one, with COLLSCOPE_JOB_DIR pointing at `dir` and the
// variables Open MPI's -x passes on all set.
std::vector<std::string> child_environment(const std::string& dir) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string var(*e);
    if (var.rfind("COLLSCOPE_JOB_DIR=", 0) != 0) env.push_back(var);
  }
  env.push_back("COLLSCOPE_JOB_DIR=" + dir);
  auto add_default = [&](const char* name, const std::string& value) {
    if (!std::getenv(name)) env.push_back(std::string(name) + "=" + value);
  };
  add_default("COLLSCOPE_MPI_SEPARATE_NODES", "0");  // (Open MPI's -x wants every one of them set)
  add_default("TMPDIR", "/tmp");
  add_default("COLLSCOPE_SCENARIOS", scenario_dir());
  return env;
}

// Passes the launcher's stderr on, line by line, until it closes, except for its own
// messages (framed by lines of dashes in Open MPI), which come back to be shown only
// when the job did not report how it ended.
std::string relay_stderr(int err[2]) {
  std::string held;
  close(err[1]);
  std::string line;
  bool framed = false;
  auto flush_line = [&]() {
    const bool dashes = line.size() >= 20 && line.find_first_not_of('-') == line.size() - 1;
    if (dashes) framed = !framed;
    if (dashes || framed) held += line;
    else std::fputs(line.c_str(), stderr);
    line.clear();
  };
  char buf[4096];
  for (ssize_t n; (n = read(err[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (ssize_t i = 0; i < n; ++i) {
      line += buf[i];
      if (buf[i] == '\n') flush_line();
    }
  }
  if (!line.empty()) line += '\n', flush_line();
  close(err[0]);
  return held;
}

}  // namespace

std::optional<int> self_launch(std::int32_t ranks, const std::string& hostfile) {
  // (A build without MPI goes on to say that the backend is not built.)
  if (!processes::built() || processes::from_environment().launched) return std::nullopt;
  const std::string launcher = processes::launcher();
  if (launcher.empty())
    return report_error(make_error(
        "backend.unavailable",
        "no MPI launcher (mpirun or mpiexec) found to start " + std::to_string(ranks) + " processes",
        "install Open MPI (scripts/deps.sh), or start collscope under your launcher", {}, ExitCode::backend_failure));
  std::error_code ec;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = (tmp && *tmp ? std::string(tmp) : std::string("/tmp")) + "/collscope-job-XXXXXX";
  if (!mkdtemp(dir.data()))
    return report_error(make_error("backend.unavailable", "cannot make a folder for the job in " + dir,
                                   "set TMPDIR to a writable folder", {}, ExitCode::backend_failure));

  std::vector<std::string> argv = launcher_argv(launcher, ranks, hostfile);

  // Everything the child needs is made before fork: after it, a process with threads
  // (the CUDA runtime's, say) may only exec.
  std::vector<std::string> env = child_environment(dir);
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  std::fflush(stdout);
  std::fflush(stderr);
  // The launcher's own messages (framed by lines of dashes in Open MPI) are held back: when
  // the job reported how it ended they only repeat it; when it did not, they say why.
  int err[2];
  if (pipe(err) != 0) err[0] = err[1] = -1;
  const pid_t child = fork();
  if (child < 0)
    return report_error(
        make_error("backend.unavailable", "cannot start " + launcher, "", {}, ExitCode::backend_failure));
  if (child == 0) {
    if (err[1] >= 0) {
      dup2(err[1], STDERR_FILENO);
      close(err[0]);
      close(err[1]);
    }
    execve(launcher.c_str(), cargv.data(), cenv.data());
    const char msg[] = "error[backend.unavailable] cannot run the MPI launcher\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(static_cast<int>(ExitCode::backend_failure));
  }
  const std::string held = err[0] >= 0 ? relay_stderr(err) : std::string();
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  int reported = -1;
  if (std::ifstream in(dir + "/outcome"); in) in >> reported;
  fs::remove_all(dir, ec);
  if (reported >= 0) return reported;
  std::fputs(held.c_str(), stderr);
  return report_error(make_error(
      "backend.rank_failed",
      "the job of " + std::to_string(ranks) + " processes ended without a report: " +
          fs::path(launcher).filename().string() + " exited with status " + std::to_string(code) +
          (code > 128 && code < 160 ? " (a process was killed by signal " + std::to_string(code - 128) + ")" : ""),
      "a process of the job was killed from outside, or the launcher could not start it; "
      "see the launcher's messages above",
      {}, ExitCode::backend_failure));
}

void quiet_in_job() {
  if (processes::from_environment().launched) processes::quiet_unless_reporting();
}

int input_error_in_job(const Error& e) {
  if (!processes::from_environment().launched) return report_error(e);
  auto agreed = processes::agree_on_error(e);
  const Error& shown = agreed ? e : agreed.error();
  if (processes::reporting()) return processes::finish(report_error(shown));
  return processes::finish(static_cast<int>(shown.exit));
}

}  // namespace collscope::app
