// The figures of a benchmark of collectives (comm_figures.hpp).
#include "comm/comm_figures.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <numeric>

namespace tokbench::comm {

const char* to_string(Collective collective) {
  switch (collective) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::broadcast: return "broadcast";
  }
  return "?";
}

std::optional<Collective> collective_from_string(const std::string& name) {
  for (Collective c : kCollectives)
    if (name == to_string(c)) return c;
  return std::nullopt;
}

double bus_bandwidth_factor(Collective collective, int64_t world_size) {
  const double n = static_cast<double>(world_size);
  switch (collective) {
    case Collective::all_reduce: return 2.0 * (n - 1.0) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter: return (n - 1.0) / n;
    case Collective::broadcast: return 1.0;
  }
  return 1.0;
}

SizePoint size_point(Collective collective, int64_t requested_bytes, int64_t element_bytes, int64_t world_size) {
  // all_gather and reduce_scatter split the array evenly over the ranks.
  const bool split = collective == Collective::all_gather || collective == Collective::reduce_scatter;
  const int64_t unit = split ? element_bytes * world_size : element_bytes;
  SizePoint point;
  point.size_bytes = requested_bytes / unit * unit;
  point.count = point.size_bytes / element_bytes;
  return point;
}

BufferCounts buffer_counts(Collective collective, int64_t count, int64_t world_size) {
  switch (collective) {
    case Collective::all_reduce:
    case Collective::broadcast: return {count, count};
    case Collective::all_gather: return {count / world_size, count};
    case Collective::reduce_scatter: return {count, count / world_size};
  }
  return {count, count};
}

std::vector<int64_t> size_sweep(int64_t min_bytes, int64_t max_bytes, int64_t step_factor) {
  std::vector<int64_t> sizes;
  for (int64_t size = min_bytes; size > 0 && size <= max_bytes;) {
    sizes.push_back(size);
    if (size > max_bytes / step_factor) break;  // the next one is past max (and might overflow)
    size *= step_factor;
  }
  return sizes;
}

std::optional<int64_t> parse_byte_size(const std::string& text) {
  std::string digits = text;
  int64_t unit = 1;
  auto strip = [&digits](const std::string& suffix) {
    if (digits.size() > suffix.size() && digits.compare(digits.size() - suffix.size(), suffix.size(), suffix) == 0) {
      digits.resize(digits.size() - suffix.size());
      return true;
    }
    return false;
  };
  if (!strip("iB")) strip("B");
  if (!digits.empty()) {
    const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back())));
    const int64_t units[] = {int64_t{1} << 10, int64_t{1} << 20, int64_t{1} << 30};
    const std::string letters = "KMG";
    if (const auto at = letters.find(last); at != std::string::npos) {
      unit = units[at];
      digits.pop_back();
    }
  }
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  constexpr int64_t kLimit = int64_t{1} << 62;
  if (error != std::errc() || end != digits.data() + digits.size() || value <= 0 || value > kLimit / unit)
    return std::nullopt;
  return value * unit;
}

std::string byte_size_text(int64_t bytes) {
  const char* names[] = {"G", "M", "K"};
  const int shifts[] = {30, 20, 10};
  for (int i = 0; i < 3; ++i) {
    const int64_t unit = int64_t{1} << shifts[i];
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + names[i];
  }
  return std::to_string(bytes);
}

double algorithm_bandwidth_GBps(int64_t size_bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(size_bytes) / seconds / 1e9 : 0.0;
}

IterationSummary summarize(const std::vector<double>& seconds) {
  IterationSummary s;
  if (seconds.empty()) return s;
  s.mean_seconds = std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(seconds.size());
  const auto [low, high] = std::minmax_element(seconds.begin(), seconds.end());
  s.min_seconds = *low;
  s.max_seconds = *high;
  return s;
}

}  // namespace tokbench::comm
