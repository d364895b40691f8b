#include "gui/view/video.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace collscope::view {

namespace {

const char* kInstallHint =
    "install ffmpeg (apt-get install ffmpeg) to write videos, or write an animated GIF with --gif, which needs nothing "
    "else";

std::string read_all(int fd) {
  std::string out;
  if (::lseek(fd, 0, SEEK_SET) < 0) return out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// An unnamed file for ffmpeg's output: it disappears with its last descriptor, whatever
// ends the process.
int anonymous_file() {
  std::FILE* f = std::tmpfile();
  if (!f) return -1;
  const int fd = ::dup(::fileno(f));
  std::fclose(f);
  if (fd >= 0) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

std::string last_lines(const std::string& text, std::size_t lines) {
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  std::size_t start = end;
  for (std::size_t n = 0; start > 0; --start)
    if (text[start - 1] == '\n' && ++n == lines) break;
  std::string out = text.substr(start, end - start);
  for (char& c : out)
    if (c == '\n') c = ' ';
  return out;
}

}  // namespace

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path || name.empty()) return {};
  std::string dirs = path;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t colon = dirs.find(':', start);
    std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return {};
}

Result<std::string> video_container(const std::string& path) {
  auto ends = [&](const char* ext) {
    const std::size_t n = std::strlen(ext);
    return path.size() > n && path.compare(path.size() - n, n, ext) == 0;
  };
  if (ends(".mp4")) return std::string("mp4");
  if (ends(".mkv")) return std::string("matroska");
  if (ends(".webm")) return std::string("webm");
  return make_error("gui.video_format", "cannot tell the video format of \"" + path + "\"",
                    "name the video OUT.mp4, OUT.mkv or OUT.webm");
}

Status check_video(const std::string& path) {
  if (auto c = video_container(path); !c) return c.error();
  if (find_on_path("ffmpeg").empty())
    return make_error("gui.no_ffmpeg", "cannot write the video \"" + path + "\": ffmpeg is not installed (not on PATH)",
                      kInstallHint);
  return ok_status();
}

VideoEncoder::~VideoEncoder() { stop(); }

void VideoEncoder::stop() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  if (out_ >= 0) ::close(out_);
  if (err_ >= 0) ::close(err_);
  out_ = err_ = -1;
}

Status VideoEncoder::start(const std::string& path, int w, int h, int fps) {
  auto container = video_container(path);
  if (!container) return container.error();
  const std::string ffmpeg = find_on_path("ffmpeg");
  if (ffmpeg.empty())
    return make_error("gui.no_ffmpeg", "cannot write the video \"" + path + "\": ffmpeg is not installed (not on PATH)",
                      kInstallHint);
  if (w <= 0 || h <= 0) return make_error("gui.video_failed", "no pixels to film", {}, {}, ExitCode::backend_failure);
  int sv[2];
  // A socket rather than a pipe: a write to an ffmpeg that died fails (MSG_NOSIGNAL)
  // instead of killing collscope with SIGPIPE.
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return make_error("gui.video_failed", std::string("cannot start ffmpeg: ") + std::strerror(errno), {}, {},
                      ExitCode::backend_failure);
  out_ = anonymous_file();
  err_ = anonymous_file();
  if (out_ < 0 || err_ < 0) {
    ::close(sv[0]), ::close(sv[1]);
    stop();
    return make_error("gui.video_failed", "cannot create a temporary file for ffmpeg", "check the space in $TMPDIR", {},
                      ExitCode::backend_failure);
  }
  const std::string size = std::to_string(w) + "x" + std::to_string(h);
  const std::string rate = std::to_string(fps);
  // OpenGL's rows are bottom-up: vflip; yuv420p (what players expect) needs even sizes.
  std::vector<std::string> args = {ffmpeg,     "-hide_banner", "-loglevel", "error",
                                   "-f",       "rawvideo",     "-pix_fmt",  "rgba",
                                   "-s",       size,           "-r",        rate,
                                   "-i",       "pipe:0",       "-vf",       "vflip,crop=trunc(iw/2)*2:trunc(ih/2)*2",
                                   "-pix_fmt", "yuv420p"};
  // The output is a stream: an mp4 carries its index in fragments.
  if (*container == "mp4") args.insert(args.end(), {"-movflags", "frag_keyframe+empty_moov+default_base_moof"});
  args.insert(args.end(), {"-f", *container, "pipe:1"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]), ::close(sv[1]);
    stop();
    return make_error("gui.video_failed", std::string("cannot start ffmpeg: ") + std::strerror(errno), {}, {},
                      ExitCode::backend_failure);
  }
  if (pid == 0) {
    ::dup2(sv[1], 0);
    ::dup2(out_, 1);
    ::dup2(err_, 2);
    ::execv(ffmpeg.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(sv[1]);
  ::shutdown(sv[0], SHUT_RD);
  pid_ = pid;
  in_ = sv[0];
  frame_bytes_ = static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4;
  frames_ = 0;
  return ok_status();
}

Status VideoEncoder::add(const std::vector<std::uint8_t>& rgba, int repeats) {
  if (in_ < 0) return make_error("gui.video_failed", "the video was not started", {}, {}, ExitCode::backend_failure);
  if (rgba.size() < frame_bytes_)
    return make_error("gui.video_failed", "a frame is smaller than the video", {}, {}, ExitCode::backend_failure);
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const std::uint8_t* p = rgba.data();
    std::size_t left = frame_bytes_;
    while (left > 0) {
      const ssize_t n = ::send(in_, p, left, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        // ffmpeg stopped reading: what it said is the error.
        auto r2 = finish();
        if (!r2) return r2.error();
        return make_error("gui.video_failed", "ffmpeg stopped reading frames", {}, {}, ExitCode::backend_failure);
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    ++frames_;
  }
  return ok_status();
}

Result<std::string> VideoEncoder::finish() {
  if (pid_ <= 0) return make_error("gui.video_failed", "the video was not started", {}, {}, ExitCode::backend_failure);
  ::close(in_);
  in_ = -1;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  std::string said = read_all(err_);
  std::string bytes = read_all(out_);
  stop();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string why = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : "killed by a signal";
    if (!said.empty()) why += ": " + last_lines(said, 3);
    return make_error("gui.video_failed", "ffmpeg could not encode the video (" + why + ")",
                      "run ffmpeg -encoders to see what this ffmpeg can write, or write a GIF with --gif", {},
                      ExitCode::backend_failure);
  }
  if (bytes.empty())
    return make_error("gui.video_failed", "ffmpeg wrote nothing", "write a GIF with --gif instead", {},
                      ExitCode::backend_failure);
  return bytes;
}

}  // namespace collscope::view
