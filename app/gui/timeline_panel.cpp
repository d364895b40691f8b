#include "gui/timeline_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "gui/style.h"

namespace collscope::app {

void TimelinePanel::band(Band& b, const view::TimelineView& tl, std::uint64_t version, std::int32_t current,
                         const Highlight& hl, float scale, ImVec2 o, float label_w, float w, float h) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float row_h = h / static_cast<float>(std::max(1, tl.ranks));
  const float x0 = o.x + label_w;
  auto xpix = [&](float x) { return x0 + x * w; };
  // The current step, shaded.
  for (std::size_t i = 0; i < tl.marks.size(); ++i)
    if (tl.marks[i].step == current) {
      const float e = i + 1 < tl.marks.size() ? tl.marks[i + 1].x : 1.0f;
      dl->AddRectFilled({xpix(tl.marks[i].x), o.y}, {xpix(e), o.y + h}, IM_COL32(255, 255, 255, 28));
    }
  const float font = ImGui::GetFontSize();
  // Every rank named (view/timeline.h): labels as tall as their rows, down to a floor.
  const auto labels = view::timeline_labels(tl.ranks, row_h, font);
  for (const auto& l : labels.labels)
    dl->AddText(ImGui::GetFont(), labels.size, {o.x, o.y + l.y}, to_u32(view::rank_colour(l.rank)), l.text.c_str());
  // Thousands of transfers and step marks on a few hundred pixels: painted into one image,
  // drawn as one quad, so the software renderers of classroom laptops keep up.
  const auto width = std::max<std::int32_t>(1, static_cast<std::int32_t>(w));
  const bool repaint = b.pixels_of != version || b.width != width;
  if (repaint) {
    b.pixels = view::rasterise_timeline(tl, width, 8, static_cast<std::int32_t>(std::lround(2 * scale)));
    b.pixels_of = version;
    b.width = width;
  }
  if (repaint || b.lit_rank != hl.rank) {
    b.lit_rank = hl.rank;
    std::vector<ImU32> rgba(b.pixels.kind.size(), 0);
    const auto cols = static_cast<std::size_t>(b.pixels.width);
    const std::size_t row = cols * static_cast<std::size_t>(b.pixels.rows_per_rank);
    for (std::size_t i = 0; i < rgba.size(); ++i) {
      const std::uint8_t k = b.pixels.kind[i];
      if (k == 0) {  // a step mark where no transfer ran
        if (b.pixels.mark[i % cols] != 0) rgba[i] = IM_COL32(120, 120, 130, 140);
        continue;
      }
      const auto a = static_cast<Action>(k - 1);
      const view::Rgba c = is_reduction(a) ? kReduceColour : a == Action::scale ? kScaleColour : kCopyColour;
      rgba[i] = to_u32(c, static_cast<std::int32_t>(i / row) == hl.rank ? 1.0f : 0.7f);
    }
    b.image.upload(b.pixels.width, b.pixels.height, rgba);
  }
  dl->AddImage(b.image.id(), {x0, o.y}, {x0 + static_cast<float>(width), o.y + h});
  if (hl.transfer >= 0)  // the transfer hovered on the canvas or here, outlined on top
    for (const auto& sl : tl.slices)
      if (sl.step == hl.step && sl.transfer == hl.transfer) {
        const float y = o.y + row_h * static_cast<float>(sl.rank);
        dl->AddRect({xpix(sl.x0) - 1, y}, {std::max(xpix(sl.x1), xpix(sl.x0) + 1.5f * scale) + 1, y + row_h},
                    IM_COL32(255, 255, 255, 255), 0, 0, 1.5f * scale);
      }
}

void TimelinePanel::draw(const LessonState& lesson, view::Playback& pb, Highlight& hl, float scale) {
  const auto& tl = lesson.timeline();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (!lesson.run() || tl.ranks == 0 || tl.slices.empty()) {
    ImGui::TextDisabled("no measured transfers (nothing ran yet, or the run was a dry run)");
    return;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float label_w = ImGui::CalcTextSize("rank 00 ").x;
  const float axis_h = ImGui::GetTextLineHeight();
  const float w = std::max(10.0f, avail.x - label_w), h = std::max(10.0f, avail.y - axis_h);
  const float row_h = h / static_cast<float>(tl.ranks);
  const float x0 = o.x + label_w;
  band(main_, tl, lesson.run_version(), pb.applied, hl, scale, o, label_w, w, h);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f us", tl.t1_us - tl.t0_us);
  dl->AddText({x0 + w - ImGui::CalcTextSize(buf).x, o.y + h}, IM_COL32(180, 180, 185, 255), buf);
  dl->AddText({x0, o.y + h}, IM_COL32(180, 180, 185, 255),
              "0 (one clock for every rank; click a slice to jump to its step)");

  ImGui::InvisibleButton("timeline", {avail.x, avail.y});
  Highlight next;
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const auto rank = static_cast<std::int32_t>((m.y - o.y) / row_h);
    const float x = (m.x - x0) / w;
    const auto hit = view::slice_at(tl, rank, x, 4.0f / w);
    if (hit >= 0) {
      const auto& sl = tl.slices[static_cast<std::size_t>(hit)];
      next = {sl.rank, sl.step, sl.transfer};
      ImGui::BeginTooltip();
      ImGui::Text("step %d, transfer %d: rank %d %s from rank %d", sl.step + 1, sl.transfer, sl.rank,
                  sl.action == Action::reduce        ? "reduces data"
                  : sl.action == Action::reduce_copy ? "adds its own data to data"
                  : sl.action == Action::scale       ? "scales"
                                                     : "copies data",
                  sl.peer);
      ImGui::Text("%llu bytes in %.2f us (%.2f .. %.2f us)", static_cast<unsigned long long>(sl.bytes),
                  sl.t1_us - sl.t0_us, sl.t0_us - tl.t0_us, sl.t1_us - tl.t0_us);
      ImGui::EndTooltip();
      if (ImGui::IsItemClicked()) pb.jump(sl.step);
    } else if (ImGui::IsItemClicked()) {
      if (auto st = view::step_at(tl, x); st >= 0) pb.jump(st);
    }
    hl = next;
  } else if (hl.transfer >= 0) {
    hl.step = hl.transfer = -1;  // the canvas owns hl.rank while the pointer is there
  }
}

void TimelinePanel::draw_compare(const LessonState& lesson, const view::CompareModel& cmp, view::Playback& pb,
                                 Highlight& hl, float scale) {
  const auto& left = lesson.timeline();
  const view::LessonRun* right_run = &cmp.run(1);
  if (right_run != other_run_) {
    other_run_ = right_run;
    other_tl_ = view::build_timeline(right_run->schedule, right_run->outcome.record);
    ++other_version_;
  }
  if (!lesson.run() || left.slices.empty() || other_tl_.slices.empty()) return draw(lesson, pb, hl, scale);
  // One time axis: each run's band as wide as its share of the longer run's time.
  const double left_us = left.t1_us - left.t0_us, right_us = other_tl_.t1_us - other_tl_.t0_us;
  const double longest = std::max({left_us, right_us, 1e-9});
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float label_w = ImGui::CalcTextSize("rank 00 ").x, line = ImGui::GetTextLineHeight();
  const float w = std::max(10.0f, avail.x - label_w);
  const float band_h = std::max(10.0f, (avail.y - 3 * line) / 2);
  const view::TimelineView* tls[2] = {&left, &other_tl_};
  const double us[2] = {left_us, right_us};
  const Highlight none;
  for (int side = 0; side < 2; ++side) {
    const float y = o.y + static_cast<float>(side) * (band_h + line);
    const float bw = std::max(2.0f, static_cast<float>(static_cast<double>(w) * us[side] / longest));
    char head[160];
    std::snprintf(head, sizeof head, "%s%s: %s", cmp.side(side).algorithm.c_str(), side == 0 ? " (the lesson)" : "",
                  view::time_text(us[side]).c_str());
    dl->AddText({o.x + label_w, y}, IM_COL32(220, 220, 225, 255), head);
    band(side == 0 ? main_ : other_, *tls[side], side == 0 ? lesson.run_version() : other_version_,
         cmp.at(side, pb).applied, side == 0 ? hl : none, scale, {o.x, y + line}, label_w, bw, band_h - line);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s", view::time_text(longest).c_str());
  const float axis_y = o.y + 2 * (band_h + line);
  dl->AddText({o.x + label_w + w - ImGui::CalcTextSize(buf).x, axis_y}, IM_COL32(180, 180, 185, 255), buf);
  dl->AddText({o.x + label_w, axis_y}, IM_COL32(180, 180, 185, 255),
              "0 (one clock for both runs, every step's barrier and snapshot included; click to jump to a step)");
  ImGui::InvisibleButton("timeline", {avail.x, avail.y});
  if (ImGui::IsItemHovered() && ImGui::IsItemClicked()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int side = m.y < o.y + band_h + line ? 0 : 1;
    const float bw = static_cast<float>(static_cast<double>(w) * us[side] / longest);
    if (auto st = view::step_at(*tls[side], (m.x - o.x - label_w) / std::max(1.0f, bw)); st >= 0) pb.jump(st);
  }
}

}  // namespace collscope::app
