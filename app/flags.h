// Validators of the command line's numbers, shared by every command's flags.
#pragma once
#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <string>

namespace collscope::app {

// A whole number written in decimal that fits the flag's type, at least `lo`. CLI11's
// own conversion accepts 0x10 and 1e3 and saturates 99999999999999999999 to the largest
// value, which would then be reported (and used) as a number the user never wrote.
template <class T>
CLI::Validator whole_number(T lo = std::numeric_limits<T>::min(), const char* below = "", const char* range = nullptr) {
  return CLI::Validator(
      [lo, below, range](std::string& text) -> std::string {
        T v{};
        const char* first = text.data();
        const char* last = first + text.size();
        const auto [p, ec] = std::from_chars(first, last, v);
        if (text.empty() || ec == std::errc::invalid_argument || p != last)
          return "\"" + text + "\" is not a whole number (write digits, e.g. 4)";
        if (ec == std::errc::result_out_of_range)
          return "\"" + text + "\" is out of range " +
                 (range ? std::string(range)
                        : std::to_string(std::numeric_limits<T>::min()) + ".." +
                              std::to_string(std::numeric_limits<T>::max()));
        if (v < lo) return text + " is below " + std::to_string(lo) + below;
        return {};
      },
      "", "whole_number");
}

// A count of nodes or of ranks per node: 1 or more; leaving the flag out means the topology's.
template <class T>
CLI::Validator one_or_more() {
  return whole_number<T>(1, " (leave the flag out for the topology's own)");
}

}  // namespace collscope::app
