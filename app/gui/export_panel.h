// Export: the run's trace (Chrome/Perfetto JSON), a PNG of the window, and a
// numbered PNG for every step (for slides).
#pragma once

#include <string>

namespace collscope::app {

struct ExportRequest {
  enum class Kind { none, trace, png, sequence } kind = Kind::none;
  std::string path;  // file, or folder for the sequence
};

class ExportPanel {
 public:
  ExportRequest draw();
  void set_message(std::string m) { message_ = std::move(m); }

 private:
  std::string trace_ = "collscope-trace.json", png_ = "collscope.png", folder_ = "collscope-steps";
  std::string message_;
};

}  // namespace collscope::app
