// The memory copy probe (memory_rate.hpp).
#include "predict/memory_rate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "predict/prediction_keys.hpp"

namespace tokbench::predict {

namespace pk = prediction_key;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Seconds for one memcpy of the thread's whole buffer.
double timed_copy(std::vector<char>& dst, const std::vector<char>& src) {
  const auto start = std::chrono::steady_clock::now();
  std::memcpy(dst.data(), src.data(), src.size());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

double MemoryRate::sharing_slowdown() const {
  if (pair_slowdown > 0) return std::max(1.0, pair_slowdown);
  if (!(alone_bytes_per_s > 0) || !(together_bytes_per_s > 0)) return 1.0;
  // Ranks copying at once do not speed each other up: below 1 is the probe's noise.
  return std::max(1.0, alone_bytes_per_s / together_bytes_per_s);
}

MemoryRate measure_memory_rate(int64_t ranks, int64_t buffer_bytes, int64_t repeats) {
  ranks = std::max<int64_t>(1, ranks);
  const auto n = static_cast<std::size_t>(std::max<int64_t>(1, buffer_bytes));
  std::vector<std::vector<char>> src(ranks, std::vector<char>(n, 1)), dst(ranks, std::vector<char>(n, 0));
  for (int64_t r = 0; r < ranks; ++r) timed_copy(dst[r], src[r]);  // every page touched before timing
  std::vector<double> alone, together, ratios;
  for (int64_t i = 0; i < repeats; ++i) {
    alone.push_back(timed_copy(dst[0], src[0]));
    std::vector<double> each(ranks, 0);
    std::vector<std::thread> threads;
    for (int64_t r = 0; r < ranks; ++r) threads.emplace_back([&, r] { each[r] = timed_copy(dst[r], src[r]); });
    for (auto& t : threads) t.join();
    together.push_back(*std::max_element(each.begin(), each.end()));
    ratios.push_back(together.back() / std::max(1e-12, alone.back()));
  }
  MemoryRate rate;
  rate.ranks = ranks;
  rate.buffer_bytes = static_cast<int64_t>(n);
  rate.repeats = repeats;
  rate.alone_bytes_per_s = static_cast<double>(n) / std::max(1e-12, median(alone));
  rate.together_bytes_per_s = static_cast<double>(n) / std::max(1e-12, median(together));
  rate.pair_slowdown = median(ratios);
  rate.source = "probe";
  return rate;
}

nlohmann::ordered_json to_json(const MemoryRate& rate) {
  return {{pk::source, rate.source},
          {pk::alone_GBps, rate.alone_bytes_per_s / 1e9},
          {pk::together_GBps, rate.together_bytes_per_s / 1e9},
          {pk::ranks, rate.ranks},
          {pk::pair_slowdown,
           rate.pair_slowdown > 0 ? nlohmann::ordered_json(rate.pair_slowdown) : nlohmann::ordered_json(nullptr)},
          {pk::sharing_slowdown, rate.sharing_slowdown()},
          {pk::method, rate.source == "probe"
                           ? fmt::format("memcpy of {} MiB per thread, {} alternating repeats alone (one thread) and "
                                         "together ({} threads at once, the slowest's time), the medians; the sharing "
                                         "slowdown the median of the pairs' ratios; measured on the machine that made "
                                         "the prediction",
                                         rate.buffer_bytes >> 20, rate.repeats, rate.ranks)
                           : "given"}};
}

}  // namespace tokbench::predict
