// How noisy the measured run a prediction starts from was, and the interval on the predicted
// iteration that follows (docs/predict.md, "How sure: the input's spread and the interval"):
// the median and quartiles of its measured (not warm-up) iterations' times, their median
// absolute deviation, and the rule that carries the quartiles' spread, relative to the median,
// onto the part of the prediction scaled from the measurement (its compute); and the level the
// unit timings are read at: the window's median, not the few-iteration pass's level. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tokbench::predict {

// A spread needs at least this many measured iterations (two give a range, which the
// quartiles split).
inline constexpr int64_t kMinSpreadIterations = 2;

struct IterationSpread {
  int64_t iterations = 0;  // measured iterations read
  double median_ms = 0, q1_ms = 0, q3_ms = 0;
  double mad_ms = 0;  // median absolute deviation from the median
  double iqr_ms() const { return q3_ms - q1_ms; }
  double relative_iqr() const { return median_ms > 0 ? iqr_ms() / median_ms : 0; }
};

// The spread of a record's `iterations` (each {"warmup": bool, "time_ms": number, ...}): the
// measured ones with a positive, finite time. Nullopt, with `why` set, when the record has fewer
// than kMinSpreadIterations of them or its `iterations` is not a list.
std::optional<IterationSpread> iteration_spread(const nlohmann::ordered_json& iterations, std::string& why);

struct PredictionInterval {
  double low_ms = 0, high_ms = 0;
};

// The interval on a predicted iteration of `iteration_s` seconds, `compute_s` of them the
// measured compute as scaled (forward, backward and optimizer on the predicted rank):
//   low  = iteration − compute · (1 − Q1 / median)
//   high = iteration + compute · (Q3 / median − 1)
// so the compute moves as the measured iterations did between their quartiles, and the rest
// (communication from the cluster or comm document, the contention model's cost) stays.
PredictionInterval prediction_interval(const IterationSpread& spread, double iteration_s, double compute_s);

// One independent source of a prediction's uncertainty: how far it can move the predicted
// iteration below and above (seconds, both >= 0).
struct SpreadPart {
  std::string name;
  double below_s = 0, above_s = 0;
};

// The interval from independent sources (the measured run's iterations, the comm document's
// collective times, its compute-sharing probe): each side's widths added in quadrature, so two
// sources of equal width widen it by sqrt(2), not 2.
PredictionInterval combined_interval(double iteration_s, const std::vector<SpreadPart>& parts);

// The rules above in words, for the record.
std::string interval_rule();

// The unit timings come from a pass of a few iterations (2 by default) after the measured
// window; their mean moves with whatever the machine did in those seconds, while the window's
// median over many iterations does not follow one slow stretch. So the units are read at the
// window's level: each unit's forward, backward and optimizer seconds are multiplied by
// `scale` = window median / the pass's iteration (its median since 2026-12-06) (the pass then gives only the split
// between units). It needs at least kMinLevelIterations measured iterations in the window (with
// fewer its median is no steadier than the pass), else scale stays 1 and `why` says so.
inline constexpr int64_t kMinLevelIterations = 5;

struct UnitTimingsLevel {
  double scale = 1;
  bool rescaled = false;
  std::string why;  // when not rescaled
  int64_t window_iterations = 0, pass_iterations = 0;
  double window_median_ms = 0, pass_iteration_ms = 0;
};

UnitTimingsLevel unit_timings_level(const std::optional<IterationSpread>& spread, double pass_iteration_seconds,
                                    int64_t pass_iterations);

// {"rescaled", "scale", "window_median_ms", "window_iterations", "pass_iteration_ms",
// "pass_iterations", "rule"} or, not rescaled, {"rescaled": false, "scale": 1, "why": ...}.
nlohmann::ordered_json to_json(const UnitTimingsLevel& level);

// {"measured_iterations", "median_ms", "q1_ms", "q3_ms", "iqr_ms", "relative_iqr", "mad_ms"}, or
// {"measured_iterations": null, "why": ...} without a spread.
nlohmann::ordered_json to_json(const std::optional<IterationSpread>& spread, const std::string& why);

}  // namespace tokbench::predict
