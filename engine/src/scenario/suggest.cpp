#include "scenario/suggest.h"

#include <algorithm>
#include <cctype>

#include "scenario/json.h"

namespace collscope::scenario {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance: insertions, deletions, substitutions and
  // swaps of two neighbouring letters each cost 1. Three rows are enough.
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2.swap(prev);
    prev.swap(cur);
  }
  return prev[m];
}

namespace {
std::string normalized(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}
}  // namespace

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty() || word.size() > 64) return std::nullopt;
  const std::string w = normalized(word);
  for (const auto& c : candidates)
    if (normalized(c) == w) return c;

  const std::string lower = [&] {
    std::string l;
    for (char c : word) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return l;
  }();
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(lower, c);
    // About one edit per four letters, and never a rewrite of the whole word
    // ("b" is not a misspelling of "a").
    const std::size_t limit = std::max<std::size_t>(1, std::max(lower.size(), c.size()) / 4);
    if (d <= limit && d < std::min(lower.size(), c.size()) && (!best || d < best_d)) {
      best = c;
      best_d = d;
    }
  }
  if (best) return best;
  if (lower.size() >= 3)
    for (const auto& c : candidates)
      if (c.size() > lower.size() && c.compare(0, lower.size(), lower) == 0) return c;
  return std::nullopt;
}

const std::unordered_map<std::string, std::string> kDTypeAliases = {
    {"float", "float32"}, {"single", "float32"}, {"fp32", "float32"}, {"f32", "float32"},  {"double", "float64"},
    {"fp64", "float64"},  {"f64", "float64"},    {"half", "float16"}, {"fp16", "float16"}, {"f16", "float16"},
    {"bf16", "bfloat16"}, {"int", "int32"},      {"i32", "int32"},    {"long", "int64"},   {"i64", "int64"},
    {"char", "int8"},     {"i8", "int8"},        {"byte", "uint8"},   {"uchar", "uint8"},  {"u8", "uint8"}};
const std::unordered_map<std::string, std::string> kOpAliases = {
    {"add", "sum"}, {"plus", "sum"}, {"+", "sum"},       {"mul", "prod"},    {"product", "prod"}, {"times", "prod"},
    {"*", "prod"},  {"mean", "avg"}, {"average", "avg"}, {"minimum", "min"}, {"maximum", "max"}};

std::optional<std::string> suggest(const std::string& word, const std::vector<std::string>& valid,
                                   const std::unordered_map<std::string, std::string>& aliases) {
  if (auto it = aliases.find(word); it != aliases.end()) return it->second;
  return closest(word, valid);
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string join_quoted(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + json::quote(items[i]);
  return out;
}

}  // namespace collscope::scenario
