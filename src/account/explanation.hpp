// Why one run's iteration differs from another's, category by category (`tokbench explain`, and
// a sweep's --explain-against): the difference of two time accounts. Each account's categories
// sum to its own iteration time (time_account.hpp), so their differences sum to the difference
// of the iteration times: the explanation leaves nothing out. Torch-free.
#pragma once

#include <array>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "account/time_account.hpp"

namespace tokbench::account {

struct Explanation {
  std::string base_name;  // the run explained against ("python-eager")
  std::string run_name;   // the run explained ("fused")
  double base_iteration_seconds = 0;
  double run_iteration_seconds = 0;
  std::array<double, kCategoryCount> base_seconds{};  // per category, per iteration
  std::array<double, kCategoryCount> run_seconds{};

  double difference(Category c) const { return run_seconds[index_of(c)] - base_seconds[index_of(c)]; }
  double iteration_difference() const { return run_iteration_seconds - base_iteration_seconds; }
};

// `run` against `base`; the names are how the text calls them.
Explanation explain(const TimeAccount& base, const TimeAccount& run, std::string base_name, std::string run_name);

// The sentence: "fused saves 41.0 ms of elementwise work and 12.0 ms of loss; it loses 3.0 ms of
// GEMM time", the largest changes first. A change under `minor_share` of the base iteration is
// summed into "and nets X ms elsewhere", so the sentence, too, adds up to the difference.
std::string explanation_sentence(const Explanation& e, double minor_share = 0.01);

// The table (per category: base, run, difference, in ms per iteration; a total line) and the
// sentence.
void write_explanation(const Explanation& e, std::ostream& out);

// {"base": name, "run": name, "iteration_ms": {...}, "categories": {gemm: {base_ms, run_ms,
// difference_ms}, ...}, "sentence": "..."}
nlohmann::ordered_json to_json(const Explanation& e);

}  // namespace tokbench::account
