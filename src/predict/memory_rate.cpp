// The memory copy probe (memory_rate.hpp).
#include "predict/memory_rate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
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

MemoryRate rate_from_blocks(const std::vector<ProbeBlock>& blocks, int64_t ranks, int64_t buffer_bytes) {
  if (blocks.empty() || blocks.front().alone_seconds.empty())
    throw std::invalid_argument("memory rate: at least one block of one pair needed");
  MemoryRate rate;
  rate.ranks = ranks;
  rate.buffer_bytes = buffer_bytes;
  rate.repeats = static_cast<int64_t>(blocks.front().alone_seconds.size());
  rate.blocks = static_cast<int64_t>(blocks.size());
  rate.source = "probe";
  std::size_t chosen = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < blocks[b].alone_seconds.size() && i < blocks[b].together_seconds.size(); ++i)
      ratios.push_back(blocks[b].together_seconds[i] / std::max(1e-12, blocks[b].alone_seconds[i]));
    rate.block_pair_slowdowns.push_back(median(ratios));
    if (rate.block_pair_slowdowns.back() < rate.block_pair_slowdowns[chosen]) chosen = b;
  }
  const double bytes = static_cast<double>(buffer_bytes);
  rate.alone_bytes_per_s = bytes / std::max(1e-12, median(blocks[chosen].alone_seconds));
  rate.together_bytes_per_s = bytes / std::max(1e-12, median(blocks[chosen].together_seconds));
  rate.pair_slowdown = rate.block_pair_slowdowns[chosen];
  return rate;
}

MemoryRate measure_memory_rate(int64_t ranks, int64_t buffer_bytes, int64_t repeats, int64_t blocks) {
  ranks = std::max<int64_t>(1, ranks);
  const auto n = static_cast<std::size_t>(std::max<int64_t>(1, buffer_bytes));
  std::vector<std::vector<char>> src(ranks, std::vector<char>(n, 1)), dst(ranks, std::vector<char>(n, 0));
  for (int64_t r = 0; r < ranks; ++r) timed_copy(dst[r], src[r]);  // every page touched before timing
  std::vector<ProbeBlock> measured(static_cast<std::size_t>(std::max<int64_t>(1, blocks)));
  for (std::size_t b = 0; b < measured.size(); ++b) {
    if (b > 0) std::this_thread::sleep_for(std::chrono::duration<double>(kProbeBlockGapSeconds));
    for (int64_t i = 0; i < std::max<int64_t>(1, repeats); ++i) {
      measured[b].alone_seconds.push_back(timed_copy(dst[0], src[0]));
      std::vector<double> each(ranks, 0);
      std::vector<std::thread> threads;
      for (int64_t r = 0; r < ranks; ++r) threads.emplace_back([&, r] { each[r] = timed_copy(dst[r], src[r]); });
      for (auto& t : threads) t.join();
      measured[b].together_seconds.push_back(*std::max_element(each.begin(), each.end()));
    }
  }
  return rate_from_blocks(measured, ranks, static_cast<int64_t>(n));
}

nlohmann::ordered_json to_json(const MemoryRate& rate) {
  return {{pk::source, rate.source},
          {pk::alone_GBps, rate.alone_bytes_per_s / 1e9},
          {pk::together_GBps, rate.together_bytes_per_s / 1e9},
          {pk::ranks, rate.ranks},
          {pk::pair_slowdown,
           rate.pair_slowdown > 0 ? nlohmann::ordered_json(rate.pair_slowdown) : nlohmann::ordered_json(nullptr)},
          {pk::sharing_slowdown, rate.sharing_slowdown()},
          {pk::block_pair_slowdowns, rate.block_pair_slowdowns},
          {pk::method, rate.source == "probe"
                           ? fmt::format("memcpy of {} MiB per thread, {} alternating repeats alone (one thread) and "
                                         "together ({} threads at once, the slowest's time), in {} block(s) {} s apart; "
                                         "the figures the medians of the block whose pairs' median ratio is lowest (a "
                                         "neighbour only slows a copy); measured on the machine that made the prediction",
                                         rate.buffer_bytes >> 20, rate.repeats, rate.ranks, rate.blocks,
                                         kProbeBlockGapSeconds)
                           : "given"}};
}

}  // namespace tokbench::predict
