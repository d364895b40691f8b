#include "gui/view/keys.h"

namespace collscope::view {

const std::vector<KeyHelp>& key_help() {
  // Presentation clickers send PageDown and PageUp, and B or . for a black screen.
  static const std::vector<KeyHelp> keys = {
      {"Space", "play / pause"},
      {"Right / PageDown", "step forward"},
      {"Left / PageUp", "step back"},
      {"Home", "restart"},
      {"F11",
       "presenter mode: fonts twice as large, black background, caption prominent, side panels and timeline hidden"},
      {"B / .", "blank the screen (black), and back"},
      {"+ / -", "zoom"},
      {"T", "show or hide the timeline"},
      {"W", "the \"what if\" window: every algorithm's predicted time against message size"},
      {"C", "colours per call (each call's own inputs) or across the program (its original inputs, the default)"},
      {"? / F1", "this list of keys"},
      {"Escape", "close the list of keys, or end the blank screen"},
  };
  return keys;
}

}  // namespace collscope::view
