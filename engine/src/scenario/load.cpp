// Reading a scenario file from disk, with scenario.io errors that say what went wrong.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collscope/scenario.h"
#include "scenario/json.h"
#include "scenario/resolve.h"

namespace collscope {

namespace {

Result<std::string> read_text(const std::string& path) {
  namespace fs = std::filesystem;
  const Location where{path, 0, 0, ""};
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    if (ec && ec != std::errc::no_such_file_or_directory)
      return make_error("scenario.io", "cannot open the file (" + ec.message() + ")",
                        "check the path and its permissions", where);
    return make_error("scenario.io", "file not found", "check the path; the lessons live in scenarios/", where);
  }
  if (fs::is_directory(st))
    return make_error("scenario.io", "path is a directory, not a scenario file",
                      "give the path of a .json file inside it", where);
  if (!fs::is_regular_file(st))
    return make_error("scenario.io", "path is not a regular file", "give the path of a .json scenario file", where);
  // Checked before reading, so a huge file is never loaded into memory.
  const auto size = fs::file_size(path, ec);
  if (!ec && size > scenario::kMaxScenarioBytes)
    return make_error("scenario.io",
                      "file is too large for a scenario (" + scenario::human_bytes(size) + ", the limit is " +
                          scenario::human_bytes(scenario::kMaxScenarioBytes) + ")",
                      "check that this is a scenario file; large buffers take {\"random\": ...} or \"index\" "
                      "inits rather than long lists of values",
                      where);

  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return make_error("scenario.io", std::string("cannot read the file (") + std::strerror(err) + ")",
                      "check the file's permissions", where);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return make_error("scenario.io", "cannot read the file (read error)", "check the file and the disk", where);
  return text.str();
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
