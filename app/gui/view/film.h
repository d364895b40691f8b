// Filming a lesson into one file: the frames of a plan (view/movie.h) go in one by one
// as the window renders them, and the file is written once, at the end, atomically.
// A GIF takes two passes: the hold frames choose its palette, then every frame is
// encoded; a video takes one. Without a window: tests hand it synthetic frames.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collscope/result.h"
#include "gui/view/gif.h"
#include "gui/view/movie.h"
#include "gui/view/quantize.h"
#include "gui/view/video.h"

namespace collscope::view {

enum class FilmKind : std::uint8_t { gif, video };

// Frames per second of a video: a frame held for d hundredths of a second is sent
// round(d * fps / 100) times (at least once).
inline constexpr int kVideoFps = 10;

class Film {
 public:
  // Checks what can be checked before anything is rendered (for a video: the container
  // and ffmpeg on $PATH). The output path itself is the caller's to check.
  static Result<std::unique_ptr<Film>> open(FilmKind kind, std::string path, std::vector<MovieFrame> frames);

  // The frame to render next; nullptr once the film is written (or failed).
  const MovieFrame* next() const;
  // The pixels of next() (RGBA, rows bottom-up as OpenGL reads them). After the last
  // frame the file is written. An error ends the film; nothing is written then.
  Status take(const std::vector<std::uint8_t>& rgba, int w, int h);
  bool done() const { return done_; }

  // Progress over both passes: frames rendered, and how many there are in all.
  std::size_t rendered() const { return pos_; }
  std::size_t total() const { return order_.size(); }
  // "wrote lesson.gif (71 frames, 1.4 MB, 38.2 s)" once done.
  const std::string& summary() const { return summary_; }
  FilmKind kind() const { return kind_; }
  const std::string& path() const { return path_; }
  std::size_t bytes() const { return bytes_; }
  std::size_t encoded_frames() const;

 private:
  Film(FilmKind kind, std::string path, std::vector<MovieFrame> frames);
  Status finish();
  FilmKind kind_;
  std::string path_;
  std::vector<MovieFrame> frames_;
  std::vector<std::size_t> order_;  // indices into frames_: palette samples first (GIF), then every frame
  std::size_t samples_ = 0;         // how many of order_ are palette samples
  std::size_t pos_ = 0;
  bool done_ = false;
  int w_ = 0, h_ = 0;
  Quantizer quantizer_;
  GifEncoder gif_;
  VideoEncoder video_;
  std::string summary_;
  std::size_t bytes_ = 0;
};

// "1.4 MB", "312 KB": a file's size for messages.
std::string file_size_text(std::size_t bytes);

}  // namespace collscope::view
