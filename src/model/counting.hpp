// Closed-form parameter and FLOP counts of a finalized Config, without building a model.
// Parameters match litgpt's num_parameters exactly (docs/litgpt-architecture.md, "Parameter
// count"). FLOPs follow the conventions of "FLOPs per micro-batch" there; `matmul` (the
// default) equals PyTorch's FlopCounterMode over litgpt's model with attention on the math
// backend: 2·m·n·k per matmul, backward = 2 × forward.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/config.hpp"

namespace tokbench::model {

struct ParamCounts {
  int64_t total = 0;
  int64_t embedding = 0;            // wte
  int64_t lm_head = 0;              // weight (+ bias)
  int64_t final_norm = 0;           // ln_f
  std::vector<int64_t> per_block;   // one entry per layer (MoE/dense layers can differ)
  int64_t linear_weights = 0;       // Σ in·out over every Linear incl. lm_head (the FLOP formulas' W)
};
ParamCounts count_params(const Config& config);

enum class FlopConvention { matmul, causal, palm };
std::string_view to_string(FlopConvention convention);
FlopConvention flop_convention_from_string(std::string_view name);  // throws std::invalid_argument

// FLOPs of one micro-batch of B sequences of T tokens on one device, whole model.
// Integers, exact; throws std::overflow_error when a count does not fit in int64.
struct FlopCounts {
  int64_t forward = 0;
  int64_t backward = 0;
  int64_t total() const { return forward + backward; }
};
FlopCounts count_flops(const Config& config, int64_t micro_batch, int64_t seq_len,
                       FlopConvention convention = FlopConvention::matmul);

// Activation checkpointing (model/gpt_checkpoint.hpp) runs each block's forward again in
// backward, and stops where PyTorch's non-reentrant checkpoint stops: after the last value a
// backward formula reads. In a block whose output is `mlp.proj(h) + x` (no post-MLP norm, not
// an MoE) nothing reads the projection's output, so its GEMM is not recomputed.
bool recompute_skips_mlp_projection(const Config& config);

// The FLOPs checkpointing adds to one micro-batch (every block's forward less the projection
// above where skipped), in `convention`: model FLOPs (what MFU divides) stay count_flops's;
// hardware FLOPs (HFU's) are count_flops(...).total() plus these. Under `matmul` they equal
// what PyTorch's FlopCounterMode counts for litgpt with torch.utils.checkpoint per block
// beyond the run without it.
int64_t count_recompute_flops(const Config& config, int64_t micro_batch, int64_t seq_len,
                              FlopConvention convention = FlopConvention::matmul);

}  // namespace tokbench::model
