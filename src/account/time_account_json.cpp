// The time account's JSON form (time_account_json.hpp).
#include "account/time_account_json.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

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

// A time no run produces is refused by the reader, so no explanation, table or bar is drawn from
// one: seconds are finite, non-negative and at most kMaxAccountSeconds (an iteration of a
// billion seconds is no benchmark, and its milliseconds and differences stay finite).
void check_seconds(double value, const std::string& key) {
  if (!(value >= 0 && value <= kMaxAccountSeconds))
    throw std::invalid_argument(fmt::format("time_account: '{}' is {}; valid: seconds from 0 to {:g}", key, value,
                                            kMaxAccountSeconds));
}

void check_count(int64_t value, const std::string& key) {
  if (value < 0) throw std::invalid_argument(fmt::format("time_account: '{}' is {}; valid: 0 or more", key, value));
}

// The values of an account read back: what make_time_account can produce (its arithmetic:
// shares in [0, 1] summing to 1, seconds summing to the iteration), within kAccountSumTolerance.
void check_values(const TimeAccount& a) {
  if (a.profiled_iterations < 1)
    throw std::invalid_argument(fmt::format("time_account: 'profiled_iters' is {}; valid: 1 or more",
                                            a.profiled_iterations));
  check_seconds(a.iteration_seconds, "iteration_s");
  if (!(a.iteration_seconds > 0)) throw std::invalid_argument("time_account: 'iteration_s' is 0; valid: more than 0");
  check_seconds(a.profiled_iteration_seconds, "profiled_iteration_s");
  check_seconds(a.profiled_range_seconds, "profiled_range_s");
  double seconds = 0, profiled = 0, shares = 0;
  for (const Category c : all_categories()) {
    const std::string name = "categories." + std::string(json_name(c));
    const CategoryTime& ct = a[c];
    check_seconds(ct.seconds, name + ".s");
    check_seconds(ct.profiled_seconds, name + ".profiled_s");
    if (!(ct.share >= 0 && ct.share <= 1 + kAccountSumTolerance))
      throw std::invalid_argument(fmt::format("time_account: '{}.share' is {}; valid: 0 to 1", name, ct.share));
    if (ct.mfu_cost && !std::isfinite(*ct.mfu_cost))
      throw std::invalid_argument(fmt::format("time_account: '{}.mfu_cost' is not finite", name));
    seconds += ct.seconds;
    profiled += ct.profiled_seconds;
    shares += ct.share;
  }
  const auto off = [](double sum, double whole) { return std::abs(sum - whole) > kAccountSumTolerance * whole; };
  if (off(seconds, a.iteration_seconds))
    throw std::invalid_argument(fmt::format("time_account: its categories sum to {:.6g} s and its iteration "
                                            "('iteration_s') is {:.6g} s; valid: the same, within {:g}%",
                                            seconds, a.iteration_seconds, kAccountSumTolerance * 100));
  if (off(profiled, a.profiled_range_seconds))
    throw std::invalid_argument(fmt::format("time_account: its categories' profiled_s sum to {:.6g} s and "
                                            "'profiled_range_s' is {:.6g} s; valid: the same, within {:g}%",
                                            profiled, a.profiled_range_seconds, kAccountSumTolerance * 100));
  if (off(shares, 1.0))
    throw std::invalid_argument(fmt::format("time_account: its categories' shares sum to {:.6g}; valid: 1, within "
                                            "{:g}%", shares, kAccountSumTolerance * 100));
  check_count(a.gemm_flops_per_iter, "gemm_flops_per_iter");
  check_count(a.attention_flops_per_iter, "attention_flops_per_iter");
  check_count(a.uncounted_matmuls, "uncounted_matmuls");
  check_count(a.model_flops_per_iter, "model_flops_per_iter");
  if (a.peak_flop_per_s && !(*a.peak_flop_per_s > 0 && std::isfinite(*a.peak_flop_per_s)))
    throw std::invalid_argument("time_account: 'peak_TFLOP_per_s' is not a positive number");
  const std::pair<const std::optional<double>*, const char*> optional_seconds[] = {
      {&a.matmul_seconds_at_ceiling, "matmul_s_at_ceiling"},
      {&a.exposed_comm_step_seconds, "exposed_comm_step_s"},
      {&a.exposed_comm_gap_seconds, "exposed_comm_gaps_s"},
      {&a.comm_in_flight_seconds, "comm_in_flight_s"}};
  for (const auto& [value, key] : optional_seconds)
    if (*value) check_seconds(**value, key);
  check_seconds(a.exposed_comm_seen_seconds, "exposed_comm_seen_s");
  for (const auto& [name, s] : a.other_top) check_seconds(s, "other_top[].profiled_s");
  if (a.device) {
    check_seconds(a.device->busy_seconds, "device.busy_s");
    check_seconds(a.device->hidden_comm_seconds, "device.hidden_comm_s");
    check_seconds(a.device->unlaunched_seconds, "device.unlaunched_s");
  }
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
  check_values(a);
  return a;
}

}  // namespace tokbench::account
