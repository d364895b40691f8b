// Topology files (docs/TOPOLOGY.md): read with the scenario reader's JSON parser, so
// that every mistake is reported at its line, column and JSON Pointer.
#include "collscope/topology.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>

#include "collscope/files.h"
#include "scenario/json.h"
#include "scenario/suggest.h"

namespace collscope {

namespace {

using json::Member;
using json::Value;
using scenario::closest;
using scenario::join;

constexpr std::uint64_t kMaxTopologyBytes = 1u << 20;
constexpr double kMaxBandwidth = 1e6;  // GB/s: a petabyte a second is not a link
constexpr double kMaxLatency = 1e6;    // us: a second
constexpr std::int64_t kMaxNodes = 1 << 20;
constexpr int kMaxDevicesPerNode = 4096;

struct Failure {
  Error error;
};

class TopologyReader {
 public:
  explicit TopologyReader(const std::string& file) : file_(file) {}

  Topology read(const Value& doc) {
    if (!doc.is_object()) wrong_type("a topology", "an object", doc, "{\"version\": 1, ...}");
    check_keys(doc, {"version", "name", "title", "sources", "devices", "intra", "nic", "tiers", "nodes"}, "at the top");
    Topology t;
    const Member* version = doc.find("version");
    if (!version) fail("topology.missing_key", "missing \"version\"", "start the file with \"version\": 1", at(doc));
    if (const auto v = integer(version->value, "version", std::numeric_limits<std::int32_t>::min(),
                               std::numeric_limits<std::int32_t>::max());
        v != 1)
      fail("topology.out_of_range", "unsupported version " + std::to_string(v),
           "this collscope reads topology files of version 1", at(version->value));
    if (const Member* m = doc.find("name")) t.name = text(m->value, "name", "\"dgx-h100\"");
    if (const Member* m = doc.find("title")) t.title = text(m->value, "title", "\"8 GPUs on NVSwitch\"");
    if (const Member* m = doc.find("sources")) {
      if (!m->value.is_array()) wrong_type("sources", "an array of strings", m->value, "[\"vendor datasheet\"]");
      for (const auto& s : m->value.items) t.sources.push_back(text(s, "a source", "\"vendor datasheet\""));
    }
    const Member* devices = doc.find("devices");
    if (!devices)
      fail("topology.missing_key", "missing \"devices\"",
           "say what a node holds: \"devices\": {\"kind\": \"gpu\", "
           "\"per_node\": 8, \"memory_gbps\": 3350}",
           at(doc));
    read_devices(devices->value, t);
    if (const Member* m = doc.find("intra")) t.intra = link(m->value, "intra");
    else if (t.devices_per_node > 1)
      fail("topology.missing_key", "missing \"intra\": how the devices of a node reach each other",
           "add \"intra\": {\"kind\": \"nvswitch\", \"bandwidth_gbps\": 450, \"latency_us\": 1}", at(doc));
    if (const Member* m = doc.find("nic")) read_nic(m->value, t.nic);
    if (const Member* m = doc.find("tiers")) {
      if (!m->value.is_array()) wrong_type("tiers", "an array", m->value, "[{\"name\": \"leaf\", \"nodes\": 32}]");
      std::int64_t below = 1;
      for (const auto& v : m->value.items) {
        SwitchTier tier = read_tier(v);
        if (tier.nodes < below)
          fail("topology.out_of_range",
               "tier \"" + tier.name + "\" groups " + std::to_string(tier.nodes) +
                   " nodes, fewer than the tier below (" + std::to_string(below) + ")",
               "list the tiers from the leaves up, each grouping at least as many nodes as the one below",
               at(v.find("nodes")->value));
        below = tier.nodes;
        t.tiers.push_back(std::move(tier));
      }
    }
    if (const Member* m = doc.find("nodes")) {
      t.nodes = integer(m->value, "nodes", 1, kMaxNodes);
      if (t.nodes > 1 && t.nic.per_node == 0)
        fail("topology.missing_key", "a topology of " + std::to_string(t.nodes) + " nodes needs \"nic\"",
             "add \"nic\": {\"per_node\": 8, \"bandwidth_gbps\": 50, \"latency_us\": 3}", at(m->value));
    }
    return t;
  }

 private:
  const std::string& file_;

  Location at(const Value& v) const { return {file_, v.line, v.col, v.pointer}; }

  [[noreturn]] void fail(std::string id, std::string message, std::string hint, Location where) const {
    throw Failure{make_error(std::move(id), std::move(message), std::move(hint), std::move(where))};
  }
  [[noreturn]] void wrong_type(const std::string& what, const std::string& expected, const Value& v,
                               const std::string& example) const {
    fail("topology.wrong_type", what + " must be " + expected + ", got " + json::describe(v),
         "write it like " + example, at(v));
  }

  void check_keys(const Value& obj, const std::vector<std::string>& valid, const std::string& place) const {
    for (const auto& m : obj.members) {
      if (std::find(valid.begin(), valid.end(), m.key) != valid.end()) continue;
      std::string msg = "unknown key " + json::quote(m.key);
      if (auto c = closest(m.key, valid)) msg += " (did you mean \"" + *c + "\"?)";
      fail("topology.unknown_key", msg, "valid keys " + place + ": " + join(valid),
           Location{file_, m.line, m.col, m.value.pointer});
    }
  }

  std::string text(const Value& v, const std::string& what, const std::string& example) const {
    if (!v.is_string()) wrong_type(what, "a string", v, example);
    return v.text;
  }

  std::int64_t integer(const Value& v, const std::string& what, std::int64_t lo, std::int64_t hi) const {
    if (!v.is_number()) wrong_type(what, "an integer", v, std::to_string(lo));
    const auto i = json::to_integer(v);
    if (i.status == json::IntegerValue::Status::not_integer) wrong_type(what, "an integer", v, std::to_string(lo));
    if (i.status != json::IntegerValue::Status::ok || i.value < lo || i.value > hi)
      fail("topology.out_of_range", what + " " + json::literal(v) + " is out of range",
           what + " must be from " + std::to_string(lo) + " to " + std::to_string(hi), at(v));
    return i.value;
  }

  double number(const Value& v, const std::string& what, double lo, double hi, bool lo_open) const {
    if (!v.is_number()) wrong_type(what, "a number", v, "1.5");
    const double x = v.number;
    if (!std::isfinite(x) || x > hi || x < lo || (lo_open && x <= lo)) {
      std::ostringstream range;
      range << what << " must be " << (lo_open ? "above " : "at least ") << lo << " and at most " << hi;
      fail("topology.out_of_range", what + " " + json::literal(v) + " is out of range", range.str(), at(v));
    }
    return x;
  }

  const Value& required(const Value& obj, const std::string& key, const std::string& place,
                        const std::string& example) const {
    const Member* m = obj.find(key);
    if (!m)
      fail("topology.missing_key", "missing \"" + key + "\" in " + place, "add it, for example " + example, at(obj));
    return m->value;
  }

  void read_devices(const Value& v, Topology& t) const {
    if (!v.is_object()) wrong_type("devices", "an object", v, "{\"kind\": \"gpu\", \"per_node\": 8}");
    check_keys(v, {"kind", "per_node", "memory_gbps", "memory_efficiency", "launch_us", "step_us"}, "in \"devices\"");
    const Value& kind = required(v, "kind", "\"devices\"", "\"kind\": \"gpu\"");
    t.device_kind = text(kind, "devices.kind", "\"gpu\"");
    if (t.device_kind != "gpu" && t.device_kind != "cpu")
      fail("topology.out_of_range", "unknown device kind " + json::quote(t.device_kind),
           "devices.kind is \"gpu\" or \"cpu\"", at(kind));
    t.devices_per_node = static_cast<int>(
        integer(required(v, "per_node", "\"devices\"", "\"per_node\": 8"), "devices.per_node", 1, kMaxDevicesPerNode));
    t.memory_gbps = number(required(v, "memory_gbps", "\"devices\"", "\"memory_gbps\": 3350"), "devices.memory_gbps", 0,
                           kMaxBandwidth, true);
    if (const Member* m = v.find("memory_efficiency"))
      t.memory_efficiency = number(m->value, "devices.memory_efficiency", 0, 1, true);
    if (const Member* m = v.find("launch_us"))
      t.launch_us = number(m->value, "devices.launch_us", 0, kMaxLatency, false);
    if (const Member* m = v.find("step_us")) t.step_us = number(m->value, "devices.step_us", 0, kMaxLatency, false);
  }

  LinkSpec link(const Value& v, const std::string& where) const {
    if (!v.is_object()) wrong_type(where, "an object", v, "{\"kind\": \"nvswitch\", \"bandwidth_gbps\": 450}");
    check_keys(v, {"kind", "bandwidth_gbps", "latency_us", "efficiency", "switch_reduction"}, "in \"" + where + "\"");
    LinkSpec l;
    if (const Member* m = v.find("kind")) {
      l.kind = text(m->value, where + ".kind", "\"nvswitch\"");
      // A label for reports (the model prices the figures, not the name), but a
      // misspelt one would be printed as if it were a kind of link.
      static const std::vector<std::string> kinds = {"nvlink", "nvswitch", "pcie", "memory"};
      if (std::find(kinds.begin(), kinds.end(), l.kind) == kinds.end()) {
        std::string msg = "unknown link kind " + json::quote(l.kind);
        if (auto c = closest(l.kind, kinds)) msg += " (did you mean \"" + *c + "\"?)";
        fail("topology.out_of_range", msg, where + ".kind is one of " + join(kinds), at(m->value));
      }
    }
    l.bandwidth_gbps = number(required(v, "bandwidth_gbps", "\"" + where + "\"", "\"bandwidth_gbps\": 450"),
                              where + ".bandwidth_gbps", 0, kMaxBandwidth, true);
    if (const Member* m = v.find("latency_us"))
      l.latency_us = number(m->value, where + ".latency_us", 0, kMaxLatency, false);
    if (const Member* m = v.find("efficiency")) l.efficiency = number(m->value, where + ".efficiency", 0, 1, true);
    if (const Member* m = v.find("switch_reduction"))
      l.switch_reduction = number(m->value, where + ".switch_reduction", 0, 1, false);
    return l;
  }

  void read_nic(const Value& v, NicSpec& n) const {
    if (!v.is_object()) wrong_type("nic", "an object", v, "{\"per_node\": 8, \"bandwidth_gbps\": 50}");
    check_keys(v, {"per_node", "bandwidth_gbps", "latency_us", "efficiency", "rails"}, "in \"nic\"");
    n.per_node = static_cast<int>(
        integer(required(v, "per_node", "\"nic\"", "\"per_node\": 8"), "nic.per_node", 1, kMaxDevicesPerNode));
    n.bandwidth_gbps = number(required(v, "bandwidth_gbps", "\"nic\"", "\"bandwidth_gbps\": 50"), "nic.bandwidth_gbps",
                              0, kMaxBandwidth, true);
    if (const Member* m = v.find("latency_us"))
      n.latency_us = number(m->value, "nic.latency_us", 0, kMaxLatency, false);
    if (const Member* m = v.find("efficiency")) n.efficiency = number(m->value, "nic.efficiency", 0, 1, true);
    if (const Member* m = v.find("rails")) {
      if (!m->value.is_boolean()) wrong_type("nic.rails", "true or false", m->value, "true");
      n.rails = m->value.boolean;
    }
  }

  SwitchTier read_tier(const Value& v) const {
    if (!v.is_object()) wrong_type("a tier", "an object", v, "{\"name\": \"leaf\", \"nodes\": 32}");
    check_keys(v, {"name", "nodes", "oversubscription", "latency_us"}, "in a tier");
    SwitchTier s;
    s.name = text(required(v, "name", "a tier", "\"name\": \"leaf\""), "a tier's name", "\"leaf\"");
    s.nodes = integer(required(v, "nodes", "a tier", "\"nodes\": 32"), "a tier's nodes", 1, kMaxNodes);
    if (const Member* m = v.find("oversubscription"))
      s.oversubscription = number(m->value, "oversubscription", 1, 1000, false);
    if (const Member* m = v.find("latency_us"))
      s.latency_us = number(m->value, "a tier's latency_us", 0, kMaxLatency, false);
    return s;
  }
};

// Errors from the shared JSON parser are named for scenarios; in a topology file
// they are the topology's.
Error as_topology_error(Error e) {
  if (e.id.rfind("scenario.", 0) == 0) e.id = "topology." + e.id.substr(9);
  return e;
}

Result<std::string> read_file(const std::string& path) {
  return read_input_file(path, InputKind{"topology.io", "topology file", kMaxTopologyBytes, "check the path",
                                         "check that this is a topology file"});
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".json");
}

}  // namespace

Result<Topology> parse_topology(const std::string& text, const std::string& file) {
  auto doc = json::parse(text, file);
  if (!doc) return as_topology_error(doc.error());
  try {
    Topology t = TopologyReader(file).read(*doc);
    t.file = file;
    if (t.name.empty()) t.name = std::filesystem::path(file).stem().string();
    return t;
  } catch (const Failure& f) {
    return f.error;
  }
}

std::string topology_dir() { return asset_path("topologies"); }

std::vector<std::string> topology_presets() {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(topology_dir(), ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Result<Topology> load_topology(const std::string& name_or_path) {
  std::string path = name_or_path;
  if (!looks_like_path(name_or_path)) {
    path = (std::filesystem::path(topology_dir()) / (name_or_path + ".json")).string();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      const auto presets = topology_presets();
      std::string msg = "unknown topology " + json::quote(name_or_path);
      if (auto c = closest(name_or_path, presets)) msg += " (did you mean \"" + *c + "\"?)";
      return make_error("topology.unknown", msg,
                        "presets: this-machine" + (presets.empty() ? std::string() : ", " + join(presets)) +
                            "; or give the path of a topology file",
                        {});
    }
  }
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_topology(*text, path);
}

Placement place(const Topology& t, std::int64_t ranks, std::int64_t nodes) {
  Placement p;
  p.nodes = std::max<std::int64_t>(1, nodes);
  p.ranks_per_node = std::max<std::int64_t>(1, (ranks + p.nodes - 1) / p.nodes);
  p.devices_per_node = std::max(1, t.devices_per_node);
  return p;
}

}  // namespace collscope
