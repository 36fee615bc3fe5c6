// The union of intervals (intervals.hpp): merged once, then each query is a binary search and a
// walk over the merged intervals it meets.
#include "account/intervals.hpp"

#include <algorithm>

namespace tokbench::account {

void IntervalUnion::add(int64_t start_ns, int64_t end_ns) {
  if (end_ns <= start_ns) return;
  raw_.emplace_back(start_ns, end_ns);
  dirty_ = true;
}

void IntervalUnion::merge() const {
  if (!dirty_) return;
  std::vector<std::pair<int64_t, int64_t>> sorted = raw_;
  std::sort(sorted.begin(), sorted.end());
  merged_.clear();
  for (const auto& [s, e] : sorted) {
    if (!merged_.empty() && s <= merged_.back().second) {
      merged_.back().second = std::max(merged_.back().second, e);
    } else {
      merged_.emplace_back(s, e);
    }
  }
  dirty_ = false;
}

int64_t IntervalUnion::covered(int64_t start_ns, int64_t end_ns) const {
  if (end_ns <= start_ns || raw_.empty()) return 0;
  merge();
  // The first merged interval that ends after the span starts.
  auto it = std::upper_bound(merged_.begin(), merged_.end(), start_ns,
                             [](int64_t t, const std::pair<int64_t, int64_t>& iv) { return t < iv.second; });
  int64_t total = 0;
  for (; it != merged_.end() && it->first < end_ns; ++it)
    total += std::min(end_ns, it->second) - std::max(start_ns, it->first);
  return total;
}

}  // namespace tokbench::account
