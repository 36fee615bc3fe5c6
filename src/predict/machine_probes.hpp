// The machine's probes a prediction was made with, read back from an earlier prediction:
// `tokbench predict --probes-from PREDICTION.json` reuses its copy rate and AdamW costs instead
// of probing again, so the same input files give the same prediction and two predictions differ
// only by what their inputs differ by (docs/predict.md, "Repeatable predictions"). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "predict/memory_rate.hpp"
#include "predict/optimizer_model.hpp"

namespace tokbench::predict {

struct MachineProbes {
  MemoryRate memory_rate;                             // source: "reused from FILE"
  std::optional<OptimizerCostRates> optimizer_cost;   // none when the earlier prediction had none
};

// From a prediction document (what `tokbench predict --format json` writes: {"runs": [...]}, or
// one predicted record): its first prediction's `step_copies.memory_rate` and `optimizer`
// costs. Throws std::invalid_argument with one line naming `source` when it holds no prediction
// with a measured copy rate (a GPU prediction, a sweep's, one with the copies untimed).
MachineProbes machine_probes_from_prediction(const nlohmann::json& doc, const std::string& source);

}  // namespace tokbench::predict
