// Training-memory estimate of a finalized Config for one micro-batch on one device, per
// precision: weights, gradients, AdamW state and the activations autograd keeps for backward.
// A planning figure, not a measurement: memory_estimate.cpp lists what it leaves out.
#pragma once

#include <cstdint>

#include "model/config.hpp"
#include "model/train_precision.hpp"

namespace tokbench::model {

struct MemoryEstimate {
  TrainPrecision precision = TrainPrecision::fp32;
  int64_t weights_bytes = 0;
  int64_t gradients_bytes = 0;
  int64_t optimizer_bytes = 0;    // AdamW exp_avg + exp_avg_sq
  int64_t activations_bytes = 0;  // saved for backward at the end of the forward pass
  int64_t total_bytes() const { return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes; }
};

// Activation elements autograd saves per token in one block (see memory_estimate.cpp).
int64_t block_activation_elements_per_token(const Config& config);

// Throws std::invalid_argument for non-positive sizes, std::overflow_error past int64.
// checkpoint_activations: each block keeps only its input (C per token) to the end of forward,
// and one block's activations exist again while backward recomputes it, so the blocks count
// n_layer·C + one block's elements per token instead of n_layer blocks'.
MemoryEstimate estimate_training_memory(const Config& config, int64_t micro_batch, int64_t seq_len,
                                        TrainPrecision precision, bool checkpoint_activations = false);

}  // namespace tokbench::model
