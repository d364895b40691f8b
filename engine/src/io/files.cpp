// Safe reading and writing of files with POSIX calls (collscope/files.h).
#include "collscope/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "io/temp_files.h"
#include "scenario/resolve.h"

namespace collscope {

namespace fs = std::filesystem;

std::string file_type_name(unsigned mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// --- reading -------------------------------------------------------------------------------

namespace {

Error input_error(const InputKind& k, const std::string& path, std::string message, std::string hint) {
  return make_error(k.error_id, std::move(message), std::move(hint), Location{path, 0, 0, ""});
}

Error os_input_error(const InputKind& k, const std::string& path, const char* what, int err) {
  std::string hint = "check the path and its permissions";
  if (err == ENOTDIR) hint = "a part of the path before the file name is not a folder";
  return input_error(k, path, std::string(what) + " (" + std::strerror(err) + ")", hint);
}

Error too_large(const InputKind& k, const std::string& path, std::uint64_t size, bool at_least) {
  const auto [have, limit] = scenario::human_bytes_pair(size, k.max_bytes);
  return input_error(k, path,
                     "file is too large for a " + k.noun + " (" + (at_least ? "more than " : "") + have +
                         ", the limit is " + limit + ")",
                     k.large_hint);
}

// A descriptor that closes itself.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::string> read_input_file(const std::string& path, const InputKind& k) {
  if (path.empty()) return input_error(k, path, "no file name given", "give the path of a " + k.noun);
  auto refuse_type = [&](unsigned mode) -> Error {
    if (S_ISDIR(mode))
      return input_error(k, path, "path is a directory, not a " + k.noun, "give the path of a file inside it");
    return input_error(k, path, "path is " + file_type_name(mode) + ", not a regular file",
                       "give the path of a " + k.noun +
                           " (only regular files are read: a FIFO would wait for a writer, a device may never end)");
  };
  // stat() first: a device is refused without being opened at all (opening some has effects).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return input_error(k, path, "file not found", k.missing_hint);
    return os_input_error(k, path, "cannot open the file", err);
  }
  if (!S_ISREG(st.st_mode)) return refuse_type(st.st_mode);

  // O_NONBLOCK: should the path have become a FIFO since, open() returns at once.
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOENT) return input_error(k, path, "file not found", k.missing_hint);
    return os_input_error(k, path, "cannot open the file", err);
  }
  // What was opened is what counts.
  if (::fstat(f.fd, &st) != 0) return os_input_error(k, path, "cannot read the file", errno);
  if (!S_ISREG(st.st_mode)) return refuse_type(st.st_mode);
  const auto claimed = static_cast<std::uint64_t>(st.st_size);
  if (claimed > k.max_bytes) return too_large(k, path, claimed, false);
  // Back to blocking reads: on a regular file they never wait, and O_NONBLOCK has no
  // meaning there on Linux, but a file system may treat it as "do not wait for data".
  const int flags = ::fcntl(f.fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);

  // At most max_bytes + 1: a file that grows (or lies about its size) is still bounded.
  std::string text;
  text.resize(static_cast<std::size_t>(std::min<std::uint64_t>(claimed, k.max_bytes) + 1));
  std::size_t used = 0;
  for (;;) {
    if (used == text.size()) {
      if (used > k.max_bytes) break;
      text.resize(static_cast<std::size_t>(std::min<std::uint64_t>(k.max_bytes + 1, used * 2 + 4096)));
    }
    const ssize_t n = ::read(f.fd, text.data() + used, text.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      return os_input_error(k, path, "cannot read the file", errno);
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  if (used > k.max_bytes) return too_large(k, path, k.max_bytes, true);
  text.resize(used);
  return text;
}

// --- writing -------------------------------------------------------------------------------

namespace {

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
  return make_error(error_id, "cannot write \"" + path + "\": " + what + ": " + std::strerror(err), hint_for(err), {},
                    ExitCode::bad_input);
}

Error not_regular_error(const std::string& error_id, const std::string& path, unsigned mode) {
  if (S_ISDIR(mode))
    return make_error(error_id, "cannot write \"" + path + "\": it is a folder", "give a file name, not a folder");
  return make_error(error_id, "cannot write \"" + path + "\": it is " + file_type_name(mode) + ", not a regular file",
                    "give the path of a regular file: outputs are never written over devices, FIFOs or sockets");
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Where the new file goes: the path with the symbolic links at its end followed (a
// link to a link ...), so that a link keeps pointing at the new contents. A dangling
// link is followed too: the file is created where it points, as a shell's ">" does.
struct Target {
  std::string path;  // after the links
  bool exists = false;
  struct stat st {};
};

Result<Target> resolve_target(const std::string& path, const std::string& error_id) {
  if (path.empty())
    return make_error(error_id, "cannot write a file with an empty name", "give a file name", {}, ExitCode::bad_input);
  if (path.back() == '/')
    return make_error(error_id, "cannot write \"" + path + "\": the name ends in \"/\", which names a folder",
                      "give a file name, not a folder");
  Target t;
  // stat() follows every link: what is there in the end decides.
  if (::stat(path.c_str(), &t.st) == 0) {
    t.exists = true;
    if (!S_ISREG(t.st.st_mode)) return not_regular_error(error_id, path, t.st.st_mode);
    char buf[PATH_MAX];
    // realpath also copes with /proc/self/fd/N and other links whose text is no path.
    if (::realpath(path.c_str(), buf) != nullptr) {
      t.path = buf;
      return t;
    }
    t.path = path;
    return t;
  }
  const int err = errno;
  if (err != ENOENT) return io_error(error_id, path, "cannot look at the path", err);
  // Nothing there in the end: follow a dangling link textually.
  std::string p = path;
  for (int hop = 0; hop < 40; ++hop) {
    struct stat ls {};
    if (::lstat(p.c_str(), &ls) != 0 || !S_ISLNK(ls.st_mode)) {
      t.path = p;
      return t;
    }
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
    if (n < 0) return io_error(error_id, path, "cannot read the symbolic link", errno);
    const std::string to(buf, static_cast<std::size_t>(n));
    p = !to.empty() && to[0] == '/' ? to : parent_of(p) + "/" + to;
  }
  return io_error(error_id, path, "too many symbolic links", ELOOP);
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

Status check_output_target(const std::string& path, const std::string& error_id) {
  auto t = resolve_target(path, error_id);
  if (!t) return t.error();
  const std::string dir = parent_of(t->path);
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0) return io_error(error_id, path, "its folder cannot be used", errno);
  if (!S_ISDIR(ds.st_mode)) return io_error(error_id, path, "its folder cannot be used", ENOTDIR);
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return io_error(error_id, path, "cannot create a file in its folder", errno);
  return ok_status();
}

Status write_file_atomically(const std::string& path, std::string_view data, const std::string& error_id) {
  auto target = resolve_target(path, error_id);
  if (!target) return target.error();
  const std::string& final_path = target->path;
  const std::string dir = parent_of(final_path);

  // O_EXCL makes creation fail rather than reuse a file someone else is writing;
  // mode 0666 lets the user's umask decide the permissions of a new file. The name is
  // registered before the file exists, so that an interrupt removes it (temp_files.h).
  io::TempFile tmp;
  int fd = -1;
  for (unsigned attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    if (!tmp.arm(io::temp_name(dir, final_path.substr(final_path.rfind('/') + 1), attempt)))
      return make_error(error_id, "cannot write \"" + path + "\": interrupted", {}, {}, ExitCode::bad_input);
    fd = ::open(tmp.path(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    const int err = errno;
    if (fd < 0) {
      tmp.disarm();  // nothing of ours at that name
      if (err != EEXIST) return io_error(error_id, path, "cannot create a file in its folder", err);
    }
  }
  if (fd < 0) return io_error(error_id, path, "cannot create a temporary file", EEXIST);

  auto fail = [&](const std::string& what, int err) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.path());
    tmp.disarm();
    return Status(io_error(error_id, path, what, err));
  };
  // A replaced file keeps its permissions.
  if (target->exists) (void)::fchmod(fd, target->st.st_mode & 07777);
  if (int err = write_all(fd, data); err != 0) return fail("write failed", err);
  // Without fsync a crash soon after the rename could leave an empty file behind.
  if (::fsync(fd) != 0) return fail("flush to disk failed", errno);
  const int closed = ::close(fd);
  const int close_err = errno;
  fd = -1;
  if (closed != 0) return fail("close failed", close_err);
  // Looked at again just before the rename: what replaced a regular file in the
  // meantime is not renamed over either.
  struct stat now {};
  if (::stat(final_path.c_str(), &now) == 0 && !S_ISREG(now.st_mode)) {
    ::unlink(tmp.path());
    tmp.disarm();
    return not_regular_error(error_id, path, now.st_mode);
  }
  if (::rename(tmp.path(), final_path.c_str()) != 0) return fail("cannot replace the file", errno);
  tmp.disarm();
  // The rename itself reaches the disk with the folder.
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return ok_status();
}

std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

Status check_outputs(const std::vector<std::string>& inputs, const std::vector<OutputPath>& outputs) {
  // Where each output ends up: its file when it exists, else the absolute path after links.
  struct Where {
    std::optional<FileId> id;
    std::string path;
  };
  std::vector<Where> seen;
  for (const OutputPath& o : outputs) {
    if (auto st = check_output_target(o.path, o.error_id); !st) return st;
    Where w{file_id(o.path), o.path};
    if (auto t = resolve_target(o.path, o.error_id)) {
      std::error_code ec;
      const auto abs = fs::weakly_canonical(fs::absolute(t->path, ec), ec);
      if (!ec) w.path = abs.string();
    }
    for (const std::string& in : inputs) {
      const auto id = file_id(in);
      if (id && w.id && *id == *w.id)
        return make_error("cli.output_path",
                          o.flag + " " + o.path + " is the same file as " + in +
                              ", which this command reads: writing it would destroy it",
                          "give " + o.flag + " another file name");
    }
    for (std::size_t i = 0; i < seen.size(); ++i)
      if ((w.id && seen[i].id && *w.id == *seen[i].id) || w.path == seen[i].path)
        return make_error("cli.output_path",
                          o.flag + " " + o.path + " is the same file as " + outputs[i].flag + " " + outputs[i].path +
                              ": one would overwrite the other",
                          "give each output its own file name");
    seen.push_back(std::move(w));
  }
  return ok_status();
}

std::string asset_path(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const char* env = std::getenv("COLLSCOPE_ASSETS"); env && *env) return (fs::path(env) / name).string();
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& p : {exe.parent_path() / "assets", exe.parent_path().parent_path() / "assets",
                              exe.parent_path().parent_path() / "share" / "collscope" / "assets"})
      if (fs::exists(p / name, ec)) return (p / name).string();
  }
#ifdef COLLSCOPE_ASSET_DIR
  if (fs::exists(fs::path(COLLSCOPE_ASSET_DIR) / name, ec)) return (fs::path(COLLSCOPE_ASSET_DIR) / name).string();
#endif
  return "assets/" + name;
}

}  // namespace collscope
