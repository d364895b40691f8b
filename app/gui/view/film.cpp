#include "gui/view/film.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "collscope/files.h"

namespace collscope::view {

std::string file_size_text(std::size_t bytes) {
  char buf[32];
  if (bytes >= 1000 * 1000) std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  else std::snprintf(buf, sizeof buf, "%.0f KB", std::ceil(static_cast<double>(bytes) / 1e3));
  return buf;
}

Film::Film(FilmKind kind, std::string path, std::vector<MovieFrame> frames)
    : kind_(kind), path_(std::move(path)), frames_(std::move(frames)) {
  if (kind_ == FilmKind::gif) {
    order_ = palette_samples(frames_);
    samples_ = order_.size();
  }
  for (std::size_t i = 0; i < frames_.size(); ++i) order_.push_back(i);
}

Result<std::unique_ptr<Film>> Film::open(FilmKind kind, std::string path, std::vector<MovieFrame> frames) {
  if (frames.empty()) return make_error("gui.export", "no frames to film", "give a range of at least one step");
  if (kind == FilmKind::video)
    if (auto st = check_video(path); !st) return st.error();
#if !defined(COLLSCOPE_HAVE_CGIF)
  if (kind == FilmKind::gif) {
    Quantizer q;
    GifEncoder probe;
    if (auto st = probe.start(1, 1, q); !st) return st.error();
  }
#endif
  return std::unique_ptr<Film>(new Film(kind, std::move(path), std::move(frames)));
}

const MovieFrame* Film::next() const { return done_ || pos_ >= order_.size() ? nullptr : &frames_[order_[pos_]]; }

std::size_t Film::encoded_frames() const { return kind_ == FilmKind::gif ? gif_.frames() : video_.frames(); }

Status Film::take(const std::vector<std::uint8_t>& rgba, int w, int h) {
  if (!next()) return make_error("gui.export", "the film is finished");
  auto fail = [&](Error e) -> Status {
    done_ = true;
    return e;
  };
  if (pos_ == 0) {
    w_ = w, h_ = h;
  } else if (w != w_ || h != h_) {
    return fail(make_error("gui.export", "the window changed size while filming",
                           "keep the window's size until the export is done"));
  }
  const MovieFrame& f = frames_[order_[pos_]];
  if (pos_ < samples_) {
    quantizer_.sample(rgba);
  } else {
    if (pos_ == samples_) {
      // The palette leaves one entry for the transparency of unchanged pixels.
      if (kind_ == FilmKind::gif) {
        quantizer_.build(256, true);
        if (auto st = gif_.start(w_, h_, quantizer_); !st) return fail(st.error());
      } else if (auto st = video_.start(path_, w_, h_, kVideoFps); !st) {
        return fail(st.error());
      }
    }
    Status st = kind_ == FilmKind::gif
                    ? gif_.add(rgba, f.delay_cs)
                    : video_.add(rgba, std::max(1, static_cast<int>(std::lround(f.delay_cs * kVideoFps / 100.0))));
    if (!st) return fail(st.error());
  }
  if (++pos_ == order_.size()) {
    done_ = true;
    return finish();
  }
  return ok_status();
}

Status Film::finish() {
  auto bytes = kind_ == FilmKind::gif ? gif_.finish() : video_.finish();
  if (!bytes) return bytes.error();
  const std::string id = kind_ == FilmKind::gif ? "gui.gif_io" : "gui.video_io";
  if (auto st = write_file_atomically(path_, *bytes, id); !st) return st;
  bytes_ = bytes->size();
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", static_cast<double>(movie_length_cs(frames_)) / 100);
  summary_ = "wrote " + path_ + " (" + std::to_string(frames_.size()) + " frames, " + file_size_text(bytes_) + ", " +
             seconds + ")";
  return ok_status();
}

}  // namespace collscope::view
