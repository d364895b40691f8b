// Runs lessons on a worker thread so that the window never waits for the engine: a
// slow run shows its progress, a failing one its error, and the window stays usable.
// One request runs at a time; a request made while one runs replaces any waiting one
// (only the latest parameters matter).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "gui/view/lesson.h"

namespace collscope::view {

struct RunRequest {
  Scenario scenario;
  std::string backend = "cpu";
  std::uint64_t snapshot_budget = kDefaultSnapshotBudget;
  double timeout_s =
      kDefaultTimeoutSeconds;  // a lesson whose ranks hang fails after this long instead of blocking the worker
  LessonPlace place;           // where it is priced and split into nodes
};

struct RunResult {
  std::uint64_t id = 0;  // of the request
  Result<std::shared_ptr<LessonRun>> run = make_error("gui.pending", "not run yet");
};

class RunWorker {
 public:
  RunWorker();
  ~RunWorker();  // waits for the running request (the engine cannot be interrupted)
  RunWorker(const RunWorker&) = delete;
  RunWorker& operator=(const RunWorker&) = delete;

  std::uint64_t submit(RunRequest r);  // returns the request id
  bool busy() const;                   // running or waiting
  double busy_seconds() const;         // how long the current request has been running
  std::optional<RunResult> take();     // a finished result, once

 private:
  void loop();
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::optional<std::pair<std::uint64_t, RunRequest>> waiting_;
  std::optional<RunResult> done_;
  std::uint64_t next_id_ = 1;
  bool running_ = false, stop_ = false;
  std::chrono::steady_clock::time_point started_;
  std::thread thread_;
};

}  // namespace collscope::view
