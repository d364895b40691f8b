#include "gui/timeline_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "gui/style.h"

namespace collscope::app {

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
  auto xpix = [&](float x) { return x0 + x * w; };

  // The current step, shaded.
  for (std::size_t i = 0; i < tl.marks.size(); ++i)
    if (tl.marks[i].step == pb.applied) {
      const float e = i + 1 < tl.marks.size() ? tl.marks[i + 1].x : 1.0f;
      dl->AddRectFilled({xpix(tl.marks[i].x), o.y}, {xpix(e), o.y + h}, IM_COL32(255, 255, 255, 28));
    }
  for (const auto& m : tl.marks) dl->AddLine({xpix(m.x), o.y}, {xpix(m.x), o.y + h}, IM_COL32(120, 120, 130, 140), 1);
  const float font = ImGui::GetFontSize();
  // Every rank named (view/timeline.h): labels as tall as their rows, down to a floor.
  const auto labels = view::timeline_labels(tl.ranks, row_h, font);
  for (const auto& l : labels.labels)
    dl->AddText(ImGui::GetFont(), labels.size, {o.x, o.y + l.y}, to_u32(view::rank_colour(l.rank)), l.text.c_str());
  // Thousands of transfers on a few hundred pixels: painted into one image, drawn as one
  // quad, so the software renderers of classroom laptops keep up.
  const auto width = static_cast<std::int32_t>(w);
  const bool repaint = pixels_of_ != lesson.run_version() || pixels_width_ != width;
  if (repaint) {
    pixels_ = view::rasterise_timeline(tl, width, 8, static_cast<std::int32_t>(std::lround(2 * scale)));
    pixels_of_ = lesson.run_version();
    pixels_width_ = width;
  }
  if (repaint || lit_rank_ != hl.rank) {
    lit_rank_ = hl.rank;
    std::vector<ImU32> rgba(pixels_.kind.size(), 0);
    const std::size_t row = static_cast<std::size_t>(pixels_.width) * static_cast<std::size_t>(pixels_.rows_per_rank);
    for (std::size_t i = 0; i < rgba.size(); ++i) {
      const std::uint8_t k = pixels_.kind[i];
      if (k == 0) continue;
      const auto a = static_cast<Action>(k - 1);
      const view::Rgba c = is_reduction(a) ? kReduceColour : a == Action::scale ? kScaleColour : kCopyColour;
      rgba[i] = to_u32(c, static_cast<std::int32_t>(i / row) == hl.rank ? 1.0f : 0.7f);
    }
    image_.upload(pixels_.width, pixels_.height, rgba);
  }
  dl->AddImage(image_.id(), {x0, o.y}, {x0 + static_cast<float>(width), o.y + h});
  if (hl.transfer >= 0)  // the transfer hovered on the canvas or here, outlined on top
    for (const auto& sl : tl.slices)
      if (sl.step == hl.step && sl.transfer == hl.transfer) {
        const float y = o.y + row_h * static_cast<float>(sl.rank);
        dl->AddRect({xpix(sl.x0) - 1, y}, {std::max(xpix(sl.x1), xpix(sl.x0) + 1.5f * scale) + 1, y + row_h},
                    IM_COL32(255, 255, 255, 255), 0, 0, 1.5f * scale);
      }
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

}  // namespace collscope::app
