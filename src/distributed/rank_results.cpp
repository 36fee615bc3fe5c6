// Per-rank records through the store (rank_results.hpp), as small JSON documents.
#include "distributed/rank_results.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace tokbench::distributed {
namespace {

std::string key_of(int64_t rank) { return "tokbench/rank_record/" + std::to_string(rank); }

}  // namespace

std::vector<RankRecord> exchange_rank_records(c10d::Store& store, const RankRecord& mine, int64_t world_size,
                                              std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const std::string text = to_json(mine).dump();
  store.set(key_of(mine.rank), std::vector<uint8_t>(text.begin(), text.end()));
  if (mine.rank != 0) return {mine};
  const Clock::time_point deadline = Clock::now() + timeout;
  std::vector<RankRecord> all;
  for (int64_t r = 0; r < world_size; ++r) {
    if (r == 0) {
      all.push_back(mine);
      continue;
    }
    try {
      // What is left of the one timeout; at least 1 ms, since a zero timeout means "no
      // limit" to some stores. A rank that published already answers at once either way.
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      store.wait({key_of(r)}, std::max(left, std::chrono::milliseconds(1)));
      const auto bytes = store.get(key_of(r));
      all.push_back(rank_record_from_json(nlohmann::json::parse(std::string(bytes.begin(), bytes.end()))));
    } catch (const std::exception&) {
      all.push_back(missing_rank_record(r));
    }
  }
  return all;
}

}  // namespace tokbench::distributed
