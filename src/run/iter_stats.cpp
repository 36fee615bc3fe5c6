// Statistics over the measured iterations only; warm-up samples never reach this file.
#include "run/iter_stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tokbench::run {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

std::optional<IterTimeStats> summarize(std::vector<double> samples) {
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  IterTimeStats s;
  s.count = static_cast<int>(samples.size());
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / s.count;
  s.median = quantile_sorted(samples, 0.5);
  s.p10 = quantile_sorted(samples, 0.1);
  s.p90 = quantile_sorted(samples, 0.9);
  s.min = samples.front();
  s.max = samples.back();
  if (s.count > 1) {
    double squares = 0;
    for (double x : samples) squares += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(squares / (s.count - 1));
  }
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0;
  return s;
}

}  // namespace tokbench::run
