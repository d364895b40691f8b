// Atomic replacement of a file with POSIX calls: create a uniquely named file in the
// same folder (rename is only atomic within one file system), write, fsync, rename.
#include "trace/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace collscope {
namespace {

std::string os_reason(int err) { return std::strerror(err); }

// What to do about the usual reasons.
std::string hint_for(int err) {
  switch (err) {
    case ENOENT:
      return "check that the folder exists";
    case EACCES:
    case EPERM:
    case EROFS:
      return "choose a folder you may write to";
    case EISDIR:
      return "give a file name, not a folder";
    case ENOSPC:
    case EDQUOT:
      return "free some disk space or write elsewhere";
    default:
      return {};
  }
}

Error io_error(const std::string& error_id, const std::string& path, const std::string& what, int err) {
  return make_error(error_id, "cannot write \"" + path + "\": " + what + ": " + os_reason(err), hint_for(err), {},
                    ExitCode::bad_input);
}

// A name that no other writer picks: process id, time and the attempt number (a
// clash only costs another attempt, since the file is created with O_EXCL). The
// target's name is shortened so that the temporary name stays within NAME_MAX.
std::string temp_name_for(const std::filesystem::path& target, unsigned attempt) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  const std::string base = target.filename().string().substr(0, 128);
  const std::string name = "." + base + ".tmp-" + std::to_string(::getpid()) + "-" +
                           std::to_string(static_cast<unsigned long long>(now)) + "-" + std::to_string(attempt);
  return (target.parent_path() / name).string();
}

// Writes all of `data`, retrying after signals and short writes.
int write_all(int fd, std::string_view data) {
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

Status write_file_atomically(const std::string& path, std::string_view data, const std::string& error_id) {
  if (path.empty())
    return make_error(error_id, "cannot write a file with an empty name", "give a file name", {}, ExitCode::bad_input);
  const std::filesystem::path target(path);

  // O_EXCL makes creation fail rather than reuse a file someone else is writing;
  // mode 0666 lets the user's umask decide the permissions, as for any new file.
  std::string tmp;
  int fd = -1;
  for (unsigned attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = temp_name_for(target, attempt);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    const int err = errno;
    if (fd < 0 && err != EEXIST) return io_error(error_id, path, "cannot create a file in its folder", err);
  }
  if (fd < 0) return io_error(error_id, path, "cannot create a temporary file", EEXIST);

  auto fail = [&](const std::string& what, int err) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    return Status(io_error(error_id, path, what, err));
  };
  if (int err = write_all(fd, data); err != 0) return fail("write failed", err);
  // Without fsync a crash soon after the rename could leave an empty file behind.
  if (::fsync(fd) != 0) {
    const int err = errno;
    return fail("flush to disk failed", err);
  }
  const int closed = ::close(fd);
  const int close_err = errno;
  fd = -1;
  if (closed != 0) return fail("close failed", close_err);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    return fail("cannot replace the file", err);
  }
  return ok_status();
}

}  // namespace collscope
