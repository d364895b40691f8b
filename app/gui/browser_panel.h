// The lessons in scenarios/ with their titles and descriptions, and a field to open
// any scenario file.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace collscope::app {

class BrowserPanel {
 public:
  // Returns a path to open when the user picked one.
  std::optional<std::string> draw(const std::string& current_file);

 private:
  struct Entry {
    std::string path, title, description;
  };
  void scan();
  bool scanned_ = false;
  std::vector<Entry> lessons_;
  std::string path_field_;
};

}  // namespace collscope::app
