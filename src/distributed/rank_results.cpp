// Per-rank records through the store (rank_results.hpp), as small JSON documents.
#include "distributed/rank_results.hpp"

#include <nlohmann/json.hpp>

namespace tokbench::dist {
namespace {

std::string key_of(int64_t rank) { return "tokbench/rank_record/" + std::to_string(rank); }

nlohmann::json to_json(const RankRecord& r) {
  return {{"rank", r.rank},
          {"status", r.status},
          {"message", r.message},
          {"host", r.host},
          {"measured_iters", r.measured_iters},
          {"window_seconds", r.window_seconds},
          {"exposed_comm_seconds", r.exposed_comm_seconds},
          {"allocated_peak_bytes", r.allocated_peak_bytes},
          {"reserved_peak_bytes", r.reserved_peak_bytes},
          {"peak_rss_bytes", r.peak_rss_bytes},
          {"kernels", r.kernels}};
}

RankRecord from_json(const nlohmann::json& j) {
  RankRecord r;
  r.rank = j.at("rank").get<int64_t>();
  r.status = j.at("status").get<std::string>();
  r.message = j.at("message").get<std::string>();
  r.host = j.at("host").get<std::string>();
  r.measured_iters = j.at("measured_iters").get<int64_t>();
  r.window_seconds = j.at("window_seconds").get<double>();
  r.exposed_comm_seconds = j.at("exposed_comm_seconds").get<double>();
  r.allocated_peak_bytes = j.at("allocated_peak_bytes").get<int64_t>();
  r.reserved_peak_bytes = j.at("reserved_peak_bytes").get<int64_t>();
  r.peak_rss_bytes = j.at("peak_rss_bytes").get<int64_t>();
  r.kernels = j.at("kernels").get<std::string>();
  return r;
}

}  // namespace

std::vector<RankRecord> exchange_rank_records(c10d::Store& store, const RankRecord& mine, int64_t world_size,
                                              std::chrono::milliseconds timeout) {
  const std::string text = to_json(mine).dump();
  store.set(key_of(mine.rank), std::vector<uint8_t>(text.begin(), text.end()));
  if (mine.rank != 0) return {mine};
  std::vector<RankRecord> all;
  for (int64_t r = 0; r < world_size; ++r) {
    if (r == 0) {
      all.push_back(mine);
      continue;
    }
    try {
      store.wait({key_of(r)}, timeout);
      const auto bytes = store.get(key_of(r));
      all.push_back(from_json(nlohmann::json::parse(std::string(bytes.begin(), bytes.end()))));
    } catch (const std::exception& e) {
      RankRecord missing;
      missing.rank = r;
      missing.status = "rank_failed";
      missing.message = "rank " + std::to_string(r) + " reported no result";
      missing.reported = false;
      all.push_back(missing);
    }
  }
  return all;
}

}  // namespace tokbench::dist
