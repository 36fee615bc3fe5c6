// The rank record's JSON form (rank_record.hpp).
#include "distributed/rank_record.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "account/category.hpp"
#include "account/time_account_json.hpp"

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

// "other"'s largest events travel too, as many as an account names and a few more.
constexpr std::size_t kOtherByNameSent = 16;

nlohmann::json pass_json(const std::optional<train::ProfiledTimeAccount>& t) {
  if (!t) return nullptr;
  const account::ProfiledPass& p = t->pass;
  nlohmann::json seconds = nlohmann::json::object();
  for (const account::Category c : account::all_categories())
    seconds[std::string(account::json_name(c))] = p.seconds[account::index_of(c)];
  nlohmann::json other = nlohmann::json::array();
  for (std::size_t i = 0; i < std::min(p.other_by_name.size(), kOtherByNameSent); ++i)
    other.push_back({p.other_by_name[i].first, p.other_by_name[i].second});
  return {{"source", t->source},                  {"device", nlohmann::json(account::to_json(t->device))},
          {"iterations", p.iterations},           {"seconds", seconds},
          {"range_seconds", p.range_seconds},     {"gemm_flops", p.gemm_flops},
          {"attention_flops", p.attention_flops}, {"uncounted_matmuls", p.uncounted_matmuls},
          {"events", p.events},                   {"other_by_name", other},
          {"clock_seconds", t->clock_seconds},    {"exposed_comm_seconds", t->exposed_comm_seconds},
          {"exposed_comm_source", t->exposed_comm_source},
          {"comm_in_flight_seconds", p.comm_in_flight_seconds},
          {"exposed_comm_gap_seconds", p.exposed_comm_gap_seconds}};
}

std::optional<train::ProfiledTimeAccount> pass_from_json(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  train::ProfiledTimeAccount t;
  account::ProfiledPass& p = t.pass;
  p.iterations = j.at("iterations").get<int64_t>();
  for (const account::Category c : account::all_categories())
    p.seconds[account::index_of(c)] = j.at("seconds").at(std::string(account::json_name(c))).get<double>();
  p.range_seconds = j.at("range_seconds").get<double>();
  p.gemm_flops = j.at("gemm_flops").get<int64_t>();
  p.attention_flops = j.at("attention_flops").get<int64_t>();
  p.uncounted_matmuls = j.at("uncounted_matmuls").get<int64_t>();
  p.events = j.at("events").get<int64_t>();
  for (const auto& item : j.at("other_by_name"))
    p.other_by_name.emplace_back(item.at(0).get<std::string>(), item.at(1).get<double>());
  t.clock_seconds = j.at("clock_seconds").get<double>();
  t.exposed_comm_seconds = j.at("exposed_comm_seconds").get<double>();
  t.exposed_comm_source = j.at("exposed_comm_source").get<std::string>();
  p.comm_in_flight_seconds = j.at("comm_in_flight_seconds").get<double>();
  p.exposed_comm_gap_seconds = j.at("exposed_comm_gap_seconds").get<double>();
  t.source = j.at("source").get<std::string>();
  // The same figures as the record's `device`, summed over the pass rather than per iteration.
  t.device = account::device_figures_from_json(nlohmann::ordered_json(j.at("device")));
  return t;
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
          {"memory_breakdown", breakdown_json(r.memory_breakdown)},
          {"time_account", pass_json(r.time_account)},
          {"time_account_message", r.time_account_message}};
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
  if (const auto it = j.find("time_account"); it != j.end()) r.time_account = pass_from_json(*it);
  r.time_account_message = j.at("time_account_message").get<std::string>();
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
