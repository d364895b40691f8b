#include "gui/caption_panel.h"

#include <imgui.h>

#include "gui/view/caption.h"

namespace collscope::app {

namespace {
std::string bytes_text(std::uint64_t b) {
  char buf[32];
  if (b >= (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  return buf;
}
std::string us_text(double us) {
  char buf[32];
  if (us < 0) return "?";
  if (us >= 1000) std::snprintf(buf, sizeof buf, "%.2f ms", us / 1000);
  else std::snprintf(buf, sizeof buf, "%.1f us", us);
  return buf;
}
}  // namespace

void CaptionPanel::draw(const LessonState& lesson, std::int32_t applied, const WorkStatus& work, const Fonts& fonts,
                        bool presenter) {
  if (work.busy) {
    static const char* spin = "|/-\\";
    ImGui::TextColored(ImVec4(1, 0.85f, 0.3f, 1), "%c running on a worker thread... %.1f s",
                       spin[static_cast<int>(work.seconds * 8) % 4], work.seconds);
  }
  if (!work.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.4f, 0.4f, 1));
    ImGui::TextWrapped("%s", work.error.c_str());
    ImGui::PopStyleColor();
  }
  const view::LessonRun* run = lesson.run();
  if (!run) {
    if (!work.busy && work.error.empty()) ImGui::TextUnformatted("no lesson loaded");
    return;
  }
  const auto c = view::build_caption(*run, applied);
  ImGui::PushFont(fonts.caption);
  ImGui::TextColored(ImVec4(0.55f, 0.8f, 1, 1), "%s", c.position.c_str());
  ImGui::SameLine();
  ImGui::TextColored(ImVec4(1, 0.75f, 0.35f, 1), "[%s]", c.phase.c_str());
  ImGui::SameLine();
  ImGui::TextUnformatted(c.title.c_str());
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(c.caption.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
  if (!presenter) ImGui::TextDisabled("%s", c.call.c_str());  // the room needs the caption, not the details
  std::string facts = "moves " + bytes_text(c.bytes) + "   predicted " + us_text(c.predicted_us) + c.predicted_note +
                      "   measured " + us_text(c.measured_us) + "   backend " + run->backend + " (ran)";
  ImGui::TextUnformatted(facts.c_str());
  if (presenter && c.verified) {
    // The room sees that the check passed; the verdict's details stay out of its way.
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(0.45f, 0.9f, 0.45f, 1), "   verified");
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, c.verified ? ImVec4(0.45f, 0.9f, 0.45f, 1) : ImVec4(1, 0.4f, 0.4f, 1));
    ImGui::TextWrapped("%s", c.verdict.c_str());
    ImGui::PopStyleColor();
  }
  if (!lesson.error().empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", lesson.error().c_str());
}

}  // namespace collscope::app
