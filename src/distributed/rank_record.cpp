// The rank record's JSON form (rank_record.hpp).
#include "distributed/rank_record.hpp"

#include <nlohmann/json.hpp>

namespace tokbench::distributed {

namespace {

nlohmann::json breakdown_json(const std::optional<train::MemoryBreakdown>& b) {
  if (!b) return nullptr;
  return {{"parameters", b->parameters},     {"gradients", b->gradients},       {"optimizer_state", b->optimizer_state},
          {"activations", b->activations},   {"comm_buffers", b->comm_buffers}, {"allocator_reserve", b->allocator_reserve}};
}

std::optional<train::MemoryBreakdown> breakdown_from_json(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  train::MemoryBreakdown b;
  b.parameters = j.at("parameters").get<int64_t>();
  b.gradients = j.at("gradients").get<int64_t>();
  b.optimizer_state = j.at("optimizer_state").get<int64_t>();
  b.activations = j.at("activations").get<int64_t>();
  b.comm_buffers = j.at("comm_buffers").get<int64_t>();
  b.allocator_reserve = j.at("allocator_reserve").get<int64_t>();
  return b;
}

}  // namespace

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
          {"kernels", r.kernels},
          {"memory_breakdown", breakdown_json(r.memory_breakdown)}};
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
  r.memory_breakdown = breakdown_from_json(j.at("memory_breakdown"));
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

}  // namespace tokbench::distributed
