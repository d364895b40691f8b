// "Did you mean ...?" for misspelled keys and names, and lists of valid choices.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collscope/types.h"

namespace collscope::scenario {

// Edit distance with adjacent transpositions ("sned" -> "send" is 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate the user most likely meant, or nothing when none is close:
// the same word up to case, '-', '_' and spaces ("all-reduce" -> "allreduce"),
// else the nearest by edit distance within about a quarter of the word's length,
// else a candidate that the word abbreviates ("algo" -> "algorithm").
// Ties go to the earlier candidate.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);

// Names people often type for a dtype or an operator, used only to suggest the real one.
extern const std::unordered_map<std::string, std::string> kDTypeAliases;
extern const std::unordered_map<std::string, std::string> kOpAliases;

// An alias's meaning, else closest().
std::optional<std::string> suggest(const std::string& word, const std::vector<std::string>& valid,
                                   const std::unordered_map<std::string, std::string>& aliases = {});

// The names of every value of an enum list (kAllDTypes, kAllCollectives, ...).
template <class E, std::size_t N>
std::vector<std::string> names_of(const E (&all)[N]) {
  std::vector<std::string> v;
  for (E e : all) v.emplace_back(name_of(e));
  return v;
}

// a, b, c
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");
// "a", "b", "c": each quoted and escaped with json::quote (the items may come from the user)
std::string join_quoted(const std::vector<std::string>& items);

}  // namespace collscope::scenario
