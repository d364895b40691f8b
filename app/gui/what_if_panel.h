// The "what if" window (W): every algorithm's predicted time against message size on
// a topology of the user's choice, with the crossovers marked and the lesson's call
// placed on its curve. Pricing runs off the window's thread.
#pragma once

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gui/lesson_state.h"
#include "gui/view/what_if.h"

namespace collscope::app {

class WhatIfPanel {
 public:
  WhatIfPanel();
  // Stops a pricing in flight (its future waits for it otherwise).
  ~WhatIfPanel();
  WhatIfPanel(const WhatIfPanel&) = delete;
  WhatIfPanel& operator=(const WhatIfPanel&) = delete;
  // Draws the window while `open` (its close box clears it).
  void draw(const LessonState& lesson, bool& open, float scale);
  // Blocks until the pricing in flight (if any) is done: for headless screenshots.
  void settle();
  // Starts on this topology (a preset's name or a file, which joins the list) and node
  // count; "" keeps this machine.
  void start_on(const std::string& topology, std::int64_t nodes);

 private:
  void follow(const view::LessonRun& run);
  void start();
  bool controls();
  void plot(const view::WhatIf& w, float scale);

  std::vector<std::string> topologies_;  // this-machine, then the presets
  int topology_ = 0;
  view::WhatIfQuery q_;
  std::uint64_t lesson_version_ = 0;
  bool follow_lesson_ = true;
  std::future<Result<view::WhatIf>> pending_;
  std::shared_ptr<view::WhatIfProgress> progress_;  // the pricing in flight's
  bool again_ = false;  // the query changed while a pricing was in flight: price it once that one stops
  bool stale_ = false;  // the lesson changed while the window was folded: price it when it opens
  std::optional<view::WhatIf> shown_;
  std::string error_;
  // The lesson's call, for its marker.
  std::string call_algorithm_;
  std::uint64_t call_bytes_ = 0;
};

}  // namespace collscope::app
