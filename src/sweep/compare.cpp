// Noise-aware comparison of two sets of runs (compare.hpp).
#include "sweep/compare.hpp"

#include <cmath>
#include <map>

namespace tokbench::sweep {
namespace {

std::string text_of(const nlohmann::json& run, const char* key) {
  if (!run.contains(key) || run[key].is_null()) return "none";
  return run[key].is_string() ? run[key].get<std::string>() : run[key].dump();
}

struct Sample {
  double mean = 0, standard_error = 0;
  int64_t n = 0;
};

// Mean and standard error of the measured iteration times (ms), from the run's own list.
std::optional<Sample> measured_times(const nlohmann::json& run) {
  if (!run.contains("iterations") || !run["iterations"].is_array()) return std::nullopt;
  std::vector<double> times;
  for (const auto& it : run["iterations"])
    if (!it.value("warmup", false) && it.contains("time_ms") && it["time_ms"].is_number())
      times.push_back(it["time_ms"].get<double>());
  if (times.size() < 2) return std::nullopt;
  Sample s;
  s.n = static_cast<int64_t>(times.size());
  for (double t : times) s.mean += t;
  s.mean /= static_cast<double>(s.n);
  double squares = 0;
  for (double t : times) squares += (t - s.mean) * (t - s.mean);
  s.standard_error = std::sqrt(squares / static_cast<double>(s.n - 1) / static_cast<double>(s.n));
  return s;
}

std::optional<double> number(const nlohmann::json& run, const char* key) {
  if (run.contains(key) && run[key].is_number()) return run[key].get<double>();
  return std::nullopt;
}

Comparison compare_pair(const std::string& key, const nlohmann::json* base, const nlohmann::json* next,
                        double threshold) {
  Comparison c;
  c.configuration = key;
  if (base == nullptr || next == nullptr) {
    c.verdict = Verdict::missing;
    c.note = base == nullptr ? "not in BASE" : "not in NEW";
    return c;
  }
  c.base_tokens_per_s = number(*base, "tokens_per_sec");
  c.new_tokens_per_s = number(*next, "tokens_per_sec");
  const std::string base_status = base->value("status", std::string("?"));
  const std::string new_status = next->value("status", std::string("?"));
  if (base_status != "ok" || new_status != "ok") {
    c.verdict = Verdict::failed;
    c.note = "BASE " + base_status + ", NEW " + new_status;
    return c;
  }
  const auto b = measured_times(*base);
  const auto n = measured_times(*next);
  if (!b || !n || !(b->mean > 0) || !(n->mean > 0)) {
    c.verdict = Verdict::failed;
    c.note = "fewer than 2 measured iterations on a side";
    return c;
  }
  c.time_ratio = n->mean / b->mean;
  // Delta method on log(ratio): relative standard errors add in quadrature.
  const double se = std::sqrt(std::pow(b->standard_error / b->mean, 2) + std::pow(n->standard_error / n->mean, 2));
  c.ratio_low = std::exp(std::log(*c.time_ratio) - 1.96 * se);
  c.ratio_high = std::exp(std::log(*c.time_ratio) + 1.96 * se);
  if (*c.ratio_low > 1 + threshold) {
    c.verdict = Verdict::slower;
  } else if (*c.ratio_high < 1 - threshold) {
    c.verdict = Verdict::faster;
  }
  return c;
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

std::string configuration_key(const nlohmann::json& run) {
  std::string key;
  for (const char* column : {"model_name", "Num GPUS", "Seq Len", "Micro BS", "Global BS", "GA", "Distributed Mode",
                             "Sharding Size", "compiler"})
    key += (key.empty() ? "" : " | ") + text_of(run, column);
  return key;
}

std::vector<Comparison> compare_runs(const std::vector<nlohmann::json>& base, const std::vector<nlohmann::json>& next,
                                     double threshold) {
  if (base.size() == 1 && next.size() == 1) {
    const std::string key = configuration_key(base[0]);
    const std::string other = configuration_key(next[0]);
    return {compare_pair(key == other ? key : key + "  vs  " + other, &base[0], &next[0], threshold)};
  }
  std::vector<std::string> order;
  std::map<std::string, const nlohmann::json*> base_by_key, next_by_key;
  for (const auto& r : base) {
    const auto key = configuration_key(r);
    if (base_by_key.emplace(key, &r).second) order.push_back(key);
  }
  for (const auto& r : next) {
    const auto key = configuration_key(r);
    if (next_by_key.emplace(key, &r).second && !base_by_key.count(key)) order.push_back(key);
  }
  std::vector<Comparison> out;
  for (const auto& key : order) {
    auto b = base_by_key.find(key);
    auto n = next_by_key.find(key);
    out.push_back(compare_pair(key, b == base_by_key.end() ? nullptr : b->second,
                               n == next_by_key.end() ? nullptr : n->second, threshold));
  }
  return out;
}

}  // namespace tokbench::sweep
