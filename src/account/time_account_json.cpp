// The time account's JSON form (time_account_json.hpp).
#include "account/time_account_json.hpp"

#include <stdexcept>
#include <string>

namespace tokbench::account {
namespace {

using json = nlohmann::ordered_json;

json or_null(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

const json& at(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) throw std::invalid_argument(std::string("time_account: no key '") + key + "'");
  return *it;
}

double number(const json& j, const char* key) {
  const json& v = at(j, key);
  if (!v.is_number()) throw std::invalid_argument(std::string("time_account: '") + key + "' is not a number");
  return v.get<double>();
}

int64_t whole(const json& j, const char* key) {
  const json& v = at(j, key);
  if (!v.is_number_integer()) throw std::invalid_argument(std::string("time_account: '") + key + "' is not a whole number");
  return v.get<int64_t>();
}

std::optional<double> number_or_null(const json& j, const char* key) {
  const json& v = at(j, key);
  if (v.is_null()) return std::nullopt;
  return number(j, key);
}

std::string text(const json& j, const char* key) {
  const json& v = at(j, key);
  if (!v.is_string()) throw std::invalid_argument(std::string("time_account: '") + key + "' is not text");
  return v.get<std::string>();
}

}  // namespace

json to_json(const std::optional<DeviceFigures>& device) {
  if (!device) return nullptr;
  return {{"busy_s", device->busy_seconds},
          {"hidden_comm_s", device->hidden_comm_seconds},
          {"activities", device->activities},
          {"unlaunched_activities", device->unlaunched_activities},
          {"unlaunched_s", device->unlaunched_seconds}};
}

std::optional<DeviceFigures> device_figures_from_json(const json& d) {
  if (d.is_null()) return std::nullopt;
  DeviceFigures f;
  f.busy_seconds = number(d, "busy_s");
  f.hidden_comm_seconds = number(d, "hidden_comm_s");
  f.activities = whole(d, "activities");
  f.unlaunched_activities = whole(d, "unlaunched_activities");
  f.unlaunched_seconds = number(d, "unlaunched_s");
  return f;
}

json to_json(const TimeAccount& a) {
  json categories = json::object();
  for (const Category c : all_categories()) {
    const CategoryTime& ct = a[c];
    categories[std::string(json_name(c))] = {{"s", ct.seconds},
                                             {"profiled_s", ct.profiled_seconds},
                                             {"share", ct.share},
                                             {"mfu_cost", or_null(ct.mfu_cost)}};
  }
  json other_top = json::array();
  for (const auto& [name, seconds] : a.other_top) other_top.push_back({{"name", name}, {"profiled_s", seconds}});
  return {{"source", a.source},
          {"rank", a.rank ? json(*a.rank) : json(nullptr)},
          {"profiled_iters", a.profiled_iterations},
          {"iteration_s", a.iteration_seconds},
          {"profiled_iteration_s", a.profiled_iteration_seconds},
          {"profiled_range_s", a.profiled_range_seconds},
          {"categories", categories},
          {"gemm_flops_per_iter", a.gemm_flops_per_iter},
          {"attention_flops_per_iter", a.attention_flops_per_iter},
          {"uncounted_matmuls", a.uncounted_matmuls},
          {"model_flops_per_iter", a.model_flops_per_iter},
          {"peak_TFLOP_per_s", a.peak_flop_per_s ? json(*a.peak_flop_per_s / 1e12) : json(nullptr)},
          {"peak_source", a.peak_source},
          {"matmul_s_at_ceiling", or_null(a.matmul_seconds_at_ceiling)},
          {"beyond_model_mfu_cost", or_null(a.beyond_model_mfu_cost)},
          {"mfu", or_null(a.mfu)},
          {"exposed_comm_source", a.exposed_comm_source},
          {"exposed_comm_step_s", or_null(a.exposed_comm_step_seconds)},
          {"exposed_comm_seen_s", a.exposed_comm_seen_seconds},
          {"exposed_comm_gaps_s", or_null(a.exposed_comm_gap_seconds)},
          {"comm_in_flight_s", or_null(a.comm_in_flight_seconds)},
          {"device", to_json(a.device)},
          {"other_top", other_top}};
}

TimeAccount time_account_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("time_account: not an object");
  TimeAccount a;
  a.source = text(j, "source");
  // Records written before the account was made on many ranks have neither the rank nor the
  // exposed communication's two measures: one rank, none.
  if (j.contains("rank") && !j.at("rank").is_null()) a.rank = whole(j, "rank");
  if (j.contains("exposed_comm_step_s")) a.exposed_comm_step_seconds = number_or_null(j, "exposed_comm_step_s");
  if (j.contains("exposed_comm_seen_s")) a.exposed_comm_seen_seconds = number(j, "exposed_comm_seen_s");
  // Records from before the Python executors' many ranks: the step's measure, and no backend's view.
  if (j.contains("exposed_comm_source")) a.exposed_comm_source = text(j, "exposed_comm_source");
  if (j.contains("exposed_comm_gaps_s")) a.exposed_comm_gap_seconds = number_or_null(j, "exposed_comm_gaps_s");
  if (j.contains("comm_in_flight_s")) a.comm_in_flight_seconds = number_or_null(j, "comm_in_flight_s");
  // Records from before the CUDA account have no "device"; CPU records have it null.
  if (j.contains("device")) a.device = device_figures_from_json(j.at("device"));
  a.profiled_iterations = whole(j, "profiled_iters");
  a.iteration_seconds = number(j, "iteration_s");
  a.profiled_iteration_seconds = number(j, "profiled_iteration_s");
  a.profiled_range_seconds = number(j, "profiled_range_s");
  const json& categories = at(j, "categories");
  if (!categories.is_object()) throw std::invalid_argument("time_account: 'categories' is not an object");
  for (const Category c : all_categories()) {
    const std::string name(json_name(c));
    const json& entry = at(categories, name.c_str());
    if (!entry.is_object()) throw std::invalid_argument("time_account: categories." + name + " is not an object");
    CategoryTime& ct = a.categories[index_of(c)];
    ct.seconds = number(entry, "s");
    ct.profiled_seconds = number(entry, "profiled_s");
    ct.share = number(entry, "share");
    ct.mfu_cost = number_or_null(entry, "mfu_cost");
  }
  a.gemm_flops_per_iter = whole(j, "gemm_flops_per_iter");
  a.attention_flops_per_iter = whole(j, "attention_flops_per_iter");
  a.uncounted_matmuls = whole(j, "uncounted_matmuls");
  a.model_flops_per_iter = whole(j, "model_flops_per_iter");
  if (const auto tflops = number_or_null(j, "peak_TFLOP_per_s")) a.peak_flop_per_s = *tflops * 1e12;
  a.peak_source = text(j, "peak_source");
  a.matmul_seconds_at_ceiling = number_or_null(j, "matmul_s_at_ceiling");
  a.beyond_model_mfu_cost = number_or_null(j, "beyond_model_mfu_cost");
  a.mfu = number_or_null(j, "mfu");
  const json& other_top = at(j, "other_top");
  if (!other_top.is_array()) throw std::invalid_argument("time_account: 'other_top' is not an array");
  for (const json& item : other_top) a.other_top.emplace_back(text(item, "name"), number(item, "profiled_s"));
  return a;
}

}  // namespace tokbench::account
