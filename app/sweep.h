// The size sweep of `bench` and `predict`: -b, -e and -f as nccl-tests reads them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collscope/result.h"

namespace collscope::app {

// "8", "64K", "32M", "1G" (K, M, G: powers of 1024) as bytes, at most `max_bytes`
// (`limit` says what that limit is); cli.usage naming `flag` otherwise.
Result<std::uint64_t> parse_size(const std::string& text, const char* flag, std::uint64_t max_bytes,
                                 const std::string& limit);

// The sizes from -b `min` to -e `max`, each -f `factor` times the one before, refused up
// front when -f is not above 1, when -e < -b, when there would be more than `max_rows` of
// them, or when -f is so close to 1 that a step does not add one unit of `per_count`
// bytes (one element of the message).
Result<std::vector<std::uint64_t>> sweep_sizes(const std::string& min, const std::string& max, double factor,
                                               std::uint64_t per_count, std::uint64_t max_bytes,
                                               const std::string& limit, std::size_t max_rows = 1000);

}  // namespace collscope::app
