// Noise-aware comparison of two sets of runs: pairing by configuration, the interval's
// statistics (effective sample size, Student's t) and the verdicts (compare.hpp says how).
#include "sweep/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <variant>

#include "config/run_options.hpp"
#include "results/record_blocks.hpp"
#include "results/record_status.hpp"

namespace tokbench::sweep {
namespace {

using results::RunRecord;

// A key field's value as text: "none" for null or empty text, yes/no for a switch, the number
// as the record writes it.
template <typename Json>
std::string text_of_value(const Json& value) {
  if (value.is_null()) return "none";
  if (value.is_string()) return value.template get<std::string>().empty() ? "none" : value.template get<std::string>();
  if (value.is_boolean()) return value.template get<bool>() ? "yes" : "no";
  return value.dump();
}

// A member of the record: `absent` where the record has no such key.
template <typename T>
std::string text_of(const results::Field<T>& field, const char* absent = "none") {
  if (!field.present()) return absent;
  if (!field.value()) return "none";
  if constexpr (std::is_same_v<T, results::Given> || std::is_same_v<T, results::Number>)
    return std::visit([](const auto& v) { return text_of_value(nlohmann::json(v)); }, *field.value());
  else
    return text_of_value(nlohmann::json(*field.value()));
}

// The key fields are the options and derived values whose table rows say they shape an
// iteration (config/run_options.hpp, iteration_keys): the reference's columns come first, in
// their order, so keys read as before. A field is read from the run's top level (the resolved
// value: dtype fp32, not "auto"; the record's member of that key) or from the options as given
// (`config`).
const std::vector<config::IterationKey>& key_fields() {
  static const std::vector<config::IterationKey> fields = config::iteration_keys();
  return fields;
}

std::string key_value(const RunRecord& run, const config::IterationKey& field) {
  std::optional<nlohmann::json> held;  // nullopt: the record (or its config) has no such key
  if (!field.in_config) {
    held = results::member_json(run, field.record_key);
  } else if (run.config.value() && run.config.value()->is_object() && run.config.value()->contains(field.record_key)) {
    held = nlohmann::json((*run.config.value())[field.record_key]);
  }
  if (!held) return field.absent;
  if (field.reading == config::Reading::nonzero && held->is_number()) return held->get<double>() != 0 ? "yes" : "no";
  std::string value = text_of_value(*held);
  if (field.reading == config::Reading::device_kind) value = value.substr(0, value.find(':'));
  return value;
}

// The measured iteration times (ms) from the run's own list; empty when it has none.
std::vector<double> measured_times(const RunRecord& run) {
  if (!run.iterations.value()) return {};
  return results::measured_times_ms(results::iterations_from_json(*run.iterations.value()));
}

Comparison compare_pair(const std::string& key, const RunRecord* base, const RunRecord* next, double threshold) {
  Comparison c;
  c.configuration = key;
  if (base == nullptr || next == nullptr) {
    c.verdict = Verdict::missing;
    c.note = base == nullptr ? "not in BASE" : "not in NEW";
    return c;
  }
  c.base_tokens_per_s = base->tokens_per_sec.value();
  c.new_tokens_per_s = next->tokens_per_sec.value();
  const std::string base_status = base->status.value_or("?");
  const std::string new_status = next->status.value_or("?");
  // A prediction has no measured iterations, so no interval can be formed: say so rather than
  // calling it a failed run.
  if (base_status == results::kStatusPredicted || new_status == results::kStatusPredicted) {
    c.verdict = Verdict::failed;
    c.note = "a prediction has no measured iterations to compare (BASE " + base_status + ", NEW " + new_status + ")";
    return c;
  }
  if (base_status != "ok" || new_status != "ok") {
    c.verdict = Verdict::failed;
    c.note = "BASE " + base_status + ", NEW " + new_status;
    return c;
  }
  const auto base_times = measured_times(*base);
  const auto new_times = measured_times(*next);
  if (base_times.size() < 2 || new_times.size() < 2) {
    c.verdict = Verdict::failed;
    c.note = "fewer than 2 measured iterations on a side";
    return c;
  }
  const auto b = iteration_stats(base_times);
  const auto n = iteration_stats(new_times);
  if (!(b.mean > 0) || !(n.mean > 0)) {
    c.verdict = Verdict::failed;
    c.note = "a side's mean iteration time is not positive";
    return c;
  }
  // Times near the double's range (a damaged or hand-edited result) overflow the variance: no
  // interval can be computed from them, which is a failed comparison, not an error.
  if (!std::isfinite(b.mean) || !std::isfinite(n.mean) || !std::isfinite(b.stddev) || !std::isfinite(n.stddev) ||
      !std::isfinite(b.stddev / b.mean) || !std::isfinite(n.stddev / n.mean)) {
    c.verdict = Verdict::failed;
    c.note = "a side's iteration times are too large to compare (not finite statistics)";
    return c;
  }
  const auto interval = ratio_interval(b, n);
  c.time_ratio = interval.ratio;
  c.ratio_low = interval.low;
  c.ratio_high = interval.high;
  c.base_n_eff = b.n_eff;
  c.new_n_eff = n.n_eff;
  c.degrees_of_freedom = interval.degrees_of_freedom;
  if (interval.low > 1 + threshold) {
    c.verdict = Verdict::slower;
  } else if (interval.high < 1 - threshold) {
    c.verdict = Verdict::faster;
  }
  return c;
}

// Continued fraction of the regularized incomplete beta function (DLMF 8.17.22), evaluated by
// the modified Lentz method; converges fast for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEpsilon = 1e-15;
  auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1;
  double d = 1 / guard(1 - (a + b) * x / (a + 1));
  double h = d;
  for (int m = 1; m <= 100000; ++m) {
    const double m2 = 2.0 * m;
    const double even = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 / guard(1 + even * d);
    c = guard(1 + even / c);
    h *= d * c;
    const double odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 / guard(1 + odd * d);
    c = guard(1 + odd / c);
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < kEpsilon) return h;
  }
  return h;  // not reached for the arguments used here (a, b ≤ 5e6); the last estimate
}

// I_x(a, b), the regularized incomplete beta function, for x in [0, 1].
double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front = a * std::log(x) + b * std::log1p(-x) - (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
  // The fraction converges on the side of the distribution's bulk; the other side by symmetry.
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  return 1 - std::exp(log_front) * beta_continued_fraction(b, a, 1 - x) / b;
}

// Beyond this many degrees of freedom t is the normal to within 1e-6 of the quantiles used,
// and the continued fraction would need needlessly many terms.
constexpr double kNormalDf = 1e7;

// P(T > t) for t >= 0: computed directly, not as 1 − CDF, so small tails keep their digits.
double upper_tail(double t, double df) {
  if (df > kNormalDf) return 0.5 * std::erfc(t / std::sqrt(2.0));
  return 0.5 * regularized_incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

void check_df(double df, const char* what) {
  if (!(df > 0)) throw std::invalid_argument(fmt::format("{}: degrees of freedom {} are not valid; valid: a number > 0", what, df));
}

}  // namespace

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::unchanged: return "unchanged";
    case Verdict::slower: return "SLOWER";
    case Verdict::faster: return "faster";
    case Verdict::missing: return "missing";
    case Verdict::failed: return "failed";
  }
  return "?";
}

std::string configuration_key(const nlohmann::json& run) { return configuration_key(results::record_from_json(run)); }

std::string configuration_key(const RunRecord& run) {
  std::string key = text_of(run.model_name);
  for (const auto& field : key_fields()) key += fmt::format(" {}={}", field.heading(), key_value(run, field));
  return key;
}

namespace {

// Two single runs of different configurations: BASE's key, then only what NEW has otherwise
// (a key is some thirty fields; the difference is what the reader is looking for).
std::string single_runs_label(const RunRecord& base, const RunRecord& next) {
  std::string differences;
  if (text_of(base.model_name) != text_of(next.model_name)) differences = text_of(next.model_name);
  for (const auto& field : key_fields()) {
    const auto value = key_value(next, field);
    if (value != key_value(base, field))
      differences += fmt::format("{}{}={}", differences.empty() ? "" : " ", field.heading(), value);
  }
  return configuration_key(base) + "  vs NEW with  " + differences;
}

}  // namespace

double effective_sample_size(const std::vector<double>& series) {
  const auto n = series.size();
  if (n < 2) throw std::invalid_argument(fmt::format("effective sample size of {} values is not defined; valid: 2 or more", n));
  double mean = 0;
  for (double v : series) mean += v;
  mean /= static_cast<double>(n);
  // Autocovariance at lag k with the 1/n divisor (a positive definite sequence, as Geyer's
  // bound assumes).
  auto autocovariance = [&](std::size_t k) {
    double sum = 0;
    for (std::size_t i = 0; i + k < n; ++i) sum += (series[i] - mean) * (series[i + k] - mean);
    return sum / static_cast<double>(n);
  };
  const double variance = autocovariance(0);
  if (!(variance > 0)) return static_cast<double>(n);  // constant: nothing to correlate
  // Geyer's initial monotone positive sequence: Γ_j = ρ_2j + ρ_2j+1 summed while positive and
  // held non-increasing; beyond that point the sample ρ_k are noise, and summing them would
  // make n_eff as noisy as they are.
  double pairs = 0;
  double previous = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; 2 * j + 1 < n; ++j) {
    const double rho_even = j == 0 ? 1.0 : autocovariance(2 * j) / variance;
    double pair = rho_even + autocovariance(2 * j + 1) / variance;
    if (!(pair > 0)) break;
    pair = std::min(pair, previous);
    pairs += pair;
    previous = pair;
  }
  const double tau = 2 * pairs - 1;  // 1 + 2·Σ_{k≥1} ρ_k
  const double count = static_cast<double>(n);
  if (!(tau > 1)) return count;  // no positive correlation: not credited beyond n
  return std::clamp(count / tau, std::min(2.0, count), count);
}

IterationStats iteration_stats(const std::vector<double>& times) {
  if (times.size() < 2)
    throw std::invalid_argument(fmt::format("{} measured iteration time(s) cannot give a spread; valid: 2 or more",
                                            times.size()));
  IterationStats s;
  s.n = static_cast<int64_t>(times.size());
  for (double t : times) s.mean += t;
  s.mean /= static_cast<double>(s.n);
  double squares = 0;
  for (double t : times) squares += (t - s.mean) * (t - s.mean);
  s.stddev = std::sqrt(squares / static_cast<double>(s.n - 1));
  s.n_eff = effective_sample_size(times);
  return s;
}

double student_t_cdf(double t, double df) {
  check_df(df, "student_t_cdf");
  if (std::isnan(t)) throw std::invalid_argument("student_t_cdf: t is NaN; valid: a number");
  const double tail = upper_tail(std::fabs(t), df);
  return t >= 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  check_df(df, "student_t_quantile");
  if (!(p > 0 && p < 1))
    throw std::invalid_argument(fmt::format("student_t_quantile: probability {} is not valid; valid: a number in (0, 1)", p));
  if (p == 0.5) return 0;
  // The distribution is symmetric: solve for the upper tail q = P(T > t), t > 0.
  const double q = p > 0.5 ? 1 - p : p;
  double low = 0, high = 1;
  while (upper_tail(high, df) > q && high < 1e300) {
    low = high;
    high *= 2;
  }
  for (int i = 0; i < 400 && high - low > 1e-13 * high; ++i) {
    const double mid = 0.5 * (low + high);
    (upper_tail(mid, df) > q ? low : high) = mid;
  }
  const double t = 0.5 * (low + high);
  return p > 0.5 ? t : -t;
}

RatioInterval ratio_interval(const IterationStats& base, const IterationStats& next, double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument(fmt::format("confidence {} is not valid; valid: a number in (0, 1)", confidence));
  if (!(base.mean > 0) || !(next.mean > 0) || !(base.n_eff >= 2) || !(next.n_eff >= 2))
    throw std::invalid_argument(fmt::format("ratio interval of means {} and {} with n_eff {} and {} is not defined; "
                                            "valid: positive means and n_eff >= 2", base.mean, next.mean, base.n_eff,
                                            next.n_eff));
  RatioInterval r;
  r.ratio = next.mean / base.mean;
  // Delta method on log(ratio): each side's relative standard error of its mean.
  const double base_rel = base.stddev / base.mean / std::sqrt(base.n_eff);
  const double next_rel = next.stddev / next.mean / std::sqrt(next.n_eff);
  const double base_var = base_rel * base_rel, next_var = next_rel * next_rel;
  const double variance = base_var + next_var;
  if (!(variance > 0)) {  // two constant series: the ratio is exact
    r.low = r.high = r.ratio;
    r.degrees_of_freedom = base.n_eff + next.n_eff - 2;
    return r;
  }
  r.degrees_of_freedom =
      variance * variance / (base_var * base_var / (base.n_eff - 1) + next_var * next_var / (next.n_eff - 1));
  const double half_width = student_t_quantile(0.5 + confidence / 2, r.degrees_of_freedom) * std::sqrt(variance);
  r.low = std::exp(std::log(r.ratio) - half_width);
  r.high = std::exp(std::log(r.ratio) + half_width);
  return r;
}

std::vector<Comparison> compare_runs(const std::vector<nlohmann::json>& base, const std::vector<nlohmann::json>& next,
                                     double threshold, const std::vector<std::string>& base_sources,
                                     const std::vector<std::string>& next_sources) {
  const auto typed = [](const std::vector<nlohmann::json>& runs) {
    std::vector<RunRecord> records;
    records.reserve(runs.size());
    for (const auto& run : runs) records.push_back(results::record_from_json(run));
    return records;
  };
  return compare_records(typed(base), typed(next), threshold, base_sources, next_sources);
}

std::vector<Comparison> compare_records(const std::vector<RunRecord>& base, const std::vector<RunRecord>& next,
                                        double threshold, const std::vector<std::string>& base_sources,
                                        const std::vector<std::string>& next_sources) {
  if (!(threshold >= 0 && threshold <= 1))
    throw std::invalid_argument(fmt::format("threshold {} is not valid; valid: a fraction from 0 to 1", threshold));
  if (base.size() == 1 && next.size() == 1) {
    const std::string key = configuration_key(base[0]);
    const std::string label = key == configuration_key(next[0]) ? key : single_runs_label(base[0], next[0]);
    return {compare_pair(label, &base[0], &next[0], threshold)};
  }
  // Each side's runs by key; a second run under a key already taken is named, with the first.
  auto index = [](const char* side, const std::vector<RunRecord>& runs, const std::vector<std::string>& sources) {
    if (!sources.empty() && sources.size() != runs.size())
      throw std::invalid_argument(fmt::format("{}: {} source names for {} runs; valid: one per run, or none", side,
                                              sources.size(), runs.size()));
    auto source = [&](std::size_t i) { return sources.empty() ? fmt::format("run {}", i + 1) : sources[i]; };
    std::map<std::string, std::size_t> by_key;
    std::vector<std::string> order;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto key = configuration_key(runs[i]);
      const auto [it, fresh] = by_key.emplace(key, i);
      if (!fresh)
        throw std::invalid_argument(fmt::format(
            "{} holds two results of one configuration, {} and {} ({}); valid: one result per configuration on "
            "each side (drop one, or compare the two as single runs)",
            side, source(it->second), source(i), key));
      order.push_back(key);
    }
    return std::make_pair(by_key, order);
  };
  const auto [base_by_key, base_order] = index("BASE", base, base_sources);
  const auto [next_by_key, next_order] = index("NEW", next, next_sources);
  std::vector<std::string> order = base_order;
  for (const auto& key : next_order)
    if (!base_by_key.count(key)) order.push_back(key);
  std::vector<Comparison> out;
  for (const auto& key : order) {
    auto b = base_by_key.find(key);
    auto n = next_by_key.find(key);
    out.push_back(compare_pair(key, b == base_by_key.end() ? nullptr : &base[b->second],
                               n == next_by_key.end() ? nullptr : &next[n->second], threshold));
  }
  return out;
}

}  // namespace tokbench::sweep
