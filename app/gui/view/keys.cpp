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
       "presenter mode: fonts twice as large, black background, caption prominent (passed checks a green "
       "\"verified\", failed ones in full), side panels and timeline hidden"},
      {"B / .", "blank the screen (black), and back"},
      {"+ / -", "zoom"},
      {"T", "show or hide the timeline"},
      {"W", "the \"what if\" window: every algorithm's predicted time against message size"},
      {"C", "colours per call (each call's own inputs) or across the program (its original inputs, the default)"},
      {"Q", "quiz mode: a question before every step, which plays once it is answered; a score per lesson"},
      {"M", "the matrix (a row per rank, a column per chunk; the default from 32 ranks) or the boxes"},
      {"? / F1", "this list of keys"},
      {"Escape", "close the list of keys, or end the blank screen"},
  };
  return keys;
}

const std::string& quiz_help() {
  static const std::string text =
      "Quiz mode (Q, or collscope gui FILE --quiz): before each step a question about it, generated from the "
      "schedule: which cells of a rank change (click them), which rank sends to a rank, what value a rank will hold "
      "(type it), which ranks hold a complete sum (tick them). Answer, and the step plays. Lessons add their own "
      "questions (\"quiz\" in the file): lesson 30, quiz on the ring all-reduce. collscope quiz FILE prints them "
      "with the answers.";
  return text;
}

}  // namespace collscope::view
