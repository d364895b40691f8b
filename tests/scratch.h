// Scratch folders for tests: `prefix`PID/`name` under the temporary folder, removed with
// everything in them when the test process ends (COLLSCOPE_KEEP_SCRATCH=1 keeps them, to
// look at what a failing test wrote).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace test_scratch {

namespace fs = std::filesystem;

// The roots this process made; their destructor runs at exit.
struct Roots {
  std::vector<fs::path> paths;
  ~Roots() {
    if (std::getenv("COLLSCOPE_KEEP_SCRATCH") != nullptr) return;
    for (const auto& p : paths) {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  }
};

inline Roots& roots() {
  static Roots r;
  return r;
}

// The folder `name` under this process's `prefix`PID, made if missing.
inline fs::path dir(const std::string& prefix, const std::string& name) {
  const fs::path root = fs::temp_directory_path() / (prefix + std::to_string(::getpid()));
  auto& r = roots().paths;
  if (std::find(r.begin(), r.end(), root) == r.end()) r.push_back(root);
  const fs::path d = name.empty() ? root : root / name;
  fs::create_directories(d);
  return d;
}

}  // namespace test_scratch
