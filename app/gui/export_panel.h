// Export: the run's trace (Chrome/Perfetto JSON), a PNG of the window, a numbered PNG
// for every step (for slides), and the lesson (or a range of its steps) as an animated
// GIF or, through ffmpeg, a video, with a progress bar while they are filmed.
#pragma once

#include <cstddef>
#include <string>

namespace collscope::app {

struct ExportRequest {
  enum class Kind { none, trace, png, sequence, gif, video } kind = Kind::none;
  std::string path;   // file, or folder for the sequence
  std::string steps;  // gif, video: "A..B" (positions, as --step counts), "" = the whole lesson
};

// How far a film is: frames rendered of all there are (total 0: none in progress).
struct ExportProgress {
  std::size_t done = 0, total = 0;
};

class ExportPanel {
 public:
  ExportRequest draw(const ExportProgress& progress);
  void set_message(std::string m) { message_ = std::move(m); }

 private:
  std::string trace_ = "collscope-trace.json", png_ = "collscope.png", folder_ = "collscope-steps";
  std::string gif_ = "collscope.gif", video_ = "collscope.mp4", steps_;
  std::string message_;
};

}  // namespace collscope::app
