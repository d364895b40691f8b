#include "gui/what_if_panel.h"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "collscope/calibration.h"
#include "collscope/collective.h"
#include "collscope/model.h"
#include "collscope/topology.h"
#include "gui/style.h"
#include "gui/view/palette.h"

namespace collscope::app {

WhatIfPanel::WhatIfPanel() {
  topologies_.push_back("this-machine");
  for (const auto& t : topology_presets()) topologies_.push_back(t);
}

WhatIfPanel::~WhatIfPanel() {
  if (progress_) progress_->cancel = true;
}

void WhatIfPanel::start_on(const std::string& topology, std::int64_t nodes) {
  if (topology.empty()) return;
  auto it = std::find(topologies_.begin(), topologies_.end(), topology);
  if (it == topologies_.end()) it = topologies_.insert(topologies_.end(), topology);
  topology_ = static_cast<int>(it - topologies_.begin());
  q_.nodes = nodes;
}

void WhatIfPanel::follow(const view::LessonRun& run) {
  const Schedule& s = run.schedule;
  for (const auto& c : s.calls) {
    if (c.kind != CallKind::collective) continue;
    q_.coll = c.args.coll;
    q_.ranks = s.ranks;
    q_.dtype = s.dtype;
    q_.op = c.args.op;
    call_algorithm_ = c.algorithm;
    call_bytes_ = message_bytes(c.args.coll, s.ranks, c.args.count, s.dtype);
    return;
  }
  call_algorithm_.clear();
  call_bytes_ = 0;
}

void WhatIfPanel::start() {
  q_.topology = topologies_[static_cast<std::size_t>(topology_)];
  const view::WhatIfQuery q = q_;
  const std::string dir = user_config_dir();
  auto progress = std::make_shared<view::WhatIfProgress>();
  progress_ = progress;
  again_ = false;
  stale_ = false;
  pending_ = std::async(std::launch::async, [q, dir, progress] { return view::build_what_if(q, dir, progress.get()); });
}

void WhatIfPanel::settle() {
  if (pending_.valid()) {
    auto r = pending_.get();
    // A pricing stopped because the query changed leaves the picture as it was.
    if (r) shown_ = std::move(*r), error_.clear();
    else if (!progress_ || !progress_->cancel) error_ = r.error().format();
  }
}

void WhatIfPanel::draw(const LessonState& lesson, bool& open, float scale) {
  if (!open) return;
  const view::LessonRun* run = lesson.run();
  if (follow_lesson_ && run && lesson.run_version() != lesson_version_) {
    lesson_version_ = lesson.run_version();
    follow(*run);
    stale_ = true;  // kept until priced: the window may be folded this frame
  }
  bool changed = stale_;
  if (!shown_ && !pending_.valid() && error_.empty()) changed = true;

  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowSize({display.x * 0.6f, display.y * 0.6f}, ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowPos({display.x * 0.2f, display.y * 0.15f}, ImGuiCond_FirstUseEver);
  if (!ImGui::Begin("What if (W)", &open)) {
    ImGui::End();
    return;
  }
  changed |= controls();

  // A change while a pricing runs stops it, and the new query is priced once it has.
  if (changed && pending_.valid()) {
    again_ = true;
    if (progress_) progress_->cancel = true;
  } else if (changed) {
    start();
  }
  if (pending_.valid() && pending_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    settle();
    if (again_) start();
  }
  if (pending_.valid() && progress_) {
    const std::size_t total = progress_->total, done = progress_->done;
    ImGui::TextDisabled("pricing every algorithm at every size ... %d%%",
                        total > 0 ? static_cast<int>(100 * done / total) : 0);
  }
  if (!error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.4f, 0.4f, 1));
    ImGui::TextWrapped("%s", error_.c_str());
    ImGui::PopStyleColor();
  }
  if (!shown_ || shown_->bytes.size() < 2) {
    ImGui::End();
    return;
  }
  const view::WhatIf& w = *shown_;
  ImGui::TextDisabled("%s %s, %d ranks: %s%s%s", std::string(name_of(q_.coll)).c_str(),
                      std::string(name_of(q_.dtype)).c_str(), q_.ranks, w.model.c_str(), w.method.empty() ? "" : "; ",
                      w.method.c_str());

  plot(w, scale);
  ImGui::End();
}

// The topology, ranks and nodes to price for; true when one of them changed.
bool WhatIfPanel::controls() {
  bool changed = false;
  ImGui::PushItemWidth(ImGui::GetFontSize() * 8);
  if (ImGui::BeginCombo("topology", topologies_[static_cast<std::size_t>(topology_)].c_str())) {
    for (int i = 0; i < static_cast<int>(topologies_.size()); ++i)
      if (ImGui::Selectable(topologies_[static_cast<std::size_t>(i)].c_str(), i == topology_)) {
        changed |= i != topology_;
        topology_ = i;
      }
    ImGui::EndCombo();
  }
  // Back on this machine from a topology, the ranks its cpu model is offered.
  if (changed && topology_ == 0) q_.ranks = std::min(q_.ranks, view::kWhatIfLoweredRanks);
  ImGui::SameLine();
  int ranks = q_.ranks;
  if (ImGui::InputInt("ranks", &ranks, 1, 8, ImGuiInputTextFlags_EnterReturnsTrue)) {
    // This machine's cpu model prices lowered schedules; a topology, shapes beyond them.
    q_.ranks = std::clamp(ranks, 1, topology_ > 0 ? view::kWhatIfMaxRanks : view::kWhatIfLoweredRanks);
    changed = true;
  }
  ImGui::SameLine();
  int nodes = static_cast<int>(q_.nodes);
  if (topology_ > 0 && ImGui::InputInt("nodes", &nodes, 1, 4, ImGuiInputTextFlags_EnterReturnsTrue)) {
    q_.nodes = std::clamp(nodes, 0, view::kWhatIfMaxRanks);
    changed = true;
  }
  ImGui::SameLine();
  changed |= ImGui::Checkbox("follow the lesson", &follow_lesson_);
  ImGui::PopItemWidth();
  return changed;
}

// The predicted time of every algorithm against the size, the crossovers, and the
// lesson's own call on its curve.
void WhatIfPanel::plot(const view::WhatIf& w, float scale) {
  // The plot: log2 of the size across, log10 of the time up.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // An algorithm that runs another's steps is drawn under its curve: "rings = ring".
  auto legend = [](const view::WhatIfSeries& s) {
    if (!s.priced) return s.algorithm + " (no shape at this scale)";
    // The model has no cost per message (docs/TOPOLOGY.md): say where that flatters.
    const std::string low = priced_too_low(s.busiest_messages) ? " (too low: " + std::to_string(s.busiest_messages) +
                                                                     " messages a step; auto passes it over)"
                                                               : "";
    return (s.same_as.empty() ? s.algorithm : s.algorithm + " = " + s.same_as) + low;
  };
  float legend_w = ImGui::CalcTextSize("recursive_doubling  ").x;
  for (const auto& s : w.series) legend_w = std::max(legend_w, ImGui::CalcTextSize((legend(s) + "  ").c_str()).x);
  legend_w += 20 * scale;
  const float axis = ImGui::GetTextLineHeight() * 2.2f;
  const float x0 = o.x + axis * 1.6f, x1 = o.x + std::max(axis * 3, avail.x - legend_w);
  const float y0 = o.y + 4 * scale, y1 = o.y + std::max(axis * 3, avail.y - axis);
  double lo = 1e300, hi = 0;
  for (const auto& s : w.series)
    for (double v : s.us)
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  if (hi <= 0) return;
  const double llo = std::floor(std::log10(lo)), lhi = std::max(llo + 1, std::ceil(std::log10(hi)));
  const std::size_t n = w.bytes.size();
  auto px = [&](double i) { return x0 + static_cast<float>(i / static_cast<double>(n - 1)) * (x1 - x0); };
  auto py = [&](double us) { return y1 - static_cast<float>((std::log10(us) - llo) / (lhi - llo)) * (y1 - y0); };
  const ImU32 grid = IM_COL32(110, 110, 120, 90), text = ImGui::GetColorU32(ImGuiCol_Text);
  dl->AddRect({x0, y0}, {x1, y1}, grid);
  for (double e = llo; e <= lhi; e += 1) {
    const float y = py(std::pow(10.0, e));
    dl->AddLine({x0, y}, {x1, y}, grid);
    char label[32];
    std::snprintf(label, sizeof label,
                  e >= 6   ? "%.0f s"
                  : e >= 3 ? "%.0f ms"
                           : "%.0f us",
                  std::pow(10.0, e >= 6   ? e - 6
                                 : e >= 3 ? e - 3
                                          : e));
    dl->AddText({o.x, y - ImGui::GetTextLineHeight() / 2}, text, label);
  }
  const std::size_t stride = std::max<std::size_t>(1, n / 8);
  for (std::size_t i = 0; i < n; i += stride)
    dl->AddText({px(static_cast<double>(i)) - 10 * scale, y1 + 4 * scale}, text, view::size_label(w.bytes[i]).c_str());
  // Crossovers: where the fastest algorithm changes. Each label goes right of its line
  // (left where it would run into the legend), on the first line of text where it
  // overlaps no label before it.
  std::vector<std::vector<std::pair<float, float>>> rows;
  for (const auto& c : w.crossovers) {
    const float x = px(static_cast<double>(c.index) - 0.5);
    dl->AddLine({x, y0}, {x, y1}, IM_COL32(255, 214, 64, 150), 1.5f * scale);
    const std::string label = c.to + " from " + view::size_label(c.bytes);
    const float width = ImGui::CalcTextSize(label.c_str()).x;
    const float lx = x + 3 * scale + width > x1 ? x - 3 * scale - width : x + 3 * scale;
    std::size_t row = 0;
    for (; row < rows.size(); ++row)
      if (std::none_of(rows[row].begin(), rows[row].end(), [&](const auto& span) {
            return lx < span.second + 6 * scale && span.first < lx + width + 6 * scale;
          }))
        break;
    if (row == rows.size()) rows.emplace_back();
    rows[row].push_back({lx, lx + width});
    const float ly = y0 + 2 * scale + static_cast<float>(row) * ImGui::GetTextLineHeightWithSpacing();
    dl->AddText({lx, ly}, IM_COL32(255, 214, 64, 255), label.c_str());
  }
  for (std::size_t k = 0; k < w.series.size(); ++k) {
    const auto& s = w.series[k];
    const ImU32 col = to_u32(view::rank_colour(static_cast<std::int32_t>(k)));
    for (std::size_t i = 0; i + 1 < n; ++i)
      if (s.us[i] > 0 && s.us[i + 1] > 0)
        dl->AddLine({px(static_cast<double>(i)), py(s.us[i])}, {px(static_cast<double>(i + 1)), py(s.us[i + 1])}, col,
                    (s.algorithm == call_algorithm_ ? 3.0f : 2.0f) * scale);
    const float ly = y0 + static_cast<float>(k) * ImGui::GetTextLineHeightWithSpacing();
    dl->AddRectFilled({x1 + 8 * scale, ly + 4 * scale}, {x1 + 18 * scale, ly + 14 * scale}, col);
    dl->AddText({x1 + 22 * scale, ly}, text, legend(s).c_str());
  }
  // The lesson's call on its algorithm's curve.
  if (call_bytes_ > 0)
    for (const auto& s : w.series) {
      if (s.algorithm != call_algorithm_) continue;
      const auto at = view::place_on(w, call_bytes_);
      const std::size_t j = std::min(at.index + 1, n - 1);
      if (s.us[at.index] <= 0 || s.us[j] <= 0) break;
      const double us = std::pow(10.0, std::log10(s.us[at.index]) * (1 - at.frac) + std::log10(s.us[j]) * at.frac);
      const ImVec2 c{px(static_cast<double>(at.index) + at.frac), py(us)};
      dl->AddCircleFilled(c, 6 * scale, IM_COL32(255, 255, 255, 255));
      dl->AddText({c.x + 8 * scale, c.y - 8 * scale}, text, ("this lesson: " + view::size_label(call_bytes_)).c_str());
    }
  ImGui::Dummy(avail);
}

}  // namespace collscope::app
