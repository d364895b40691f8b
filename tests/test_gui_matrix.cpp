// The matrix view's models, without ImGui: which buffer and chunks it shows, every
// cell's colour and every step's marks on a hand-written ring, the cache that plays
// forward and back without building afresh, the aggregation of 1024 ranks into no more
// drawn cells than pixels, the axes' labels and the painted image.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <set>

#include "collscope/scenario.h"
#include "collscope/verify.h"
#include "gui/view/lesson.h"
#include "gui/view/matrix.h"
#include "gui/view/matrix_cache.h"
#include "gui/view/matrix_grid.h"
#include "hand_schedules.h"

using namespace collscope;
using namespace collscope::view;
using collscope::testing::copy;
using collscope::testing::reduce;

namespace {

bool same(Rgba a, Rgba b) { return a.r == b.r && a.g == b.g && a.b == b.b && a.a == b.a; }
// The same colour up to the order in which a mix adds its ranks' colours.
bool close(Rgba a, Rgba b) {
  return std::fabs(a.r - b.r) < 1e-5f && std::fabs(a.g - b.g) < 1e-5f && std::fabs(a.b - b.b) < 1e-5f && a.a == b.a;
}

// A ring all-reduce on 3 ranks written by hand: x has 6 elements, 3 chunks of 2.
// Reduce-scatter: in step 0 rank r adds its chunk r into rank r+1's, in step 1 the
// partial chunk r-1 goes on, completing it; all-gather: the complete chunks go round
// twice more as copies.
Schedule hand_ring() {
  Schedule s;
  s.ranks = 3;
  s.buffers.push_back({"x", {6, 6, 6}, false});
  Call c;
  c.args.coll = Collective::allreduce;
  c.args.ranks = 3;
  c.args.count = 6;
  c.args.in_buf = c.args.out_buf = 0;
  c.args.in_place = true;
  c.algorithm = "by hand";
  s.calls.push_back(c);
  auto chunk = [](std::int32_t k) { return static_cast<std::uint64_t>(((k % 3) + 3) % 3) * 2; };
  for (std::int32_t k = 0; k < 4; ++k) {
    std::vector<Transfer> ts;
    for (std::int32_t r = 0; r < 3; ++r) {
      const std::uint64_t at = chunk(r - k);  // the chunk rank r passes on in this step
      ts.push_back(k < 2 ? reduce(r, 0, at, (r + 1) % 3, 0, at, 2) : copy(r, 0, at, (r + 1) % 3, 0, at, 2));
    }
    collscope::testing::add_step(s, std::move(ts));
  }
  return s;
}

std::shared_ptr<LessonRun> ring_run(std::int32_t ranks, std::uint64_t count) {
  QuickSpec q;
  q.coll = Collective::allreduce;
  q.algorithm = "ring";
  q.ranks = ranks;
  q.count = count;
  auto sc = scenario_from_spec(q);
  REQUIRE(sc.ok());
  auto run = run_lesson(*sc, "cpu");
  REQUIRE_MESSAGE(run.ok(), (run.ok() ? "" : run.error().format()));
  return *run;
}

}  // namespace

TEST_CASE("gui matrix: from 32 ranks, or when asked, the canvas is the matrix") {
  CHECK_FALSE(matrix_wanted(CanvasView::automatic, CanvasView::automatic, 8));
  CHECK_FALSE(matrix_wanted(CanvasView::automatic, CanvasView::automatic, 31));
  CHECK(matrix_wanted(CanvasView::automatic, CanvasView::automatic, 32));
  CHECK(matrix_wanted(CanvasView::automatic, CanvasView::matrix, 4));  // the lesson asks for it
  CHECK_FALSE(matrix_wanted(CanvasView::automatic, CanvasView::boxes, 256));
  CHECK(matrix_wanted(CanvasView::matrix, CanvasView::boxes, 4));  // M wins over the lesson
  CHECK_FALSE(matrix_wanted(CanvasView::boxes, CanvasView::matrix, 1024));
}

TEST_CASE("gui matrix: a lesson's \"view\" is read, written back, and refused when unknown") {
  const std::string text = R"({"version": 1, "ranks": 4, "buffers": {"x": {"count": 8, "init": "rank"}},
    "program": [{"op": "allreduce", "buffer": "x", "algorithm": "ring"}], "view": "matrix"})";
  auto s = parse_scenario(text, "m.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  CHECK(s->view == CanvasView::matrix);
  const std::string again = to_json(*s);
  CHECK(again.find("\"view\": \"matrix\"") != std::string::npos);
  auto b = parse_scenario(again, "again.json");
  REQUIRE(b.ok());
  CHECK(b->view == CanvasView::matrix);
  auto none = parse_scenario(R"({"version": 1, "ranks": 2, "program": [{"op": "barrier"}]})", "n.json");
  REQUIRE(none.ok());
  CHECK(none->view == CanvasView::automatic);
  CHECK(to_json(*none).find("\"view\"") == std::string::npos);
  auto bad = parse_scenario(R"({"version": 1, "ranks": 2, "program": [{"op": "barrier"}], "view": "boxs"})", "b.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().id == "scenario.unknown_view");
  CHECK(bad.error().message == "unknown view \"boxs\" (did you mean \"boxes\"?)");
  CHECK(bad.error().where.pointer == "/view");
}

TEST_CASE("gui matrix: a hand-written ring, every cell's colour and every step's marks") {
  const Schedule s = hand_ring();
  REQUIRE(verify_symbolic(s).ok());
  const MatrixShape shape = matrix_shape(s, matrix_buffer(s, 0));
  CHECK(shape.buf == 0);
  CHECK(shape.name == "x");
  CHECK(shape.chunk == 2);  // every transfer starts and ends on a multiple of 2
  CHECK(shape.per_column == 2);
  CHECK(shape.columns == 3);
  ContributionCursor cur(s);
  auto at = [&](std::int32_t k) {
    cur.seek(k);
    return build_matrix(
        s, shape, [&](auto r, auto b, auto i, auto& w) { cur.bits_of(r, b, i, w); }, k);
  };
  // Who each cell holds data from after k steps, worked out by hand.
  const std::vector<std::vector<std::vector<std::int32_t>>> expected = {
      {{0}, {0}, {0}, {1}, {1}, {1}, {2}, {2}, {2}},
      {{0}, {0}, {0, 2}, {0, 1}, {1}, {1}, {2}, {1, 2}, {2}},
      {{0}, {0, 1, 2}, {0, 2}, {0, 1}, {1}, {0, 1, 2}, {0, 1, 2}, {1, 2}, {2}},
      {{0, 1, 2}, {0, 1, 2}, {0, 2}, {0, 1}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {1, 2}, {0, 1, 2}},
      {{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}}};
  for (std::int32_t k = 0; k <= 4; ++k) {
    CAPTURE(k);
    const MatrixState m = at(k);
    REQUIRE(m.cells.size() == 9);
    for (std::int32_t r = 0; r < 3; ++r)
      for (std::int32_t c = 0; c < 3; ++c) {
        CAPTURE(r);
        CAPTURE(c);
        const CellColour want =
            colour_of(expected[static_cast<std::size_t>(k)][static_cast<std::size_t>(r * 3 + c)], 3);
        CHECK(m.at(r, c).coverage == want.coverage);
        CHECK(close(m.at(r, c).fill, want.fill));
      }
  }
  // Marks: step 0 adds rank r's chunk r into rank r+1, step 2 copies complete chunks.
  const MatrixMarks m0 = build_marks(s, shape, 0);
  REQUIRE(m0.cells.size() == 3);
  for (std::int32_t r = 0; r < 3; ++r) {
    const MatrixMark& mk = m0.cells[static_cast<std::size_t>(r)];
    CHECK(mk.rank == (r + 1) % 3);
    CHECK(mk.from == r);
    CHECK(mk.first == r);
    CHECK(mk.last == r);
    CHECK(mk.kind == MarkKind::reduce);
    CHECK(m0.sends[static_cast<std::size_t>(r)] == MarkKind::reduce);
    CHECK(m0.receives[static_cast<std::size_t>(r)] == MarkKind::reduce);
  }
  const MatrixMarks m2 = build_marks(s, shape, 2);
  REQUIRE(m2.cells.size() == 3);
  std::set<std::pair<std::int32_t, std::int32_t>> copied;
  for (const auto& mk : m2.cells) {
    CHECK(mk.kind == MarkKind::copy);
    copied.insert({mk.rank, mk.first});
  }
  CHECK(copied == std::set<std::pair<std::int32_t, std::int32_t>>{{0, 0}, {1, 1}, {2, 2}});
  CHECK(build_marks(s, shape, 4).step == -1);  // the end: no step runs
  CHECK(build_marks(s, shape, 4).cells.empty());
}

TEST_CASE("gui matrix: advancing a step gives what building afresh gives, and touches only its cells") {
  for (const auto& [ranks, count] : std::vector<std::pair<std::int32_t, std::uint64_t>>{{5, 5 * 3}, {6, 40}, {8, 8}}) {
    CAPTURE(ranks);
    auto run = ring_run(ranks, count);
    const Schedule& s = run->schedule;
    const MatrixShape shape = matrix_shape(s, matrix_buffer(s, 0));
    REQUIRE(shape.columns > 0);
    ContributionCursor cur(s);
    auto fn = [&](auto r, auto b, auto i, auto& w) { cur.bits_of(r, b, i, w); };
    cur.seek(0);
    MatrixState moving = build_matrix(s, shape, fn, 0);
    const auto n = static_cast<std::int32_t>(s.steps.size());
    for (std::int32_t k = 0; k < n; ++k) {
      cur.seek(k + 1);
      std::vector<std::size_t> changed;
      advance_matrix(moving, s, fn, k, &changed);
      const MatrixState fresh = build_matrix(s, shape, fn, k + 1);
      CHECK(moving.applied == k + 1);
      std::size_t written = 0;  // columns the step's transfers into the buffer cover, at most
      for (const Transfer& t : s.steps[static_cast<std::size_t>(k)].transfers)
        if (t.dst.buf == shape.buf && t.count > 0) written += t.count / shape.per_column + 1;
      CHECK(changed.size() <= written);
      CHECK(changed.size() < fresh.cells.size());
      for (std::size_t i = 0; i < fresh.cells.size(); ++i) {
        CHECK(moving.cells[i].coverage == fresh.cells[i].coverage);
        CHECK(same(moving.cells[i].fill, fresh.cells[i].fill));
      }
    }
    for (const auto& c : moving.cells) CHECK(c.coverage == Coverage::complete);
  }
}

TEST_CASE("gui matrix: the cache plays forward and back without building afresh") {
  auto run = ring_run(6, 6 * 4);
  MatrixCache cache;
  const MatrixStyle style;
  const auto n = static_cast<std::int32_t>(run->schedule.steps.size());
  auto pixels_at = [&](std::int32_t k) {
    MatrixCache fresh;
    fresh.prepare(run, ColourScope::program, k);
    fresh.update(k, k, 1, 1, 4, false, style);
    return fresh.pixels().rgba;
  };
  const MatrixShape shape = cache.prepare(run, ColourScope::program, 0);
  CHECK(shape.columns == 6);
  CHECK(cache.update(0, 0, 1, 1, 4, false, style));
  CHECK(cache.full_builds() == 1);
  CHECK(cache.pixels().width == 6 * 4);
  CHECK(cache.pixels().height == 6 * 4);
  CHECK_FALSE(cache.update(0, 0, 1, 1, 4, false, style));  // nothing changed: nothing to upload
  for (std::int32_t k = 1; k <= n; ++k) {
    cache.prepare(run, ColourScope::program, k);
    CHECK(cache.update(k, k, 1, 1, 4, false, style));
    CHECK(cache.pixels().rgba == pixels_at(k));
  }
  for (std::int32_t k = n - 1; k >= 0; k -= 3) {  // back, several steps at a time
    cache.prepare(run, ColourScope::program, k);
    cache.update(k, k, 1, 1, 4, false, style);
    CHECK(cache.pixels().rgba == pixels_at(k));
  }
  CHECK(cache.full_builds() == 1);
  // Other colours (each call's own inputs) start over.
  cache.prepare(run, ColourScope::call, n);
  cache.update(n, n, 1, 1, 4, false, style);
  CHECK(cache.full_builds() == 2);
  CHECK(cache.contributors(2, 0) == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("gui matrix: 1024 ranks fit the pixels, drawn as one image and a few rectangles") {
  QuickSpec q;
  q.coll = Collective::allreduce;
  q.algorithm = "ring";
  q.ranks = 1024;
  q.count = 1024;
  auto sc = scenario_from_spec(q);
  REQUIRE(sc.ok());
  auto lowered = lower_scenario(*sc);
  REQUIRE(lowered.ok());
  const Schedule& s = *lowered;
  const MatrixShape shape = matrix_shape(s, matrix_buffer(s, 0));
  CHECK(shape.columns == 1024);
  CHECK(shape.chunk == 1);
  // The canvas of a 1600x900 window: about 1150 x 640 pixels.
  const MatrixGeometry g = matrix_geometry(shape, {400, 30}, {1150, 640}, 22, 17, 1, nullptr);
  const float h = g.cells.max.y - g.cells.min.y, w = g.cells.max.x - g.cells.min.x;
  CHECK(g.rows <= static_cast<std::int32_t>(h));
  CHECK(g.cols <= static_cast<std::int32_t>(w));
  CHECK(g.ranks_per_row == 2);
  CHECK(g.rows == 512);
  CHECK(g.rank_ticks.size() >= 8);
  for (std::size_t i = 1; i < g.rank_ticks.size(); ++i)
    CHECK(g.rank_ticks[i].pos - g.rank_ticks[i - 1].pos >= 17 * 1.25f - 0.01f);  // labels never overlap
  for (const auto& t : g.rank_ticks) CHECK(t.index % 64 == 0);                   // every 64 ranks: 0, 64, 128, ...
  ContributionCursor cur(s);
  auto fn = [&](auto r, auto b, auto i, auto& w) { cur.bits_of(r, b, i, w); };
  cur.seek(0);
  const MatrixState start = build_matrix(s, shape, fn, 0);
  MatrixGrid grid = downsample(start, g.ranks_per_row, g.columns_per_col);
  CHECK(grid.cells.size() <= static_cast<std::size_t>(h) * static_cast<std::size_t>(w));
  // Row 0 holds ranks 0 and 1: a mean of their colours; but a row's columns are one
  // rank's data each, so a block of one rank's cells keeps that rank's colour exactly.
  const MatrixGrid one_rank = downsample(start, 1, g.columns_per_col);
  for (std::int32_t c = 0; c < one_rank.cols; ++c) {
    CHECK(same(one_rank.cells[one_rank.index(7, c)].fill, rank_colour(7)));
    CHECK(one_rank.cells[one_rank.index(7, c)].coverage == Coverage::single);
  }
  CHECK(grid.cells[0].coverage == Coverage::partial);
  CHECK(grid.cells[0].fill.r == doctest::Approx((rank_colour(0).r + rank_colour(1).r) / 2));
  // A step of the ring: one mark a rank, the margins one tick each (all send, all receive).
  const MatrixMarks marks = build_marks(s, shape, 0);
  CHECK(marks.cells.size() == 1024);
  mark_grid(grid, marks, nullptr);
  CHECK(grid.marked.size() <= 1024);
  CHECK(margin_runs(grid.sends).size() == 1);
  CHECK(margin_runs(grid.receives).size() == 1);
  const MatrixPixels px =
      paint_matrix(grid, MatrixStyle{}, matrix_texel(g.col_w(), g.row_h(), grid.rows, grid.cols), false);
  CHECK(px.width * px.height <= static_cast<std::int32_t>(w * h) * 2);  // about a texel a pixel
  // The end of the lesson: everything complete, drawn gold, exactly; built afresh fast
  // enough for a jump (--step K) at 1024 ranks.
  const auto t0 = std::chrono::steady_clock::now();
  cur.seek(static_cast<std::int32_t>(s.steps.size()));
  const MatrixState end = build_matrix(s, shape, fn, static_cast<std::int32_t>(s.steps.size()));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("1024 x 1024 cells built at the end of the lesson in " << secs << " s");
  const MatrixGrid done = downsample(end, g.ranks_per_row, g.columns_per_col);
  for (const auto& c : done.cells) {
    CHECK(c.coverage == Coverage::complete);
    CHECK(same(c.fill, palette().complete));
  }
}

TEST_CASE("gui matrix: the painted image: colours, gaps, frames for marks, a dark corner when complete") {
  const Schedule s = hand_ring();
  const MatrixShape shape = matrix_shape(s, 0);
  ContributionCursor cur(s);
  cur.seek(2);
  const MatrixState m = build_matrix(
      s, shape, [&](auto r, auto b, auto i, auto& w) { cur.bits_of(r, b, i, w); }, 2);
  MatrixGrid g = downsample(m, 1, 1);
  mark_grid(g, build_marks(s, shape, 2), nullptr);  // step 2 copies into (0,0), (1,1), (2,2)
  const MatrixStyle st;
  const MatrixPixels px = paint_matrix(g, st, 8, false);
  REQUIRE(px.width == 24);
  REQUIRE(px.height == 24);
  auto at = [&](std::int32_t x, std::int32_t y) { return px.rgba[static_cast<std::size_t>(y * px.width + x)]; };
  // Cell (row 0, column 2) holds ranks 0 and 2, unmarked: its colour inside, the gap on its last texels.
  CHECK(at(2 * 8 + 3, 0 * 8 + 4) == packed_rgba(m.at(0, 2).fill));
  CHECK(at(2 * 8 + 7, 0 * 8 + 4) == packed_rgba(st.background));
  CHECK(at(2 * 8 + 3, 0 * 8 + 7) == packed_rgba(st.background));
  // Cell (0, 0) receives a copy: framed in the copy colour, its own colour inside.
  CHECK(at(0, 3) == packed_rgba(st.copy));
  CHECK(at(3, 1) == packed_rgba(st.copy));
  CHECK(at(3, 4) == packed_rgba(m.at(0, 0).fill));
  // Cell (0, 1) is complete (gold) with the dark corner at its top right.
  CHECK(m.at(0, 1).coverage == Coverage::complete);
  CHECK(at(8 + 5, 0) == packed_rgba(st.flag));
  CHECK(at(8 + 1, 0) == packed_rgba(palette().complete));
  CHECK(at(8 + 2, 4) == packed_rgba(palette().complete));
  // Once the step's data has landed, the frame is lighter: between the mark and the cell.
  const MatrixPixels landed = paint_matrix(g, st, 8, true);
  CHECK(landed.rgba[3 * 24 + 0] != packed_rgba(st.copy));
  CHECK(landed.rgba[4 * 24 + 3] == packed_rgba(m.at(0, 0).fill));
  // Small cells: a marked cell takes the mark's colour (mostly), unmarked ones their own.
  const MatrixPixels small = paint_matrix(g, st, 1, false);
  REQUIRE(small.width == 3);
  CHECK(small.rgba[0] != packed_rgba(m.at(0, 0).fill));
  CHECK(small.rgba[2] == packed_rgba(m.at(0, 2).fill));
  // The header's words.
  CHECK(matrix_summary(shape, 1, 1) == "x: 3 ranks (rows) x 3 columns (chunks of 2 elements)");
  CHECK(matrix_summary(shape, 2, 4) ==
        "x: 3 ranks (rows) x 3 columns (chunks of 2 elements); each cell drawn 2 ranks x 4 columns");
}

TEST_CASE("gui matrix: labels every power of two, and the buffer of each call") {
  CHECK(tick_every(256, 640, 20) == 8);  // 2.5 px a rank: every 8th
  CHECK(tick_every(4, 640, 20) == 1);    // room for every one
  CHECK(tick_every(1024, 512, 20, 2) == 64);
  // Two calls on different buffers: the matrix follows the call that runs.
  const std::string text = R"({"version": 1, "ranks": 4, "buffers": {"a": {"count": 8, "init": "rank"},
    "b": {"count": 4, "init": "rank"}}, "program": [{"op": "allreduce", "buffer": "a", "algorithm": "ring"},
    {"op": "allreduce", "buffer": "b", "algorithm": "ring"}]})";
  auto sc = parse_scenario(text, "two.json");
  REQUIRE(sc.ok());
  auto s = lower_scenario(*sc);
  REQUIRE(s.ok());
  const std::int32_t a = s->find_buffer("a"), b = s->find_buffer("b");
  CHECK(matrix_buffer(*s, 0) == a);
  CHECK(matrix_buffer(*s, s->calls[1].first_step) == b);
  CHECK(matrix_buffer(*s, static_cast<std::int32_t>(s->steps.size())) == b);  // the end: the last call's
  CHECK(matrix_shape(*s, a).columns == 4);
  CHECK(matrix_shape(*s, b).columns == 4);
}
