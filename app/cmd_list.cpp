// `collscope list`: what this build can do, and the lessons it ships.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "collscope/algorithms.h"
#include "collscope/backend.h"
#include "collscope/calibration.h"
#include "collscope/topology.h"

namespace collscope::app {

int cmd_list(bool json) {
  nlohmann::ordered_json j;
  j["collectives"] = nlohmann::ordered_json::array();
  for (Collective c : kAllCollectives) {
    nlohmann::ordered_json algos = nlohmann::ordered_json::array();
    for (const auto& a : all_algorithms())
      if (a.coll == c) algos.push_back({{"name", a.name}, {"summary", a.summary}});
    for (const auto& lib : native_libraries())
      if (has_native(lib.algorithm, c))
        algos.push_back({{"name", lib.algorithm},
                         {"summary", std::string(lib.title) + "'s own implementation, in one call (--backend " +
                                         std::string(lib.algorithm) + " only)"},
                         {"native", true}});
    j["collectives"].push_back({{"name", name_of(c)}, {"algorithms", algos}});
  }
  j["dtypes"] = nlohmann::ordered_json::array();
  for (DType t : kAllDTypes) j["dtypes"].push_back(name_of(t));
  j["ops"] = nlohmann::ordered_json::array();
  for (ReduceOp o : kAllReduceOps) j["ops"].push_back(name_of(o));
  j["backends"] = nlohmann::ordered_json::array();
  for (const auto& b : make_backends()) {
    const auto info = b->info();
    j["backends"].push_back({{"name", info.name},
                             {"available", info.available},
                             {"reason", info.reason},
                             {"description", info.description}});
  }
  // What predictions can be made for (--topology): this machine, then the presets.
  j["topologies"] = nlohmann::ordered_json::array();
  j["topologies"].push_back(
      {{"name", "this-machine"},
       {"title", "this machine's cpu model: " + cpu_model_for(DType::float32, user_config_dir()).origin}});
  for (const auto& name : topology_presets()) {
    auto t = load_topology(name);
    nlohmann::ordered_json e = {{"name", name}, {"title", t ? t->title : t.error().format()}};
    if (t) e["devices_per_node"] = t->devices_per_node;
    j["topologies"].push_back(std::move(e));
  }
  j["lessons"] = nlohmann::ordered_json::array();
  for (const auto& file : lesson_files()) {
    auto s = load_scenario(file);
    auto h = read_heading(file);
    nlohmann::ordered_json l = {{"file", file}, {"title", h ? h->title : std::string()}, {"valid", s.ok()}};
    if (!s) l["error"] = s.error().id;
    j["lessons"].push_back(std::move(l));
  }
  if (json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "collectives and algorithms (auto picks one per size and rank count):\n";
  for (const auto& c : j["collectives"]) {
    std::string names;
    for (const auto& a : c["algorithms"]) names += (names.empty() ? "" : ", ") + a["name"].get<std::string>();
    std::printf("  %-15s %s\n", c["name"].get<std::string>().c_str(), names.c_str());
  }
  std::cout << "dtypes: ";
  for (DType t : kAllDTypes) std::cout << name_of(t) << " ";
  std::cout << "\nops: ";
  for (ReduceOp o : kAllReduceOps) std::cout << name_of(o) << " ";
  std::cout << "\nbackends:\n";
  for (const auto& b : j["backends"])
    std::printf("  %-6s %s%s\n", b["name"].get<std::string>().c_str(),
                b["available"].get<bool>() ? "available: " : "unavailable: ",
                (b["available"].get<bool>() ? b["description"] : b["reason"]).get<std::string>().c_str());
  std::cout << "topologies (--topology on run, bench and predict; " << topology_dir() << "):\n";
  for (const auto& t : j["topologies"])
    std::printf("  %-14s %s\n", t["name"].get<std::string>().c_str(), t["title"].get<std::string>().c_str());
  std::cout << "lessons (" << scenario_dir() << "):\n";
  for (const auto& l : j["lessons"]) {
    const std::string file = l["file"].get<std::string>();
    std::string title = l["title"].get<std::string>();
    if (!l["valid"].get<bool>()) title += " (fails with " + l["error"].get<std::string>() + ": run collscope validate)";
    std::printf("  %-36s %s\n", file.substr(file.find_last_of('/') + 1).c_str(), title.c_str());
  }
  return 0;
}

}  // namespace collscope::app
