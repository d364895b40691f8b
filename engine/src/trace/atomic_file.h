// Writing an output file so that readers see either the old file or the whole new
// one, never half of it (docs/ARCHITECTURE.md, "Errors": bad input never leaves a half-written file).
#pragma once

#include <string>
#include <string_view>

#include "collscope/result.h"

namespace collscope {

// Writes `data` to a new temporary file next to `path`, flushes it to disk and
// renames it over `path`. On any failure the temporary file is removed and the
// error (id `error_id`, exit code 2) names the path and the operating system's reason.
Status write_file_atomically(const std::string& path, std::string_view data, const std::string& error_id);

}  // namespace collscope
