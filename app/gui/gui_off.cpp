// `collscope gui` in a build without the window (COLLSCOPE_GUI off).
#include "cli.h"

namespace collscope::app {

bool gui_built() { return false; }

int cmd_gui(const GuiFlags&) {
  return report_error(make_error("cli.gui_unavailable", "this build of collscope has no window",
                                 "install libimgui-dev libglfw3-dev libstb-dev (scripts/deps.sh) and rebuild, or use "
                                 "`collscope run FILE --explain` to step through a lesson in the terminal"));
}

}  // namespace collscope::app
