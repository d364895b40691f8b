#include "gui/view/processes_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "gui/view/run_file.h"

namespace collscope::view {

namespace fs = std::filesystem;

std::string collscope_binary() {
  if (const char* env = std::getenv("COLLSCOPE_BINARY"); env && *env) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && self.filename() == "collscope") return self.string();
  if (!ec && fs::exists(self.parent_path() / "collscope", ec)) return (self.parent_path() / "collscope").string();
  return "collscope";
}

namespace {

// The child's error as it printed it: "error[id] message" and "  help: ..." after it.
Error child_error(const std::string& log, int code) {
  const ExitCode exit = code == 2 ? ExitCode::bad_input : ExitCode::backend_failure;
  const auto at = log.find("error[");
  if (at == std::string::npos)
    return make_error("gui.run_failed",
                      "the processes of the run ended with status " + std::to_string(code) + " and no error",
                      "run it from a terminal with `collscope run FILE --backend mpi` to see what happened", {}, exit);
  const auto close = log.find(']', at);
  const auto end = log.find('\n', at);
  const std::string id = log.substr(at + 6, close - at - 6);
  std::string message = log.substr(close + 2, end == std::string::npos ? std::string::npos : end - close - 2);
  std::string hint;
  if (end != std::string::npos) {
    const auto help = log.find("help: ", end);
    if (help != std::string::npos && log.find("error[", end) > help)
      hint = log.substr(help + 6, log.find('\n', help) - help - 6);
  }
  return make_error(id, message, hint, {}, exit);
}

}  // namespace

Result<RunOutcome> run_in_processes(const Scenario& scenario, const std::string& backend, std::uint64_t snapshot_budget,
                                    double timeout_s) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = (tmp && *tmp ? std::string(tmp) : std::string("/tmp")) + "/collscope-window-XXXXXX";
  if (!mkdtemp(dir.data()))
    return make_error("gui.run_failed", "cannot make a folder for the run in " + dir, "set TMPDIR to a writable folder",
                      {}, ExitCode::backend_failure);
  struct Cleanup {
    std::string d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  const std::string file = dir + "/lesson.json", record = dir + "/run.record", log = dir + "/log.txt";
  {
    std::ofstream out(file);
    out << to_json(scenario);
  }
  const std::string bin = collscope_binary();
  std::vector<std::string> args = {bin,
                                   "run",
                                   file,
                                   "--backend",
                                   backend,
                                   "--mode",
                                   "observable",
                                   "--timeout",
                                   std::to_string(timeout_s),
                                   "--snapshot-budget",
                                   std::to_string(snapshot_budget),
                                   "--run-record",
                                   record};
  // Made before fork: the window has threads, and after fork its child may only exec.
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child < 0) return make_error("gui.run_failed", "cannot start " + bin, "", {}, ExitCode::backend_failure);
  if (child == 0) {
    setpgid(0, 0);  // its own group: the window can end it with every process it starts
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  setpgid(child, child);
  // The processes' own watchdogs end a hung run after timeout_s; this is only the last
  // resort when even they do not (or the launcher hangs).
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s > 0 ? 3 * timeout_s + 30 : 1e9);
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(child, &status, WNOHANG);
    if (r == child) break;
    if (r < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-child, SIGKILL);
      waitpid(child, &status, 0);
      return make_error("gui.run_failed", "the run's processes did not end; they were stopped",
                        "try a shorter --timeout or fewer ranks", {}, ExitCode::backend_failure);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  if (code == 0 || code == 1) return read_run_file(record);
  std::ifstream in(log);
  return child_error(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), code);
}

}  // namespace collscope::view
