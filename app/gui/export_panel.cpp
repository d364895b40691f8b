#include "gui/export_panel.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include "gui/view/movie.h"

namespace collscope::app {

ExportRequest ExportPanel::draw(const ExportProgress& progress) {
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
  ImGui::SetNextItemWidth(field);
  ImGui::InputText("##gif", &gif_);
  ImGui::SameLine();
  if (ImGui::Button("Save GIF")) r = {ExportRequest::Kind::gif, gif_, steps_};
  ImGui::SetNextItemWidth(field);
  ImGui::InputText("##video", &video_);
  ImGui::SameLine();
  if (ImGui::Button("Save video")) r = {ExportRequest::Kind::video, video_, steps_};
  ImGui::SetNextItemWidth(field);
  ImGui::InputTextWithHint("##steps", "every step, or A..B", &steps_);
  ImGui::SameLine();
  ImGui::TextUnformatted("steps of the GIF / video");
  if (progress.total > 0) {
    const float f = static_cast<float>(progress.done) / static_cast<float>(progress.total);
    const std::string label = view::movie_progress(progress.done, progress.total);
    ImGui::ProgressBar(f, {-1, 0}, label.c_str());
  }
  if (!message_.empty()) ImGui::TextWrapped("%s", message_.c_str());
  return r;
}

}  // namespace collscope::app
