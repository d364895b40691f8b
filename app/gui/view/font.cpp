#include "gui/view/font.h"

#include <sys/stat.h>
#include <unistd.h>

#if defined(COLLSCOPE_HAVE_FONTCONFIG)
#include <fontconfig/fontconfig.h>
#endif

namespace collscope::view {

namespace {

bool readable_font_file(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
         ::access(path.c_str(), R_OK) == 0;
}

#if defined(COLLSCOPE_HAVE_FONTCONFIG)
// fontconfig answers every request with its best match, which may be another sans
// family: that is what the user's desktop would show for "DejaVu Sans" too.
std::string fontconfig_match(const char* family) {
  std::string path;
  FcConfig* config = FcInitLoadConfigAndFonts();
  if (!config) return path;
  FcPattern* pattern = FcNameParse(reinterpret_cast<const FcChar8*>(family));
  if (pattern) {
    FcConfigSubstitute(config, pattern, FcMatchPattern);
    FcDefaultSubstitute(pattern);
    FcResult result = FcResultNoMatch;
    FcPattern* match = FcFontMatch(config, pattern, &result);
    FcChar8* file = nullptr;
    if (match && FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch && file)
      path = reinterpret_cast<const char*>(file);
    if (match) FcPatternDestroy(match);
    FcPatternDestroy(pattern);
  }
  FcConfigDestroy(config);
  return path;
}
#endif

}  // namespace

const std::vector<std::string>& packaged_font_paths() {
  static const std::vector<std::string> paths = {
      "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",    // Debian, Ubuntu (fonts-dejavu-core)
      "/usr/share/fonts/TTF/DejaVuSans.ttf",                // Arch
      "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",  // Fedora
      "/usr/share/fonts/dejavu/DejaVuSans.ttf",             // older Fedora, openSUSE
      "/usr/local/share/fonts/dejavu/DejaVuSans.ttf",       // FreeBSD
  };
  return paths;
}

FontChoice find_font(const std::function<const char*(const char*)>& getenv_fn) {
  FontChoice c;
  if (const char* env = getenv_fn("COLLSCOPE_FONT"); env && *env) {
    if (readable_font_file(env)) {
      c.path = env;
      c.source = "COLLSCOPE_FONT";
      return c;
    }
    c.note = std::string("COLLSCOPE_FONT=") + env + " is not a readable font file";
  }
#if defined(COLLSCOPE_HAVE_FONTCONFIG)
  // .ttf and .otf only: ImGui reads TrueType outlines, not the bitmap fonts fontconfig may offer.
  if (std::string p = fontconfig_match("DejaVu Sans"); readable_font_file(p)) {
    const auto dot = p.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : p.substr(dot);
    if (ext == ".ttf" || ext == ".otf" || ext == ".TTF" || ext == ".OTF") {
      c.path = p;
      c.source = "fontconfig";
      return c;
    }
  }
#endif
  for (const auto& p : packaged_font_paths()) {
    if (readable_font_file(p)) {
      c.path = p;
      c.source = "packaged path";
      return c;
    }
  }
  c.source = "none";
  return c;
}

}  // namespace collscope::view
