#include "gui/browser_panel.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <filesystem>

#include "cli.h"
#include "collscope/scenario.h"

namespace collscope::app {

void BrowserPanel::scan() {
  scanned_ = true;
  lessons_.clear();
  for (const auto& path : lesson_files()) {
    Entry e{path, std::filesystem::path(path).filename().string(), ""};
    // A lesson may fail on purpose (the deadlock one): it keeps its title, and its
    // error joins the description.
    if (auto h = read_heading(path)) {
      if (!h->title.empty()) e.title = h->title;
      e.description = h->description;
    }
    if (auto sc = load_scenario(path); !sc)
      e.description += (e.description.empty() ? "" : "\n\n") + sc.error().format();
    lessons_.push_back(std::move(e));
  }
}

std::optional<std::string> BrowserPanel::draw(const std::string& current_file) {
  if (!scanned_) scan();
  std::optional<std::string> pick;
  for (const auto& e : lessons_) {
    const bool selected = std::filesystem::path(e.path).filename() == std::filesystem::path(current_file).filename();
    if (ImGui::Selectable(e.title.c_str(), selected)) pick = e.path;
    if (ImGui::IsItemHovered() && !e.description.empty()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
      ImGui::TextUnformatted(e.description.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
  }
  if (lessons_.empty()) ImGui::TextDisabled("no lessons found in %s", scenario_dir().c_str());
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("Open").x * 2);
  const bool enter =
      ImGui::InputTextWithHint("##file", "path/to/scenario.json", &path_field_, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Open") || enter) && !path_field_.empty()) pick = path_field_;
  return pick;
}

}  // namespace collscope::app
