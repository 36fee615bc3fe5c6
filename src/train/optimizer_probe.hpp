// What one AdamW step costs on this machine per tensor and per element: tokbench's own AdamW
// (optimizer.hpp, fused as a run uses it) timed on many small tensors and on one large one, the
// two costs solved from the pair. `tokbench predict` times a sharded optimizer with it, whose
// tensors and elements per rank differ from the measured run's (docs/predict.md, "The
// optimizer"). This header is torch-free; the probe itself runs LibTorch.
#pragma once

#include <cstdint>
#include <string>

namespace tokbench::train {

struct OptimizerCost {
  double per_tensor_seconds = 0;   // a step's cost for each tensor it updates
  double per_element_seconds = 0;  // and for each element
  int64_t threads = 1;             // intra-op threads it ran on
  std::string method;              // what was timed, in words
};

// `threads` intra-op threads (restored after); a few hundred milliseconds.
OptimizerCost measure_optimizer_cost(int64_t threads);

}  // namespace tokbench::train
