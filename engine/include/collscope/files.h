// Reading inputs and writing outputs so that no file is half-written, clobbered,
// waited on for ever or read without bound. Every reader and every writer of the
// engine, the command line and the window goes through these functions.
//
// Reading: only regular files are read. A path is looked at with stat() before it
// is opened, opened with O_NONBLOCK (a FIFO or a device never blocks the open), and
// checked again with fstat() on the opened descriptor (a file swapped for /dev/zero
// in between is still refused); at most limit + 1 bytes are read, whatever the size
// the file claims.
//
// Writing: symbolic links at the end of the path are followed, so the link stays and
// its target gets the new contents. Outputs are only ever regular files: a folder, a
// device (/dev/null, /dev/full), a FIFO or a socket at the path is refused, never
// written through or renamed over. The data goes to a new file with a unique name
// (O_EXCL) in the target's folder, is flushed to disk and renamed over the target, so
// readers see the old file or the whole new one. On any failure, and on SIGINT or
// SIGTERM once install_interrupt_cleanup() ran, the temporary file is removed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collscope/result.h"

namespace collscope {

// --- reading ---------------------------------------------------------------------------

// What a reader reads, for its error messages.
struct InputKind {
  std::string error_id;      // "scenario.io", "analyze.io", ...
  std::string noun;          // "scenario file", "flight record", ...
  std::uint64_t max_bytes;   // larger files are refused, never loaded
  std::string missing_hint;  // what to do when the file does not exist
  std::string large_hint;    // what to do when it is over max_bytes
};

// The whole file, or an error (exit 2, Location = the path) that says what is there
// instead: nothing, a folder, a FIFO, a device, a socket, a file over the limit, or
// the operating system's reason.
Result<std::string> read_input_file(const std::string& path, const InputKind& kind);

// "a FIFO", "a character device", ... for a st_mode; "" for a regular file.
std::string file_type_name(unsigned mode);

// --- what collscope ships ---------------------------------------------------------------

// The path of `name` (a file or folder) in collscope's assets: under $COLLSCOPE_ASSETS
// when set, else the first of assets/ next to the binary, above its folder, in
// share/collscope/, or in the source tree that exists; "assets/NAME" when none does.
std::string asset_path(const std::string& name);

// --- writing ---------------------------------------------------------------------------

// Writes `data` to `path` as described above. Errors: `error_id`, exit 2, naming the
// path and the operating system's reason.
Status write_file_atomically(const std::string& path, std::string_view data, const std::string& error_id);

// What write_file_atomically would refuse, checked before any work is done: an empty
// name, a name ending in "/", a folder, a device, FIFO or socket, a missing folder.
Status check_output_target(const std::string& path, const std::string& error_id);

// The device and inode of the file at `path` (following symbolic links), if any.
struct FileId {
  std::uint64_t dev = 0, ino = 0;
  bool operator==(const FileId&) const = default;
};
std::optional<FileId> file_id(const std::string& path);

// One file a command is about to write.
struct OutputPath {
  std::string path;
  std::string flag;      // how the user named it: "--trace", "--flight-record", ...
  std::string error_id;  // the writer's error id, for check_output_target
};

// Checks a command's outputs before it writes anything: each one passes
// check_output_target, none is one of `inputs` (the same file by device and inode,
// whatever link leads there), and no two are the same file. Conflicts are
// "cli.output_path" errors (exit 2).
Status check_outputs(const std::vector<std::string>& inputs, const std::vector<OutputPath>& outputs);

// --- interrupts ----------------------------------------------------------------------------

// Installs handlers for SIGINT, SIGTERM and SIGHUP: the temporary files of writes in
// progress are removed, "error[cli.interrupted] ..." goes to stderr, and the process
// then dies of the same signal, so the shell reports 128 + its number (130 for
// SIGINT, 143 for SIGTERM, 129 for SIGHUP). Existing outputs stay as they were. A
// signal that was ignored when the process started (nohup) stays ignored.
void install_interrupt_cleanup();

}  // namespace collscope
