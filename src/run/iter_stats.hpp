// Summary statistics of per-iteration times (docs/PERFORMANCE.md, "Iteration time"): mean,
// median, p10, p90, min, max, sample standard deviation and coefficient of variation.
// Percentiles interpolate linearly between order statistics (numpy's default), so results
// match a Python cross-check.
#pragma once

#include <optional>
#include <vector>

namespace tokbench::run {

struct IterTimeStats {
  int count = 0;
  double mean = 0, median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
  double stddev = 0;  // sample (n − 1); 0 for a single value
  double cv = 0;      // stddev / mean
};

// nullopt for an empty input. Units are whatever the samples are in.
std::optional<IterTimeStats> summarize(std::vector<double> samples);

// Linear-interpolated quantile q in [0, 1] of sorted, non-empty values.
double quantile_sorted(const std::vector<double>& sorted, double q);

}  // namespace tokbench::run
