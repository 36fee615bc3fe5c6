// The measured run's spread and the prediction's interval (input_spread.hpp).
#include "predict/input_spread.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "predict/prediction_keys.hpp"
#include "results/record_blocks.hpp"

namespace tokbench::predict {

namespace pk = prediction_key;

namespace {

// Linear interpolation between order statistics (numpy's default, as the record's own
// iter_time_ms percentiles are computed), of sorted, non-empty values.
double interpolated_quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const std::size_t below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

}  // namespace

std::optional<IterationSpread> iteration_spread(const nlohmann::ordered_json& iterations, std::string& why) {
  if (!iterations.is_array()) {
    why = "the measured record holds no list of iterations";
    return std::nullopt;
  }
  std::vector<double> times;
  for (const double ms : results::measured_times_ms(results::iterations_from_json(iterations)))
    if (std::isfinite(ms) && ms > 0) times.push_back(ms);
  if (static_cast<int64_t>(times.size()) < kMinSpreadIterations) {
    why = fmt::format("the measured record holds {} measured iteration time(s); a spread needs at least {} (tokbench "
                      "run --max-iters above --warmup-iters)",
                      times.size(), kMinSpreadIterations);
    return std::nullopt;
  }
  std::sort(times.begin(), times.end());
  IterationSpread s;
  s.iterations = static_cast<int64_t>(times.size());
  s.median_ms = interpolated_quantile(times, 0.5);
  s.q1_ms = interpolated_quantile(times, 0.25);
  s.q3_ms = interpolated_quantile(times, 0.75);
  std::vector<double> deviations;
  for (const double t : times) deviations.push_back(std::abs(t - s.median_ms));
  std::sort(deviations.begin(), deviations.end());
  s.mad_ms = interpolated_quantile(deviations, 0.5);
  return s;
}

PredictionInterval prediction_interval(const IterationSpread& s, double iteration_s, double compute_s) {
  PredictionInterval p;
  const double iteration_ms = iteration_s * 1e3, compute_ms = compute_s * 1e3;
  if (!(s.median_ms > 0)) return {iteration_ms, iteration_ms};
  p.low_ms = iteration_ms - compute_ms * (1.0 - s.q1_ms / s.median_ms);
  p.high_ms = iteration_ms + compute_ms * (s.q3_ms / s.median_ms - 1.0);
  return p;
}

PredictionInterval combined_interval(double iteration_s, const std::vector<SpreadPart>& parts) {
  double below = 0, above = 0;
  for (const auto& p : parts) {
    below += std::max(0.0, p.below_s) * std::max(0.0, p.below_s);
    above += std::max(0.0, p.above_s) * std::max(0.0, p.above_s);
  }
  return {(iteration_s - std::sqrt(below)) * 1e3, (iteration_s + std::sqrt(above)) * 1e3};
}

std::string interval_rule() {
  return "each part of the prediction moved by its own input's spread, the parts' widths added in quadrature on each "
         "side (interval_ms.parts): the compute (time_ms.compute) as the measured run's iterations moved between their "
         "quartiles relative to their median (compute x (1 - Q1/median) below, compute x (Q3/median - 1) above); the "
         "communication that reaches the iteration (exposed comm and contention) by each collective's fastest call's "
         "distance below its mean in the comm document, either side; the compute by the run's reference probe between "
         "its quartiles, where that probe sets the compute's level (compute x (1 - median/Q3) below, compute x "
         "(median/Q1 - 1) above); the forward and backward by the quartiles of the document's compute-sharing ratios "
         "against their median, where that measurement scales them; and where ranks time-slice the cores, the "
         "iteration from the midpoint down to the cores' budget and up to the lockstep schedule's";
}

UnitTimingsLevel unit_timings_level(const std::optional<IterationSpread>& spread, double pass_iteration_seconds,
                                    int64_t pass_iterations) {
  UnitTimingsLevel level;
  level.pass_iterations = pass_iterations;
  level.pass_iteration_ms = pass_iteration_seconds * 1e3;
  if (spread) {
    level.window_iterations = spread->iterations;
    level.window_median_ms = spread->median_ms;
  }
  if (!(std::isfinite(level.pass_iteration_ms) && level.pass_iteration_ms > 0)) {
    level.why = "the record's unit_timings.iteration_seconds is missing or not positive";
  } else if (!spread || spread->iterations < kMinLevelIterations) {
    level.why = fmt::format("the measured window holds {} measured iteration(s); its median sets the units' level "
                            "from {} on (tokbench run --max-iters at least {} above --warmup-iters)",
                            level.window_iterations, kMinLevelIterations, kMinLevelIterations);
  } else if (!(spread->median_ms > 0)) {
    level.why = "the measured window's median is not positive";
  } else {
    level.rescaled = true;
    level.scale = spread->median_ms / level.pass_iteration_ms;
  }
  return level;
}

nlohmann::ordered_json to_json(const UnitTimingsLevel& l) {
  if (!l.rescaled) return {{pk::rescaled, false}, {pk::scale, 1.0}, {pk::why, l.why}};
  return {{pk::rescaled, true},
          {pk::scale, l.scale},
          {pk::window_median_ms, l.window_median_ms},
          {pk::window_iterations, l.window_iterations},
          {pk::pass_iteration_ms, l.pass_iteration_ms},
          {pk::pass_iterations, l.pass_iterations},
          {pk::rule, "each unit's forward, backward and optimizer seconds x (the measured window's median iteration / "
                     "the unit-timing pass's median iteration): the units at the window's level, the pass giving their "
                     "split"}};
}

nlohmann::ordered_json to_json(const std::optional<IterationSpread>& s, const std::string& why) {
  if (!s) return {{pk::measured_iterations, nullptr}, {pk::why, why}};
  return {{pk::measured_iterations, s->iterations},
          {pk::median_ms, s->median_ms},
          {pk::q1_ms, s->q1_ms},
          {pk::q3_ms, s->q3_ms},
          {pk::iqr_ms, s->iqr_ms()},
          {pk::relative_iqr, s->relative_iqr()},
          {pk::mad_ms, s->mad_ms}};
}

}  // namespace tokbench::predict
