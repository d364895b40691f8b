// Program entries of an imported scenario: each rank's lines, merged into one entry for
// the ranks that do the same (with a peer at the same distance), and the captions that
// say where each call came from.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "import/readers.h"
#include "import/scenario_builder.h"

namespace collscope::job {

// Captions show "{expr}" as a value (docs/ARCHITECTURE.md, "Programs"); the job's own text (file
// names such as rank{0..3}.json, call sites) keeps its braces as written.
std::string literal_braces(const std::string& t) {
  std::string out;
  for (char ch : t) {
    out += ch;
    if (ch == '{' || ch == '}') out += ch;
  }
  return out;
}

std::string file_name(const std::string& p) { return std::filesystem::path(p).filename().string(); }

// "rank{0..3}.json" when the files differ only in their rank's number.
std::string files_label(const Job& job, const std::vector<std::int32_t>& ranks) {
  if (ranks.empty()) return "";
  if (ranks.size() == 1) return file_name(job.ranks[static_cast<std::size_t>(ranks[0])].file);
  // One file for all of them (an NCCL log of every process).
  bool one_file = true;
  for (auto r : ranks)
    one_file =
        one_file && job.ranks[static_cast<std::size_t>(r)].file == job.ranks[static_cast<std::size_t>(ranks[0])].file;
  if (one_file) return file_name(job.ranks[static_cast<std::size_t>(ranks[0])].file);
  std::string prefix, suffix;
  bool pattern = true;
  for (std::size_t i = 0; i < ranks.size() && pattern; ++i) {
    const std::string n = file_name(job.ranks[static_cast<std::size_t>(ranks[i])].file);
    const std::string num = std::to_string(ranks[i]);
    // The rank's number, the last time it appears before the extension.
    const auto dot = n.find('.');
    const std::string stem = n.substr(0, dot);
    if (stem.size() < num.size() || stem.compare(stem.size() - num.size(), num.size(), num) != 0) {
      pattern = false;
      break;
    }
    const std::string p = stem.substr(0, stem.size() - num.size());
    const std::string s = dot == std::string::npos ? "" : n.substr(dot);
    if (i == 0) prefix = p, suffix = s;
    else if (p != prefix || s != suffix) pattern = false;
  }
  const auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end());
  if (pattern) return prefix + "{" + std::to_string(*lo) + ".." + std::to_string(*hi) + "}" + suffix;
  return file_name(job.ranks[static_cast<std::size_t>(*lo)].file) + " and the files of the other ranks";
}

std::string source_word(JobFormat f) {
  switch (f) {
    case JobFormat::profiler:
    case JobFormat::profiler_legacy:
      return "trace";
    case JobFormat::flight_recorder:
      return "dump";
    case JobFormat::nccl_log:
      return "log";
  }
  return "file";
}

std::string safe_name(const std::string& id) {
  std::string out = "pg_";
  for (char c : id) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.size() > 40) out = out.substr(0, 40);
  return out;
}

void ScenarioBuilder::note(const std::string& n) {
  if (notes_.insert(n).second) note_order_.push_back(n);
}

void ScenarioBuilder::emit(const json& entry) {
  flush_lines();
  std::string line = entry.dump();
  program_bytes_ += line.size() + 2;
  program_.push_back(std::move(line));
}

void ScenarioBuilder::add_line(RankLine line) {
  auto& depth = batch_depth_[line.rank];
  if (batch_.size() <= depth) batch_.resize(depth + 1);
  line.key = line.entry.dump();
  if (line.peer >= 0)
    line.key += "|" + std::to_string(((line.peer - line.rank) % job_.world + job_.world) % job_.world);
  if (line.call)
    line.key += "|" + line.call->name.substr(0, line.call->name.find(' ')) + "|" + std::to_string(line.call->seq) +
                "|" + size_text(*line.call) + "|" + line.call->site;
  batch_[depth].push_back(std::move(line));
  ++depth;
}

void ScenarioBuilder::add_compute(std::int32_t r, std::uint32_t us, std::string writes) {
  // Never a buffer a call of this rank still has in flight (the slot rules keep it
  // so; this keeps the file valid should they not).
  if (writes != "work" && st_[static_cast<std::size_t>(r)].busy.count(std::stoi(writes.substr(1)))) {
    writes = "work";
    work_used_ = true;
  }
  RankLine l;
  l.rank = r;
  l.entry["op"] = "compute";
  l.entry["duration_us"] = us;
  l.entry["writes"] = writes;
  add_line(std::move(l));
  ++out_.compute_spans;
}

void ScenarioBuilder::flush_lines() {
  for (auto& layer : batch_) {
    std::map<std::string, std::vector<const RankLine*>> merged;
    std::vector<std::string> order;
    for (const auto& l : layer) {
      auto [it, fresh] = merged.try_emplace(l.key);
      if (fresh) order.push_back(l.key);
      it->second.push_back(&l);
    }
    for (const auto& key : order) {
      const auto& lines = merged[key];
      const RankLine& first = *lines.front();
      std::vector<std::int32_t> who;
      for (const auto* l : lines) who.push_back(l->rank);
      json e;
      e["op"] = first.entry["op"];
      if (static_cast<std::int32_t>(who.size()) == job_.world) e["ranks"] = "all";
      else e["ranks"] = who;
      for (auto it = first.entry.begin(); it != first.entry.end(); ++it)
        if (it.key() != "op") e[it.key()] = it.value();
      std::string peer_text;
      if (first.peer >= 0) {
        if (who.size() == 1) {
          e[first.peer_key] = first.peer;
          peer_text = "rank " + std::to_string(first.peer);
        } else {
          const int d = ((first.peer - first.rank) % job_.world + job_.world) % job_.world;
          e[first.peer_key] = "(rank + " + std::to_string(d) + ") % size";
          peer_text = "rank r+" + std::to_string(d) + " (mod " + std::to_string(job_.world) + ")";
        }
      }
      if (first.call) e["caption"] = caption_of(*first.call, who, peer_text);
      if (first.entry["op"] == "compute") ++out_.compute_entries;
      std::string line = e.dump();
      program_bytes_ += line.size() + 2;
      program_.push_back(std::move(line));
    }
  }
  batch_.clear();
  batch_depth_.clear();
}

// An alltoallv's table in the job's words: "blocks of 0 to 128 B Float, 1.5 KiB in all".
std::string ScenarioBuilder::table_text(const JobCall& c, const Table& t) {
  std::uint64_t lo = UINT64_MAX, hi = 0, total = 0;
  for (const auto& row : t)
    for (auto x : row) lo = std::min(lo, x), hi = std::max(hi, x), total += x;
  const double b = static_cast<double>(esize_) * static_cast<double>(std::max<std::uint64_t>(1, opt_.scale_down));
  std::string text = "split sizes per peer: blocks of " + job::human_size(static_cast<double>(lo) * b) + " to " +
                     job::human_size(static_cast<double>(hi) * b) + (c.dtype.empty() ? "" : " " + c.dtype) + ", " +
                     job::human_size(static_cast<double>(total) * b) + " in all";
  if (opt_.scale_down > 1) text += " (replayed 1/" + std::to_string(opt_.scale_down) + ")";
  return text;
}

std::string ScenarioBuilder::size_text(const JobCall& c) {
  if (c.kind == "barrier") return "";
  if (!c.count) return "size unknown";
  const std::uint32_t b = c.dtype_bytes ? c.dtype_bytes : esize_;
  std::string t = job::human_size(static_cast<double>(*c.count) * b);
  if (!c.dtype.empty()) t += " " + c.dtype;
  if (opt_.scale_down > 1) t += " (replayed 1/" + std::to_string(opt_.scale_down) + ")";
  return t;
}

std::string ScenarioBuilder::caption_of(const JobCall& c, const std::vector<std::int32_t>& who,
                                        const std::string& peer_text, const std::string& size_given) {
  std::string t = who.size() == 1 ? "rank " + std::to_string(who[0]) : rank_ranges(who);
  if (c.seq >= 0) t += std::string(c.p2p ? ", p2p seq " : ", seq ") + std::to_string(c.seq);
  if (!c.p2p && !group(c.group).world) t += " of group " + c.group;
  t += ", " + (c.p2p ? c.name.substr(0, c.name.find(' ')) : c.name);
  if (c.p2p && !peer_text.empty()) t += (c.kind == "send" ? " to " : " from ") + peer_text;
  const std::string size = size_given.empty() ? size_text(c) : size_given;
  if (!size.empty()) t += ", " + size;
  t += ", from " +
       (opt_.source_label.empty() ? source_word(job_.format) + " " + files_label(job_, who) : opt_.source_label);
  if (!c.site.empty()) t += " (" + c.site + ")";
  return literal_braces(t);
}

}  // namespace collscope::job
