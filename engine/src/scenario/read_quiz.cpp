// "quiz": [{"step": 3, "kind": "value", "rank": 1, "element": 3, "text": "..."}, ...]
#include "scenario/read_quiz.h"

#include <algorithm>

namespace collscope::scenario {

std::string_view name_of_kind(QuizKind k) {
  for (const auto& [name, kind] : kQuizKinds)
    if (kind == k) return name;
  return "?";
}

}  // namespace collscope::scenario

namespace collscope {

std::string_view name_of(QuizKind k) { return scenario::name_of_kind(k); }

std::int32_t quiz_buffer_of(const Schedule& s, std::int32_t step, std::int32_t rank, const std::string& buffer) {
  for (std::size_t b = 0; b < s.buffers.size(); ++b)
    if (!buffer.empty() && s.buffers[b].name == buffer) return static_cast<std::int32_t>(b);
  if (!buffer.empty()) return -1;
  if (step >= 0 && static_cast<std::size_t>(step) < s.steps.size())
    for (const Transfer& t : s.steps[static_cast<std::size_t>(step)].transfers)
      if (t.dst.rank == rank && t.count > 0 && t.action != Action::compute &&
          !s.buffers[static_cast<std::size_t>(t.dst.buf)].scratch)
        return t.dst.buf;
  for (std::size_t b = 0; b < s.buffers.size(); ++b)
    if (!s.buffers[b].scratch) return static_cast<std::int32_t>(b);
  return -1;
}

}  // namespace collscope

namespace collscope::scenario {

namespace {

const std::vector<std::string> kQuizKeys = {"step", "kind", "rank", "buffer", "element", "text"};

class QuizReader : public ReaderBase {
 public:
  QuizReader(const std::string& file, const Scenario& s) : ReaderBase(file), s_(s) {}

  std::vector<QuizSpec> read(const Member& m) const {
    const std::string example = "\"quiz\": [{\"step\": 2, \"kind\": \"sender\", \"rank\": 1}]";
    if (!m.value.is_array()) wrong_type("quiz", "an array of questions", m.value, at(m), example);
    std::vector<QuizSpec> out;
    for (const Value& v : m.value.items) {
      QuizSpec q = read_question(v);
      for (const QuizSpec& other : out)
        if (other.step == q.step)
          fail("scenario.conflicting_keys",
               "two quiz questions for step " + std::to_string(q.step) + " (the window asks one per step)",
               "keep one question per step", q.field_where.at("step"));
      out.push_back(std::move(q));
    }
    return out;
  }

 private:
  const Scenario& s_;

  QuizSpec read_question(const Value& v) const {
    if (!v.is_object())
      wrong_type("a quiz question", "an object", v, at(v), "{\"step\": 2, \"kind\": \"sender\", \"rank\": 1}");
    check_keys(v, kQuizKeys, "in a quiz question");
    QuizSpec q;
    q.where = at(v);
    for (const auto& m : v.members) q.field_where[m.key] = at(m);

    const Member* step = v.find("step");
    if (!step)
      fail("scenario.missing_key", "quiz question is missing \"step\"",
           "add \"step\": 2 (the step it comes before, counted from 0 as `collscope run --explain` lists them)", at(v));
    const auto k = integer(step->value, at(*step), "step", "\"step\": 2");
    if (k.negative || k.uvalue > 100'000'000)
      fail("scenario.out_of_range", "quiz step " + literal(step->value) + " is out of range",
           "give a step of the lesson, 0 or more (`collscope run --explain` lists them)", at(*step));
    q.step = static_cast<std::int32_t>(k.uvalue);

    const Member* kind = v.find("kind");
    std::vector<std::string> kinds;
    for (const auto& [name, value] : kQuizKinds) kinds.emplace_back(name);
    if (!kind)
      fail("scenario.missing_key", "quiz question is missing \"kind\"", "add \"kind\": one of " + join(kinds), at(v));
    const std::string name = text_of(*kind, "\"kind\": \"sender\"");
    auto found =
        std::find_if(std::begin(kQuizKinds), std::end(kQuizKinds), [&](const auto& p) { return p.first == name; });
    if (found == std::end(kQuizKinds)) {
      std::string msg = "unknown quiz kind " + quote(name);
      if (auto c = closest(name, kinds)) msg += " (did you mean \"" + *c + "\"?)";
      fail("scenario.unknown_quiz_kind", msg, "valid kinds: " + join(kinds), at(*kind));
    }
    q.kind = found->second;

    // Which keys each kind takes: the others are refused, not ignored.
    const bool wants_rank = q.kind != QuizKind::complete;
    const bool wants_buffer = q.kind == QuizKind::changes || q.kind == QuizKind::value;
    const bool wants_element = q.kind == QuizKind::value;
    auto refuse = [&](const char* key) {
      if (const Member* m = v.find(key))
        fail("scenario.unknown_key", "\"" + std::string(key) + "\" does not apply to a " + quote(name) + " question",
             "remove \"" + std::string(key) + "\"", at(*m));
    };
    if (!wants_rank) refuse("rank");
    if (!wants_buffer) refuse("buffer");
    if (!wants_element) refuse("element");

    if (wants_rank) {
      const Member* rank = v.find("rank");
      if (!rank)
        fail("scenario.missing_key", "a " + quote(name) + " question is missing \"rank\"",
             "add \"rank\": 1 (the rank it asks about)", at(v));
      const auto r = integer(rank->value, at(*rank), "rank", "\"rank\": 1");
      if (r.negative || r.uvalue >= static_cast<std::uint64_t>(s_.ranks))
        fail("scenario.out_of_range",
             "quiz rank " + literal(rank->value) + " is out of range 0.." + std::to_string(s_.ranks - 1),
             "name a rank of the world, 0 to " + std::to_string(s_.ranks - 1), at(*rank));
      q.rank = static_cast<std::int32_t>(r.uvalue);
    }
    if (const Member* b = v.find("buffer")) q.buffer = buffer_name(*b);
    if (wants_element) {
      const Member* e = v.find("element");
      if (!e)
        fail("scenario.missing_key", "a \"value\" question is missing \"element\"",
             "add \"element\": 3 (the index of the element it asks about)", at(v));
      const std::uint64_t n = count(e->value, at(*e), "element", "\"element\": 3");
      q.element = static_cast<std::int64_t>(n);
    }
    if (const Member* t = v.find("text")) {
      q.text = text_of(*t, "\"text\": \"Which rank sends to rank 1 now?\"");
      if (q.text.empty() || q.text.size() > 400)
        fail("scenario.out_of_range", "quiz text must be 1 to 400 characters",
             "write the question in a sentence, or leave \"text\" out for the generated wording", at(*t));
    }
    return q;
  }

  std::string buffer_name(const Member& m) const {
    if (!m.value.is_string()) wrong_type(m.key, "a buffer name", m.value, at(m), "\"x\"");
    std::vector<std::string> names;
    for (const auto& b : s_.buffers) {
      if (b.name == m.value.text && !b.scratch) return b.name;
      if (!b.scratch) names.push_back(b.name);
    }
    std::string msg = "unknown buffer " + quote(m.value.text);
    if (auto c = closest(m.value.text, names)) msg += " (did you mean \"" + *c + "\"?)";
    fail("scenario.unknown_buffer", msg, "a quiz asks about a buffer of the lesson: " + join(names), at(m));
  }
};

}  // namespace

std::vector<QuizSpec> read_quiz(const std::string& file, const json::Member& m, const Scenario& s) {
  return QuizReader(file, s).read(m);
}

Status check_quiz(const Scenario& s, const Schedule& schedule) {
  const auto steps = static_cast<std::int32_t>(schedule.steps.size());
  for (const QuizSpec& q : s.quiz) {
    if (q.step >= steps)
      return make_error(
          "scenario.out_of_range",
          "quiz step " + std::to_string(q.step) + " is past the lesson's last step (" + std::to_string(steps) +
              " steps: 0.." + std::to_string(steps - 1) + ")",
          "give a step from 0 to " + std::to_string(steps - 1) + " (`collscope run --explain` lists them)",
          q.field_where.at("step"));
    if (q.kind != QuizKind::value) continue;
    const std::int32_t buf = quiz_buffer_of(schedule, q.step, q.rank, q.buffer);
    if (buf < 0) return make_error("scenario.unknown_buffer", "the lesson has no buffer to ask about", {}, q.where);
    const std::uint64_t n = schedule.buffers[static_cast<std::size_t>(buf)].count[static_cast<std::size_t>(q.rank)];
    if (static_cast<std::uint64_t>(q.element) >= n)
      return make_error(
          "scenario.out_of_range",
          "quiz element " + std::to_string(q.element) + " is outside buffer \"" +
              schedule.buffers[static_cast<std::size_t>(buf)].name + "\" of rank " + std::to_string(q.rank) + " (" +
              std::to_string(n) + " elements)",
          n == 0 ? "ask about a rank whose buffer has elements" : "give an element from 0 to " + std::to_string(n - 1),
          q.field_where.at("element"));
  }
  return ok_status();
}

}  // namespace collscope::scenario
