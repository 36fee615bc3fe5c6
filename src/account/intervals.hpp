// A union of half-open time intervals [start, end) in nanoseconds, and how much of a span it
// covers. The time account uses it for the collectives in flight on a backend's threads: a gap
// of the loop's thread that falls while one is in flight is exposed communication
// (profiled_pass.hpp). Torch-free.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace tokbench::account {

class IntervalUnion {
 public:
  // Empty or reversed intervals are ignored.
  void add(int64_t start_ns, int64_t end_ns);
  // Nanoseconds of [start_ns, end_ns) that some added interval covers (0 for an empty span).
  int64_t covered(int64_t start_ns, int64_t end_ns) const;
  bool empty() const { return raw_.empty(); }

 private:
  void merge() const;
  std::vector<std::pair<int64_t, int64_t>> raw_;
  // Sorted, disjoint, made from raw_ on first use after an add.
  mutable std::vector<std::pair<int64_t, int64_t>> merged_;
  mutable bool dirty_ = false;
};

}  // namespace tokbench::account
