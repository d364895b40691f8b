#include "gui/export_panel.h"

#include <imgui.h>
#include <imgui_stdlib.h>

namespace collscope::app {

ExportRequest ExportPanel::draw() {
  ExportRequest r;
  const float field = ImGui::GetContentRegionAvail().x * 0.55f;
  ImGui::SetNextItemWidth(field);
  ImGui::InputText("##trace", &trace_);
  ImGui::SameLine();
  if (ImGui::Button("Save trace")) r = {ExportRequest::Kind::trace, trace_};
  ImGui::SetNextItemWidth(field);
  ImGui::InputText("##png", &png_);
  ImGui::SameLine();
  if (ImGui::Button("Save PNG")) r = {ExportRequest::Kind::png, png_};
  ImGui::SetNextItemWidth(field);
  ImGui::InputText("##folder", &folder_);
  ImGui::SameLine();
  if (ImGui::Button("PNG per step")) r = {ExportRequest::Kind::sequence, folder_};
  if (!message_.empty()) ImGui::TextWrapped("%s", message_.c_str());
  return r;
}

}  // namespace collscope::app
