// The lines `tokbench predict --format print` adds under its tables (docs/predict.md, "Reading
// the output"): per prediction, the predicted iteration with the interval the measured run's
// spread gives it, and its time account by category, or why either is missing. They read the
// predicted records' own keys (prediction.interval_ms, input_spread, time_account), so what is
// printed is what the record holds. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tokbench::predict {

// Each line starts with "# "; one block per record, in order.
std::string prediction_notes(const std::vector<nlohmann::json>& records);

}  // namespace tokbench::predict
