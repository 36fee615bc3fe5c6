// The difference of two time accounts (explanation.hpp).
#include "account/explanation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "account/explanation_keys.hpp"

namespace tokbench::account {
namespace {

namespace ek = explanation_key;

std::string ms(double seconds) { return fmt::format("{:.1f} ms", std::abs(seconds) * 1e3); }

// "a", "a and b", "a, b and c"
std::string listing(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

}  // namespace

Explanation explain(const TimeAccount& base, const TimeAccount& run, std::string base_name, std::string run_name) {
  Explanation e;
  e.base_name = std::move(base_name);
  e.run_name = std::move(run_name);
  e.base_iteration_seconds = base.iteration_seconds;
  e.run_iteration_seconds = run.iteration_seconds;
  for (const Category c : all_categories()) {
    e.base_seconds[index_of(c)] = base[c].seconds;
    e.run_seconds[index_of(c)] = run[c].seconds;
  }
  return e;
}

std::string explanation_sentence(const Explanation& e, double minor_share) {
  const double minor = minor_share * e.base_iteration_seconds;
  std::vector<std::pair<double, Category>> saved, lost;
  double elsewhere = 0;
  for (const Category c : all_categories()) {
    const double d = e.difference(c);
    if (std::abs(d) < minor || d == 0) {
      elsewhere += d;
      continue;
    }
    (d < 0 ? saved : lost).push_back({std::abs(d), c});
  }
  auto largest_first = [](auto& list) {
    std::stable_sort(list.begin(), list.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  };
  largest_first(saved);
  largest_first(lost);
  auto parts = [](const std::vector<std::pair<double, Category>>& list) {
    std::vector<std::string> out;
    for (const auto& [seconds, c] : list) out.push_back(ms(seconds) + " of " + std::string(phrase(c)));
    return out;
  };
  std::string sentence = e.run_name;
  if (!saved.empty()) sentence += " saves " + listing(parts(saved));
  if (!lost.empty()) sentence += (saved.empty() ? " loses " : "; it loses ") + listing(parts(lost));
  if (saved.empty() && lost.empty()) sentence += " spends its time as " + e.base_name + " does";
  // What the listed changes leave of the difference, so the sentence adds up to it too.
  if (std::abs(elsewhere) >= 0.05e-3)
    sentence += fmt::format("{} nets {:+.1f} ms elsewhere", saved.empty() && lost.empty() ? "; it" : ", and",
                            elsewhere * 1e3);
  const double total = e.iteration_difference();
  sentence += fmt::format(": {} {} per iteration than {}", ms(total), total <= 0 ? "faster" : "slower", e.base_name);
  return sentence + ".";
}

void write_explanation(const Explanation& e, std::ostream& out) {
  std::size_t width = std::string_view("category").size();
  for (const Category c : all_categories()) width = std::max(width, label(c).size());
  const std::size_t column = std::max<std::size_t>({12, e.base_name.size() + 2, e.run_name.size() + 2});
  out << fmt::format("{:<{}}{:>{}}{:>{}}{:>{}}\n", ek::category_heading, width + 2, e.base_name, column,
                     e.run_name, column, ek::difference, 12);
  for (const Category c : all_categories())
    out << fmt::format("{:<{}}{:>{}.1f}{:>{}.1f}{:>+12.1f}\n", label(c), width + 2,
                       e.base_seconds[index_of(c)] * 1e3, column, e.run_seconds[index_of(c)] * 1e3, column,
                       e.difference(c) * 1e3);
  out << fmt::format("{:<{}}{:>{}.1f}{:>{}.1f}{:>+12.1f}\n", ek::iteration_row, width + 2, e.base_iteration_seconds * 1e3,
                     column, e.run_iteration_seconds * 1e3, column, e.iteration_difference() * 1e3);
  out << explanation_sentence(e) << "\n";
}

nlohmann::ordered_json to_json(const Explanation& e) {
  nlohmann::ordered_json categories = nlohmann::ordered_json::object();
  for (const Category c : all_categories())
    categories[std::string(json_name(c))] = {{ek::base_ms, e.base_seconds[index_of(c)] * 1e3},
                                             {ek::run_ms, e.run_seconds[index_of(c)] * 1e3},
                                             {ek::difference_ms, e.difference(c) * 1e3}};
  return {{ek::base, e.base_name},
          {ek::run, e.run_name},
          {ek::iteration_ms,
           {{ek::base, e.base_iteration_seconds * 1e3},
            {ek::run, e.run_iteration_seconds * 1e3},
            {ek::difference, e.iteration_difference() * 1e3}}},
          {ek::categories, categories},
          {ek::sentence, explanation_sentence(e)}};
}

}  // namespace tokbench::account
