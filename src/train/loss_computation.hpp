// How one micro-batch's loss and its gradients are computed: the executor. It is one half of
// a training step; the other half, how gradients are combined across ranks and the
// optimizer applied (the single-device step, DDP, FSDP), is the step's own. The two vary
// independently: every step takes a computation, and every computation runs in every step.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "model/gpt.hpp"
#include "model/train_precision.hpp"
#include "train/gemm_kernels.hpp"
#include "train/token_data.hpp"

namespace tokbench::train {

class LossComputation {
 public:
  virtual ~LossComputation() = default;

  // Forward and backward of one micro-batch on `model`: runs backward of loss / grad_accum
  // (gradients accumulate into the parameters' .grad, where a step's hooks see them) and
  // returns the undivided loss, detached, as a device tensor.
  virtual at::Tensor forward_backward(model::GPT& model, const TokenBatch& batch, int64_t grad_accum) = 0;

  // Which compute kernels the computation chose, for the report; "" when LibTorch's defaults.
  virtual std::string kernel_note() const { return {}; }

  // Called between each micro-batch's forward (the loss computed) and its backward: the
  // timed loop reads there what forward left held for backward (memory_breakdown.hpp).
  void set_forward_end_callback(std::function<void()> callback) { forward_end_ = std::move(callback); }

 protected:
  void forward_ended() const {
    if (forward_end_) forward_end_();
  }

 private:
  std::function<void()> forward_end_;
};

// The reference's computation (litgpt's training step): logits from model->forward, then
// cross_entropy(logits.reshape(-1, V), y.reshape(-1), ignore_index=-1); bf16-mixed under
// autocast with the loss taken in fp32 (Lightning returns fp32 outputs).
std::shared_ptr<LossComputation> make_eager_computation(model::TrainPrecision dtype);

// The eager computation's body, for callers that hold no computation object.
// forward_end, when set, is called between forward and backward.
at::Tensor forward_backward_loss(model::GPT& model, const TokenBatch& batch, model::TrainPrecision dtype,
                                 int64_t grad_accum, const std::function<void()>& forward_end = {});

struct FusedComputationOptions {
  model::TrainPrecision dtype = model::TrainPrecision::fp32;  // fp32 or bf16-true (no autocast)
  int64_t rows_per_micro_batch = 0;  // B·T: the GEMM rows the kernel calibration measures
  int64_t chunk_rows = 0;            // lm_head + loss rows per chunk; 0: default_chunk_rows(V)
  bool use_gemm_cache = true;        // false: measure the kernels even if the cache has them
  // Every GEMM on this kernel, nothing measured (tests of each kernel path); nullopt: measure.
  std::optional<GemmKernel> only_kernel;
  // Where the kernel choice comes from, given the call that measures it here (or reads the
  // cache): empty, that call. Ranks that train one model together must use one choice, so a
  // distributed run passes one that measures on rank 0 only and hands its choice to the
  // others (dist/shared_gemm_choice.hpp).
  std::function<GemmChoices(const std::function<GemmChoices()>& measure)> share_choice;
};

// The eager computation's math with every linear layer routed through fused_linear (GEMM
// kernels measured fastest on this machine) and the lm_head + loss computed in row chunks
// (fused_ops.hpp), so the B×T×V logits are never materialised. Measures the kernels (or
// reads their cached choice) for `model`'s shapes on `device`, and installs its linear
// function on `model` until the computation is destroyed.
std::shared_ptr<LossComputation> make_fused_computation(model::GPT model, const c10::Device& device,
                                                        const FusedComputationOptions& options);

}  // namespace tokbench::train
