// Training-memory estimate of a finalized Config for one micro-batch on one device, per
// precision: weights, gradients, AdamW state and the activations autograd keeps for backward.
// A planning figure, not a measurement: memory_estimate.cpp lists what it leaves out.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/config.hpp"

namespace tokbench::model {

// fp32: everything fp32. bf16-true: parameters, gradients, AdamW state and activations in
// bf16 (the reference benchmark's model.to(bfloat16)). bf16-mixed: fp32 parameters, gradients
// and AdamW state, bf16 activations under autocast (the loss's log-softmax in fp32).
enum class TrainPrecision { fp32, bf16_true, bf16_mixed };
std::string_view to_string(TrainPrecision precision);                // "fp32", "bf16-true", "bf16-mixed"
TrainPrecision train_precision_from_string(std::string_view name);   // throws std::invalid_argument

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
MemoryEstimate estimate_training_memory(const Config& config, int64_t micro_batch, int64_t seq_len,
                                        TrainPrecision precision);

}  // namespace tokbench::model
