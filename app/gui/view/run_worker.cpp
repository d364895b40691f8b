#include "gui/view/run_worker.h"

namespace collscope::view {

RunWorker::RunWorker() : thread_([this] { loop(); }) {}

RunWorker::~RunWorker() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
    waiting_.reset();
  }
  cv_.notify_all();
  thread_.join();
}

std::uint64_t RunWorker::submit(RunRequest r) {
  std::uint64_t id;
  {
    std::lock_guard lock(m_);
    id = next_id_++;
    waiting_.emplace(id, std::move(r));
  }
  cv_.notify_all();
  return id;
}

bool RunWorker::busy() const {
  std::lock_guard lock(m_);
  return running_ || waiting_.has_value();
}

double RunWorker::busy_seconds() const {
  std::lock_guard lock(m_);
  if (!running_) return 0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

std::optional<RunResult> RunWorker::take() {
  std::lock_guard lock(m_);
  auto r = std::move(done_);
  done_.reset();
  return r;
}

void RunWorker::loop() {
  for (;;) {
    std::pair<std::uint64_t, RunRequest> job;
    {
      std::unique_lock lock(m_);
      cv_.wait(lock, [this] { return stop_ || waiting_.has_value(); });
      if (stop_) return;
      job = std::move(*waiting_);
      waiting_.reset();
      running_ = true;
      started_ = std::chrono::steady_clock::now();
    }
    RunResult r;
    r.id = job.first;
    try {
      r.run = run_lesson(job.second.scenario, job.second.backend, job.second.snapshot_budget, job.second.timeout_s,
                         job.second.place);
    } catch (const std::exception& e) {  // out of memory and the like: an error, never a crash
      r.run =
          make_error("gui.run_failed", e.what(), "try fewer ranks or a smaller count", {}, ExitCode::backend_failure);
    } catch (...) {  // whatever else escapes the engine: still an error shown in the window
      r.run = make_error("internal.error", "the run stopped on an unexpected failure",
                         "this is a bug; please report it with the lesson", {}, ExitCode::backend_failure);
    }
    {
      std::lock_guard lock(m_);
      running_ = false;
      // A newer request supersedes this result only once it is done itself.
      done_ = std::move(r);
    }
  }
}

}  // namespace collscope::view
