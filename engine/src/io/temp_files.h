// Temporary files being written, known to the interrupt handler so that SIGINT or
// SIGTERM in the middle of a write leaves nothing behind (collscope/files.h).
//
// The handler may run on any thread at any moment, so the table of names is a fixed
// array of slots, each guarded by a sequence number (odd while its name changes): the
// handler only unlinks a name it read whole. A name is registered before the file is
// created and unregistered after it was renamed or removed, so at worst the handler
// unlinks a name that no longer exists.
#pragma once

#include <string>

namespace collscope::io {

// ".NAME.tmp-PID-TIME-ATTEMPT" in `dir`: no other writer picks it, and a clash only
// costs another attempt since files are created with O_EXCL. NAME is shortened so
// that the temporary name stays within NAME_MAX.
std::string temp_name(const std::string& dir, const std::string& name, unsigned attempt);

class TempFile {
 public:
  TempFile() = default;
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  // Registers `path` as a file of ours. False when the process is being interrupted:
  // then no new file may be created.
  bool arm(const std::string& path);
  // The file no longer exists under that name (renamed or removed), or never did.
  void disarm();
  const char* path() const { return path_.c_str(); }

 private:
  int slot_ = -1;  // -1: every slot is taken (the file is written all the same)
  std::string path_;
};

}  // namespace collscope::io
