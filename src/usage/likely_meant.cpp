// likely_meant.hpp.
#include "usage/likely_meant.hpp"

#include <algorithm>

namespace tokbench::usage {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the distance table at a time: O(|a|·|b|) time, O(|b|) memory.
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> likely_meant(std::string_view word, const std::vector<std::string>& valid) {
  const std::size_t limit = word.size() > 10 ? 3 : 2;
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  bool tie = false;
  for (const std::string& candidate : valid) {
    if (candidate == word) return candidate;
    const std::size_t distance = edit_distance(word, candidate);
    if (2 * distance > word.size()) continue;  // more than half the word changed: not a typo of it
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
      tie = false;
    } else if (best && distance == best_distance && candidate != *best) {
      tie = true;
    }
  }
  if (tie) return std::nullopt;
  return best;
}

}  // namespace tokbench::usage
