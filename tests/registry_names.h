// The registry's algorithm names in plain standard types, for test files that cannot
// include the engine's headers (test_cli.cpp calls its helper `collscope`, which would
// clash with the namespace).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace test_registry {

// Every built-in algorithm (native ones excluded).
std::size_t algorithm_count();
// The algorithms of one collective, by its CLI name ("allgather"); empty if unknown.
std::vector<std::string> algorithm_names(const std::string& collective);

}  // namespace test_registry
