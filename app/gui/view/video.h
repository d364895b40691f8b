// Videos of a lesson through the `ffmpeg` program, where it is installed (it is
// optional): raw RGBA frames are piped to its standard input, the encoded file comes
// back through an unnamed temporary file and is then written like every other output
// (collscope/files.h), so an interrupted run leaves nothing half-written.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/result.h"

namespace collscope::view {

// The executable `name` in a folder of $PATH; "" when there is none.
std::string find_on_path(const std::string& name);

// ffmpeg's container for a file name: .mp4, .mkv, .webm; "gui.video_format" otherwise.
Result<std::string> video_container(const std::string& path);

// What stops a video before anything is rendered: an unknown container, or no ffmpeg on
// $PATH ("gui.no_ffmpeg", exit 2, saying how to install it or to use --gif instead).
Status check_video(const std::string& path);

class VideoEncoder {
 public:
  VideoEncoder() = default;
  ~VideoEncoder();  // an unfinished encoder stops its ffmpeg
  VideoEncoder(const VideoEncoder&) = delete;
  VideoEncoder& operator=(const VideoEncoder&) = delete;

  // Starts ffmpeg for w x h frames at `fps` frames per second, into the container of `path`.
  Status start(const std::string& path, int w, int h, int fps);
  // Sends an RGBA frame as OpenGL reads it (rows bottom-up; ffmpeg turns it), `repeats` times.
  Status add(const std::vector<std::uint8_t>& rgba, int repeats);
  // Waits for ffmpeg and returns the whole file ("gui.video_failed", exit 3, with what
  // ffmpeg said, when it fails).
  Result<std::string> finish();
  std::size_t frames() const { return frames_; }

 private:
  void stop();
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;  // ffmpeg's stdin (a socket), stdout and stderr (temporary files)
  std::size_t frame_bytes_ = 0, frames_ = 0;
};

}  // namespace collscope::view
