// A sweep row's run options (as `tokbench run` spells them, kebab-case without dashes) read as
// the prediction's target (`tokbench sweep --predict`): the rows predict models (target_options.hpp),
// each parsed by its member's type; the rest ignored (they are the measured run's too). Torch-free.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "predict/prediction.hpp"

namespace tokbench::predict {

// Throws std::invalid_argument naming the option when a number is not one (`tokbench run`
// refuses that row too; the prediction's own checks refuse the rest).
TargetOptions target_from_run_options(const std::vector<std::pair<std::string, std::string>>& options);

}  // namespace tokbench::predict
