// A single-device TrainStep captured once as a CUDA graph and replayed (--cuda-graphs,
// docs/PERFORMANCE.md "CUDA graphs"). It wraps another step: the first `eager_warmups`
// iterations run that step eagerly on a side stream of the device, the next one is captured —
// every micro-batch's forward and backward and the optimizer step, in the graph's private
// memory pool — and every iteration from then on copies its tokens into the graph's static input
// buffers and replays it. cuda_graph_step_none.cpp stands in for builds without CUDA.
#pragma once

#include <cstdint>
#include <memory>

#include "train/train_step.hpp"

namespace tokbench::train {

struct CudaGraphStepOptions {
  int64_t eager_warmups = 2;  // eager iterations on the capture stream before the capture
  // true (--cuda-graphs auto): a capture that fails is abandoned, the step goes on eagerly and
  // graph_fallback() says why. false (--cuda-graphs on): the failure ends the run.
  bool fall_back = true;
};

// Whether this build can capture (its CUDA unit was compiled).
bool cuda_graphs_built();

// Wraps `inner`, a single-device step on CUDA `device` whose optimizer is ATen's fused AdamW
// (its step counters are device tensors the graph increments); throws std::invalid_argument
// otherwise.
std::unique_ptr<TrainStep> make_cuda_graph_step(std::unique_ptr<TrainStep> inner, const c10::Device& device,
                                                const CudaGraphStepOptions& options);

}  // namespace tokbench::train
