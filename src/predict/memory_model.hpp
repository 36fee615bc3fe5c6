// A rank's memory under another strategy, starting from what the measured run measured: its
// peak and its breakdown; the parts a strategy changes (parameters, gradients, optimizer state
// by the shard size; DDP's buckets; FSDP's flat gradients in flight and ZeRO-3's gathered units)
// are replaced, everything else in the peak (activations, temporaries, the allocator's reserve)
// is kept (docs/predict.md, "Memory"). Torch-free.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "predict/comm_plan.hpp"
#include "predict/measured_run.hpp"

namespace tokbench::predict {

struct MemoryParts {  // bytes
  double parameters = 0, gradients = 0, optimizer_state = 0, activations = 0, comm_buffers = 0;
};

struct MemoryPrediction {
  MemoryParts measured, predicted;
  bool measured_breakdown = false;  // false: the measured parts are the closed form's
  std::optional<double> measured_peak, predicted_peak;          // bytes
  std::optional<double> measured_reserved, predicted_reserved;  // bytes
  std::vector<std::string> assumptions;
};

struct MemoryTarget {
  parallel::DistMode strategy = parallel::DistMode::none;
  bool zero3 = false;
  int64_t shard_size = 1;
  const CommPlan* plan = nullptr;  // the target's units or buckets
};

MemoryPrediction predict_memory(const MeasuredRun& run, const MemoryTarget& target);

}  // namespace tokbench::predict
