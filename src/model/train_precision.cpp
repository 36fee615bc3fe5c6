// The training-precision parser (train_precision.hpp): canonical names first, then aliases.
#include "model/train_precision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

namespace tokbench::model {
namespace {

struct Alias {
  std::string_view name;
  TrainPrecision precision;
};
constexpr Alias kAliases[] = {{"32-true", TrainPrecision::fp32},
                              {"32", TrainPrecision::fp32},
                              {"float32", TrainPrecision::fp32},
                              {"bf16", TrainPrecision::bf16_true},
                              {"bfloat16", TrainPrecision::bf16_true}};

}  // namespace

TrainPrecision train_precision_from_string(std::string_view name) {
  std::string key(name);
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(key.begin(), key.end(), '_', '-');
  for (TrainPrecision precision : kTrainPrecisions)
    if (key == to_string(precision)) return precision;
  for (const Alias& alias : kAliases)
    if (key == alias.name) return alias.precision;
  throw std::invalid_argument(fmt::format(
      "precision '{}' is not valid; valid: fp32, bf16-true, bf16-mixed (aliases: 32-true, 32, float32, bf16, bfloat16)",
      name));
}

}  // namespace tokbench::model
