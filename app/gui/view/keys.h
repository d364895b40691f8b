// Every key the window answers to, in the words of the help overlay (?) and the
// README's table; the window's key handling (screen.cpp, controls_panel.cpp) follows it.
#pragma once

#include <string>
#include <vector>

namespace collscope::view {

struct KeyHelp {
  std::string keys;    // "Right / PageDown"
  std::string action;  // "step forward"
};

const std::vector<KeyHelp>& key_help();

// The paragraph under the keys about quiz mode and the quiz lesson.
const std::string& quiz_help();

}  // namespace collscope::view
