#include "gui/view/quiz.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "collscope/collective.h"
#include "gui/view/caption.h"

namespace collscope::view {

namespace {

bool moves_data(const Transfer& t) { return t.count > 0 && t.action != Action::compute; }

// Elements of `buf` on `rank` that step `k` writes, sorted and unique.
std::vector<std::uint64_t> written(const Schedule& s, std::int32_t k, std::int32_t rank, std::int32_t buf) {
  std::set<std::uint64_t> out;
  for (const Transfer& t : s.steps[static_cast<std::size_t>(k)].transfers)
    if (moves_data(t) && t.dst.rank == rank && t.dst.buf == buf)
      for (std::uint64_t i = 0; i < t.count; ++i) out.insert(t.dst.offset + i);
  return {out.begin(), out.end()};
}

// Ranks other than `rank` whose data step `k` brings to `rank`.
std::vector<std::int32_t> senders(const Schedule& s, std::int32_t k, std::int32_t rank) {
  std::set<std::int32_t> out;
  for (const Transfer& t : s.steps[static_cast<std::size_t>(k)].transfers)
    if (moves_data(t) && t.action != Action::scale && t.dst.rank == rank && t.src.rank != rank) out.insert(t.src.rank);
  return {out.begin(), out.end()};
}

// Ranks that step `k` writes a user buffer of (receivers), and those that receive from another rank.
std::vector<std::int32_t> receivers(const Schedule& s, std::int32_t k, bool from_others) {
  std::set<std::int32_t> out;
  for (const Transfer& t : s.steps[static_cast<std::size_t>(k)].transfers)
    if (moves_data(t) && !s.buffers[static_cast<std::size_t>(t.dst.buf)].scratch &&
        (!from_others || (t.src.rank != t.dst.rank && t.action != Action::scale)))
      out.insert(t.dst.rank);
  return {out.begin(), out.end()};
}

const Call& call_of(const Schedule& s, std::int32_t k) {
  return s.calls[static_cast<std::size_t>(s.steps[static_cast<std::size_t>(k)].call)];
}

bool reducing_step(const Schedule& s, std::int32_t k) {
  const Call& c = call_of(s, k);
  return c.kind == CallKind::collective && is_reducing(c.args.coll);
}

// The world ranks of step k's call: a complete result holds a contribution of each.
std::vector<std::int32_t> members(const Schedule& s, std::int32_t k) {
  const Call& c = call_of(s, k);
  if (!c.args.world_rank.empty()) return c.args.world_rank;
  std::vector<std::int32_t> all(static_cast<std::size_t>(s.ranks));
  for (std::int32_t r = 0; r < s.ranks; ++r) all[static_cast<std::size_t>(r)] = r;
  return all;
}

// Ranks holding, after the step, an element of a user buffer with every member's contribution.
std::vector<std::int32_t> complete_ranks(const Schedule& s, std::int32_t k, const ContributionCursor& after) {
  const auto need = members(s, k);
  std::vector<std::int32_t> out;
  for (std::int32_t r = 0; r < s.ranks; ++r) {
    bool found = false;
    for (std::size_t b = 0; b < s.buffers.size() && !found; ++b) {
      if (s.buffers[b].scratch) continue;
      const std::uint64_t n = s.buffers[b].count[static_cast<std::size_t>(r)];
      // Large buffers are sampled: 4096 elements spread over the buffer, as cells are.
      const std::uint64_t stride = std::max<std::uint64_t>(1, n / 4096);
      for (std::uint64_t i = 0; i < n && !found; i += stride) {
        const auto have = after.ranks_of(r, static_cast<std::int32_t>(b), i);
        found = std::includes(have.begin(), have.end(), need.begin(), need.end());
      }
    }
    if (found) out.push_back(r);
  }
  return out;
}

std::string range_words(const std::string& buf, const std::vector<std::uint64_t>& el) {
  if (el.empty()) return "none";
  std::string out;
  for (std::size_t i = 0; i < el.size();) {
    std::size_t j = i;
    while (j + 1 < el.size() && el[j + 1] == el[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + buf + "[" + std::to_string(el[i]) +
           (j > i ? ".." + std::to_string(el[j]) : std::string()) + "]";
    i = j + 1;
  }
  return out;
}

// What the step does to `rank`, in words: "rank 0 adds x[2..3] of rank 3 to its own".
std::string transfers_words(const Schedule& s, std::int32_t k, std::int32_t rank) {
  std::string out;
  for (const Transfer& t : s.steps[static_cast<std::size_t>(k)].transfers) {
    if (!moves_data(t) || t.dst.rank != rank) continue;
    const std::string& sb = s.buffers[static_cast<std::size_t>(t.src.buf)].name;
    const std::string& db = s.buffers[static_cast<std::size_t>(t.dst.buf)].name;
    auto span = [&](const std::string& b, std::uint64_t at) {
      return b + "[" + std::to_string(at) + (t.count > 1 ? ".." + std::to_string(at + t.count - 1) : "") + "]";
    };
    std::string line;
    const std::string from = t.src.rank == rank ? "its own " : "rank " + std::to_string(t.src.rank) + "'s ";
    switch (t.action) {
      case Action::copy:
        line = "copies " + from + span(sb, t.src.offset) + " into " + span(db, t.dst.offset);
        break;
      case Action::reduce:
      case Action::reduce_copy:
        line = "combines " + from + span(sb, t.src.offset) + " into " + span(db, t.dst.offset);
        break;
      case Action::scale:
        line = "divides " + span(db, t.dst.offset) + " by " + std::to_string(t.divisor);
        break;
      case Action::compute:
        continue;
    }
    out += (out.empty() ? "" : "; ") + line;
  }
  return out.empty() ? "the step writes nothing on rank " + std::to_string(rank)
                     : "in this step rank " + std::to_string(rank) + " " + out;
}

// A value as the answer gives it: whole numbers in full, others to six digits.
std::string value_text(double v) {
  char buf[48];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string trim(std::string t) {
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  std::size_t i = 0;
  while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
  return t.substr(i);
}

}  // namespace

std::string ranks_words(const std::vector<std::int32_t>& ranks) {
  if (ranks.empty()) return "no rank";
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += i + 1 == ranks.size() ? " and " : ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

QuizQuestion make_question(const LessonRun& run, const QuizSpec& spec, const HostMemory& after,
                           const ContributionCursor& contributions_after) {
  const Schedule& s = run.schedule;
  QuizQuestion q;
  q.step = spec.step;
  q.kind = spec.kind;
  q.rank = spec.rank;
  q.element = spec.element < 0 ? 0 : static_cast<std::uint64_t>(spec.element);
  q.authored = !spec.text.empty();
  const std::int32_t k = spec.step;
  if (q.kind == QuizKind::changes || q.kind == QuizKind::value) {
    q.buf = quiz_buffer_of(s, k, q.rank, spec.buffer);
    if (q.buf >= 0) q.buffer = s.buffers[static_cast<std::size_t>(q.buf)].name;
  }
  switch (q.kind) {
    case QuizKind::changes:
      q.text = "Which cells of rank " + std::to_string(q.rank) + "'s buffer " + q.buffer +
               " change in this step? (click them)";
      q.elements = written(s, k, q.rank, q.buf);
      q.answer = q.elements.empty() ? "none: rank " + std::to_string(q.rank) + "'s " + q.buffer + " stays as it is"
                                    : range_words(q.buffer, q.elements);
      q.why = transfers_words(s, k, q.rank);
      break;
    case QuizKind::sender:
      q.text = "Which rank sends data to rank " + std::to_string(q.rank) + " in this step?";
      q.ranks = senders(s, k, q.rank);
      q.answer = ranks_words(q.ranks);
      q.why = transfers_words(s, k, q.rank);
      break;
    case QuizKind::value: {
      q.text = "What value will rank " + std::to_string(q.rank) + " hold at element " + std::to_string(q.element) +
               " of " + q.buffer + " after this step? (type it)";
      q.value =
          element_value(after[static_cast<std::size_t>(q.buf)][static_cast<std::size_t>(q.rank)], s.dtype, q.element);
      q.answer = value_text(q.value);
      q.why = "rank " + std::to_string(q.rank) + "'s " + q.buffer + "[" + std::to_string(q.element) + "] holds " +
              q.answer + " after the step: " + transfers_words(s, k, q.rank);
      break;
    }
    case QuizKind::complete: {
      const Call& c = call_of(s, k);
      const std::string what = reducing_step(s, k) ? std::string(name_of(c.args.op)) : "result";
      q.text = "Which ranks hold a complete " + what + " (a contribution of every rank) after this step?";
      q.ranks = complete_ranks(s, k, contributions_after);
      q.answer = q.ranks.empty() ? "no rank yet" : ranks_words(q.ranks);
      q.why = q.ranks.empty() ? "no cell holds every rank's contribution yet"
                              : "their gold cells hold a contribution of every rank";
      break;
    }
  }
  if (!spec.text.empty()) q.text = spec.text;
  return q;
}

Result<std::vector<QuizQuestion>> build_quiz(const std::shared_ptr<const LessonRun>& run) {
  const Schedule& s = run->schedule;
  const auto n = static_cast<std::int32_t>(s.steps.size());
  MemoryTimeline memory(run);
  ContributionCursor cursor(s, ColourScope::program);
  std::vector<QuizQuestion> out;
  for (std::int32_t k = 0; k < n; ++k) {
    auto after = memory.at(k + 1);
    if (!after) return after.error();
    cursor.seek(k + 1);
    const auto own = std::find_if(run->scenario.quiz.begin(), run->scenario.quiz.end(),
                                  [&](const QuizSpec& q) { return q.step == k; });
    if (own != run->scenario.quiz.end()) {
      QuizQuestion q = make_question(*run, *own, *after, cursor);
      q.authored = true;
      out.push_back(std::move(q));
      continue;
    }
    // The kinds take turns; one with nothing to ask here passes to the next.
    const auto all = receivers(s, k, false), from_others = receivers(s, k, true);
    for (int turn = 0; turn < 4; ++turn) {
      const auto kind = static_cast<QuizKind>((k + turn) % 4);
      QuizSpec spec;
      spec.step = k;
      spec.kind = kind;
      const auto& who = kind == QuizKind::sender ? from_others : all;
      if (kind != QuizKind::complete) {
        if (who.empty()) continue;
        spec.rank = who[static_cast<std::size_t>(3 * k + 2) % who.size()];
      } else if (!reducing_step(s, k)) {
        continue;
      }
      if (kind == QuizKind::value) {
        const std::int32_t buf = quiz_buffer_of(s, k, spec.rank, "");
        const auto el = written(s, k, spec.rank, buf);
        if (el.empty()) continue;
        spec.element = static_cast<std::int64_t>(el[static_cast<std::size_t>(7 * k) % el.size()]);
      }
      out.push_back(make_question(*run, spec, *after, cursor));
      break;
    }
  }
  return out;
}

QuizVerdict check_answer(const QuizQuestion& q, const QuizAnswer& a) {
  bool right = false;
  switch (q.kind) {
    case QuizKind::changes: {
      // As cells: a chunk cell stands for every element in it.
      const std::uint64_t per = std::max<std::uint64_t>(1, a.per_cell);
      std::set<std::uint64_t> want, got;
      for (auto e : q.elements) want.insert(e / per);
      for (auto e : a.elements) got.insert(e / per);
      right = want == got;
      break;
    }
    case QuizKind::sender:
    case QuizKind::complete: {
      std::set<std::int32_t> got(a.ranks.begin(), a.ranks.end());
      right = got == std::set<std::int32_t>(q.ranks.begin(), q.ranks.end());
      break;
    }
    case QuizKind::value: {
      const std::string t = trim(a.typed);
      char* end = nullptr;
      const double v = std::strtod(t.c_str(), &end);
      if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v))
        return {false, false, "type a number, e.g. 42 or 3.5"};
      // A whole number exactly; any other as far as the cells show it (four digits), or closer.
      if (q.value == std::floor(q.value) && std::fabs(q.value) < 1e15) right = v == q.value;
      else right = std::fabs(v - q.value) <= 5e-4 * std::fabs(q.value) || format_value(v) == format_value(q.value);
      break;
    }
  }
  return {right, true, (right ? "Right: " : "Not quite: the answer is ") + q.answer + ". " + q.why + "."};
}

void QuizSession::start(std::vector<QuizQuestion> questions) {
  questions_ = std::move(questions);
  std::int32_t steps = 0;
  for (const auto& q : questions_) steps = std::max(steps, q.step + 1);
  by_step_.assign(static_cast<std::size_t>(steps), -1);
  for (std::size_t i = 0; i < questions_.size(); ++i)
    by_step_[static_cast<std::size_t>(questions_[i].step)] = static_cast<std::int32_t>(i);
  verdicts_.assign(questions_.size(), {});
  answered_step_.assign(questions_.size(), false);
  right_ = answered_ = 0;
}

const QuizQuestion* QuizSession::question_at(std::int32_t applied) const {
  if (applied < 0 || static_cast<std::size_t>(applied) >= by_step_.size()) return nullptr;
  const std::int32_t i = by_step_[static_cast<std::size_t>(applied)];
  return i < 0 ? nullptr : &questions_[static_cast<std::size_t>(i)];
}

bool QuizSession::answered(std::int32_t step) const {
  if (step < 0 || static_cast<std::size_t>(step) >= by_step_.size()) return true;
  const std::int32_t i = by_step_[static_cast<std::size_t>(step)];
  return i < 0 || answered_step_[static_cast<std::size_t>(i)];
}

QuizVerdict QuizSession::answer(std::int32_t step, const QuizAnswer& a) {
  const QuizQuestion* q = question_at(step);
  if (!q) return {};
  const auto i = static_cast<std::size_t>(q - questions_.data());
  QuizVerdict v = check_answer(*q, a);
  if (v.counted && !answered_step_[i]) {
    answered_step_[i] = true;
    verdicts_[i] = v;
    ++answered_;
    if (v.correct) ++right_;
  }
  return v;
}

const QuizVerdict* QuizSession::verdict(std::int32_t step) const {
  const QuizQuestion* q = question_at(step);
  if (!q) return nullptr;
  const auto i = static_cast<std::size_t>(q - questions_.data());
  return answered_step_[i] ? &verdicts_[i] : nullptr;
}

void QuizSession::gate(Playback& pb, std::int32_t before) const {
  if (!active()) return;
  for (std::int32_t k = std::max(0, before); k < pb.applied; ++k)
    if (!answered(k)) {
      pb.applied = k;
      pb.t = 0;
      pb.playing = false;
      return;
    }
  if (pb.applied < pb.steps && !answered(pb.applied) && (pb.t > 0 || pb.playing)) {
    pb.t = 0;
    pb.playing = false;
  }
}

std::string QuizSession::score_text() const {
  return "score: " + std::to_string(right_) + " right of " + std::to_string(answered_) + " answered (" +
         std::to_string(total()) + " questions)";
}

std::string quiz_worksheet(const LessonRun& run, const std::vector<QuizQuestion>& questions) {
  const Schedule& s = run.schedule;
  const auto n = static_cast<std::int32_t>(s.steps.size());
  std::string out = "Worksheet: " + (run.scenario.title.empty() ? run.scenario.file : run.scenario.title) + "\n";
  out += std::to_string(s.ranks) + " ranks, " + std::to_string(n) + " steps, " + std::to_string(questions.size()) +
         " questions, one before each step. Answer each before the step runs.\n\n";
  for (std::size_t i = 0; i < questions.size(); ++i) {
    const QuizQuestion& q = questions[i];
    const Step& st = s.steps[static_cast<std::size_t>(q.step)];
    out += std::to_string(i + 1) + ". Before " + step_position(q.step, n) + " [" + st.phase + "]: " + st.caption + "\n";
    out += "   " + q.text + "\n";
  }
  return out;
}

std::string quiz_key(const std::vector<QuizQuestion>& questions) {
  std::string out = "Answers\n\n";
  for (std::size_t i = 0; i < questions.size(); ++i)
    out += std::to_string(i + 1) + ". " + questions[i].answer + " (" + questions[i].why + ")\n";
  return out;
}

}  // namespace collscope::view
