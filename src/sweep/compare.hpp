// `tokbench compare BASE NEW`: per-configuration ratios with a verdict that accounts for
// noise. Each side's measured per-iteration times give a mean and its standard error; the
// ratio of mean iteration times (NEW / BASE) gets a 95% confidence interval (log scale,
// Welch-style: the two standard errors added in quadrature). A configuration regressed when
// the whole interval lies above 1 + threshold (slower beyond the threshold even at the
// interval's best), improved when it lies below 1 − threshold, and is unchanged otherwise.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tokbench::sweep {

enum class Verdict { unchanged, slower, faster, missing, failed };
const char* to_string(Verdict verdict);

struct Comparison {
  std::string configuration;            // the index columns and executor, as text
  std::optional<double> base_tokens_per_s, new_tokens_per_s;
  std::optional<double> time_ratio;     // mean iteration time NEW / BASE (> 1: slower)
  std::optional<double> ratio_low, ratio_high;  // its 95% confidence interval
  Verdict verdict = Verdict::unchanged;
  std::string note;                     // why missing/failed
};

// Pairs runs by configuration (model, ranks, T, B, G, GA, mode, sharding, executor). Two
// single runs are compared with each other whatever their configuration.
std::vector<Comparison> compare_runs(const std::vector<nlohmann::json>& base, const std::vector<nlohmann::json>& next,
                                     double threshold);

// The configuration key of a run, as compare pairs them.
std::string configuration_key(const nlohmann::json& run);

}  // namespace tokbench::sweep
