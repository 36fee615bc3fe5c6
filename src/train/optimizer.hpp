// AdamW as torch.optim.AdamW computes it, in two implementations: ATen's fused multi-tensor
// kernel _fused_adamw_ (torch.optim.AdamW(fused=True); the reference uses it on CUDA, and
// ATen has a CPU kernel too) and the per-parameter loop of torch's _single_tensor_adam
// (Python's default on the CPU). LibTorch's C++ torch::optim::AdamW has no fused path and
// keys its state by formatted strings each step, hence this class. State is created lazily.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "train/train_options.hpp"
#include "train/zero_grad.hpp"

namespace tokbench::train {

class AdamW {
 public:
  AdamW(std::vector<at::Tensor> params, const AdamWOptions& options, const c10::Device& device);

  // One update of every parameter that has a gradient.
  void step();
  // Frees the gradients (ZeroGrad::none) or zeroes them in place without reallocation
  // (ZeroGrad::inplace).
  void zero_grad(ZeroGrad mode = ZeroGrad::inplace);

  bool fused() const { return fused_; }
  // The step count held in the optimizer state (0 before the first step).
  int64_t state_step() const;
  // Steps taken, counted on the host (no device read).
  int64_t steps_taken() const { return steps_; }
  // Bytes of the moments (exp_avg, exp_avg_sq) and step counters; 0 before the first step.
  int64_t state_bytes() const;

 private:
  void init_state();
  void step_single_tensor();
  void step_fused();

  AdamWOptions options_;
  bool fused_ = false;
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> exp_avg_, exp_avg_sq_;
  std::vector<at::Tensor> denom_;       // single-tensor: views of one scratch buffer per dtype
  std::vector<at::Tensor> fused_steps_; // fused: float32 step counters on the device
  std::vector<at::Tensor> grads_;       // refilled each step, capacity kept
  int64_t steps_ = 0;
  bool initialised_ = false;
};

}  // namespace tokbench::train
