// What the window's tests share: a shell that keeps stderr, whether xvfb-run is there, a
// lesson's path, scratch folders, `collscope gui` under a private X server, and a file
// read whole.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "scratch.h"
#include "shell.h"

namespace gui_test {

namespace fs = std::filesystem;

inline test_shell::Output shell(const std::string& cmd) { return test_shell::shell(cmd + " 2>&1"); }

inline bool have_xvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

inline std::string lesson(const std::string& name) { return std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name; }

// A folder `name` under the temporary folder `prefix`PID, removed when the test ends.
inline fs::path scratch(const std::string& prefix, const std::string& name) { return test_scratch::dir(prefix, name); }

// collscope under a private X server; settings go to `config`; `env` goes before the
// binary (PATH=... for ffmpeg). xvfb-run itself fails now and then when X servers start
// and stop side by side (it cannot start one, or cannot remove its own temporary folder
// after a command that exits at once) and then says so and hides the command's exit
// status: such a run is tried again, up to three times in all.
inline test_shell::Output gui(const std::string& args, const fs::path& config, const std::string& env = "") {
  test_shell::Output o;
  for (int attempt = 0; attempt < 3; ++attempt) {
    o = shell("XDG_CONFIG_HOME=" + config.string() + " xvfb-run -a " + (env.empty() ? "" : "env " + env + " ") +
              std::string(COLLSCOPE_BINARY) + " gui " + args);
    if (o.out.find("xvfb-run: error:") == std::string::npos) break;
  }
  return o;
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gui_test
