// The word a user probably meant: for a refusal's "did you mean X?" (an option's choice, an option
// name, a sweep key). A typo is a few characters off its word; a word far from every valid one is
// not a typo of any, and a word as near two valid ones could be either, so neither is named.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tokbench::usage {

// Levenshtein distance: single-character insertions, deletions and substitutions from a to b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The one word of `valid` nearest `word` when it is at most two edits away (three for words longer
// than ten characters: `micro-bach-size`) and no more than half of `word`'s characters changed;
// nullopt when none is, or when two are at that distance.
std::optional<std::string> likely_meant(std::string_view word, const std::vector<std::string>& valid);

}  // namespace tokbench::usage
