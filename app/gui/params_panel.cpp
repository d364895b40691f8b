#include "gui/params_panel.h"

#include <imgui.h>

#include <algorithm>

#include "collscope/algorithms.h"
#include "collscope/backend.h"

namespace collscope::app {

ParamsPanel::ParamsPanel() {
  for (const auto& b : make_backends())
    if (b->info().available) {
      backends_.push_back(b->info().name);
      if (b->info().caps.multi_process) processes_.push_back(b->info().name);
    }
}

void ParamsPanel::adopt(const Scenario& sc, const Schedule& s, const std::string& backend) {
  backend_ = backend;
  summary_ = view::summarise_lesson(sc, s);
  // Only a lesson of one collective is what the parameters describe; for any other the
  // panel names the lesson and keeps the parameters of the last collective.
  if (!summary_.single_collective) return;
  const auto& a = s.calls.front().args;
  q_.coll = a.coll;
  q_.algorithm = s.calls.front().auto_picked ? "auto" : s.calls.front().algorithm;
  q_.ranks = a.ranks;
  q_.count = a.count;
  q_.dtype = s.dtype;
  q_.op = a.op;
  q_.root = a.root;
  q_.in_place = a.in_place;
}

namespace {
template <class T, std::size_t N>
bool enum_combo(const char* label, T& value, const T (&all)[N]) {
  bool changed = false;
  if (ImGui::BeginCombo(label, std::string(name_of(value)).c_str())) {
    for (T v : all)
      if (ImGui::Selectable(std::string(name_of(v)).c_str(), v == value)) {
        changed = v != value;
        value = v;
      }
    ImGui::EndCombo();
  }
  return changed;
}
}  // namespace

std::optional<Scenario> ParamsPanel::draw() {
  bool changed = false;
  if (!summary_.title.empty() && !summary_.single_collective) {
    ImGui::TextWrapped("This lesson: %s", summary_.title.c_str());
    for (const auto& l : summary_.lines) ImGui::BulletText("%s", l.c_str());
    ImGui::TextDisabled("a single collective of your own:");
  }
  ImGui::PushItemWidth(ImGui::GetFontSize() * 9);
  if (enum_combo("collective", q_.coll, kAllCollectives)) {
    changed = true;
    q_.algorithm = "auto";  // the old algorithm may not exist for the new collective
  }
  if (ImGui::BeginCombo("algorithm", q_.algorithm.c_str())) {
    std::vector<std::string> names{"auto"};
    for (auto& n : algorithm_names(q_.coll)) names.push_back(n);
    for (const auto& n : names)
      if (ImGui::Selectable(n.c_str(), n == q_.algorithm)) {
        changed |= n != q_.algorithm;
        q_.algorithm = n;
      }
    ImGui::EndCombo();
  }
  int ranks = q_.ranks;
  if (ImGui::SliderInt("ranks", &ranks, 1, 64)) {
    q_.ranks = ranks;
    q_.root = std::min(q_.root, q_.ranks - 1);
    changed = true;
  }
  int count = static_cast<int>(std::min<std::uint64_t>(q_.count, 1u << 30));
  if (ImGui::InputInt("count", &count, 1, 16, ImGuiInputTextFlags_EnterReturnsTrue) && count >= 0) {
    q_.count = static_cast<std::uint64_t>(count);
    changed = true;
  }
  changed |= enum_combo("dtype", q_.dtype, kAllDTypes);
  if (is_reducing(q_.coll)) changed |= enum_combo("op", q_.op, kAllReduceOps);
  if (has_root(q_.coll)) {
    int root = q_.root;
    if (ImGui::SliderInt("root", &root, 0, std::max(0, q_.ranks - 1))) {
      q_.root = root;
      changed = true;
    }
  }
  // A backend of processes says how many it starts: one per rank, on this machine.
  auto label = [&](const std::string& b) {
    const bool procs = std::find(processes_.begin(), processes_.end(), b) != processes_.end();
    return procs ? b + " (" + std::to_string(q_.ranks) + " processes on this machine)" : b;
  };
  if (ImGui::BeginCombo("backend", label(backend_).c_str())) {
    for (const auto& b : backends_)
      if (ImGui::Selectable(label(b).c_str(), b == backend_)) {
        changed |= b != backend_;
        backend_ = b;
      }
    ImGui::EndCombo();
  }
  ImGui::PopItemWidth();
  if (!error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.4f, 0.4f, 1));
    ImGui::TextWrapped("%s", error_.c_str());
    ImGui::PopStyleColor();
  }
  if (!changed) return std::nullopt;
  auto sc = scenario_from_spec(q_);
  if (!sc) {
    error_ = sc.error().format();
    return std::nullopt;
  }
  error_.clear();
  summary_ = {};
  sc->title = std::string(name_of(q_.coll)) + " (" + q_.algorithm + "), " + std::to_string(q_.ranks) + " ranks";
  return std::move(*sc);
}

}  // namespace collscope::app
