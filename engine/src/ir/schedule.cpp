#include "collscope/schedule.h"

#include <algorithm>
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

bool takes_part(const Call& c, std::int32_t rank) {
  const auto& w = c.args.world_rank;
  return w.empty() || std::find(w.begin(), w.end(), rank) != w.end();
}

std::vector<std::int32_t> calls_of(const Step& st) {
  std::vector<std::int32_t> out{st.call};
  out.insert(out.end(), st.shared.begin(), st.shared.end());
  return out;
}

std::int32_t call_of(const Schedule& s, std::int32_t step, std::int32_t rank) {
  const Step& st = s.steps[static_cast<std::size_t>(step)];
  if (st.shared.empty() || takes_part(s.calls[static_cast<std::size_t>(st.call)], rank)) return st.call;
  for (const std::int32_t c : st.shared)
    if (takes_part(s.calls[static_cast<std::size_t>(c)], rank)) return c;
  return st.call;
}

std::vector<std::int32_t> calls_by_rank(const Schedule& s, std::int32_t step) {
  const Step& st = s.steps[static_cast<std::size_t>(step)];
  std::vector<std::int32_t> out(static_cast<std::size_t>(s.ranks), st.call);
  for (const std::int32_t c : st.shared)
    for (const std::int32_t r : s.calls[static_cast<std::size_t>(c)].args.world_rank)
      if (r >= 0 && r < s.ranks) out[static_cast<std::size_t>(r)] = c;
  return out;
}

std::pair<std::int32_t, std::int32_t> shared_span(const Schedule& s, std::int32_t call) {
  const Call& c = s.calls[static_cast<std::size_t>(call)];
  std::int32_t first = c.first_step, end = c.first_step + c.num_steps;
  if (c.num_steps <= 0 || static_cast<std::size_t>(c.first_step) >= s.steps.size()) return {first, end};
  // Parts that run at once start together, so the first step holds every one of them.
  for (const std::int32_t o : calls_of(s.steps[static_cast<std::size_t>(c.first_step)])) {
    const Call& p = s.calls[static_cast<std::size_t>(o)];
    first = std::min(first, p.first_step);
    end = std::max(end, p.first_step + p.num_steps);
  }
  return {first, end};
}

std::string rank_set_text(const std::vector<std::int32_t>& ranks) {
  std::string out = "{";
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (i) out += ",";
    if (j >= i + 2) {
      out += std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]);
      i = j + 1;
    } else {
      out += std::to_string(ranks[i]);
      ++i;
    }
  }
  return out + "}";
}

std::string parts_text(const Schedule& s, const Step& st) {
  const Call& lead = s.calls[static_cast<std::size_t>(st.call)];
  if (st.shared.empty()) return group_text(lead);
  std::string parts, sets;
  const auto calls = calls_of(st);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const Call& c = s.calls[static_cast<std::size_t>(calls[i])];
    const std::string sep = i == 0 ? "" : i + 1 == calls.size() ? " and " : ", ";
    parts += sep + std::to_string(c.part);
    sets += sep + rank_set_text(c.args.world_rank);
  }
  return "group " + lead.group + ", parts " + parts + " at once: " + sets;
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
