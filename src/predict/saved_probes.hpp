// The probes an earlier prediction ran (its copy rate and AdamW costs), read back from its JSON
// so that `tokbench predict --probes-from` can make the same prediction again without probing:
// a change to the model is then judged on the same inputs before and after it, whatever else the
// machine is doing now (bench/predict_replay.py). Torch-free.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "predict/memory_rate.hpp"
#include "predict/optimizer_model.hpp"

namespace tokbench::predict {

struct SavedProbes {
  std::optional<MemoryRate> memory_rate;              // prediction.step_copies.memory_rate
  std::optional<OptimizerCostRates> optimizer_cost;   // prediction.optimizer's per-tensor and per-element costs
};

// From one prediction's record (`tokbench predict --format json`'s document, whose first run is
// taken, or one run). Throws std::invalid_argument naming the file when it is not a prediction or
// holds neither probe.
SavedProbes parse_saved_probes(std::string_view text, const std::string& source);
SavedProbes read_saved_probes(const std::string& path);

}  // namespace tokbench::predict
