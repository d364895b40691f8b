// Compare mode: the lesson's calls run by a second algorithm, side by side. The
// scenario key ("compare"), the view model (steps and bytes per side are each
// schedule's, one clock for both, the shorter side held "done" at its end), the
// command line's error on an unknown algorithm, and the window's picture of it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/scenario.h"
#include "gui/view/compare.h"
#include "gui/view/panels.h"
#include "gui_image.h"
#include "gui_test_helpers.h"

using namespace collscope;
using namespace collscope::view;

namespace {

namespace fs = std::filesystem;

std::string allreduce_lesson(std::uint64_t count, const std::string& algorithm, const std::string& extra = "") {
  return R"({"version": 1, "title": "t", "ranks": 8, "buffers": {"x": {"count": )" + std::to_string(count) +
         R"(, "init": "rank"}}, "program": [{"op": "allreduce", "buffer": "x", "algorithm": ")" + algorithm +
         R"(", "caption": "c"}])" + extra + "}";
}

Scenario parse_ok(const std::string& text) {
  auto s = parse_scenario(text, "lesson.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  return *s;
}

std::uint64_t bytes_of(const Schedule& s) {
  std::uint64_t n = 0;
  for (const Step& st : s.steps) n += step_bytes(s, st);
  return n;
}

}  // namespace

TEST_CASE("compare: the \"compare\" key is read, checked and written back") {
  const Scenario s = parse_ok(allreduce_lesson(16, "ring", R"(, "compare": "tree")"));
  CHECK(s.compare == "tree");
  CHECK(s.compare_where.line == 1);
  // It survives to_json.
  const Scenario back = parse_ok(to_json(s));
  CHECK(back.compare == "tree");

  SUBCASE("an algorithm the collective does not have: one error at the key, listing the valid ones") {
    auto r = parse_scenario(allreduce_lesson(16, "ring", "\n, \"compare\": \"trie\""), "lesson.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == "compare.unknown_algorithm");
    CHECK(r.error().where.line == 2);
    CHECK(r.error().where.col > 1);
    CHECK(r.error().message.find("did you mean \"tree\"") != std::string::npos);
    for (const auto& name : algorithm_names(Collective::allreduce))
      CHECK_MESSAGE(r.error().hint.find(name) != std::string::npos, name);
    CHECK(r.error().exit == ExitCode::bad_input);
  }
  SUBCASE("not a string") {
    auto r = parse_scenario(allreduce_lesson(16, "ring", R"(, "compare": 3)"), "lesson.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == "scenario.wrong_type");
  }
  SUBCASE("a lesson of two different collectives cannot be compared") {
    const std::string text =
        R"({"version": 1, "ranks": 4, "buffers": {"x": {"count": 8}}, "program": [)"
        R"({"op": "allreduce", "buffer": "x"}, {"op": "broadcast", "buffer": "x"}], "compare": "ring"})";
    auto r = parse_scenario(text, "lesson.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == "compare.mixed");
  }
}

TEST_CASE("compare: compare_scenario swaps every call's algorithm and nothing else") {
  const Scenario s = parse_ok(allreduce_lesson(16, "ring"));
  auto other = compare_scenario(s, "recursive_doubling");
  REQUIRE(other.ok());
  CHECK(other->program[0].algorithm == "recursive_doubling");
  CHECK(other->program[0].caption == s.program[0].caption);
  CHECK(other->buffers.size() == s.buffers.size());
  auto bad = compare_scenario(s, "auto");  // auto would pick one of them: nothing to compare
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().id == "compare.unknown_algorithm");
  CHECK(compared_collective(s) == Collective::allreduce);
}

TEST_CASE("compare: each side's steps and bytes are those of its algorithm's schedule") {
  const Scenario s = parse_ok(allreduce_lesson(64, "ring"));
  auto m = run_compare(s, "tree", "cpu");
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().format()));
  // The same lesson lowered on its own, by each algorithm.
  auto ring = lower_scenario(s);
  auto tree = lower_scenario(*compare_scenario(s, "tree"));
  REQUIRE(ring.ok());
  REQUIRE(tree.ok());
  const CompareSide& a = m->side(0);
  const CompareSide& b = m->side(1);
  CHECK(a.algorithm == "ring");
  CHECK(b.algorithm == "tree");
  CHECK(a.steps == static_cast<std::int32_t>(ring->steps.size()));
  CHECK(b.steps == static_cast<std::int32_t>(tree->steps.size()));
  CHECK(a.bytes == bytes_of(*ring));
  CHECK(b.bytes == bytes_of(*tree));
  CHECK(a.steps != b.steps);  // 8 ranks: 14 ring steps, 6 tree steps
  CHECK(a.predicted_us > 0);
  CHECK(b.predicted_us > 0);
  CHECK(a.measured_us > 0);
  CHECK_FALSE(a.model.empty());
  // Both runs verified.
  CHECK(m->run(0).outcome.verified());
  CHECK(m->run(1).outcome.verified());

  SUBCASE("the bars: the larger side is the full bar, and the texts say the numbers") {
    const auto bars = m->bars();
    REQUIRE(bars.size() == 4);
    CHECK(bars[0].label == "steps");
    CHECK(bars[0].text[0] == std::to_string(a.steps));
    CHECK(bars[0].text[1] == std::to_string(b.steps));
    CHECK(std::max(bars[0].fraction[0], bars[0].fraction[1]) == doctest::Approx(1.0));
    CHECK(bars[0].fraction[1] == doctest::Approx(static_cast<double>(b.steps) / a.steps));
    CHECK(bars[1].value[0] == static_cast<double>(a.bytes));
    CHECK(bars[3].label.find(a.model) != std::string::npos);  // the model is named
  }
}

TEST_CASE("compare: a side the model cannot price shows no time and no bar, not a made-up one") {
  CompareSide priced, unpriced;
  priced.predicted_us = 250;
  priced.model = "cpu model";
  unpriced.predicted_us = -1;  // a library's own collective (Prediction::unpriced)
  const auto bars = compare_bars(priced, unpriced);
  REQUIRE(bars.size() == 4);
  CHECK(bars[3].text[0] == "250 us");
  CHECK(bars[3].text[1] == "-");
  CHECK(bars[3].fraction[0] == doctest::Approx(1.0));
  CHECK(bars[3].fraction[1] == 0.0f);
}

TEST_CASE("compare: one clock for both sides, the shorter holds at its end, done") {
  const Scenario s = parse_ok(allreduce_lesson(64, "ring"));
  auto m = run_compare(s, "tree", "cpu");
  REQUIRE(m.ok());
  const std::int32_t ring = m->side(0).steps, tree = m->side(1).steps;
  REQUIRE(tree < ring);
  CHECK(m->steps() == ring);
  Playback pb;
  pb.steps = m->steps();
  pb.jump(2);
  pb.t = 0.5f;
  CHECK(m->at(0, pb).applied == 2);
  CHECK(m->at(1, pb).applied == 2);
  CHECK(m->at(1, pb).t == doctest::Approx(0.5));
  CHECK_FALSE(m->done(0, pb));
  CHECK_FALSE(m->done(1, pb));
  pb.jump(tree + 2);
  pb.t = 0.5f;
  pb.playing = true;
  CHECK(m->at(0, pb).applied == tree + 2);
  CHECK(m->at(1, pb).applied == tree);  // held at its end
  CHECK(m->at(1, pb).t == 0);
  CHECK(m->at(1, pb).steps == tree);
  CHECK(m->done(1, pb));
  CHECK_FALSE(m->done(0, pb));
  pb.jump(ring);
  CHECK(m->done(0, pb));
  CHECK(m->done(1, pb));
  // Stepping moves both: one forward from the shared position.
  pb.jump(0);
  pb.forward();
  CHECK(m->at(0, pb).applied == 1);
  CHECK(m->at(1, pb).applied == 1);
}

TEST_CASE("compare: an unknown algorithm is one error listing the valid ones") {
  const Scenario s = parse_ok(allreduce_lesson(16, "ring"));
  auto m = run_compare(s, "binomial", "cpu");  // a broadcast algorithm, not an all-reduce one
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().id == "compare.unknown_algorithm");
  CHECK(m.error().hint.find("ring") != std::string::npos);
  CHECK(m.error().hint.find("tree") != std::string::npos);
  CHECK(m.error().exit == ExitCode::bad_input);
}

TEST_CASE("compare: every lesson that declares a comparison runs both sides and verifies") {
  int found = 0;
  for (const auto& e : fs::directory_iterator(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    auto s = load_scenario(e.path().string());
    if (!s || s->compare.empty()) continue;
    CAPTURE(e.path().string());
    ++found;
    auto m = run_compare(*s, s->compare, "cpu");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().format()));
    CHECK(m->run(0).outcome.verified());
    CHECK(m->run(1).outcome.verified());
    CHECK(m->side(0).algorithm != m->side(1).algorithm);
  }
  CHECK(found >= 3);
}

#ifdef COLLSCOPE_HAVE_GUI

using gui_test::Image;
using gui_test::load_png;
using gui_test::near_colour;

TEST_CASE("compare: --compare with an unknown algorithm exits 2 before a window opens") {
  const auto dir = gui_test::scratch("collscope-compare-test-", "bad");
  const auto out = dir / "never.png";
  // No X server needed: the name is checked first.
  auto o = gui_test::shell(std::string(COLLSCOPE_BINARY) + " gui " + gui_test::lesson("00-allreduce-ring.json") +
                           " --compare trie --screenshot " + out.string());
  CHECK(o.code == 2);
  CHECK(o.out.find("error[compare.unknown_algorithm]") != std::string::npos);
  CHECK(o.out.find("did you mean \"tree\"") != std::string::npos);
  CHECK(o.out.find("recursive_doubling") != std::string::npos);  // the valid ones are listed
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("compare: a screenshot of compare mode shows two canvases and the bars of both sides") {
  if (!gui_test::have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = gui_test::scratch("collscope-compare-test-", "shots");
  const std::string name = gui_test::lesson("00-allreduce-ring.json");
  const auto plain = dir / "plain.png", cmp = dir / "compare.png", end = dir / "end.png";
  auto a = gui_test::gui(name + " --step 1 --size 1280x720 --screenshot " + plain.string(), dir);
  REQUIRE_MESSAGE(a.code == 0, a.out);
  auto b = gui_test::gui(name + " --compare tree --step 1 --size 1280x720 --screenshot " + cmp.string(), dir);
  REQUIRE_MESSAGE(b.code == 0, b.out);
  // The ring needs 6 steps on 4 ranks, the tree 4: at 6 the tree has long been done.
  auto c = gui_test::gui(name + " --compare tree --step 6 --size 1280x720 --screenshot " + end.string(), dir);
  REQUIRE_MESSAGE(c.code == 0, c.out);
  const Image p = load_png(plain), q = load_png(cmp), e = load_png(end);
  REQUIRE(q.w == 1280);
  // The sides' colours (compare_panel.cpp: turquoise left, magenta right) are on the
  // bars and labels of compare mode only.
  CHECK(near_colour(p, 64, 224, 208, 6) < 50);
  CHECK(near_colour(p, 240, 96, 200, 6) < 50);
  CHECK(near_colour(q, 64, 224, 208, 6) > 2000);
  CHECK(near_colour(q, 240, 96, 200, 6) > 1000);
  // Two canvases, each labelled in its side's colour: the right one's label and bars lie
  // right of the canvas area's middle, the left one's left of it.
  const auto panels = panel_layout(static_cast<float>(q.w), static_cast<float>(q.h), 1, false, true, 0, 0.2f);
  const int mid = (static_cast<int>(panels.left) + q.w) / 2;
  CHECK(near_colour(q, 64, 224, 208, 6, 0, mid) > 1000);
  CHECK(near_colour(q, 240, 96, 200, 6, mid, q.w) > 500);
  // One timeline for both runs: a band each, headed by its algorithm and time (the
  // headings' light grey is nowhere on the plain window's timeline).
  const int timeline_top = static_cast<int>(panels.canvas_h + panels.caption_h);
  const auto headings = [&](const Image& img) {
    return near_colour(img, 220, 220, 225, 3, static_cast<int>(panels.left), img.w, timeline_top, img.h);
  };
  CHECK(headings(p) < 10);
  CHECK(headings(q) > 40);
  // At the end the bars stay, and the picture has moved on.
  CHECK(near_colour(e, 240, 96, 200, 6) > 1000);
  std::size_t differ = 0;
  for (std::size_t i = 0; i + 3 < q.px.size() && i + 3 < e.px.size(); i += 4)
    if (q.px[i] != e.px[i] || q.px[i + 1] != e.px[i + 1] || q.px[i + 2] != e.px[i + 2]) ++differ;
  CHECK(differ > 2000);
}

#endif
