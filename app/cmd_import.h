// `collscope import`, `collscope record` and `collscope analyze` on a job's files
// (cmd_import.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli.h"

namespace collscope::app {

struct ImportFlags {
  CLI::App* import_cmd = nullptr;
  CLI::App* record_cmd = nullptr;
  // import
  std::vector<std::string> files;
  std::string output;
  bool json = false;
  std::uint64_t scale_down = 1;
  std::vector<std::string> sizes;
  int compute_digits = -1;
  // record
  std::string record_dir;
  std::vector<std::string> command;
};

void add_import_commands(CLI::App& app, ImportFlags& f);
int cmd_import(const ImportFlags& f);
int cmd_record(const ImportFlags& f);
// `collscope analyze` on PyTorch or NCCL files (cmd_analyze.cpp sends them here).
int cmd_analyze_job(const std::vector<std::string>& files, bool json);

}  // namespace collscope::app
