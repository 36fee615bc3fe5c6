// The time account's arithmetic (time_account.hpp).
#include "account/time_account.hpp"

#include <algorithm>
#include <stdexcept>

namespace tokbench::account {
namespace {

// How many of "other"'s events the account names.
constexpr std::size_t kOtherTop = 5;

}  // namespace

TimeAccount make_time_account(const ProfiledPass& pass, const AccountInputs& in) {
  if (pass.iterations < 1) throw std::invalid_argument("time account: the profiled pass recorded no iteration");
  if (!(pass.range_seconds > 0) || !(in.measured_iteration_seconds > 0))
    throw std::invalid_argument("time account: iteration times must be positive");
  const double n = static_cast<double>(pass.iterations);
  TimeAccount a;
  a.source = in.source;
  a.profiled_iterations = pass.iterations;
  a.iteration_seconds = in.measured_iteration_seconds;
  a.profiled_iteration_seconds = in.profiled_clock_seconds / n;
  a.profiled_range_seconds = pass.range_seconds / n;
  a.gemm_flops_per_iter = pass.gemm_flops / pass.iterations;
  a.attention_flops_per_iter = pass.attention_flops / pass.iterations;
  a.uncounted_matmuls = pass.uncounted_matmuls;
  a.model_flops_per_iter = in.model_flops_per_iter;
  a.peak_flop_per_s = in.peak_flop_per_s;
  a.peak_source = in.peak_source;

  // The collectives' waits: the profiler attributed their ranges to exposed_comm; the step's
  // own measure, inside those ranges, replaces what the profiler saw, and the difference (the
  // ranges' own recording, microseconds) is other's, so the categories keep their sum. Only a
  // measure beyond the ranges and all of other (no profile of these iterations holds) is cut.
  // From the profiler, exposed_comm is the attribution's (the collectives' operators and the
  // loop's gaps while one was in flight), unchanged.
  std::array<double, kCategoryCount> profiled = pass.seconds;
  double& comm = profiled[index_of(Category::exposed_comm)];
  double& other = profiled[index_of(Category::other)];
  const double seen = comm;
  a.rank = in.rank;
  a.exposed_comm_source = in.exposed_comm_source;
  a.exposed_comm_seen_seconds = seen / n;
  if (in.exposed_comm_source == kExposedCommFromProfiler) {
    a.exposed_comm_step_seconds = std::nullopt;
    a.exposed_comm_gap_seconds = pass.exposed_comm_gap_seconds / n;
    a.comm_in_flight_seconds = pass.comm_in_flight_seconds / n;
  } else if (in.exposed_comm_source == kExposedCommFromDeviceTimeline) {
    a.exposed_comm_step_seconds = std::nullopt;  // NCCL's hidden time is in device.hidden_comm_s
  } else {
    if (in.exposed_comm_source != kExposedCommFromStep)
      throw std::invalid_argument("time account: unknown exposed communication source '" + in.exposed_comm_source + "'");
    const double measured = std::clamp(in.exposed_comm_seconds, 0.0, seen + other);
    other += seen - measured;
    comm = measured;
    a.exposed_comm_step_seconds = in.exposed_comm_seconds / n;
  }

  const double t = a.iteration_seconds;
  for (const Category c : all_categories()) {
    CategoryTime& ct = a.categories[index_of(c)];
    ct.profiled_seconds = profiled[index_of(c)] / n;
    ct.share = profiled[index_of(c)] / pass.range_seconds;
    ct.seconds = ct.share * t;
  }
  if (a.peak_flop_per_s && *a.peak_flop_per_s > 0) {
    const double P = *a.peak_flop_per_s;
    const auto at_peak = [&](int64_t flops) { return static_cast<double>(flops) / P; };
    a.matmul_seconds_at_ceiling = at_peak(a.matmul_flops_per_iter());
    a.beyond_model_mfu_cost = (at_peak(a.matmul_flops_per_iter()) - at_peak(a.model_flops_per_iter)) / t;
    a.mfu = at_peak(a.model_flops_per_iter) / t;
    for (const Category c : all_categories()) {
      CategoryTime& ct = a.categories[index_of(c)];
      double ideal = 0;
      if (c == Category::gemm) ideal = at_peak(a.gemm_flops_per_iter);
      if (c == Category::attention) ideal = at_peak(a.attention_flops_per_iter);
      ct.mfu_cost = (ct.seconds - ideal) / t;
    }
  }
  if (in.device) {
    a.device = *in.device;
    a.device->busy_seconds /= n;
    a.device->hidden_comm_seconds /= n;
    a.device->unlaunched_seconds /= n;
  }
  for (std::size_t i = 0; i < pass.other_by_name.size() && i < kOtherTop; ++i)
    a.other_top.emplace_back(pass.other_by_name[i].first, pass.other_by_name[i].second / n);
  return a;
}

std::vector<WaterfallStep> waterfall_steps(const TimeAccount& a) {
  std::vector<WaterfallStep> steps;
  if (!a.mfu || !a.beyond_model_mfu_cost || !a.peak_flop_per_s) return steps;
  double remaining = 1.0;
  auto add = [&](std::string label, double cost, double seconds) {
    remaining -= cost;
    steps.push_back({std::move(label), cost, seconds, remaining});
  };
  add("matrix FLOPs beyond the model's", *a.beyond_model_mfu_cost,
      *a.beyond_model_mfu_cost * a.iteration_seconds);
  for (const Category c : all_categories()) {
    const CategoryTime& ct = a[c];
    std::string text(label(c));
    if (c == Category::gemm || c == Category::attention) text += " below the ceiling";
    add(std::move(text), ct.mfu_cost.value_or(0), ct.mfu_cost.value_or(0) * a.iteration_seconds);
  }
  return steps;
}

}  // namespace tokbench::account
