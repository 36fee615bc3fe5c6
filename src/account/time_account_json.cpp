// The time account's JSON form (time_account_json.hpp).
#include "account/time_account_json.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "account/time_account_keys.hpp"

namespace tokbench::account {
namespace {

using json = nlohmann::ordered_json;
namespace tak = time_account_key;

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
    throw std::invalid_argument(fmt::format("time_account: '{}' is {}; valid: 1 or more", tak::profiled_iters,
                                            a.profiled_iterations));
  check_seconds(a.iteration_seconds, tak::iteration_s);
  if (!(a.iteration_seconds > 0))
    throw std::invalid_argument(fmt::format("time_account: '{}' is 0; valid: more than 0", tak::iteration_s));
  check_seconds(a.profiled_iteration_seconds, tak::profiled_iteration_s);
  check_seconds(a.profiled_range_seconds, tak::profiled_range_s);
  double seconds = 0, profiled = 0, shares = 0;
  for (const Category c : all_categories()) {
    const std::string name = fmt::format("{}.{}", tak::categories, json_name(c));
    const CategoryTime& ct = a[c];
    check_seconds(ct.seconds, fmt::format("{}.{}", name, tak::s));
    check_seconds(ct.profiled_seconds, fmt::format("{}.{}", name, tak::profiled_s));
    if (!(ct.share >= 0 && ct.share <= 1 + kAccountSumTolerance))
      throw std::invalid_argument(
          fmt::format("time_account: '{}.{}' is {}; valid: 0 to 1", name, tak::share, ct.share));
    if (ct.mfu_cost && !std::isfinite(*ct.mfu_cost))
      throw std::invalid_argument(fmt::format("time_account: '{}.{}' is not finite", name, tak::mfu_cost));
    seconds += ct.seconds;
    profiled += ct.profiled_seconds;
    shares += ct.share;
  }
  const auto off = [](double sum, double whole) { return std::abs(sum - whole) > kAccountSumTolerance * whole; };
  if (off(seconds, a.iteration_seconds))
    throw std::invalid_argument(fmt::format("time_account: its categories sum to {:.6g} s and its iteration "
                                            "('{}') is {:.6g} s; valid: the same, within {:g}%",
                                            seconds, tak::iteration_s, a.iteration_seconds,
                                            kAccountSumTolerance * 100));
  if (off(profiled, a.profiled_range_seconds))
    throw std::invalid_argument(fmt::format("time_account: its categories' {} sum to {:.6g} s and "
                                            "'{}' is {:.6g} s; valid: the same, within {:g}%",
                                            tak::profiled_s, profiled, tak::profiled_range_s, a.profiled_range_seconds,
                                            kAccountSumTolerance * 100));
  if (off(shares, 1.0))
    throw std::invalid_argument(fmt::format("time_account: its categories' shares sum to {:.6g}; valid: 1, within "
                                            "{:g}%", shares, kAccountSumTolerance * 100));
  check_count(a.gemm_flops_per_iter, tak::gemm_flops_per_iter);
  check_count(a.attention_flops_per_iter, tak::attention_flops_per_iter);
  check_count(a.uncounted_matmuls, tak::uncounted_matmuls);
  check_count(a.model_flops_per_iter, tak::model_flops_per_iter);
  if (a.peak_flop_per_s && !(*a.peak_flop_per_s > 0 && std::isfinite(*a.peak_flop_per_s)))
    throw std::invalid_argument(fmt::format("time_account: '{}' is not a positive number", tak::peak_TFLOP_per_s));
  const std::pair<const std::optional<double>*, const char*> optional_seconds[] = {
      {&a.matmul_seconds_at_ceiling, tak::matmul_s_at_ceiling},
      {&a.exposed_comm_step_seconds, tak::exposed_comm_step_s},
      {&a.exposed_comm_gap_seconds, tak::exposed_comm_gaps_s},
      {&a.comm_in_flight_seconds, tak::comm_in_flight_s}};
  for (const auto& [value, key] : optional_seconds)
    if (*value) check_seconds(**value, key);
  check_seconds(a.exposed_comm_seen_seconds, tak::exposed_comm_seen_s);
  for (const auto& [name, s] : a.other_top) check_seconds(s, fmt::format("{}[].{}", tak::other_top, tak::profiled_s));
  if (a.device) {
    check_seconds(a.device->busy_seconds, fmt::format("{}.{}", tak::device, tak::busy_s));
    check_seconds(a.device->hidden_comm_seconds, fmt::format("{}.{}", tak::device, tak::hidden_comm_s));
    check_seconds(a.device->unlaunched_seconds, fmt::format("{}.{}", tak::device, tak::unlaunched_s));
  }
}

}  // namespace

json to_json(const std::optional<DeviceFigures>& device) {
  if (!device) return nullptr;
  return {{tak::busy_s, device->busy_seconds},
          {tak::hidden_comm_s, device->hidden_comm_seconds},
          {tak::activities, device->activities},
          {tak::unlaunched_activities, device->unlaunched_activities},
          {tak::unlaunched_s, device->unlaunched_seconds}};
}

std::optional<DeviceFigures> device_figures_from_json(const json& d) {
  if (d.is_null()) return std::nullopt;
  DeviceFigures f;
  f.busy_seconds = number(d, tak::busy_s);
  f.hidden_comm_seconds = number(d, tak::hidden_comm_s);
  f.activities = whole(d, tak::activities);
  f.unlaunched_activities = whole(d, tak::unlaunched_activities);
  f.unlaunched_seconds = number(d, tak::unlaunched_s);
  return f;
}

json to_json(const TimeAccount& a) {
  json categories = json::object();
  for (const Category c : all_categories()) {
    const CategoryTime& ct = a[c];
    categories[std::string(json_name(c))] = {{tak::s, ct.seconds},
                                             {tak::profiled_s, ct.profiled_seconds},
                                             {tak::share, ct.share},
                                             {tak::mfu_cost, or_null(ct.mfu_cost)}};
  }
  json other_top = json::array();
  for (const auto& [name, seconds] : a.other_top) other_top.push_back({{tak::name, name}, {tak::profiled_s, seconds}});
  return {{tak::source, a.source},
          {tak::rank, a.rank ? json(*a.rank) : json(nullptr)},
          {tak::profiled_iters, a.profiled_iterations},
          {tak::iteration_s, a.iteration_seconds},
          {tak::profiled_iteration_s, a.profiled_iteration_seconds},
          {tak::profiled_range_s, a.profiled_range_seconds},
          {tak::categories, categories},
          {tak::gemm_flops_per_iter, a.gemm_flops_per_iter},
          {tak::attention_flops_per_iter, a.attention_flops_per_iter},
          {tak::uncounted_matmuls, a.uncounted_matmuls},
          {tak::model_flops_per_iter, a.model_flops_per_iter},
          {tak::peak_TFLOP_per_s, a.peak_flop_per_s ? json(*a.peak_flop_per_s / 1e12) : json(nullptr)},
          {tak::peak_source, a.peak_source},
          {tak::matmul_s_at_ceiling, or_null(a.matmul_seconds_at_ceiling)},
          {tak::beyond_model_mfu_cost, or_null(a.beyond_model_mfu_cost)},
          {tak::mfu, or_null(a.mfu)},
          {tak::exposed_comm_source, a.exposed_comm_source},
          {tak::exposed_comm_step_s, or_null(a.exposed_comm_step_seconds)},
          {tak::exposed_comm_seen_s, a.exposed_comm_seen_seconds},
          {tak::exposed_comm_gaps_s, or_null(a.exposed_comm_gap_seconds)},
          {tak::comm_in_flight_s, or_null(a.comm_in_flight_seconds)},
          {tak::device, to_json(a.device)},
          {tak::other_top, other_top}};
}

TimeAccount time_account_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("time_account: not an object");
  TimeAccount a;
  a.source = text(j, tak::source);
  // Records written before the account was made on many ranks have neither the rank nor the
  // exposed communication's two measures: one rank, none.
  if (j.contains(tak::rank) && !j.at(tak::rank).is_null()) a.rank = whole(j, tak::rank);
  if (j.contains(tak::exposed_comm_step_s)) a.exposed_comm_step_seconds = number_or_null(j, tak::exposed_comm_step_s);
  if (j.contains(tak::exposed_comm_seen_s)) a.exposed_comm_seen_seconds = number(j, tak::exposed_comm_seen_s);
  // Records from before the Python executors' many ranks: the step's measure, and no backend's view.
  if (j.contains(tak::exposed_comm_source)) a.exposed_comm_source = text(j, tak::exposed_comm_source);
  if (j.contains(tak::exposed_comm_gaps_s)) a.exposed_comm_gap_seconds = number_or_null(j, tak::exposed_comm_gaps_s);
  if (j.contains(tak::comm_in_flight_s)) a.comm_in_flight_seconds = number_or_null(j, tak::comm_in_flight_s);
  // Records from before the CUDA account have no "device"; CPU records have it null.
  if (j.contains(tak::device)) a.device = device_figures_from_json(j.at(tak::device));
  a.profiled_iterations = whole(j, tak::profiled_iters);
  a.iteration_seconds = number(j, tak::iteration_s);
  a.profiled_iteration_seconds = number(j, tak::profiled_iteration_s);
  a.profiled_range_seconds = number(j, tak::profiled_range_s);
  const json& categories = at(j, tak::categories);
  if (!categories.is_object())
    throw std::invalid_argument(fmt::format("time_account: '{}' is not an object", tak::categories));
  for (const Category c : all_categories()) {
    const std::string name(json_name(c));
    const json& entry = at(categories, name.c_str());
    if (!entry.is_object())
      throw std::invalid_argument(fmt::format("time_account: {}.{} is not an object", tak::categories, name));
    CategoryTime& ct = a.categories[index_of(c)];
    ct.seconds = number(entry, tak::s);
    ct.profiled_seconds = number(entry, tak::profiled_s);
    ct.share = number(entry, tak::share);
    ct.mfu_cost = number_or_null(entry, tak::mfu_cost);
  }
  a.gemm_flops_per_iter = whole(j, tak::gemm_flops_per_iter);
  a.attention_flops_per_iter = whole(j, tak::attention_flops_per_iter);
  a.uncounted_matmuls = whole(j, tak::uncounted_matmuls);
  a.model_flops_per_iter = whole(j, tak::model_flops_per_iter);
  if (const auto tflops = number_or_null(j, tak::peak_TFLOP_per_s)) a.peak_flop_per_s = *tflops * 1e12;
  a.peak_source = text(j, tak::peak_source);
  a.matmul_seconds_at_ceiling = number_or_null(j, tak::matmul_s_at_ceiling);
  a.beyond_model_mfu_cost = number_or_null(j, tak::beyond_model_mfu_cost);
  a.mfu = number_or_null(j, tak::mfu);
  const json& other_top = at(j, tak::other_top);
  if (!other_top.is_array())
    throw std::invalid_argument(fmt::format("time_account: '{}' is not an array", tak::other_top));
  for (const json& item : other_top) a.other_top.emplace_back(text(item, tak::name), number(item, tak::profiled_s));
  check_values(a);
  return a;
}

}  // namespace tokbench::account
