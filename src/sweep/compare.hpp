// `tokbench compare BASE NEW`: pairs runs by configuration and gives each pair a ratio of mean
// iteration times (NEW / BASE) with a 95% interval and a verdict that accounts for noise.
//
// The method. Each side's measured per-iteration times x_1..x_n give a mean and a standard
// error; the times are not independent (a slow stretch of iterations stays slow: caches,
// clocks, a neighbour on the machine), so the standard error uses an effective sample size
// n_eff = n / (1 + 2·Σ_{k≥1} ρ_k), the ρ_k the series' sample autocorrelations, the sum cut
// by Geyer's initial monotone positive sequence (pairs ρ_{2j} + ρ_{2j+1} summed while positive,
// each pair at most the one before), n_eff clamped to [2, n]: an alternating, negatively
// correlated series is not credited with more than n samples, and a wandering one keeps two.
// The interval is on the log of the ratio (delta method: the two sides' relative standard
// errors s/(mean·√n_eff) added in quadrature) with Student's t quantile at Welch–Satterthwaite
// degrees of freedom, each side weighted with n_eff − 1; the quantile is computed here
// (bisection on the regularized incomplete beta function), no statistics library.
//
// A configuration regressed (SLOWER) when the whole interval lies above 1 + threshold (slower
// beyond the threshold even at the interval's best), improved (faster) when it lies below
// 1 − threshold, and is unchanged otherwise. The interval covers the noise within each run;
// drift between runs (another job on the machine, a different thermal state) is not in it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/run_record.hpp"

namespace tokbench::sweep {

enum class Verdict { unchanged, slower, faster, missing, failed };
const char* to_string(Verdict verdict);

struct Comparison {
  std::string configuration;            // configuration_key of the pair (two single runs of
                                        // different keys: BASE's, and what NEW has otherwise)
  std::optional<double> base_tokens_per_s, new_tokens_per_s;
  std::optional<double> time_ratio;     // mean iteration time NEW / BASE (> 1: slower)
  std::optional<double> ratio_low, ratio_high;  // its 95% confidence interval
  std::optional<double> base_n_eff, new_n_eff;  // each side's effective sample size
  std::optional<double> degrees_of_freedom;     // Welch–Satterthwaite, of the t quantile
  Verdict verdict = Verdict::unchanged;
  std::string note;                     // why missing/failed
};

// Pairs runs by configuration_key. Two single runs are compared with each other whatever their
// configuration. `base_sources`/`next_sources` name each run where it came from (a file, a
// stored sweep's config id), one per run; empty: "run 1", "run 2", ... by position. Two runs
// with one key on one side are refused (std::invalid_argument naming the side, the key and both
// runs): which of them to compare is not compare's to guess. A threshold outside [0, 1] is refused.
std::vector<Comparison> compare_records(const std::vector<results::RunRecord>& base,
                                        const std::vector<results::RunRecord>& next, double threshold,
                                        const std::vector<std::string>& base_sources = {},
                                        const std::vector<std::string>& next_sources = {});
// The same over records as JSON, each read by results::record_from_json (a key of the wrong type
// is its std::invalid_argument).
std::vector<Comparison> compare_runs(const std::vector<nlohmann::json>& base, const std::vector<nlohmann::json>& next,
                                     double threshold, const std::vector<std::string>& base_sources = {},
                                     const std::vector<std::string>& next_sources = {});

// The configuration key of a run: every recorded option that shapes what an iteration does and
// how (model, layers, activation checkpointing, shapes, parallelism, executor, dtype, device
// kind, threads, data source, optimizer and memory switches), as "label=value" text. A key the
// run JSON lacks (an older schema) reads "none", except a switch added later (activation
// checkpointing), which results from before it ran with off: "no". Not in it: what is measured
// or merely labelled (seed, learning rate, betas, the weight decay's size as long as it is not
// 0, iteration counts, FLOPs convention, peak, the machine and versions being compared).
std::string configuration_key(const results::RunRecord& run);
std::string configuration_key(const nlohmann::json& run);  // record_from_json's, then the above

// The statistics behind the interval, public for their tests.

// One side's measured iteration times (ms) summarised.
struct IterationStats {
  double mean = 0, stddev = 0;  // sample standard deviation (n − 1)
  int64_t n = 0;
  double n_eff = 0;             // effective sample size, [2, n]
};
// Throws std::invalid_argument for fewer than 2 times.
IterationStats iteration_stats(const std::vector<double>& times);

// n / (1 + 2·Σ ρ_k) by Geyer's initial monotone positive sequence, clamped to [2, n]; n for a
// constant series. Throws std::invalid_argument for fewer than 2 values.
double effective_sample_size(const std::vector<double>& series);

// Student's t distribution with `df` (> 0, need not be whole) degrees of freedom: the CDF, and
// the quantile for a probability in (0, 1). Bad arguments throw std::invalid_argument.
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

// The ratio NEW / BASE of mean iteration times with its two-sided `confidence` interval.
struct RatioInterval {
  double ratio = 1, low = 1, high = 1, degrees_of_freedom = 0;
};
RatioInterval ratio_interval(const IterationStats& base, const IterationStats& next, double confidence = 0.95);

}  // namespace tokbench::sweep
