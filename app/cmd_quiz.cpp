// `collscope quiz FILE`: the questions the window's quiz mode asks before each step of a
// lesson, as a worksheet, then its key (view/quiz.h, shared with the window).
#include <iostream>

#include "cli.h"
#include "gui/view/lesson.h"
#include "gui/view/quiz.h"

namespace collscope::app {

int cmd_quiz(const QuizFlags& f) {
  if (f.no_key && f.key_only)
    return report_error(make_error("cli.usage", "--no-key and --key exclude each other",
                                   "give one of them, or neither for the worksheet and then its key"));
  auto sc = load_scenario(f.file);
  if (!sc) return report_error(sc.error());
  // The answers come from a real run, as in the window: its bytes after every step.
  auto run = view::run_lesson(*sc, "cpu");
  if (!run) return report_error(run.error());
  auto questions = view::build_quiz(*run);
  if (!questions) return report_error(questions.error());
  if (questions->empty()) {
    std::cout << "this lesson has no steps to ask about\n";
    return 0;
  }
  if (!f.key_only) std::cout << view::quiz_worksheet(**run, *questions);
  if (!f.key_only && !f.no_key) std::cout << "\n";
  if (!f.no_key) std::cout << view::quiz_key(*questions);
  return 0;
}

}  // namespace collscope::app
