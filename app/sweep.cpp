#include "sweep.h"

#include <cmath>
#include <cstdio>

namespace collscope::app {

namespace {
Error usage_error(const std::string& msg, const std::string& hint) { return make_error("cli.usage", msg, hint); }
}  // namespace

Result<std::uint64_t> parse_size(const std::string& text, const char* flag, std::uint64_t max_bytes,
                                 const std::string& limit) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    pos = 0;
  }
  std::string unit = text.substr(pos);
  double mul = 1;
  if (unit == "K" || unit == "k" || unit == "KB" || unit == "KiB") mul = 1024;
  else if (unit == "M" || unit == "m" || unit == "MB" || unit == "MiB") mul = 1024.0 * 1024;
  else if (unit == "G" || unit == "g" || unit == "GB" || unit == "GiB") mul = 1024.0 * 1024 * 1024;
  else if (!unit.empty()) pos = 0;
  if (pos == 0 || v < 0 || !std::isfinite(v))
    return usage_error(std::string("cannot read size \"") + text + "\" for " + flag,
                       "write a byte count such as 8, 64K, 32M or 1G");
  // Checked before the conversion, which would wrap (or be undefined) above 2^64.
  const double bytes = v * mul;
  if (bytes > static_cast<double>(max_bytes))
    return usage_error(std::string("size \"") + text + "\" for " + flag + " is too large",
                       "the largest size is " + std::to_string(max_bytes >> 30) + "G, " + limit);
  if (bytes != std::floor(bytes))
    return usage_error(std::string("size \"") + text + "\" for " + flag + " is not a whole number of bytes",
                       "write a byte count such as 8, 64K, 32M or 1G");
  return static_cast<std::uint64_t>(bytes);
}

Result<std::vector<std::uint64_t>> sweep_sizes(const std::string& min, const std::string& max, double factor,
                                               std::uint64_t per_count, std::uint64_t max_bytes,
                                               const std::string& limit, std::size_t max_rows) {
  auto lo = parse_size(min, "-b", max_bytes, limit);
  if (!lo) return lo.error();
  auto hi = parse_size(max, "-e", max_bytes, limit);
  if (!hi) return hi.error();
  if (!std::isfinite(factor) || !(factor > 1.0)) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", factor);
    return usage_error(std::string("-f ") + text + " must be a finite number greater than 1",
                       "use -f 2 to double the size each step");
  }
  if (*hi < *lo) return usage_error("-e is smaller than -b", "give -b <= -e");
  if (per_count == 0) per_count = 1;
  auto bytes = [](std::uint64_t b) { return std::to_string(b) + (b == 1 ? " byte" : " bytes"); };
  // An empty message does not grow: alone it is one size, the start of a sweep it is not.
  if (*lo == 0 && *hi > 0)
    return usage_error("-b 0 cannot start a sweep: no factor grows an empty message",
                       "give -b " + std::to_string(per_count) + " or more (or -b 0 -e 0 for the empty message alone)");
  std::vector<std::uint64_t> sizes;
  for (double sz = static_cast<double>(*lo);;) {
    sizes.push_back(static_cast<std::uint64_t>(sz));
    if (sz == 0) break;
    const double next = sz * factor;
    if (next > static_cast<double>(*hi) * 1.000001) break;
    if (static_cast<std::uint64_t>(next) / per_count <= static_cast<std::uint64_t>(sz) / per_count) {
      // Sizes below one count of the call (nccl-tests' rows of count 0) that do not reach
      // it in one step: start at a count of 1.
      if (static_cast<std::uint64_t>(sz) < per_count)
        return usage_error("-b " + min + " holds no element of this call (a count of 1 is " + bytes(per_count) +
                               "), and the next size, " + std::to_string(static_cast<std::uint64_t>(next)) +
                               ", none either",
                           "give -b " + std::to_string(per_count) + " or more");
      char text[64], reach[64];
      std::snprintf(text, sizeof text, "-f %.10g", factor);
      std::snprintf(reach, sizeof reach, "%.10g", next);
      // From b on, each step adds at least b (f - 1) bytes: a count of 1 once b >= per_count / (f - 1).
      const double least = std::ceil(static_cast<double>(per_count) / (factor - 1));
      const std::string hint =
          least <= static_cast<double>(*hi) / factor
              ? "give -b " + std::to_string(static_cast<std::uint64_t>(least)) + " or more, or a larger -f"
              : std::string("give a larger -f");
      return usage_error(std::string(text) + " does not grow the count by one per step (a step from " +
                             bytes(static_cast<std::uint64_t>(sz)) + " reaches only " + std::string(reach) +
                             " bytes; a count of 1 is " + bytes(per_count) + ")",
                         hint);
    }
    if (sizes.size() >= max_rows)
      return usage_error("the sweep from " + min + " to " + max + " by -f " + std::to_string(factor) +
                             " has more than " + std::to_string(max_rows) + " sizes",
                         "use a larger -f or a narrower range");
    sz = next;
  }
  return sizes;
}

}  // namespace collscope::app
