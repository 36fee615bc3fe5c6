// The rank record's JSON form (rank_record.hpp).
#include "distributed/rank_record.hpp"

#include <nlohmann/json.hpp>

namespace tokbench::dist {

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

RankRecord rank_record_from_json(const nlohmann::json& j) {
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

RankRecord missing_rank_record(int64_t rank) {
  RankRecord missing;
  missing.rank = rank;
  missing.status = "rank_failed";
  missing.message = "rank " + std::to_string(rank) + " reported no result";
  missing.reported = false;
  return missing;
}

}  // namespace tokbench::dist
