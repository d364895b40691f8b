// `collscope import`, `collscope record` and `collscope analyze` on a job's files
// (DESIGN §11): a real PyTorch or NCCL run's communication, read back, checked, and
// turned into a scenario that runs, verifies, predicts and opens like a lesson.
#include "cmd_import.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "collscope/job.h"

namespace collscope::app {

namespace fs = std::filesystem;

void add_import_commands(CLI::App& app, ImportFlags& f) {
  f.import_cmd = app.add_subcommand("import", "turn a PyTorch or NCCL job's traces, dumps or logs into a scenario");
  f.import_cmd
      ->add_option("files", f.files,
                   "one file per rank, or their folder: profiler traces, Flight Recorder dumps, "
                   "NCCL logs, `collscope record` output")
      ->required();
  f.import_cmd->add_option("-o,--output", f.output, "write the scenario here (default: print it)");
  f.import_cmd->add_flag("--json", f.json, "print a JSON summary (with the scenario when there is no -o)");
  f.import_cmd
      ->add_option("--scale-down", f.scale_down, "divide every element count by K so the replay fits this machine")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  f.import_cmd
      ->add_option("--compute-digits", f.compute_digits,
                   "significant digits of compute spans: 0 exact (default: exact, rounded to 2 for jobs of more "
                   "than 20000 compute entries, and to 3 then 2 where the scenario would be over 4 MiB)")
      ->check(CLI::Range(0, 9));
  f.import_cmd->add_option("--sizes", f.sizes,
                           "a second source of the same program (Flight Recorder dumps or `collscope record` output) "
                           "for what the files lack: sizes, dtypes, peers, groups");

  f.record_cmd =
      app.add_subcommand("record", "run a torch.distributed program and record its calls, one JSON per rank");
  f.record_cmd->add_option("-o,--output", f.record_dir, "folder for the ranks' files (new or empty)")->required();
  f.record_cmd->add_option("command", f.command, "the program, after --: collscope record -o DIR -- python3 train.py")
      ->required();
  f.record_cmd->positionals_at_end();
}

namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

int cmd_import(const ImportFlags& f) {
  auto job = load_job(f.files, f.sizes);
  if (!job) return report_error(job.error());
  ImportOptions opt;
  opt.scale_down = f.scale_down;
  opt.compute_digits = f.compute_digits;
  auto sc = job_scenario(*job, opt);
  if (!sc) return report_error(sc.error());
  if (!f.output.empty()) {
    if (auto st = write_imported_scenario(f.output, *sc); !st) return report_error(st.error());
  }
  if (f.json) {
    nlohmann::ordered_json j;
    j["format"] = name_of(job->format);
    j["files"] = job->files;
    j["output"] = f.output.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(f.output);
    j["ranks"] = sc->ranks;
    j["calls"] = sc->calls;
    j["collectives"] = sc->collectives;
    j["p2p"] = sc->p2p;
    j["compute_spans"] = sc->compute_spans;
    j["groups"] = sc->groups;
    j["channel_calls"] = sc->custom_channels;
    j["scale_down"] = f.scale_down;
    j["sizes_known"] = job->sizes_known;
    j["notes"] = sc->notes;
    if (f.output.empty()) j["scenario"] = nlohmann::ordered_json::parse(sc->json);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::ostream& out = f.output.empty() ? std::cerr : std::cout;
  if (f.output.empty()) std::cout << sc->json;
  out << "collscope import: " << sc->ranks << " ranks, " << sc->calls << " calls (" << sc->collectives
      << " collective, " << sc->p2p << " point-to-point), " << sc->compute_spans << " compute spans, from "
      << files_noun(job->format, job->files.size()) << "\n";
  if (sc->custom_channels) out << "  " << sc->custom_channels << " all-reduces run on NCCL's channels from the log\n";
  for (const auto& n : sc->notes) out << "  note: " << n << "\n";
  if (!f.output.empty()) {
    out << "  wrote " << f.output << "\n";
    out << "  next: collscope run " << f.output << "    collscope gui " << f.output << "    collscope predict "
        << f.output << " --topology dgx-h100\n";
  }
  return 0;
}

int cmd_analyze_job(const std::vector<std::string>& files, bool json) {
  auto job = load_job(files);
  if (!job) {
    Error e = job.error();
    if (e.id.rfind("import.", 0) == 0) e.id = "analyze." + e.id.substr(7);
    return report_error(e);
  }
  const JobAnalysis a = analyze_job(*job);
  if (json) {
    nlohmann::ordered_json j;
    j["files"] = job->files;
    j["format"] = name_of(job->format);
    j["ok"] = a.findings.empty();
    j["world"] = job->world;
    j["calls"] = a.calls;
    j["matched"] = a.matched;
    auto arr = nlohmann::ordered_json::array();
    for (const auto& x : a.findings) arr.push_back({{"id", x.id}, {"message", x.message}});
    j["findings"] = std::move(arr);
    j["facts"] = a.facts;
    j["notes"] = job->notes;
    if (a.straggler) {
      const auto& s = *a.straggler;
      j["straggler"] = {{"rank", s.rank},
                        {"last_at", s.last_at},
                        {"calls", s.calls},
                        {"mean_wait_us", s.mean_wait_us},
                        {"max_wait_us", s.max_wait_us},
                        {"max_call", s.max_call},
                        {"reported", std::any_of(a.findings.begin(), a.findings.end(),
                                                 [](const JobFinding& x) { return x.id == "analyze.straggler"; })}};
    } else {
      j["straggler"] = nullptr;
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "collscope analyze: " << job->world << " ranks from " << files_noun(job->format, job->files.size())
              << "\n";
    for (const auto& x : a.facts) std::cout << "  " << x << "\n";
    for (const auto& n : job->notes) std::cout << "  note: " << n << "\n";
    if (a.findings.empty()) std::cout << "  no problem found: every call matched on every member and completed\n";
    for (const auto& x : a.findings) std::cout << "  [" << x.id << "] " << x.message << "\n";
  }
  return a.findings.empty() ? 0 : 1;
}

// --- record ------------------------------------------------------------------------

namespace {

// Where the recorder's Python files are: $COLLSCOPE_PYTHON, next to the binary, or in
// the source tree (as for the lessons).
std::string python_dir() {
  auto has_hook = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p / "collscope_record.py", ec) && fs::is_regular_file(p / "sitecustomize.py", ec);
  };
  if (const char* env = std::getenv("COLLSCOPE_PYTHON"); env && *env) return has_hook(env) ? env : "";
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const fs::path& p : {exe.parent_path() / "python", exe.parent_path().parent_path() / "python",
                              exe.parent_path().parent_path() / "share" / "collscope" / "python"})
      if (has_hook(p)) return p.string();
#ifdef COLLSCOPE_SCENARIO_DIR
  // The source tree: python/ beside scenarios/.
  const fs::path src = fs::path(COLLSCOPE_SCENARIO_DIR).parent_path() / "python";
  if (has_hook(src)) return src.string();
#endif
  return "";
}

volatile sig_atomic_t g_child = 0;  // for the signal handler only: where to pass a signal on
extern "C" void forward_signal(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

}  // namespace

int cmd_record(const ImportFlags& f) {
  const Location where{f.record_dir, 0, 0, ""};
  if (f.command.empty())
    return report_error(make_error("cli.usage", "no command to run", "collscope record -o DIR -- python3 train.py"));
  std::error_code ec;
  if (fs::exists(f.record_dir, ec)) {
    if (!fs::is_directory(f.record_dir, ec))
      return report_error(make_error("record.output", "the output exists and is not a folder",
                                     "give a new or empty folder for the ranks' files", where));
    if (!fs::is_empty(f.record_dir, ec))
      return report_error(make_error("record.output", "the folder is not empty",
                                     "give a new or empty folder, so that no earlier run's files mix with this one's",
                                     where));
  } else if (!fs::create_directories(f.record_dir, ec) || ec) {
    return report_error(make_error("record.output", "cannot create the folder (" + ec.message() + ")",
                                   "check the path and its permissions", where));
  }
  const std::string hook = python_dir();
  if (hook.empty())
    return report_error(make_error("record.hook",
                                   "the recorder's Python files (collscope_record.py, sitecustomize.py) "
                                   "were not found",
                                   "set COLLSCOPE_PYTHON to the python/ folder of collscope's sources"));
  const std::string dir = fs::absolute(f.record_dir).string();
  std::string pythonpath = hook;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;

  std::vector<char*> argv;
  for (const auto& a : f.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int exec_pipe[2];
  if (::pipe(exec_pipe) != 0)
    return report_error(make_error("record.exec",
                                   std::string("cannot start the command (") + std::strerror(errno) + ")", "", where,
                                   ExitCode::backend_failure));
  std::cout.flush();
  const pid_t child = ::fork();
  if (child < 0)
    return report_error(make_error("record.exec",
                                   std::string("cannot start the command (") + std::strerror(errno) + ")", "", where,
                                   ExitCode::backend_failure));
  if (child == 0) {
    ::close(exec_pipe[0]);
    ::fcntl(exec_pipe[1], F_SETFD, FD_CLOEXEC);
    ::setenv("PYTHONPATH", pythonpath.c_str(), 1);
    ::setenv("COLLSCOPE_RECORD_DIR", dir.c_str(), 1);
    ::execvp(argv[0], argv.data());
    const int err = errno;
    (void)!::write(exec_pipe[1], &err, sizeof err);
    ::_exit(127);
  }
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  const bool exec_failed = ::read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  ::close(exec_pipe[0]);
  g_child = child;
  struct sigaction sa {
  }, old_int{}, old_term{};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  g_child = 0;
  if (exec_failed)
    return report_error(make_error("record.exec", "cannot run " + f.command[0] + " (" + std::strerror(exec_errno) + ")",
                                   "check the command: collscope record -o DIR -- python3 train.py",
                                   Location{f.command[0], 0, 0, ""}));

  std::vector<std::string> written;
  for (const auto& entry : fs::directory_iterator(f.record_dir, ec))
    if (entry.path().extension() == ".json") written.push_back(entry.path().filename().string());
  std::sort(written.begin(), written.end());
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::string how = WIFEXITED(status)     ? "exited with status " + std::to_string(WEXITSTATUS(status))
                    : WIFSIGNALED(status) ? std::string("was killed by signal ") + strsignal(WTERMSIG(status))
                                          : "ended";
  if (written.empty()) {
    return report_error(make_error(
        "record.nothing",
        "the command " + how + " and no process recorded anything (none called torch.distributed.init_process_group)",
        "record a program that uses torch.distributed; the recorder needs a Python that imports torch (python3 -c "
        "'import torch')",
        where, ok ? ExitCode::bad_input : ExitCode::backend_failure));
  }
  std::int64_t calls = 0;
  auto job = load_job({f.record_dir});
  if (job)
    for (const auto& r : job->ranks) calls += static_cast<std::int64_t>(r.calls.size());
  std::cout << "collscope record: the command " << how << "; " << written.size() << " rank"
            << (written.size() == 1 ? "" : "s") << (job ? ", " + std::to_string(calls) + " calls" : std::string())
            << " recorded in " << f.record_dir << ": " << join(written, " ") << "\n";
  if (!job) return report_error(job.error());
  std::cout << "  next: collscope analyze " << f.record_dir << "    collscope import " << f.record_dir
            << " -o job.json\n";
  if (!ok) {
    std::cerr << "error[record.failed] " << f.command[0] << ": the command " << how
              << "\n  help: what it did until then is in the folder; `collscope analyze " << f.record_dir
              << "` says where the ranks stood\n";
    return static_cast<int>(ExitCode::backend_failure);
  }
  return 0;
}

}  // namespace collscope::app
