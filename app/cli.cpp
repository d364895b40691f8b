#include "cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "collscope/algorithms.h"

namespace collscope::app {

namespace fs = std::filesystem;

int report_error(const Error& e) {
  std::cerr << e.format() << "\n";
  return static_cast<int>(e.exit);
}

std::string scenario_dir() {
  if (const char* env = std::getenv("COLLSCOPE_SCENARIOS"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& p : {exe.parent_path() / "scenarios", exe.parent_path().parent_path() / "scenarios",
                              exe.parent_path().parent_path() / "share" / "collscope" / "scenarios"})
      if (fs::is_directory(p, ec)) return p.string();
  }
#ifdef COLLSCOPE_SCENARIO_DIR
  if (fs::is_directory(COLLSCOPE_SCENARIO_DIR, ec)) return COLLSCOPE_SCENARIO_DIR;
#endif
  return "scenarios";
}

bool display_present() {
  for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY"})
    if (const char* v = std::getenv(name); v && *v) return true;
  return false;
}

std::vector<std::string> lesson_files() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(scenario_dir(), ec))
    if (entry.path().extension() == ".json") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
template <class T>
std::string joined(const T& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + std::string(name_of(n));
  return s;
}
}  // namespace

Result<QuickSpec> spec_from_flags(const RunFlags& f) {
  QuickSpec q;
  auto coll = parse_collective(f.coll);
  if (!coll)
    return make_error("scenario.unknown_op", "unknown collective \"" + f.coll + "\" for --coll",
                      "valid collectives: " + joined(kAllCollectives));
  auto dt = parse_dtype(f.dtype);
  if (!dt)
    return make_error("scenario.unknown_dtype", "unknown dtype \"" + f.dtype + "\" for --dtype",
                      "valid dtypes: " + joined(kAllDTypes));
  auto op = parse_reduce_op(f.op);
  if (!op)
    return make_error("scenario.unknown_reduce_op", "unknown reduction \"" + f.op + "\" for --op",
                      "valid ops: " + joined(kAllReduceOps));
  if (f.algo != "auto" && !find_algorithm(*coll, f.algo) && !has_native(f.algo, *coll))
    return make_error("scenario.unknown_algorithm",
                      "unknown algorithm \"" + f.algo + "\" for " + std::string(name_of(*coll)) + " (--algo)",
                      valid_algorithms_hint(*coll));
  if (f.count < 0)
    return make_error("scenario.out_of_range", "--count " + std::to_string(f.count) + " is negative",
                      "give the number of elements, 0 or more");
  // As a scenario file's count: checked here too, since a call priced from its shape
  // (beyond a run's ranks) is never lowered, where a file's count is checked.
  if (static_cast<std::uint64_t>(f.count) > kMaxBufferBytes)
    return make_error("scenario.out_of_range",
                      "--count " + std::to_string(f.count) + " is larger than any buffer can hold (" +
                          std::to_string(kMaxBufferBytes) + " elements)",
                      "use a smaller count");
  if (f.in_place && !supports_in_place(*coll))
    return make_error("scenario.in_place_unsupported", std::string(name_of(*coll)) + " cannot run in place",
                      "drop --in-place");
  q.coll = *coll;
  q.algorithm = f.algo;
  q.ranks = f.ranks;
  q.count = static_cast<std::uint64_t>(f.count);
  q.dtype = *dt;
  q.op = *op;
  q.root = f.root;
  q.in_place = f.in_place;
  return q;
}

Status check_file_flags(const RunFlags& f) {
  if (f.file.empty() || !f.command) return ok_status();
  for (const char* flag : {"--algo", "--ranks", "--count", "--dtype", "--op", "--root", "--in-place"})
    if (f.command->count(flag) > 0)
      return make_error(
          "cli.usage", std::string(flag) + " describes one collective, and a scenario file says its own",
          std::string("drop ") + flag + ", or describe the call with --coll and the flags instead of " + f.file);
  return ok_status();
}

Status check_ranks_per_node(const RunFlags& f, std::int64_t ranks) {
  if (f.ranks_per_node == 0) return ok_status();
  if (f.ranks_per_node < 0 || f.ranks_per_node > ranks)
    return make_error(
        "cli.usage", "--ranks-per-node " + std::to_string(f.ranks_per_node) + " is outside 1.." + std::to_string(ranks),
        "give how many ranks share a node, e.g. --ranks-per-node 8 (a divisor of the ranks, or the "
        "node-aware algorithms fall back to one ring)");
  return ok_status();
}

Status check_nodes(std::int64_t nodes, std::int64_t ranks) {
  if (nodes <= 1) return ok_status();
  const std::string who = std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks");
  if (nodes > ranks)
    return make_error("cli.usage",
                      "--nodes " + std::to_string(nodes) + " leaves nodes without a rank: " + who + " fill at most " +
                          std::to_string(ranks) + (ranks == 1 ? " node" : " nodes"),
                      "give --nodes " + std::to_string(ranks) + " or fewer, or more --ranks");
  // The ranks fill the nodes in order, ceil(ranks / nodes) to a node (place()).
  const std::int64_t per_node = ranks / nodes + (ranks % nodes != 0 ? 1 : 0);
  const std::int64_t filled = ranks / per_node + (ranks % per_node != 0 ? 1 : 0);
  if (filled == nodes) return ok_status();
  return make_error("cli.usage",
                    "--nodes " + std::to_string(nodes) + " leaves nodes without a rank: " + who + ", " +
                        std::to_string(per_node) + " to a node, fill " + std::to_string(filled) +
                        (filled == 1 ? " node" : " nodes"),
                    "give --nodes " + std::to_string(filled) + ", or --ranks " + std::to_string(nodes * per_node) +
                        " (" + std::to_string(per_node) + " on each of " + std::to_string(nodes) + " nodes)");
}

InitFn scenario_init(const Scenario& s) {
  // Scratch buffers come after the user's buffers in the schedule and start as zeros.
  return [&s](std::int32_t buf, std::int32_t rank, std::uint64_t index) {
    if (buf < 0 || static_cast<std::size_t>(buf) >= s.buffers.size()) return 0.0;
    return initial_value(s.buffers[static_cast<std::size_t>(buf)], rank, index);
  };
}

Result<Fault> parse_fault(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return make_error("cli.bad_fault", "cannot read --fault \"" + text + "\": " + why,
                      "write RANK:STEP:KIND[:MS] with KIND delay, corrupt, crash or hang, e.g. --fault 1:2:hang or "
                      "--fault 0:3:delay:50");
  };
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const auto colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() < 3 || parts.size() > 4) return bad("expected 3 or 4 fields");
  auto number = [](const std::string& p, std::int32_t& out) {
    if (p.empty() || p.size() > 9 || p.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::stoi(p);
    return true;
  };
  Fault f;
  if (!number(parts[0], f.rank)) return bad("RANK must be a non-negative integer");
  if (!number(parts[1], f.step)) return bad("STEP must be a non-negative integer");
  const auto kind = parse_fault_kind(parts[2]);
  if (!kind) return bad("unknown kind \"" + parts[2] + "\" (kinds: delay, corrupt, crash, hang)");
  f.kind = *kind;
  if (f.kind == Fault::Kind::delay) {
    if (parts.size() != 4 || !number(parts[3], f.ms)) return bad("delay needs MS, a whole number of milliseconds");
    if (f.ms > 60000) return bad("a delay longer than 60000 ms is not useful");
  } else if (parts.size() != 3) {
    return bad(std::string(name_of(f.kind)) + " takes no MS");
  }
  return f;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.3g %s", bytes, units[u]);
  return text;
}

}  // namespace collscope::app
