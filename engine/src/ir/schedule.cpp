#include "collscope/schedule.h"

#include <cctype>
#include <string>

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

std::string group_text(const Call& c) {
  if (c.group.empty()) return "";
  std::string t = "group " + c.group + (c.part >= 0 ? ", part " + std::to_string(c.part) : std::string()) + ": ";
  const auto& w = c.args.world_rank;
  if (w.empty()) return t + "every rank";
  bool run = w.size() > 2;
  for (std::size_t i = 1; i < w.size(); ++i) run = run && w[i] == w[i - 1] + 1;
  if (run) return t + "ranks " + std::to_string(w.front()) + "-" + std::to_string(w.back());
  t += w.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < w.size(); ++i) t += (i ? ", " : "") + std::to_string(w[i]);
  return t;
}

std::string rank_text(const Call& c, std::int32_t group_rank) {
  const auto& w = c.args.world_rank;
  const std::int32_t world = group_rank >= 0 && static_cast<std::size_t>(group_rank) < w.size()
                                 ? w[static_cast<std::size_t>(group_rank)]
                                 : group_rank;
  if (c.group.empty() || w.empty()) return "rank " + std::to_string(world);
  return "rank " + std::to_string(world) + " (" + c.group + " rank " + std::to_string(group_rank) + ")";
}

std::string program_op_label(const std::string& pointer) {
  // "/program/3/body/1" -> "op 3.1"
  std::string out = "op ";
  bool first = true;
  std::size_t i = 0;
  while (i < pointer.size()) {
    const std::size_t j = pointer.find('/', i + 1);
    const std::string part = pointer.substr(i + 1, j == std::string::npos ? std::string::npos : j - i - 1);
    if (!part.empty() && std::isdigit(static_cast<unsigned char>(part[0]))) {
      out += (first ? "" : ".") + part;
      first = false;
    }
    if (j == std::string::npos) break;
    i = j;
  }
  return out;
}

}  // namespace collscope
