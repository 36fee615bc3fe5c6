// The rank record's JSON form (rank_record.hpp).
#include "distributed/rank_record.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "account/category.hpp"
#include "account/time_account_json.hpp"
#include "distributed/rank_message_keys.hpp"

namespace tokbench::distributed {

namespace {

namespace rmk = rank_message_key;

nlohmann::json breakdown_json(const std::optional<train::MemoryBreakdown>& b) {
  if (!b) return nullptr;
  return {{rmk::parameters, b->parameters},           {rmk::gradients, b->gradients},
          {rmk::optimizer_state, b->optimizer_state}, {rmk::activations, b->activations},
          {rmk::comm_buffers, b->comm_buffers},       {rmk::allocator_reserve, b->allocator_reserve}};
}

std::optional<train::MemoryBreakdown> breakdown_from_json(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  train::MemoryBreakdown b;
  b.parameters = j.at(rmk::parameters).get<int64_t>();
  b.gradients = j.at(rmk::gradients).get<int64_t>();
  b.optimizer_state = j.at(rmk::optimizer_state).get<int64_t>();
  b.activations = j.at(rmk::activations).get<int64_t>();
  b.comm_buffers = j.at(rmk::comm_buffers).get<int64_t>();
  b.allocator_reserve = j.at(rmk::allocator_reserve).get<int64_t>();
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
  return {{rmk::source, t->source},
          {rmk::device, nlohmann::json(account::to_json(t->device))},
          {rmk::iterations, p.iterations},
          {rmk::seconds, seconds},
          {rmk::range_seconds, p.range_seconds},
          {rmk::gemm_flops, p.gemm_flops},
          {rmk::attention_flops, p.attention_flops},
          {rmk::uncounted_matmuls, p.uncounted_matmuls},
          {rmk::events, p.events},
          {rmk::other_by_name, other},
          {rmk::clock_seconds, t->clock_seconds},
          {rmk::exposed_comm_seconds, t->exposed_comm_seconds},
          {rmk::exposed_comm_source, t->exposed_comm_source},
          {rmk::comm_in_flight_seconds, p.comm_in_flight_seconds},
          {rmk::exposed_comm_gap_seconds, p.exposed_comm_gap_seconds}};
}

std::optional<train::ProfiledTimeAccount> pass_from_json(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  train::ProfiledTimeAccount t;
  account::ProfiledPass& p = t.pass;
  p.iterations = j.at(rmk::iterations).get<int64_t>();
  for (const account::Category c : account::all_categories())
    p.seconds[account::index_of(c)] = j.at(rmk::seconds).at(std::string(account::json_name(c))).get<double>();
  p.range_seconds = j.at(rmk::range_seconds).get<double>();
  p.gemm_flops = j.at(rmk::gemm_flops).get<int64_t>();
  p.attention_flops = j.at(rmk::attention_flops).get<int64_t>();
  p.uncounted_matmuls = j.at(rmk::uncounted_matmuls).get<int64_t>();
  p.events = j.at(rmk::events).get<int64_t>();
  for (const auto& item : j.at(rmk::other_by_name))
    p.other_by_name.emplace_back(item.at(0).get<std::string>(), item.at(1).get<double>());
  t.clock_seconds = j.at(rmk::clock_seconds).get<double>();
  t.exposed_comm_seconds = j.at(rmk::exposed_comm_seconds).get<double>();
  t.exposed_comm_source = j.at(rmk::exposed_comm_source).get<std::string>();
  p.comm_in_flight_seconds = j.at(rmk::comm_in_flight_seconds).get<double>();
  p.exposed_comm_gap_seconds = j.at(rmk::exposed_comm_gap_seconds).get<double>();
  t.source = j.at(rmk::source).get<std::string>();
  // The same figures as the record's `device`, summed over the pass rather than per iteration.
  t.device = account::device_figures_from_json(nlohmann::ordered_json(j.at(rmk::device)));
  return t;
}

}  // namespace

nlohmann::json to_json(const RankRecord& r) {
  return {{rmk::rank, r.rank},
          {rmk::status, r.status},
          {rmk::message, r.message},
          {rmk::host, r.host},
          {rmk::measured_iters, r.measured_iters},
          {rmk::window_seconds, r.window_seconds},
          {rmk::exposed_comm_seconds, r.exposed_comm_seconds},
          {rmk::allocated_peak_bytes, r.allocated_peak_bytes},
          {rmk::reserved_peak_bytes, r.reserved_peak_bytes},
          {rmk::peak_rss_bytes, r.peak_rss_bytes},
          {rmk::kernels, r.kernels},
          {rmk::memory_breakdown, breakdown_json(r.memory_breakdown)},
          {rmk::time_account, pass_json(r.time_account)},
          {rmk::time_account_message, r.time_account_message}};
}

RankRecord rank_record_from_json(const nlohmann::json& j) {
  RankRecord r;
  r.rank = j.at(rmk::rank).get<int64_t>();
  r.status = j.at(rmk::status).get<std::string>();
  r.message = j.at(rmk::message).get<std::string>();
  r.host = j.at(rmk::host).get<std::string>();
  r.measured_iters = j.at(rmk::measured_iters).get<int64_t>();
  r.window_seconds = j.at(rmk::window_seconds).get<double>();
  r.exposed_comm_seconds = j.at(rmk::exposed_comm_seconds).get<double>();
  r.allocated_peak_bytes = j.at(rmk::allocated_peak_bytes).get<int64_t>();
  r.reserved_peak_bytes = j.at(rmk::reserved_peak_bytes).get<int64_t>();
  r.peak_rss_bytes = j.at(rmk::peak_rss_bytes).get<int64_t>();
  r.kernels = j.at(rmk::kernels).get<std::string>();
  r.memory_breakdown = breakdown_from_json(j.at(rmk::memory_breakdown));
  if (const auto it = j.find(rmk::time_account); it != j.end()) r.time_account = pass_from_json(*it);
  r.time_account_message = j.at(rmk::time_account_message).get<std::string>();
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
