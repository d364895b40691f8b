// Quiz mode's questions and answers (view/quiz.h), without a window: over every lesson,
// each generated answer agrees with what the step actually does (the bytes before and
// after it, its arrows, its contribution sets, each read through their own code);
// right answers are accepted and wrong ones refused; the score and the rule that
// holds the lesson before an unanswered step; the lesson's own questions; the
// `collscope quiz` worksheet and key.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "collscope/scenario.h"
#include "gui/view/arrows.h"
#include "gui/view/lesson.h"
#include "gui/view/quiz.h"
#include "shell.h"

using namespace collscope;
using namespace collscope::view;

namespace {

std::vector<std::string> lessons() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios"))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string lesson(const std::string& name) { return std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name; }

std::shared_ptr<LessonRun> run_file(const std::string& path) {
  auto sc = load_scenario(path);
  if (!sc) return nullptr;
  auto run = run_lesson(*sc, "cpu");
  return run ? *run : nullptr;
}

bool same_bytes(const HostMemory& a, const HostMemory& b, std::int32_t buf, std::int32_t rank, DType t,
                std::uint64_t i) {
  const auto& x = a[static_cast<std::size_t>(buf)][static_cast<std::size_t>(rank)];
  const auto& y = b[static_cast<std::size_t>(buf)][static_cast<std::size_t>(rank)];
  const std::size_t n = size_of(t);
  return std::equal(x.begin() + static_cast<std::ptrdiff_t>(i * n),
                    x.begin() + static_cast<std::ptrdiff_t>((i + 1) * n),
                    y.begin() + static_cast<std::ptrdiff_t>(i * n));
}

// Checks one question against the step, through code other than the quiz's.
void check_question(const LessonRun& run, const QuizQuestion& q, const HostMemory& before, const HostMemory& after,
                    const ContributionCursor& contributions_after, const std::vector<Arrow>& arrows) {
  const Schedule& s = run.schedule;
  CAPTURE(q.step);
  CAPTURE(q.text);
  CHECK_FALSE(q.text.empty());
  CHECK_FALSE(q.answer.empty());
  switch (q.kind) {
    case QuizKind::changes: {
      REQUIRE(q.buf >= 0);
      const std::uint64_t n = s.buffers[static_cast<std::size_t>(q.buf)].count[static_cast<std::size_t>(q.rank)];
      const std::set<std::uint64_t> answer(q.elements.begin(), q.elements.end());
      for (std::uint64_t e : q.elements) CHECK(e < n);
      // Every element whose bytes changed is in the answer (a write may leave a value as it was).
      for (std::uint64_t i = 0; i < n; ++i)
        if (!same_bytes(before, after, q.buf, q.rank, s.dtype, i)) CHECK(answer.count(i) == 1);
      // And the answer is what the step's arrows into that row cover.
      std::uint64_t covered = 0;
      for (const Arrow& a : arrows)
        if (a.dst == q.rank && a.dst_buf == q.buf && a.action != Action::compute) covered += a.elements;
      CHECK(covered >= q.elements.size());
      if (q.elements.empty()) CHECK(covered == 0);
      break;
    }
    case QuizKind::sender: {
      std::set<std::int32_t> from;
      for (const Arrow& a : arrows)
        if (a.dst == q.rank && a.src != q.rank && a.action != Action::compute && a.action != Action::scale &&
            a.elements > 0)
          from.insert(a.src);
      CHECK(std::vector<std::int32_t>(from.begin(), from.end()) == q.ranks);
      break;
    }
    case QuizKind::value:
      REQUIRE(q.buf >= 0);
      CHECK(q.value == element_value(after[static_cast<std::size_t>(q.buf)][static_cast<std::size_t>(q.rank)], s.dtype,
                                     q.element));
      CHECK(std::stod(q.answer) == doctest::Approx(q.value).epsilon(1e-5));
      break;
    case QuizKind::complete: {
      // Every element of every user buffer, no sampling.
      const Call& c = s.calls[static_cast<std::size_t>(s.steps[static_cast<std::size_t>(q.step)].call)];
      std::vector<std::int32_t> need = c.args.world_rank;
      if (need.empty())
        for (std::int32_t r = 0; r < s.ranks; ++r) need.push_back(r);
      std::vector<std::int32_t> want;
      for (std::int32_t r = 0; r < s.ranks; ++r) {
        bool any = false;
        for (std::size_t b = 0; b < s.buffers.size() && !any; ++b)
          if (!s.buffers[b].scratch)
            for (std::uint64_t i = 0; i < s.buffers[b].count[static_cast<std::size_t>(r)] && !any; ++i) {
              auto have = contributions_after.ranks_of(r, static_cast<std::int32_t>(b), i);
              any = std::includes(have.begin(), have.end(), need.begin(), need.end());
            }
        if (any) want.push_back(r);
      }
      CHECK(want == q.ranks);
      break;
    }
  }
}

// The right answer, as a student gives it, and a wrong one.
QuizAnswer right_answer(const QuizQuestion& q) {
  QuizAnswer a;
  a.elements = q.elements;
  a.ranks = q.ranks;
  a.typed = " " + q.answer + " ";
  return a;
}
QuizAnswer wrong_answer(const QuizQuestion& q, std::int32_t ranks, std::uint64_t elements) {
  QuizAnswer a = right_answer(q);
  switch (q.kind) {
    case QuizKind::changes:
      if (!a.elements.empty()) a.elements.pop_back();
      else a.elements.push_back(elements > 0 ? elements - 1 : 0);
      break;
    case QuizKind::sender:
    case QuizKind::complete: {
      // Toggle one rank.
      const std::int32_t r = (q.rank + 1) % ranks;
      auto it = std::find(a.ranks.begin(), a.ranks.end(), r);
      if (it != a.ranks.end()) a.ranks.erase(it);
      else a.ranks.push_back(r);
      break;
    }
    case QuizKind::value:
      a.typed = format_value(q.value + 1);
      break;
  }
  return a;
}

}  // namespace

TEST_CASE("quiz: over every lesson, one question per step whose answer is what the step does") {
  int lessons_checked = 0;
  std::set<int> kinds_seen;
  for (const auto& file : lessons()) {
    CAPTURE(file);
    auto run = run_file(file);
    if (!run) continue;  // the lessons that fail on purpose (a deadlock) have no steps to ask about
    const Schedule& s = run->schedule;
    auto quiz = build_quiz(run);
    REQUIRE_MESSAGE(quiz.ok(), quiz.error().format());
    REQUIRE(quiz->size() <= s.steps.size());
    MemoryTimeline memory(run);
    ContributionCursor before_sets(s), after_sets(s);
    std::int32_t last_step = -1;
    for (const QuizQuestion& q : *quiz) {
      CHECK(q.step > last_step);  // in order, at most one per step
      last_step = q.step;
      kinds_seen.insert(static_cast<int>(q.kind));
      auto before = memory.at(q.step);
      REQUIRE(before.ok());
      auto after = memory.at(q.step + 1);
      REQUIRE(after.ok());
      after_sets.seek(q.step + 1);
      before_sets.seek(q.step);
      const auto arrows = build_arrows(
          s, q.step, [&](std::int32_t r, std::int32_t b, std::uint64_t i) { return before_sets.ranks_of(r, b, i); });
      check_question(*run, q, *before, *after, after_sets, arrows);
      const std::uint64_t n =
          q.buf >= 0 ? s.buffers[static_cast<std::size_t>(q.buf)].count[static_cast<std::size_t>(std::max(0, q.rank))]
                     : 0;
      CHECK(check_answer(q, right_answer(q)).correct);
      const auto wrong = check_answer(q, wrong_answer(q, s.ranks, n));
      CHECK_FALSE(wrong.correct);
      CHECK(wrong.message.find(q.answer) != std::string::npos);  // the answer is shown
    }
    // A step that moves data always gets a question.
    std::size_t moving = 0;
    for (const Step& st : s.steps)
      moving += std::any_of(st.transfers.begin(), st.transfers.end(),
                            [&](const Transfer& t) { return t.count > 0 && t.action != Action::compute; });
    CHECK(quiz->size() >= moving);
    ++lessons_checked;
  }
  CHECK(lessons_checked >= 25);
  CHECK(kinds_seen.size() == 4);  // every kind is asked somewhere
}

TEST_CASE("quiz: chunk cells are answered as cells, values with a tolerance, and a non-number is asked again") {
  QuizQuestion q;
  q.kind = QuizKind::changes;
  q.elements = {4, 5, 6, 7};
  q.answer = "x[4..7]";
  QuizAnswer a;
  a.per_cell = 4;
  a.elements = {4, 5, 6, 7};
  CHECK(check_answer(q, a).correct);
  a.elements = {4};  // the cell that holds 4..7, picked
  CHECK(check_answer(q, a).correct);
  a.elements = {4, 8};
  CHECK_FALSE(check_answer(q, a).correct);
  a.per_cell = 1;
  a.elements = {4};
  CHECK_FALSE(check_answer(q, a).correct);

  QuizQuestion v;
  v.kind = QuizKind::value;
  v.value = 0.1 + 0.2;
  v.answer = format_value(v.value);
  QuizAnswer t;
  t.typed = "0.3";
  CHECK(check_answer(v, t).correct);
  t.typed = "0.31";
  CHECK_FALSE(check_answer(v, t).correct);
  v.value = 7.0 / 6;  // a cell shows 1.167
  t.typed = "1.167";
  CHECK(check_answer(v, t).correct);
  t.typed = "1.17";
  CHECK_FALSE(check_answer(v, t).correct);
  v.value = 12345;  // whole numbers exactly
  t.typed = "12345";
  CHECK(check_answer(v, t).correct);
  t.typed = "12340";
  CHECK_FALSE(check_answer(v, t).correct);
  for (const char* bad : {"", "abc", "3 4", "nan", "inf"}) {
    CAPTURE(bad);
    t.typed = bad;
    const auto r = check_answer(v, t);
    CHECK_FALSE(r.correct);
    CHECK_FALSE(r.counted);
  }
}

TEST_CASE("quiz: the score counts first answers, and the lesson waits before an unanswered step") {
  auto run = run_file(lesson("00-allreduce-ring.json"));
  REQUIRE(run);
  auto questions = build_quiz(run);
  REQUIRE(questions.ok());
  REQUIRE(questions->size() == 6);
  QuizSession quiz;
  CHECK_FALSE(quiz.active());
  quiz.start(*questions);
  CHECK(quiz.active());
  CHECK(quiz.total() == 6);
  Playback pb;
  pb.steps = 6;
  // Forward, play and a jump all stop at step 0's question.
  pb.forward();
  quiz.gate(pb, 0);
  CHECK(pb.applied == 0);
  pb.toggle();
  pb.tick(0.5f);
  quiz.gate(pb, 0);
  CHECK(pb.t == 0.0f);
  CHECK_FALSE(pb.playing);
  pb.jump(4);
  quiz.gate(pb, 0);
  CHECK(pb.applied == 0);
  // A right answer: scored, and the step may play; it stops at the next question.
  const QuizQuestion* q0 = quiz.question_at(0);
  REQUIRE(q0 != nullptr);
  CHECK(quiz.answer(0, right_answer(*q0)).correct);
  CHECK(quiz.answered(0));
  CHECK(quiz.right() == 1);
  pb.jump(0);
  pb.playing = true;
  pb.tick(1.2f / pb.speed);  // past the end of step 0
  quiz.gate(pb, 0);
  CHECK(pb.applied == 1);
  CHECK(pb.t == 0.0f);
  CHECK_FALSE(pb.playing);
  // A wrong answer is scored as wrong; answering again changes nothing.
  const QuizQuestion* q1 = quiz.question_at(1);
  REQUIRE(q1 != nullptr);
  CHECK_FALSE(quiz.answer(1, wrong_answer(*q1, 4, 8)).correct);
  CHECK(quiz.answer(1, right_answer(*q1)).correct);
  CHECK(quiz.right() == 1);
  CHECK(quiz.answered_count() == 2);
  CHECK_FALSE(quiz.verdict(1)->correct);
  CHECK(quiz.score_text() == "score: 1 right of 2 answered (6 questions)");
  // Backwards is always free.
  pb.jump(0);
  quiz.gate(pb, 1);
  CHECK(pb.applied == 0);
  // A new lesson starts a new score.
  quiz.start(*questions);
  CHECK(quiz.right() == 0);
  CHECK_FALSE(quiz.answered(0));
  CHECK(quiz.question_at(6) == nullptr);  // the end: nothing to ask
}

TEST_CASE("quiz: the quiz lesson asks its own questions in its own words, and they survive to_json") {
  auto sc = load_scenario(lesson("30-quiz-allreduce-ring.json"));
  REQUIRE(sc.ok());
  REQUIRE(sc->quiz.size() == 4);
  auto again = parse_scenario(to_json(*sc), "again.json");
  REQUIRE(again.ok());
  REQUIRE(again->quiz.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(again->quiz[i].step == sc->quiz[i].step);
    CHECK(again->quiz[i].kind == sc->quiz[i].kind);
    CHECK(again->quiz[i].rank == sc->quiz[i].rank);
    CHECK(again->quiz[i].element == sc->quiz[i].element);
    CHECK(again->quiz[i].text == sc->quiz[i].text);
  }
  auto run = run_file(lesson("30-quiz-allreduce-ring.json"));
  REQUIRE(run);
  auto quiz = build_quiz(run);
  REQUIRE(quiz.ok());
  REQUIRE(quiz->size() == 6);
  int own = 0;
  for (const auto& q : *quiz)
    for (const auto& spec : sc->quiz)
      if (spec.step == q.step) {
        ++own;
        CHECK(q.authored);
        CHECK(q.text == spec.text);
        CHECK(q.kind == spec.kind);
      }
  CHECK(own == 4);
  // Halfway through the first lap nobody is complete; after it the first blocks are.
  CHECK((*quiz)[1].kind == QuizKind::complete);
  CHECK((*quiz)[1].ranks.empty());
  CHECK((*quiz)[2].value == 6 + 106 + 206 + 306);  // x[6] summed over the four ranks' rank_index inputs
}

TEST_CASE("quiz: `collscope quiz` prints the window's questions as a worksheet, then its key") {
  const std::string file = lesson("30-quiz-allreduce-ring.json");
  auto run = run_file(file);
  REQUIRE(run);
  auto quiz = build_quiz(run);
  REQUIRE(quiz.ok());
  const std::string bin = std::string(COLLSCOPE_BINARY) + " quiz ";
  auto all = test_shell::shell(bin + file + " 2>&1");
  REQUIRE(all.code == 0);
  CHECK(all.out.find("Worksheet: Quiz: all-reduce on a ring") == 0);
  const auto key_at = all.out.find("\nAnswers\n");
  REQUIRE(key_at != std::string::npos);
  for (std::size_t i = 0; i < quiz->size(); ++i) {
    CAPTURE(i);
    const auto& q = (*quiz)[i];
    const auto asked = all.out.find(q.text);
    CHECK(asked < key_at);  // the question in the worksheet
    CHECK(all.out.find(std::to_string(i + 1) + ". " + q.answer + " (", key_at) !=
          std::string::npos);  // its answer after
  }
  auto sheet = test_shell::shell(bin + file + " --no-key 2>&1");
  CHECK(sheet.code == 0);
  CHECK(sheet.out == all.out.substr(0, key_at));
  auto key = test_shell::shell(bin + file + " --key 2>&1");
  CHECK(key.code == 0);
  CHECK(key.out == all.out.substr(key_at + 1));
  auto both = test_shell::shell(bin + file + " --key --no-key 2>&1");
  CHECK(both.code == 2);
  CHECK(both.out.find("error[cli.usage]") != std::string::npos);
  auto bad = test_shell::shell(bin + std::string(COLLSCOPE_SOURCE_DIR) + "/tests/data/bad/quiz-unknown-kind.json 2>&1");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("error[scenario.unknown_quiz_kind]") != std::string::npos);
  CHECK(bad.out.find("/quiz/0/kind") != std::string::npos);
}
