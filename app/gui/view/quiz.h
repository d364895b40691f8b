// Quiz mode: before each step the window asks one question about it, generated from
// the Schedule and the contribution sets (never written by hand), or the lesson's own
// ("quiz" in the scenario file, QuizSpec). The answer comes from the same data the
// canvas shows: the step's transfers, the bytes after it (the run's snapshots) and
// the contribution sets after it. `collscope quiz FILE` prints the same questions as a
// worksheet and its key; the window asks them, checks the answers and keeps the score.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collscope/scenario.h"
#include "gui/view/lesson.h"
#include "gui/view/playback.h"

namespace collscope::view {

struct QuizQuestion {
  std::int32_t step = 0;  // asked before this step runs (the window's position `step`)
  QuizKind kind = QuizKind::changes;
  std::int32_t rank = -1;  // changes, sender, value
  std::int32_t buf = -1;   // changes, value
  std::string buffer;      // its name
  std::uint64_t element = 0;
  std::string text;       // the question
  bool authored = false;  // the lesson's own question

  // The answer.
  std::vector<std::uint64_t> elements;  // changes: the elements of buf on rank the step writes, sorted
  std::vector<std::int32_t> ranks;      // sender: who sends to rank; complete: who holds a complete result after
  double value = 0;                     // value: what rank holds at element after the step
  std::string answer;                   // the answer in words: "elements 2 and 3", "rank 1", "204", "no rank"
  std::string why;                      // from the step: "rank 1 receives x[2..3] from rank 0 and adds it"
};

// One question per step: the lesson's own where it has one, else a generated one. The
// kinds take turns (changes, sender, value, complete, from step k's turn k mod 4); a
// kind that has nothing to ask about in a step (no rank receives, not a reduction)
// passes its turn to the next. Reads the run's bytes after each step (MemoryTimeline).
Result<std::vector<QuizQuestion>> build_quiz(const std::shared_ptr<const LessonRun>& run);

// The question about one step: `spec` says what to ask (kind, rank, buffer, element);
// the answer is worked out here. Used for the lesson's own and the generated ones alike.
// `after`: the bytes after the step (host[buf][rank]); `contributions_after`: the sets after it.
QuizQuestion make_question(const LessonRun& run, const QuizSpec& spec, const HostMemory& after,
                           const ContributionCursor& contributions_after);

// What the student gave: cells clicked (elements of the question's buffer, and how many
// elements a cell holds, as the canvas aggregates them), ranks ticked, or a typed value.
struct QuizAnswer {
  std::vector<std::uint64_t> elements;
  std::uint64_t per_cell = 1;
  std::vector<std::int32_t> ranks;
  std::string typed;
};

struct QuizVerdict {
  bool correct = false;
  bool counted = true;  // false: not an answer (a value that is no number), asked again
  std::string message;  // "right: ...", "not quite: the answer is ..."
};

QuizVerdict check_answer(const QuizQuestion& q, const QuizAnswer& a);

// The score of one lesson, and the rule that holds the lesson before a step whose
// question is not answered yet.
class QuizSession {
 public:
  void start(std::vector<QuizQuestion> questions);
  bool active() const { return !questions_.empty(); }
  // The question of the step that runs next from position `applied`; nullptr at the end.
  const QuizQuestion* question_at(std::int32_t applied) const;
  bool answered(std::int32_t step) const;
  // Records the first answer to a step's question (later ones are shown, not scored).
  QuizVerdict answer(std::int32_t step, const QuizAnswer& a);
  const QuizVerdict* verdict(std::int32_t step) const;
  // Keeps `pb` (which was at `before` when the frame began) from running past a step
  // whose question is unanswered: forward moves stop at it, with the animation at 0.
  void gate(Playback& pb, std::int32_t before) const;
  std::int32_t right() const { return right_; }
  std::int32_t answered_count() const { return answered_; }
  std::int32_t total() const { return static_cast<std::int32_t>(questions_.size()); }
  std::string score_text() const;  // "score: 3 right of 4 answered (14 questions)"
  const std::vector<QuizQuestion>& questions() const { return questions_; }

 private:
  std::vector<QuizQuestion> questions_;
  std::vector<std::int32_t> by_step_;  // question index of every step, -1 none
  std::vector<QuizVerdict> verdicts_;
  std::vector<bool> answered_step_;
  std::int32_t right_ = 0, answered_ = 0;
};

// `collscope quiz FILE`: the worksheet (every question, numbered by step as the window
// numbers them), then the key (every answer, with why).
std::string quiz_worksheet(const LessonRun& run, const std::vector<QuizQuestion>& questions);
std::string quiz_key(const std::vector<QuizQuestion>& questions);

// "ranks 0, 1 and 3", "rank 2", "no rank".
std::string ranks_words(const std::vector<std::int32_t>& ranks);

}  // namespace collscope::view
