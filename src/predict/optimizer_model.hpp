// The optimizer on the predicted rank: a per-tensor cost plus a per-element cost, so a sharded
// step (FSDP: one flat shard per unit, 1/S of its elements) is timed by the tensors and elements
// each rank really updates, not by a share of the elements alone (docs/predict.md, "The
// optimizer"). The two costs come from a probe of tokbench's AdamW on the machine at hand
// (train/optimizer_probe.hpp, run by the command); they set the split, the measured run's own
// optimizer time sets the scale. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "parallel/layout.hpp"

namespace tokbench::predict {

struct OptimizerCostRates {
  double per_tensor_seconds = 0, per_element_seconds = 0;
  std::string source;  // how they were measured
};

// What one rank's optimizer updates.
struct OptimizerWork {
  int64_t tensors = 0, elements = 0;
};
OptimizerWork unsharded_work(const std::vector<parallel::ParameterShape>& parameters);
OptimizerWork sharded_work(const parallel::Layout& fsdp_layout);  // one shard of each unit

// Predicted seconds over measured seconds: (a·n_p·tensor_factor + b·e_p·element_factor) /
// (a·n_m + b·e_m), with a, b the rates (without rates, or both zero: elements alone, b = 1).
// tensor_factor scales the per-tensor part (host work: as compute), element_factor the per-
// element part (memory-bound: as the node's ranks share memory bandwidth).
double optimizer_time_ratio(const OptimizerCostRates* rates, const OptimizerWork& measured,
                            const OptimizerWork& predicted, double tensor_factor, double element_factor);

nlohmann::ordered_json to_json(const OptimizerWork& work);

}  // namespace tokbench::predict
