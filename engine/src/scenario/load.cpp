// Reading a scenario file from disk, with scenario.io errors that say what went wrong.
#include "collscope/files.h"
#include "collscope/scenario.h"
#include "scenario/json.h"
#include "scenario/resolve.h"

namespace collscope {

namespace {

// Through the one reader of collscope/files.h: a FIFO, a device or a file swapped
// for one never blocks or floods it, and nothing beyond the limit is read.
Result<std::string> read_text(const std::string& path) {
  static const InputKind kind{"scenario.io", "scenario file", scenario::kMaxScenarioBytes,
                              "check the path; the lessons live in scenarios/",
                              "check that this is a scenario file; large buffers take {\"random\": ...} or \"index\" "
                              "inits rather than long lists of values"};
  return read_input_file(path, kind);
}

}  // namespace

Result<Scenario> load_scenario(const std::string& path) {
  auto text = read_text(path);
  if (!text) return text.error();
  return parse_scenario(*text, path);
}

Result<ScenarioHeading> read_heading(const std::string& path) {
  auto text = read_text(path);
  if (!text) return text.error();
  auto doc = json::parse(*text, path);
  if (!doc) return doc.error();
  ScenarioHeading h;
  if (const json::Member* m = doc->find("title"); m && m->value.is_string()) h.title = m->value.text;
  if (const json::Member* m = doc->find("description"); m && m->value.is_string()) h.description = m->value.text;
  return h;
}

}  // namespace collscope
