// The window's view models, built without ImGui: colours of contribution sets,
// arrows of a step, aggregation into chunk cells, the timeline, stepping back.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "collscope/algorithms.h"
#include "collscope/machine.h"
#include "collscope/model.h"
#include "collscope/scenario.h"
#include "gui/view/arrows.h"
#include "gui/view/caption.h"
#include "gui/view/cells.h"
#include "gui/view/gif.h"
#include "gui/view/keys.h"
#include "gui/view/layout.h"
#include "gui/view/lesson.h"
#include "gui/view/panels.h"
#include "gui/view/playback.h"
#include "gui/view/quantize.h"
#include "gui/view/run_worker.h"
#include "gui/view/settings.h"
#include "gui/view/timeline.h"
#include "gui/view/what_if.h"

using namespace collscope;
using namespace collscope::view;

namespace {

std::shared_ptr<LessonRun> quick_run(Collective c, const std::string& algo, std::int32_t ranks, std::uint64_t count,
                                     std::uint64_t budget = 256ull << 20) {
  QuickSpec q;
  q.coll = c;
  q.algorithm = algo;
  q.ranks = ranks;
  q.count = count;
  auto sc = scenario_from_spec(q);
  REQUIRE(sc.ok());
  auto run = run_lesson(*sc, "cpu", budget);
  REQUIRE_MESSAGE(run.ok(), (run.ok() ? "" : run.error().format()));
  return *run;
}

bool same(Rgba a, Rgba b) { return a.r == b.r && a.g == b.g && a.b == b.b; }

}  // namespace

TEST_CASE("gui views: colour of a contribution set") {
  SUBCASE("one rank is that rank's colour, different ranks differ") {
    auto c0 = colour_of({0}, 4), c1 = colour_of({1}, 4);
    CHECK(c0.coverage == Coverage::single);
    CHECK(same(c0.fill, rank_colour(0)));
    CHECK_FALSE(same(c0.fill, c1.fill));
  }
  SUBCASE("a partial reduction is a mix, unlike any single rank") {
    auto m = colour_of({0, 1}, 4);
    CHECK(m.coverage == Coverage::partial);
    for (int r = 0; r < 4; ++r) CHECK_FALSE(same(m.fill, rank_colour(r)));
  }
  SUBCASE("every rank is complete, with its own colour; nothing is empty") {
    auto full = colour_of({0, 1, 2, 3}, 4);
    CHECK(full.coverage == Coverage::complete);
    CHECK(same(full.fill, kCompleteCell));
    CHECK(colour_of({}, 4).coverage == Coverage::none);
  }
  SUBCASE("64 ranks get 64 distinct colours") {
    std::set<std::tuple<int, int, int>> seen;
    for (int r = 0; r < 64; ++r) {
      auto c = rank_colour(r);
      seen.insert({int(c.r * 255), int(c.g * 255), int(c.b * 255)});
    }
    CHECK(seen.size() == 64);
  }
}

TEST_CASE("gui views: a ring all-reduce colours cells from inputs to complete") {
  auto run = quick_run(Collective::allreduce, "ring", 4, 8);
  MemoryTimeline mem(run);
  ContributionCursor cur(run->schedule);
  auto cells_at = [&](std::int32_t k) {
    cur.seek(k);
    auto m = mem.at(k);
    REQUIRE(m.ok());
    return build_cells(
        run->schedule, *m, [&](auto r, auto b, auto i) { return cur.ranks_of(r, b, i); }, k);
  };
  const std::int32_t recv = run->schedule.find_buffer("recv");
  const std::int32_t send = run->schedule.find_buffer("send");
  REQUIRE(recv >= 0);
  auto start = cells_at(0);
  REQUIRE(start.ranks.size() == 4);
  // At the start rank 2's send buffer holds only rank 2's data.
  const auto& srow = start.ranks[2].rows[static_cast<std::size_t>(send)];
  REQUIRE(srow.cells.size() == 8);
  CHECK(srow.cells[0].ranks == std::vector<std::int32_t>{2});
  CHECK(srow.cells[0].colour.coverage == Coverage::single);
  CHECK_FALSE(srow.cells[0].text.empty());
  const auto n = static_cast<std::int32_t>(run->schedule.steps.size());
  auto end = cells_at(n);
  for (const auto& rc : end.ranks)
    for (const auto& c : rc.rows[static_cast<std::size_t>(recv)].cells) CHECK(c.colour.coverage == Coverage::complete);
  // Half-way, some cell is a partial reduction.
  bool partial = false;
  for (std::int32_t k = 1; k < n && !partial; ++k)
    for (const auto& rc : cells_at(k).ranks)
      for (const auto& c : rc.rows[static_cast<std::size_t>(recv)].cells)
        partial |= c.colour.coverage == Coverage::partial;
  CHECK(partial);
}

TEST_CASE("gui views: advancing the cells one step gives what building them afresh gives") {
  for (const auto& [coll, algo, ranks, count] :
       std::vector<std::tuple<Collective, std::string, std::int32_t, std::uint64_t>>{
           {Collective::allreduce, "ring", 5, 5 * 40},  // chunks that straddle cells
           {Collective::allreduce, "rabenseifner", 6, 300},
           {Collective::allgather, "bruck", 5, 7},
           {Collective::reduce_scatter, "pairwise", 4, 100}}) {
    CAPTURE(algo);
    auto run = quick_run(coll, algo, ranks, count);
    MemoryTimeline mem(run);
    ContributionCursor cur(run->schedule);
    auto contributors = [&](auto r, auto b, auto i) { return cur.ranks_of(r, b, i); };
    cur.seek(0);
    auto m0 = mem.at(0);
    REQUIRE(m0.ok());
    auto moving = build_cells(run->schedule, *m0, contributors, 0);
    const auto n = static_cast<std::int32_t>(run->schedule.steps.size());
    std::size_t changed = 0;
    for (std::int32_t k = 0; k < n; ++k) {
      cur.seek(k + 1);
      auto m = mem.at(k + 1);
      REQUIRE(m.ok());
      const auto before = moving;
      advance_cells(moving, run->schedule, *m, contributors, k);
      const auto fresh = build_cells(run->schedule, *m, contributors, k + 1);
      CHECK(moving.applied == k + 1);
      REQUIRE(moving.ranks.size() == fresh.ranks.size());
      for (std::size_t r = 0; r < fresh.ranks.size(); ++r)
        for (std::size_t w = 0; w < fresh.ranks[r].rows.size(); ++w)
          for (std::size_t c = 0; c < fresh.ranks[r].rows[w].cells.size(); ++c) {
            const auto& x = moving.ranks[r].rows[w].cells[c];
            const auto& y = fresh.ranks[r].rows[w].cells[c];
            CHECK(x.ranks == y.ranks);
            CHECK(x.text == y.text);
            CHECK(x.min == y.min);
            CHECK(x.max == y.max);
            CHECK(x.colour.coverage == y.colour.coverage);
            changed += before.ranks[r].rows[w].cells[c].ranks != y.ranks;
          }
    }
    CHECK(changed > 0);  // the steps did change cells, so the comparison means something
  }
}

TEST_CASE("gui views: a million elements aggregate into at most 64 cells per row") {
  CHECK(elements_per_cell(1'000'000) == 15'625);
  Schedule s;
  s.ranks = 2;
  s.dtype = DType::int32;
  s.buffers.push_back({"x", {1'000'000, 999'999}, false});
  HostMemory mem(1, std::vector<std::vector<std::uint8_t>>(2));
  mem[0][0].assign(1'000'000 * 4, 0);
  mem[0][1].assign(999'999 * 4, 0);
  auto v = build_cells(
      s, mem, [](auto r, auto, auto) { return std::vector<std::int32_t>{r}; }, 0);
  for (const auto& rc : v.ranks) {
    const auto& row = rc.rows[0];
    CHECK(row.cells.size() <= 64);
    CHECK(row.cells.size() >= 63);
    std::uint64_t covered = 0;
    for (const auto& c : row.cells) covered += c.count;
    CHECK(covered == row.elements);
    CHECK(cell_of(row, row.elements - 1) == static_cast<std::int32_t>(row.cells.size()) - 1);
    CHECK(row.cells[0].text == "0");  // a chunk of equal values still shows its value
  }
  CHECK(cell_of(v.ranks[0].rows[0], 1'000'000) == -1);
}

TEST_CASE("gui views: arrows of a step") {
  auto run = quick_run(Collective::allreduce, "ring", 4, 8);
  ContributionCursor cur(run->schedule);
  // The first step between ranks (a local copy may come first): every rank sends one
  // chunk to its right neighbour.
  std::int32_t first = 0;
  while (step_bytes(run->schedule, run->schedule.steps[static_cast<std::size_t>(first)]) == 0) ++first;
  cur.seek(first);
  auto arrows = build_arrows(run->schedule, first, [&](auto r, auto b, auto i) { return cur.ranks_of(r, b, i); });
  std::set<std::pair<int, int>> pairs;
  for (const auto& a : arrows)
    if (a.src != a.dst) pairs.insert({a.src, a.dst});
  for (int r = 0; r < 4; ++r) CHECK(pairs.count({r, (r + 1) % 4}) == 1);
  for (const auto& a : arrows) {
    CHECK(a.bytes == a.elements * 4);
    CHECK_FALSE(a.transfers.empty());
    if (a.src != a.dst) CHECK(a.token_ranks == std::vector<std::int32_t>{a.src});
  }
  // A reduce-scatter step reduces (out of place: a reduce-copy into the output); an
  // all-gather step copies. Reductions draw as reductions either way.
  bool reduce = false, copy = false;
  for (std::int32_t k = 0; k < static_cast<std::int32_t>(run->schedule.steps.size()); ++k)
    for (const auto& a :
         build_arrows(run->schedule, k, [&](auto r, auto b, auto i) { return cur.ranks_of(r, b, i); })) {
      reduce |= is_reduction(a.action) && a.src != a.dst;
      copy |= a.action == Action::copy && a.src != a.dst;
      if (k < 3 && a.src != a.dst) CHECK(is_reduction(a.action));
      if (k >= 3 && a.src != a.dst) CHECK(a.action == Action::copy);
    }
  CHECK(reduce);
  CHECK(copy);
  CHECK(build_arrows(run->schedule, 999, {}).empty());
}

TEST_CASE("gui views: tokens ease along their arrow and land") {
  Vec2 a{0, 0}, b{100, 0};
  CHECK(token_at(a, b, 0, 0).at.x == doctest::Approx(0));
  CHECK_FALSE(token_at(a, b, 0, 0.3f).landed);
  CHECK(token_at(a, b, 0, kTravelFraction).at.x == doctest::Approx(100));
  CHECK(token_at(a, b, 0, 0.9f).landed);
  // Slow at the start (easing): a tenth of the time covers less than a tenth of the way.
  CHECK(token_at(a, b, 0, 0.1f * kTravelFraction).at.x < 10);
  // Bent paths of opposite directions do not meet in the middle.
  CHECK(bend_point(a, b, 20).y != doctest::Approx(bend_point(b, a, 20).y));
}

TEST_CASE("gui views: token images: a disc is solid inside, a ring hollow, both soft only at their edges") {
  const int n = 26;  // radius 12 and a pixel to spare on each side
  auto at = [&](const std::vector<std::uint8_t>& v, int x, int y) {
    return static_cast<int>(v[static_cast<std::size_t>(y * n + x)]);
  };
  const auto disc = ring_coverage(12, 12, n);
  const auto ring = ring_coverage(12, 3, n);
  REQUIRE(disc.size() == static_cast<std::size_t>(n * n));
  REQUIRE(ring.size() == disc.size());
  CHECK(at(disc, 13, 13) == 255);  // the centre
  CHECK(at(ring, 13, 13) == 0);    // hollow
  CHECK(at(disc, 0, 0) == 0);      // corners are outside
  CHECK(at(ring, 0, 0) == 0);
  CHECK(at(ring, 2, 13) == 255);  // on the ring, 11 pixels left of the centre
  CHECK(at(disc, 2, 13) == 255);
  // Every pixel of the ring is covered by the disc at least as much, and the soft edge
  // holds the only partial values: at most one pixel ring each side of each edge.
  int partial = 0, inside = 0;
  for (std::size_t i = 0; i < disc.size(); ++i) {
    CHECK(ring[i] <= disc[i]);
    partial += disc[i] > 0 && disc[i] < 255;
    inside += disc[i] == 255;
  }
  CHECK(partial > 0);
  CHECK(partial < 2 * 2 * 3.1416 * 12.5);  // about the circumference, not an area
  CHECK(inside == doctest::Approx(3.1416 * 12 * 12).epsilon(0.15));
  // Symmetric: the left half mirrors the right half.
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n / 2; ++x) CHECK(at(ring, x, y) == at(ring, n - 1 - x, y));
  CHECK(ring_coverage(5, 1, 0).empty());
}

TEST_CASE("gui views: playback moves through the steps") {
  Playback p;
  p.steps = 3;
  p.toggle();
  CHECK(p.playing);
  p.speed = 1;
  p.tick(0.8f);
  CHECK(p.applied == 0);
  CHECK(p.shown() == 1);  // the token has landed: the receiving cells show the result
  p.tick(0.5f);
  CHECK(p.applied == 1);
  p.tick(10);
  CHECK(p.at_end());
  CHECK_FALSE(p.playing);
  p.back();
  CHECK(p.applied == 2);
  p.jump(99);
  CHECK(p.applied == 3);
  p.restart();
  CHECK(p.applied == 0);
}

TEST_CASE("gui views: stepping back restores the exact bytes, re-executing from a kept snapshot") {
  auto full = quick_run(Collective::allreduce, "ring", 4, 1000);
  // A budget for only about two snapshots: the others are re-executed.
  const std::uint64_t per = 4 * 1000 * 4 * 2;
  auto sparse = quick_run(Collective::allreduce, "ring", 4, 1000, per * 2);
  REQUIRE(sparse->outcome.record.snapshots.size() < full->outcome.record.snapshots.size());
  MemoryTimeline a(full), b(sparse);
  const auto n = static_cast<std::int32_t>(full->schedule.steps.size());
  bool replayed = false;
  for (std::int32_t k = n; k >= 0; --k) {
    auto ma = a.at(k), mb = b.at(k);
    REQUIRE(ma.ok());
    REQUIRE(mb.ok());
    CHECK(a.last_replayed() == 0);
    replayed |= b.last_replayed() > 0;
    CHECK(*ma == *mb);
  }
  CHECK(replayed);
  // And the bytes change between steps, so the comparison means something.
  CHECK(*a.at(0) != *a.at(n));
}

TEST_CASE("gui views: timeline rows on one clock, with step marks and hit tests") {
  auto run = quick_run(Collective::allreduce, "ring", 4, 64);
  auto tl = build_timeline(run->schedule, run->outcome.record);
  CHECK(tl.ranks == 4);
  REQUIRE_FALSE(tl.slices.empty());
  CHECK(tl.marks.size() == run->schedule.steps.size());
  for (const auto& sl : tl.slices) {
    CHECK(sl.x0 >= 0);
    CHECK(sl.x1 <= 1.0001f);
    CHECK(sl.x0 <= sl.x1);
  }
  const auto& sl = tl.slices.front();
  const float mid = (sl.x0 + sl.x1) / 2;
  const auto hit = slice_at(tl, sl.rank, mid);
  REQUIRE(hit >= 0);
  CHECK(tl.slices[static_cast<std::size_t>(hit)].rank == sl.rank);
  CHECK(slice_at(tl, 99, mid) == -1);
  CHECK(step_at(tl, 1.0f) == static_cast<std::int32_t>(run->schedule.steps.size()) - 1);
}

TEST_CASE("gui views: the timeline as pixels paints every transfer, and only transfers") {
  auto run = quick_run(Collective::allreduce, "ring", 16, 16 * 64);
  auto tl = build_timeline(run->schedule, run->outcome.record);
  REQUIRE(tl.slices.size() > 100);
  for (std::size_t i = 1; i < tl.slices.size(); ++i) {  // sorted by rank, then start
    const auto &a = tl.slices[i - 1], &b = tl.slices[i];
    CHECK((a.rank < b.rank || (a.rank == b.rank && a.t0_us <= b.t0_us)));
  }
  for (std::int32_t width : {50, 700, 5000}) {
    const auto px = rasterise_timeline(tl, width, 8);
    REQUIRE(px.width == width);
    REQUIRE(px.height == 16 * 8);
    // Each slice shows in its rank's middle row where it starts (unless a later slice of
    // its rank was painted over that pixel), never in the gap rows between ranks.
    for (const auto& sl : tl.slices) {
      const auto x = std::min(width - 1, static_cast<std::int32_t>(std::floor(sl.x0 * static_cast<float>(width))));
      CHECK(px.at(x, sl.rank * 8 + 4) != 0);
      CHECK(px.at(x, sl.rank * 8) == 0);
      CHECK(px.at(x, sl.rank * 8 + 7) == 0);
    }
    // A pixel is painted only where a slice of that rank covers it.
    for (std::int32_t r = 0; r < 16; ++r)
      for (std::int32_t x = 0; x < width; x += 7) {
        if (px.at(x, r * 8 + 4) == 0) continue;
        bool covered = false;
        for (const auto& sl : tl.slices)
          covered |= sl.rank == r && std::floor(sl.x0 * static_cast<float>(width)) <= static_cast<float>(x) &&
                     static_cast<float>(x) < std::max(std::ceil(sl.x1 * static_cast<float>(width)),
                                                      std::floor(sl.x0 * static_cast<float>(width)) + 1);
        CHECK(covered);
      }
  }
  // Two slices, a copy and a reduce, far apart: their pixels, the gap between them empty.
  TimelineView two;
  two.ranks = 2;
  two.slices = {{1, 0, 0, 0, Action::copy, 8, 0, 1, 0.0f, 0.1f}, {1, 1, 0, 0, Action::reduce, 8, 9, 10, 0.9f, 1.0f}};
  const auto px = rasterise_timeline(two, 100, 4);
  CHECK(px.at(0, 4 + 1) == 1 + static_cast<int>(Action::copy));
  CHECK(px.at(9, 4 + 1) == 1 + static_cast<int>(Action::copy));
  CHECK(px.at(10, 4 + 1) == 0);
  CHECK(px.at(50, 4 + 1) == 0);
  CHECK(px.at(99, 4 + 2) == 1 + static_cast<int>(Action::reduce));
  CHECK(px.at(5, 1) == 0);  // rank 0 ran nothing
  // A slice shorter than a pixel still gets one.
  two.slices = {{0, 0, 0, 0, Action::copy, 8, 0, 0, 0.5f, 0.5f}};
  CHECK(rasterise_timeline(two, 100, 4).at(50, 1) == 1 + static_cast<int>(Action::copy));
  CHECK(rasterise_timeline(two, 100, 4).at(51, 1) == 0);
  const auto wide = rasterise_timeline(two, 100, 4, 3);  // at least three pixels
  CHECK(wide.at(52, 1) == 1 + static_cast<int>(Action::copy));
  CHECK(wide.at(53, 1) == 0);
  two.slices[0].x0 = two.slices[0].x1 = 1.0f;  // at the right edge: clipped, not past it
  CHECK(rasterise_timeline(two, 100, 4, 3).at(99, 1) == 1 + static_cast<int>(Action::copy));
}

TEST_CASE("gui views: the timeline's step marks are columns of its image, one per step, none elsewhere") {
  auto run = quick_run(Collective::allreduce, "ring", 16, 16 * 64);
  auto tl = build_timeline(run->schedule, run->outcome.record);
  REQUIRE(tl.marks.size() == run->schedule.steps.size());
  for (std::int32_t width : {20, 700, 5000}) {
    const auto px = rasterise_timeline(tl, width, 8);
    REQUIRE(px.mark.size() == static_cast<std::size_t>(width));
    std::vector<std::uint8_t> want(static_cast<std::size_t>(width), 0);
    for (const auto& m : tl.marks)
      want[static_cast<std::size_t>(
          std::clamp(static_cast<std::int32_t>(std::floor(m.x * static_cast<float>(width))), 0, width - 1))] = 1;
    CHECK(px.mark == want);
    // Wide enough, the 30 steps of a 16-rank ring fall on distinct columns (a step takes
    // well over 1/5000 of the run); squeezed into 20 columns, several share one.
    const auto marked = std::count(px.mark.begin(), px.mark.end(), 1);
    if (width == 5000) CHECK(marked == static_cast<std::ptrdiff_t>(tl.marks.size()));
    if (width == 20) CHECK(marked <= 20);
    CHECK(px.mark[0] == 1);  // the first step begins the run
  }
  TimelineView none;
  none.ranks = 2;
  const auto px = rasterise_timeline(none, 10, 4);
  CHECK(std::count(px.mark.begin(), px.mark.end(), 1) == 0);
}

TEST_CASE("gui views: layouts") {
  auto ring = quick_run(Collective::allreduce, "ring", 6, 6);
  auto l = layout_ranks(ring->schedule, 0, {1000, 800}, 2);
  CHECK(l.kind == LayoutKind::ring);
  CHECK(l.boxes.size() == 6);
  CHECK(l.boxes[0].centre.y < l.boxes[3].centre.y);  // rank 0 on top
  auto tree = quick_run(Collective::broadcast, "binomial", 8, 4);
  auto t = layout_ranks(tree->schedule, 0, {1000, 800}, 2);
  CHECK(t.kind == LayoutKind::tree);
  CHECK(t.boxes[0].parent == -1);
  for (std::int32_t r = 1; r < 8; ++r) {
    const auto p = t.boxes[static_cast<std::size_t>(r)].parent;
    REQUIRE(p >= 0);
    CHECK(t.boxes[static_cast<std::size_t>(p)].centre.y < t.boxes[static_cast<std::size_t>(r)].centre.y);
  }
  auto big = quick_run(Collective::allreduce, "ring", 64, 64);
  auto g = layout_ranks(big->schedule, 0, {1600, 900}, 2);
  CHECK(g.kind == LayoutKind::grid);
  for (const auto& b : g.boxes) {  // every box inside the canvas
    CHECK(b.centre.x - g.box.x / 2 >= 0);
    CHECK(b.centre.x + g.box.x / 2 <= 1600);
  }
  // Eight ranks with five buffer rows each on a wide, low canvas: a ring's boxes would
  // squash the rows; a grid gives them more height. With one row the ring stays.
  auto eight = quick_run(Collective::allreduce, "ring", 8, 8);
  const auto flat = layout_ranks(eight->schedule, 0, {1160, 450}, 1, 26, 30);
  CHECK(flat.kind == LayoutKind::ring);
  const auto tall = layout_ranks(eight->schedule, 0, {1160, 450}, 5, 26, 30);
  CHECK(tall.kind == LayoutKind::grid);
  const auto squashed_ring_h = 450.0f / 4 * 0.78f;  // what the ring would give each box
  CHECK(tall.box.y > squashed_ring_h * 1.2f);
  for (std::size_t a = 0; a < tall.boxes.size(); ++a)  // and no two boxes overlap
    for (std::size_t b = a + 1; b < tall.boxes.size(); ++b) {
      const bool apart = std::abs(tall.boxes[a].centre.x - tall.boxes[b].centre.x) >= tall.box.x ||
                         std::abs(tall.boxes[a].centre.y - tall.boxes[b].centre.y) >= tall.box.y;
      CHECK(apart);
    }
}

TEST_CASE("gui views: caption of a step and of the end") {
  auto run = quick_run(Collective::allreduce, "ring", 4, 8);
  std::int32_t first = 0;
  while (step_bytes(run->schedule, run->schedule.steps[static_cast<std::size_t>(first)]) == 0) ++first;
  auto c = build_caption(*run, first);
  CHECK(c.position == "step " + std::to_string(first + 1) + " of " + std::to_string(run->schedule.steps.size()));
  CHECK_FALSE(c.caption.empty());
  CHECK(c.bytes > 0);
  CHECK(c.predicted_us > 0);
  CHECK(c.measured_us >= 0);
  CHECK(c.verified);
  CHECK(c.verdict.rfind("verified: postcondition of allreduce (call 0) (", 0) == 0);
  auto end = build_caption(*run, static_cast<std::int32_t>(run->schedule.steps.size()));
  CHECK(end.position.rfind("done", 0) == 0);
  // Every prediction names its model: here this machine's cpu model.
  CHECK(c.predicted_note.find("cpu model") != std::string::npos);
  // Another model's run is labelled with that model.
  auto other = *run;
  other.backend = "cuda";
  other.model = "dgx-h100, assumed";
  CHECK(build_caption(other, first).predicted_note == " (dgx-h100, assumed)");
  CHECK(build_caption(other, first).predicted_us == doctest::Approx(c.predicted_us));
}

TEST_CASE("gui views: the worker runs lessons off the calling thread and reports errors") {
  RunWorker w;
  QuickSpec q;
  q.ranks = 4;
  q.count = 16;
  auto sc = scenario_from_spec(q);
  REQUIRE(sc.ok());
  const auto id = w.submit({*sc, "cpu"});
  std::optional<RunResult> r;
  for (int i = 0; i < 2000 && !r; ++i) {
    r = w.take();
    if (!r) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(r.has_value());
  CHECK(r->id == id);
  CHECK(r->run.ok());
  w.submit({*sc, "no-such-backend"});
  r.reset();
  for (int i = 0; i < 2000 && !r; ++i) {
    r = w.take();
    if (!r) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(r.has_value());
  CHECK_FALSE(r->run.ok());
  CHECK_FALSE(w.busy());
}

TEST_CASE("gui views: panel layout follows the dragged fractions, within limits") {
  for (float h : {480.0f, 900.0f, 2160.0f})
    for (bool presenter : {false, true})
      for (bool timeline : {false, true})
        for (float tf : {0.0f, 0.2f, 0.5f, 0.9f}) {
          CAPTURE(h);
          CAPTURE(presenter);
          CAPTURE(tf);
          const auto p = panel_layout(1600, h, 1.0f, presenter, timeline, 0, tf);
          CHECK(p.canvas_h + p.caption_h + p.timeline_h == doctest::Approx(h));
          CHECK(p.canvas_h >= 0.2f * h - 0.01f);  // the canvas keeps a fifth
          CHECK(p.timeline_h <= kMaxTimelineFraction * h + 0.01f);
          if (presenter || !timeline) CHECK(p.timeline_h == 0);
          if (presenter) CHECK(p.left == 0);
        }
  const auto automatic = panel_layout(1600, 900, 1.0f, false, true, 0, 0.2f);
  CHECK(automatic.left == doctest::Approx(320.0f));  // a fifth of 1600, at least 300 px
  CHECK(automatic.timeline_h == doctest::Approx(180.0f));
  CHECK(panel_layout(1600, 900, 1.0f, false, true, 0.25f, 0.2f).left == doctest::Approx(400.0f));
  CHECK(panel_layout(1600, 900, 1.0f, false, true, 0.01f, 0.2f).left == doctest::Approx(kMinLeftFraction * 1600));
  CHECK(panel_layout(1600, 900, 1.0f, false, true, 0.99f, 0.2f).left == doctest::Approx(kMaxLeftFraction * 1600));
  CHECK(panel_layout(1600, 900, 1.0f, false, true, 0, 0.4f).timeline_h == doctest::Approx(360.0f));
}

TEST_CASE("gui views: settings persist in the config folder, a corrupt file is ignored") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("collscope-settings-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  app::Settings s;
  s.zoom = 1.5f;
  s.presenter = true;
  s.last_file = "scenarios/01-broadcast.json";
  REQUIRE(app::save_settings(dir.string(), s));
  auto back = app::load_settings(dir.string());
  CHECK(back.zoom == doctest::Approx(1.5f));
  CHECK(back.presenter);
  CHECK(back.last_file == s.last_file);
  CHECK(back.left_fraction == doctest::Approx(0.0f));  // automatic until dragged
  s.left_fraction = 0.3f;
  s.timeline_fraction = 0.35f;
  REQUIRE(app::save_settings(dir.string(), s));
  back = app::load_settings(dir.string());
  CHECK(back.left_fraction == doctest::Approx(0.3f));
  CHECK(back.timeline_fraction == doctest::Approx(0.35f));
  { std::ofstream(dir / "settings.json") << R"({"left_fraction": 5, "timeline_fraction": -1, "zoom": 2})"; }
  back = app::load_settings(dir.string());  // out of range: clamped, the rest kept
  CHECK(back.left_fraction == doctest::Approx(view::kMaxLeftFraction));
  CHECK(back.timeline_fraction == doctest::Approx(view::kMinTimelineFraction));
  CHECK(back.zoom == doctest::Approx(2.0f));
  { std::ofstream(dir / "settings.json") << "{ not json"; }
  auto corrupt = app::load_settings(dir.string());  // warns on stderr
  CHECK(corrupt.zoom == doctest::Approx(1.0f));
  CHECK_FALSE(corrupt.presenter);
  CHECK(app::load_settings((dir / "missing").string()).zoom == doctest::Approx(1.0f));
  fs::remove_all(dir);
}

TEST_CASE("gui views: a program step's caption names its point-to-point ops in program order") {
  auto sc = load_scenario(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/14-isend-irecv.json");
  REQUIRE(sc.ok());
  auto run = run_lesson(*sc, "cpu", 256ull << 20);
  REQUIRE(run.ok());
  auto c = build_caption(**run, 0);
  CHECK(c.call == "call 1 of 1: point-to-point (isend, compute, irecv)");  // rank by rank
  CHECK(c.verdict.rfind("verified: expectations on tensor (", 0) == 0);
  // The isend (op 0) is told before the compute span (op 2) that shares its step.
  CHECK(c.caption.find("starts sending") < c.caption.find("works on something else"));
}

TEST_CASE("gui views: what if prices every algorithm at every size and marks where the fastest changes") {
  view::WhatIfQuery q;
  q.coll = Collective::allreduce;
  q.ranks = 16;
  q.nodes = 2;
  q.topology = "dgx-h100";
  q.min_bytes = 8;
  q.max_bytes = 64u << 20;
  auto w = view::build_what_if(q, "/nonexistent-collscope-config");
  REQUIRE(w.ok());
  CHECK(w->model == "topology dgx-h100, 2 nodes x 8 GPUs");
  REQUIRE(w->bytes.size() == 12);  // 8 B, 32 B, ..., 32 MiB: four times each step
  CHECK(w->series.size() == algorithm_names(Collective::allreduce).size());
  for (const auto& s : w->series) {
    REQUIRE(s.us.size() == w->bytes.size());
    for (std::size_t i = 0; i + 1 < s.us.size(); ++i)
      if (s.us[i] > 0) CHECK(s.us[i + 1] >= s.us[i]);  // more bytes never take less time
  }
  // The fastest per size is within 2% of the best, and every change is a crossover.
  std::size_t changes = 0;
  for (std::size_t i = 0; i < w->bytes.size(); ++i) {
    double best = 1e300, mine = 0;
    for (const auto& s : w->series)
      if (s.us[i] > 0) {
        best = std::min(best, s.us[i]);
        if (s.algorithm == w->fastest[i]) mine = s.us[i];
      }
    CHECK(mine <= 1.02 * best);
    if (i > 0 && w->fastest[i] != w->fastest[i - 1]) ++changes;
  }
  CHECK(changes == w->crossovers.size());
  // Across two nodes small messages and large ones are won by different algorithms.
  CHECK(w->fastest.front() != w->fastest.back());
  for (const auto& c : w->crossovers) CHECK(w->fastest[c.index] == c.to);
  // The lesson's call sits between the sizes around it.
  const auto at = view::place_on(*w, 3000);
  CHECK(w->bytes[at.index] <= 3000);
  CHECK(w->bytes[at.index + 1] > 3000);
  CHECK(at.frac > 0);
  CHECK(at.frac < 1);
  CHECK(view::size_label(64u << 20) == "64 MiB");
  CHECK(view::size_label(1536) == "1.5 KiB");
  q.topology = "no-such-topology";
  CHECK_FALSE(view::build_what_if(q, "").ok());
}

TEST_CASE("gui views: what if names the curves that lie on each other because the steps are the same") {
  view::WhatIfQuery q;
  q.coll = Collective::allreduce;
  q.ranks = 3;
  q.min_bytes = 8;
  q.max_bytes = 256u << 10;  // up to one slice of the cpu backend's ring
  auto w = view::build_what_if(q, "/nonexistent-collscope-config");
  REQUIRE(w.ok());
  std::map<std::string, const view::WhatIfSeries*> by;
  for (const auto& s : w->series) by[s.algorithm] = &s;
  REQUIRE(by.count("hierarchical"));
  CHECK(by["hierarchical"]->same_as == "ring");
  CHECK(by["rings"]->same_as == "ring");
  CHECK(by["hierarchical"]->us == by["ring"]->us);
  for (const char* a : {"flat", "tree", "ring", "recursive_doubling", "rabenseifner", "double_tree"})
    CHECK_MESSAGE(by[a]->same_as.empty(), a);
  // Beyond a slice the ring is cut in slices, and the one-node rings, being the ring, too.
  q.max_bytes = 16u << 20;
  w = view::build_what_if(q, "/nonexistent-collscope-config");
  REQUIRE(w.ok());
  by.clear();
  for (const auto& s : w->series) by[s.algorithm] = &s;
  CHECK(by["hierarchical"]->same_as == "ring");
  CHECK(by["rings"]->same_as == "ring");

  // On a topology of several nodes the node-aware algorithms split the ranks into them:
  // their own curves, and at large sizes the fastest (every card at work).
  q.topology = "dgx-h100";
  q.nodes = 2;
  q.ranks = 16;
  q.max_bytes = 64u << 20;
  w = view::build_what_if(q, "/nonexistent-collscope-config");
  REQUIRE(w.ok());
  by.clear();
  for (const auto& s : w->series) by[s.algorithm] = &s;
  for (const char* a : {"hierarchical", "rings", "double_tree"}) CHECK_MESSAGE(by[a]->same_as.empty(), a);
  CHECK(by["rings"]->us.back() * 2 < by["ring"]->us.back());
  const std::string last = w->fastest.back();
  CHECK((last == "rings" || last == "hierarchical"));
}

TEST_CASE("gui views: what if says which curves are too low for want of a cost per message") {
  // A flat scatter's root sends 511 messages in one step; the model prices their bytes
  // and one latency, so its curve is too low, and the series says by how many messages.
  view::WhatIfQuery q;
  q.coll = Collective::scatter;
  q.ranks = 512;
  q.nodes = 64;
  q.topology = "dgx-h100";
  q.min_bytes = 1u << 12;
  q.max_bytes = 1u << 16;
  auto w = view::build_what_if(q, "/nonexistent-collscope-config");
  REQUIRE_MESSAGE(w.ok(), w.error().format());
  std::map<std::string, const view::WhatIfSeries*> by;
  for (const auto& s : w->series) by[s.algorithm] = &s;
  REQUIRE(by.count("flat"));
  REQUIRE(by.count("binomial"));
  CHECK(by["flat"]->busiest_messages == 511);
  CHECK(by["flat"]->busiest_messages > kManyMessages);
  CHECK(by["binomial"]->busiest_messages <= kManyMessages);
  // The fastest as auto picks: the flat curve lies below the binomial tree's at every size
  // and is passed over, as the tuner passes over it.
  REQUIRE(w->fastest.size() == w->bytes.size());
  for (std::size_t i = 0; i < w->bytes.size(); ++i) {
    CAPTURE(w->bytes[i]);
    CHECK(by["flat"]->us[i] < by["binomial"]->us[i]);
    CHECK(w->fastest[i] != "flat");
  }
}

TEST_CASE("gui views: what if prices a cluster's ranks from the algorithms' shapes, with progress") {
  view::WhatIfQuery q;
  q.coll = Collective::reduce_scatter;
  q.ranks = 4096;
  q.nodes = 512;
  q.topology = "dgx-h100";
  q.min_bytes = 1u << 20;
  q.max_bytes = 1u << 30;
  q.factor = 32;
  view::WhatIfProgress progress;
  auto w = view::build_what_if(q, "/nonexistent-collscope-config", &progress);
  REQUIRE_MESSAGE(w.ok(), w.error().format());
  CHECK(progress.total == w->series.size() * w->bytes.size());
  CHECK(progress.done == progress.total);
  CHECK(w->method.find("shapes") != std::string::npos);
  const Machine m = *machine_for("dgx-h100", 512, BackendCapabilities{{}, true, false, false}, DType::float32, "");
  for (const auto& s : w->series) {
    CAPTURE(s.algorithm);
    CollArgs a;
    a.coll = q.coll;
    a.ranks = q.ranks;
    a.count = w->counts.back();
    const auto shaped = predict_shape(a, s.algorithm, m);
    // Every algorithm with a shape is the curve predict prints; one without has none.
    CHECK(s.priced == shaped.has_value());
    CHECK(s.us.back() == (shaped ? shaped->us : 0.0));
    CHECK(s.same_as.empty());
  }
  // Reduce-scatter's pairwise, every step its own, is priced from one node's transfers
  // and the leaf groups' loads counted: a curve too, and never the fastest here.
  const auto pairwise = std::find_if(w->series.begin(), w->series.end(),
                                     [](const view::WhatIfSeries& s) { return s.algorithm == "pairwise"; });
  REQUIRE(pairwise != w->series.end());
  CHECK(pairwise->priced);
  for (const auto& f : w->fastest) CHECK(f != "pairwise");
  // At a cluster's size a ring's 4095 steps lose to the node-aware algorithms.
  CHECK(w->fastest.back() != "ring");

  // A pricing told to stop, stops; too many ranks are an error that says what to give.
  view::WhatIfProgress stop;
  stop.cancel = true;
  CHECK_FALSE(view::build_what_if(q, "/nonexistent-collscope-config", &stop).ok());
  q.ranks = view::kWhatIfMaxRanks + 1;
  auto big = view::build_what_if(q, "/nonexistent-collscope-config");
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().format().find("give 1 to 65536 ranks") != std::string::npos);
  q.topology = "this-machine";
  q.nodes = 0;
  q.ranks = 2000;
  auto cpu = view::build_what_if(q, "/nonexistent-collscope-config");
  REQUIRE_FALSE(cpu.ok());
  CHECK_MESSAGE(cpu.error().format().find("choose a topology of devices") != std::string::npos, cpu.error().format());
}

TEST_CASE("gui views: the list of keys is the README's table, row for row") {
  std::ifstream in(std::string(COLLSCOPE_SOURCE_DIR) + "/README.md");
  REQUIRE(in.good());
  std::vector<std::pair<std::string, std::string>> rows;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "| key | action |") {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("|---", 0) == 0) continue;
    if (line.empty() || line[0] != '|') break;
    const auto mid = line.find(" | ");
    REQUIRE(mid != std::string::npos);
    rows.emplace_back(line.substr(2, mid - 2), line.substr(mid + 3, line.size() - mid - 5));
  }
  const auto& keys = view::key_help();
  REQUIRE(rows.size() == keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    CAPTURE(i);
    CHECK(rows[i].first == keys[i].keys);
    CHECK(rows[i].second == keys[i].action);
  }
}

TEST_CASE("gui views: 256 colours for a GIF, chosen by how often they appear") {
  // A frame of three flat colours: each comes back exactly.
  std::vector<std::uint8_t> flat;
  const std::uint8_t cols[3][3] = {{10, 20, 30}, {250, 214, 64}, {200, 90, 40}};
  for (int i = 0; i < 3000; ++i)
    for (int c = 0; c < 3; ++c) flat.push_back(cols[i % 3][c]), c == 2 ? flat.push_back(255) : void();
  view::Quantizer q;
  q.sample(flat);
  q.build();
  REQUIRE(q.palette().size() == 4 * 3);  // three colours, padded to a power of two
  const auto idx = q.map(flat);
  REQUIRE(idx.size() == 3000);
  for (std::size_t p = 0; p < idx.size(); ++p)
    for (int c = 0; c < 3; ++c) CHECK(q.palette()[3 * idx[p] + static_cast<std::size_t>(c)] == cols[p % 3][c]);

  // A gradient of 4096 colours: 256 entries, the most frequent kept, every pixel near one.
  std::vector<std::uint8_t> grad;
  for (int i = 0; i < 4096; ++i)
    for (int rep = 0; rep < 1 + (i % 7 == 0 ? 20 : 0); ++rep)
      grad.insert(grad.end(), {static_cast<std::uint8_t>(i & 255), static_cast<std::uint8_t>((i >> 4) & 255),
                               static_cast<std::uint8_t>(i >> 4), 255});
  view::Quantizer g;
  g.sample(grad);
  g.build();
  REQUIRE(g.palette().size() == 256 * 3);
  const auto gi = g.map(grad);
  double err = 0;
  for (std::size_t p = 0; p < gi.size(); ++p)
    for (int c = 0; c < 3; ++c)
      err += std::abs(static_cast<int>(g.palette()[3 * gi[p] + static_cast<std::size_t>(c)]) -
                      grad[4 * p + static_cast<std::size_t>(c)]);
  CHECK(err / static_cast<double>(gi.size() * 3) < 24);  // mean error per channel
}

TEST_CASE("gui views: a GIF of frames, in one palette, that reads back as so many frames") {
#if defined(COLLSCOPE_HAVE_CGIF)
  const int w = 64, h = 48;
  std::vector<std::vector<std::uint8_t>> frames;
  for (int k = 0; k < 5; ++k) {
    std::vector<std::uint8_t> f(static_cast<std::size_t>(w * h * 4), 30);
    for (int y = 0; y < h; ++y)
      for (int x = k * 10; x < k * 10 + 10; ++x) {
        auto* p = &f[static_cast<std::size_t>((y * w + x) * 4)];
        p[0] = 250, p[1] = 214, p[2] = 64, p[3] = 255;
      }
    frames.push_back(std::move(f));
  }
  view::Quantizer q;
  for (const auto& f : frames) q.sample(f);
  q.build();
  view::GifEncoder gif;
  REQUIRE(gif.start(w, h, q).ok());
  for (const auto& f : frames) REQUIRE(gif.add(f, 50).ok());
  auto bytes = gif.finish();
  REQUIRE(bytes.ok());
  const auto info = view::read_gif_info(*bytes);
  CHECK(info.frames == 5);
  CHECK(info.width == w);
  CHECK(info.height == h);
  // Cut short or damaged, it is not taken for a GIF.
  CHECK(view::read_gif_info(bytes->substr(0, bytes->size() / 2)).frames == -1);
  CHECK(view::read_gif_info("PNG....").frames == -1);
#else
  view::GifEncoder gif;
  view::Quantizer q;
  auto st = gif.start(8, 8, q);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().id == "gui.gif_unavailable");
#endif
}

TEST_CASE("gui views: a split group's call names its part, and its captions speak world ranks") {
  auto sc =
      parse_scenario(R"({"version": 1, "ranks": 8, "dtype": "int32", "buffers": {"g": {"count": 4, "init": "rank"}},
    "groups": {"tp": {"split": "rank / 4"}},
    "program": [{"op": "allreduce", "buffer": "g", "group": "tp", "algorithm": "flat", "caption": "tensor parallel"}]})",
                     "split.json");
  REQUIRE(sc.ok());
  auto run = run_lesson(*sc, "cpu", 256ull << 20);
  REQUIRE(run.ok());
  const Schedule& s = (*run)->schedule;
  REQUIRE(s.calls.size() == 2);
  const auto c = build_caption(**run, s.calls[1].first_step);
  // Both parts share their steps: the caption names the two calls and their ranks.
  CHECK(s.calls[0].first_step == s.calls[1].first_step);
  CHECK_MESSAGE(c.call.find("calls 1 and 2 of 2: allreduce, flat, 4 ranks, count 4, sum, group tp, parts 0 and 1 at "
                            "once: {0-3} and {4-7}") == 0,
                c.call);
  CHECK_MESSAGE(c.caption.find("rank 4 (tp rank 0) adds the buffer of rank 5 (tp rank 1)") != std::string::npos,
                c.caption);
  CHECK(c.verdict.find("postcondition of allreduce (call 0, 2 parts)") != std::string::npos);
}

namespace {

std::shared_ptr<LessonRun> program_run(const std::string& json) {
  auto sc = parse_scenario(json, "program.json");
  REQUIRE_MESSAGE(sc.ok(), (sc.ok() ? "" : sc.error().format()));
  auto run = run_lesson(*sc, "cpu");
  REQUIRE_MESSAGE(run.ok(), (run.ok() ? "" : run.error().format()));
  return *run;
}

std::shared_ptr<LessonRun> lesson_run(const std::string& name) {
  auto sc = load_scenario(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name);
  REQUIRE_MESSAGE(sc.ok(), (sc.ok() ? "" : sc.error().format()));
  auto run = run_lesson(*sc, "cpu");
  REQUIRE_MESSAGE(run.ok(), (run.ok() ? "" : run.error().format()));
  return *run;
}

// Cells of buffer `buf` on every rank after `applied` steps, coloured in `scope`.
std::vector<std::vector<Cell>> cells_of(const std::shared_ptr<LessonRun>& run, std::int32_t buf, std::int32_t applied,
                                        ColourScope scope) {
  MemoryTimeline mem(run);
  ContributionCursor cur(run->schedule, scope);
  cur.seek(applied);
  auto m = mem.at(applied);
  REQUIRE(m.ok());
  auto v = build_cells(
      run->schedule, *m, [&](auto r, auto b, auto i) { return cur.ranks_of(r, b, i); }, applied);
  std::vector<std::vector<Cell>> out;
  for (const auto& rc : v.ranks)
    for (const auto& row : rc.rows)
      if (row.buf == buf) out.push_back(row.cells);
  return out;
}

}  // namespace

TEST_CASE("gui views: colours count the program's inputs across calls, per call they start over") {
  // A hierarchical all-reduce written as three calls: inside each node of 4, across the
  // nodes, inside each node again. Every cell ends with the sum of all 8 ranks.
  const std::string hier = R"({"version": 1, "ranks": 8, "buffers": {"x": {"count": 8, "init": "rank_index"}},
    "groups": {"node": {"split": "rank / 4"}, "across": {"split": "rank % 4"}},
    "program": [
      {"op": "reduce_scatter", "buffer": "x", "group": "node"},
      {"op": "allreduce", "buffer": "x", "group": "across"},
      {"op": "allgather", "buffer": "x", "group": "node"}]})";
  for (const std::string& which : {std::string("hierarchical"), std::string("two halves")}) {
    CAPTURE(which);
    auto run = which == "hierarchical" ? program_run(hier) : lesson_run("11-allreduce-in-two-halves.json");
    const Schedule& s = run->schedule;
    REQUIRE(s.calls.size() >= 2);
    const auto n = static_cast<std::int32_t>(s.steps.size());
    const std::int32_t x = s.find_buffer("x");
    REQUIRE(x >= 0);
    // Across the program: every cell of every rank holds every rank's input at the end.
    const auto whole = cells_of(run, x, n, ColourScope::program);
    REQUIRE(whole.size() == static_cast<std::size_t>(s.ranks));
    for (std::size_t r = 0; r < whole.size(); ++r)
      for (const auto& c : whole[r]) {
        CHECK(c.colour.coverage == Coverage::complete);
        CHECK(static_cast<std::int32_t>(c.ranks.size()) == s.ranks);
      }
    // Per call: the last call (an all-gather) only moves finished blocks, so each cell
    // holds the one rank it came from in that call; none is gold.
    const auto per_call = cells_of(run, x, n, ColourScope::call);
    for (const auto& row : per_call)
      for (const auto& c : row) {
        CHECK(c.colour.coverage != Coverage::complete);
        CHECK(c.ranks.size() == 1);
      }
    // At the start of the last call the program view still remembers what the earlier
    // calls gathered (finished blocks are gold); per call every cell starts as one rank's.
    const std::int32_t last = s.calls.back().first_step;
    std::size_t gold = 0;
    for (const auto& row : cells_of(run, x, last, ColourScope::program))
      for (const auto& c : row) gold += c.colour.coverage == Coverage::complete;
    CHECK(gold >= static_cast<std::size_t>(s.ranks));
    for (const auto& row : cells_of(run, x, last, ColourScope::call))
      for (const auto& c : row) CHECK(c.ranks.size() == 1);
    // Stepping back and forth gives the same sets as going straight there.
    ContributionCursor cur(s, ColourScope::program);
    ContributionCursor fresh(s, ColourScope::program);
    cur.seek(n);
    cur.seek(1);
    fresh.seek(1);
    for (std::int32_t r = 0; r < s.ranks; ++r)
      for (std::uint64_t i = 0; i < 8; ++i) CHECK(cur.ranks_of(r, x, i) == fresh.ranks_of(r, x, i));
  }
}

#include "gui/view/canvas.h"

namespace {

// A font whose glyphs are all 0.55 of its size wide: close enough to DejaVu Sans.
float measure_text(float size, const std::string& text) { return size * 0.55f * static_cast<float>(text.size()); }

// Cells after `k` steps, coloured across the program.
CellsView cells_after(const std::shared_ptr<LessonRun>& run, MemoryTimeline& mem, ContributionCursor& cur,
                      std::int32_t k) {
  cur.seek(k);
  auto m = mem.at(k);
  REQUIRE(m.ok());
  return build_cells(
      run->schedule, *m, [&](auto r, auto b, auto i) { return cur.ranks_of(r, b, i); }, k);
}

}  // namespace

TEST_CASE("gui views: every box, cell, arrow and token stays on the canvas, for lessons and window sizes") {
  std::vector<std::pair<std::string, std::shared_ptr<LessonRun>>> runs;
  for (const char* name : {"00-allreduce-ring.json", "09-broadcast-algorithms.json", "13-send-recv.json",
                           "19-pipeline-parallel.json", "21-hybrid-parallel.json", "26-fsdp-prefetch.json"})
    runs.emplace_back(name, lesson_run(name));
  runs.emplace_back("allreduce tree 8", quick_run(Collective::allreduce, "tree", 8, 16));
  runs.emplace_back("alltoall 16", quick_run(Collective::alltoall, "auto", 16, 32));
  runs.emplace_back("allreduce ring 64", quick_run(Collective::allreduce, "ring", 64, 64));
  struct Size {
    float w, h, font, scale;
  };
  const Size sizes[] = {
      {1200, 560, 16, 1}, {640, 360, 13, 1}, {300, 200, 13, 1}, {2400, 1300, 32, 2}, {900, 120, 13, 1}};
  std::size_t badges = 0;
  for (const auto& [name, run] : runs) {
    CAPTURE(name);
    const Schedule& s = run->schedule;
    MemoryTimeline mem(run);
    ContributionCursor cur(s);
    const auto n = static_cast<std::int32_t>(s.steps.size());
    for (std::int32_t k = 0; k <= n; k += std::max(1, n / 12)) {
      CAPTURE(k);
      const auto cv = cells_after(run, mem, cur, k);
      ContributionCursor before(s);
      before.seek(k);
      const auto arrows = build_arrows(s, k, [&](auto r, auto b, auto i) { return before.ranks_of(r, b, i); });
      const std::int32_t call = k < n ? s.steps[static_cast<std::size_t>(k)].call : 0;
      for (const Size& z : sizes) {
        CAPTURE(z.w);
        CAPTURE(z.h);
        const Vec2 origin{37, 21};
        const float legend_h = z.font * 1.3f;
        const auto g = canvas_geometry(s, cv, call, origin, {z.w, z.h}, legend_h, z.font, z.scale, measure_text);
        const Rect canvas{origin, {origin.x + z.w, origin.y + z.h}};
        // The area for boxes and arrows is the canvas above the legend.
        CHECK(canvas.contains(g.area.min));
        CHECK(canvas.contains(g.area.max));
        CHECK(g.area.max.y <= origin.y + z.h - legend_h + 0.01f);
        for (std::int32_t r = 0; r < s.ranks; ++r) {
          const Rect b = g.box(r);
          CHECK(g.area.contains(b.min));
          CHECK(g.area.contains(b.max));
        }
        for (const auto& rc : cv.ranks)
          for (std::size_t ri = 0; ri < rc.rows.size(); ++ri)
            for (std::size_t c = 0; c < rc.rows[ri].cells.size(); ++c) {
              const Rect cr = g.cell(rc.rank, ri, c, rc.rows[ri].cells.size());
              const Rect b = g.box(rc.rank);
              REQUIRE(b.contains(cr.min));
              REQUIRE(b.contains(cr.max));
            }
        for (const auto& a : arrows) {
          const auto p = arrow_path(g, cv, a, false);
          CHECK(g.area.contains(p.p0));
          CHECK(g.area.contains(p.c));
          CHECK(g.area.contains(p.p1));
          for (const Vec2& h : p.head) CHECK(g.area.contains(h));
          for (float t = 0; t <= 1.0f; t += 0.05f) REQUIRE(g.area.contains(token_on(p, t).at));
        }
        for (const auto& b : compute_badges(g, arrows, measure_text)) {
          CHECK(g.box(b.rank).contains(b.rect.min));
          CHECK(g.box(b.rank).contains(b.rect.max));
          CHECK(b.text.find("compute") == 0);
          ++badges;
        }
      }
    }
  }
  CHECK(badges > 0);  // the FSDP lesson's compute spans are named, not hollow circles
}

TEST_CASE("gui views: an arrow between boxes at the canvas edge is pulled in, its token on the drawn curve") {
  auto run = quick_run(Collective::allreduce, "ring", 2, 4);
  MemoryTimeline mem(run);
  ContributionCursor cur(run->schedule);
  const auto cv = cells_after(run, mem, cur, 0);
  const auto arrows = build_arrows(run->schedule, 0, [&](auto r, auto b, auto i) { return cur.ranks_of(r, b, i); });
  REQUIRE(arrows.size() == 2);
  auto g = canvas_geometry(run->schedule, cv, 0, {10, 10}, {1400, 700}, 16, 13, 1, measure_text);
  // Both boxes against the top edge, side by side: the arrow from right to left bends
  // up, over the edge, unless it is kept in.
  g.layout.boxes[0].centre = {g.layout.box.x / 2, g.layout.box.y / 2};
  g.layout.boxes[1].centre = {1400 - g.layout.box.x / 2, g.layout.box.y / 2};
  bool clipped = false;
  for (const auto& a : arrows) {
    const auto p = arrow_path(g, cv, a, false);
    clipped |= p.clipped;
    CHECK(g.area.contains(p.c));
    for (const Vec2& h : p.head) CHECK(g.area.contains(h));
    // The token follows the curve that is drawn (control point p.c), from p0 to p1.
    const auto start = token_on(p, 0).at, end = token_on(p, 0.99f).at;
    CHECK(std::hypot(start.x - p.p0.x, start.y - p.p0.y) < 0.01f);
    CHECK(std::hypot(end.x - p.p1.x, end.y - p.p1.y) < 0.01f);
    CHECK(token_on(p, 0.99f).landed);
    for (float t = 0; t <= 1.0f; t += 0.05f) CHECK(g.area.contains(token_on(p, t).at));
  }
  CHECK(clipped);
}

TEST_CASE("gui views: scratch buffers have rows only while the step shown uses them, marked as scratch") {
  // Find lessons whose algorithms make scratch space ("~sum#4", "~ring-partial#2").
  std::size_t with_scratch = 0;
  for (Collective c : {Collective::allreduce, Collective::reduce, Collective::reduce_scatter})
    for (const auto& algo : algorithm_names(c)) {
      auto run = quick_run(c, algo, 5, 10);
      const Schedule& s = run->schedule;
      bool any = false;
      for (const auto& b : s.buffers) any |= b.scratch;
      if (!any) continue;
      ++with_scratch;
      CAPTURE(algo);
      MemoryTimeline mem(run);
      ContributionCursor cur(s);
      const auto n = static_cast<std::int32_t>(s.steps.size());
      std::optional<CellsView> played;
      for (std::int32_t k = 0; k <= n; ++k) {
        const auto cv = cells_after(run, mem, cur, k);
        const auto shown = buffers_shown(s, k);
        for (const auto& rc : cv.ranks) {
          CHECK(rc.rows.size() <= cv.rows_per_box);
          for (const auto& row : rc.rows) {
            CHECK(row.scratch == s.buffers[static_cast<std::size_t>(row.buf)].scratch);
            if (!row.scratch) continue;
            CHECK(shown[static_cast<std::size_t>(row.buf)]);
            // The step that runs next, or the one that just ran, reads or writes it.
            bool used = false;
            for (std::int32_t st : {k - 1, k})
              if (st >= 0 && st < n)
                for (const auto& t : s.steps[static_cast<std::size_t>(st)].transfers)
                  used |= t.count > 0 && (t.src.buf == row.buf || t.dst.buf == row.buf ||
                                          (t.action == Action::reduce_copy && t.aux.buf == row.buf));
            CHECK(used);
          }
        }
        // Every user buffer always has its row.
        for (const auto& rc : cv.ranks)
          for (std::size_t b = 0; b < s.buffers.size(); ++b)
            if (!s.buffers[b].scratch)
              CHECK(std::any_of(rc.rows.begin(), rc.rows.end(),
                                [&](const BufferRow& r) { return r.buf == static_cast<std::int32_t>(b); }));
        // Playing forward gives the same rows as building afresh, as scratch rows come and go.
        if (played) {
          cur.seek(k);
          auto m = mem.at(k);
          REQUIRE(m.ok());
          advance_cells(
              *played, s, *m, [&](auto r, auto b, auto i) { return cur.ranks_of(r, b, i); }, k - 1);
        } else {
          played = cv;
        }
        REQUIRE(played->ranks.size() == cv.ranks.size());
        for (std::size_t r = 0; r < cv.ranks.size(); ++r) {
          REQUIRE(played->ranks[r].rows.size() == cv.ranks[r].rows.size());
          for (std::size_t i = 0; i < cv.ranks[r].rows.size(); ++i) {
            CHECK(played->ranks[r].rows[i].buf == cv.ranks[r].rows[i].buf);
            REQUIRE(played->ranks[r].rows[i].cells.size() == cv.ranks[r].rows[i].cells.size());
            for (std::size_t c = 0; c < cv.ranks[r].rows[i].cells.size(); ++c)
              CHECK(played->ranks[r].rows[i].cells[c].ranks == cv.ranks[r].rows[i].cells[c].ranks);
          }
        }
      }
      // At the end no step uses scratch space: only the user's buffers are left.
      for (const auto& rc : cells_after(run, mem, cur, n).ranks)
        for (const auto& row : rc.rows) CHECK_FALSE(row.scratch);
    }
  CHECK(with_scratch > 0);
}

TEST_CASE("gui views: the timeline names every rank up to 16 and beyond, labels never overlapping") {
  for (std::int32_t ranks : {2, 4, 8, 12, 16, 24, 32, 64})
    for (float height : {100.0f, 140.0f, 200.0f, 400.0f})
      for (float font : {13.0f, 16.0f, 26.0f}) {
        CAPTURE(ranks);
        CAPTURE(height);
        CAPTURE(font);
        const float row_h = height / static_cast<float>(ranks);
        const auto l = timeline_labels(ranks, row_h, font);
        CHECK(l.size >= std::min(font, kMinTimelineLabelPx));
        CHECK(l.size <= font);
        // Up to 16 ranks on a timeline of 100 pixels or more, every rank has its label.
        if (ranks <= 16) CHECK(l.labels.size() == static_cast<std::size_t>(ranks));
        for (std::size_t i = 0; i < l.labels.size(); ++i) {
          CHECK(l.labels[i].rank == static_cast<std::int32_t>(i) * l.every);
          CHECK(l.labels[i].text.find(std::to_string(l.labels[i].rank)) != std::string::npos);
          CHECK(l.labels[i].y >= 0);
          CHECK(l.labels[i].y + l.size <= height + 0.01f);
          if (i > 0) CHECK(l.labels[i].y >= l.labels[i - 1].y + l.size - 0.01f);
        }
        // Every `every`-th rank is named (the last group's label only where it fits).
        CHECK(static_cast<std::int32_t>(l.labels.size()) >= ranks / l.every);
      }
}

TEST_CASE("gui views: the Parameters panel names a lesson the parameters cannot describe") {
  auto p2p = lesson_run("13-send-recv.json");
  auto sum = summarise_lesson(p2p->scenario, p2p->schedule);
  CHECK_FALSE(sum.single_collective);
  CHECK(sum.title == p2p->scenario.title);
  REQUIRE(sum.lines.size() >= 2);
  CHECK(sum.lines[0] == std::to_string(p2p->schedule.ranks) + " ranks, " + std::string(name_of(p2p->schedule.dtype)));
  bool ops = false;
  for (const auto& l : sum.lines)
    ops |= l.find("point-to-point and local ops: ") == 0 && l.find("send") != std::string::npos;
  CHECK(ops);
  for (const auto& l : sum.lines) CHECK(l.find("count 0") == std::string::npos);
  auto halves = lesson_run("11-allreduce-in-two-halves.json");
  sum = summarise_lesson(halves->scenario, halves->schedule);
  CHECK_FALSE(sum.single_collective);
  bool both = false;
  for (const auto& l : sum.lines)
    both |= l.find("2 collectives: reduce_scatter (ring), allgather (ring)") != std::string::npos;
  CHECK(both);
  auto one = quick_run(Collective::broadcast, "auto", 4, 8);
  CHECK(summarise_lesson(one->scenario, one->schedule).single_collective);
}

TEST_CASE("gui views: one numbering for steps: the caption's position is step_position") {
  CHECK(step_position(0, 6) == "step 1 of 6");
  CHECK(step_position(5, 6) == "step 6 of 6");
  CHECK(step_position(6, 6) == "done: all 6 steps ran");
  CHECK(step_position(0, 0) == "no steps");
  auto run = quick_run(Collective::allreduce, "ring", 4, 8);
  const auto n = static_cast<std::int32_t>(run->schedule.steps.size());
  for (std::int32_t k = 0; k <= n; ++k) CHECK(build_caption(*run, k).position == step_position(k, n));
}

TEST_CASE("gui views: per call, the parts of a split group that share steps are coloured together") {
  auto run = lesson_run("21-hybrid-parallel.json");
  const Schedule& s = run->schedule;
  const std::int32_t x_full = s.find_buffer("x_full");
  REQUIRE(x_full >= 0);
  // Before the all-gather's last step, inside its call: both tensor-parallel copies have
  // moved shards in the steps so far, each inside its own copy.
  REQUIRE(s.calls[0].num_steps == 2);
  REQUIRE(s.calls[1].first_step == s.calls[0].first_step);
  const auto rows = cells_of(run, x_full, s.calls[0].first_step + 1, ColourScope::call);
  REQUIRE(rows.size() == 8);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    CAPTURE(r);
    std::set<std::int32_t> seen;
    for (const auto& c : rows[r]) seen.insert(c.ranks.begin(), c.ranks.end());
    const auto base = static_cast<std::int32_t>(r < 4 ? 0 : 4);
    CHECK(seen.size() >= 2);
    for (const std::int32_t q : seen) CHECK((q >= base && q < base + 4));
  }
}
