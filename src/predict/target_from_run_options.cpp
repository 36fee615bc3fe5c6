// A sweep row's options as a prediction's target (target_from_run_options.hpp).
#include "predict/target_from_run_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <variant>

namespace tokbench::predict {
namespace {

int64_t whole(const std::string& option, const std::string& value) {
  try {
    std::size_t used = 0;
    const long long n = std::stoll(value, &used);
    if (used == value.size()) return n;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(fmt::format("--{} '{}' is not a whole number", option, value));
}

double number(const std::string& option, const std::string& value) {
  try {
    std::size_t used = 0;
    const double x = std::stod(value, &used);
    if (used == value.size()) return x;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(fmt::format("--{} '{}' is not a number", option, value));
}

}  // namespace

TargetOptions target_from_run_options(const std::vector<std::pair<std::string, std::string>>& options) {
  TargetOptions t;
  for (const auto& [option, value] : options) {
    const auto row = std::find_if(target_rows().begin(), target_rows().end(),
                                  [&](const auto& r) { return first_name(r.names) == "--" + option; });
    if (row == target_rows().end()) continue;
    std::visit(
        [&](auto member) {
          auto& target = t.*member;
          using T = std::remove_cvref_t<decltype(target)>;
          if constexpr (std::is_same_v<T, std::string>) target = value;
          else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::optional<double>>) target = number(option, value);
          else if constexpr (std::is_same_v<T, bool>) throw std::logic_error("predict models no flag");
          else if constexpr (std::is_same_v<T, int>) {
            const int64_t n = whole(option, value);
            if (n < INT32_MIN || n > INT32_MAX) throw std::invalid_argument(fmt::format("--{} '{}' is not a whole number", option, value));
            target = static_cast<int>(n);
          } else target = whole(option, value);
        },
        row->member);
    t.given.insert("--" + option);
  }
  // The run ignores the threshold (with a warning) unless its units are cut by size: so does
  // its prediction, which would otherwise refuse it.
  if (t.taken(&config::ParallelismSection::bucketing_mode) != "size") t.given.erase("--fsdp-bucket-params");
  // A row that does not name a rank count runs on one node's one rank, as `tokbench run` does.
  if (!t.taken(&config::LauncherSection::nproc_per_node)) t.set(&config::LauncherSection::nproc_per_node, int64_t{1});
  if (!t.taken(&config::LauncherSection::nnodes)) t.set(&config::LauncherSection::nnodes, int64_t{1});
  return t;
}

}  // namespace tokbench::predict
