#include "collscope/schedule.h"

#include "collscope/result.h"

namespace collscope {

std::int32_t Schedule::find_buffer(const std::string& name) const {
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name) return static_cast<std::int32_t>(i);
  return -1;
}

std::uint64_t Schedule::total_transfers() const {
  std::uint64_t n = 0;
  for (const auto& st : steps) n += st.transfers.size();
  return n;
}

std::uint64_t step_bytes(const Schedule& s, const Step& st) {
  std::uint64_t n = 0;
  for (const auto& t : st.transfers)
    if (t.src.rank != t.dst.rank) n += t.count;
  return n * size_of(s.dtype);
}

std::string Error::format() const {
  std::string out = "error[" + id + "]";
  if (!where.file.empty()) {
    out += " " + where.file;
    if (where.line > 0) out += ":" + std::to_string(where.line) + ":" + std::to_string(where.col);
  }
  if (!where.pointer.empty()) out += " " + where.pointer;
  out += where.file.empty() && where.pointer.empty() ? " " : ": ";
  out += message;
  if (!hint.empty()) out += "\n  help: " + hint;
  return out;
}

Error make_error(std::string id, std::string message, std::string hint, Location where, ExitCode exit) {
  return Error{std::move(id), std::move(message), std::move(hint), std::move(where), exit};
}

}  // namespace collscope
