// AdamW (optimizer.hpp). The single-tensor path follows torch/optim/adam.py
// _single_tensor_adam with decoupled weight decay, op for op, except that the denominator
// is computed into a reused scratch buffer instead of two fresh temporaries per parameter.
// The fused path mirrors _fused_adam: step counters += 1, then one _fused_adamw_ per dtype.
// Either path first clips the gradients' global norm where --grad-clip-norm asks.
#include "train/optimizer.hpp"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_norm.h>
#include <ATen/ops/_foreach_zero.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/clamp_max.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>

#include <cmath>
#include <map>
#include <stdexcept>

namespace tokbench::train {
namespace {

// torch.nn.utils.clip_grad_norm_ op for op: each gradient's L2 norm (_foreach_norm), the norm of
// those, and every gradient times min(1, max_norm / (norm + 1e-6)) (Python's scalar / tensor is
// reciprocal() * scalar), all on the device: no host read. On DDP the gradients are already the
// ranks' average, so this norm is the global one.
void clip_gradients(const std::vector<at::Tensor>& params, double max_norm) {
  std::vector<at::Tensor> grads;
  grads.reserve(params.size());
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return;
  const at::Tensor total = at::linalg_vector_norm(at::stack(at::_foreach_norm(grads, 2)), 2);
  at::_foreach_mul_(grads, at::clamp_max(total.add(1e-6).reciprocal().mul(max_norm), 1.0));
}

}  // namespace

AdamW::AdamW(std::vector<at::Tensor> params, const AdamWOptions& options, const c10::Device& device)
    : options_(options), fused_(options.fused.value_or(device.is_cuda() || device.is_cpu())), params_(std::move(params)) {
  grads_.reserve(params_.size());
}

void AdamW::init_state() {
  exp_avg_.reserve(params_.size());
  exp_avg_sq_.reserve(params_.size());
  for (const auto& p : params_) {
    exp_avg_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
    exp_avg_sq_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
    if (fused_) fused_steps_.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
  }
  if (!fused_) {
    // One scratch buffer per dtype, as large as the largest parameter of that dtype.
    std::map<at::ScalarType, int64_t> largest;
    for (const auto& p : params_) largest[p.scalar_type()] = std::max(largest[p.scalar_type()], p.numel());
    std::map<at::ScalarType, at::Tensor> scratch;
    for (const auto& [dtype, numel] : largest) {
      scratch[dtype] = at::empty({numel}, params_.front().options().dtype(dtype));
    }
    for (const auto& p : params_) {
      denom_.push_back(scratch[p.scalar_type()].narrow(0, 0, p.numel()).view(p.sizes()));
    }
  }
  initialised_ = true;
}

int64_t AdamW::state_bytes() const {
  int64_t bytes = 0;
  for (const auto* list : {&exp_avg_, &exp_avg_sq_, &fused_steps_})
    for (const auto& t : *list) bytes += static_cast<int64_t>(t.nbytes());
  return bytes;
}

void AdamW::step() {
  at::NoGradGuard no_grad;
  if (!initialised_) init_state();
  ++steps_;
  if (options_.grad_clip_norm) clip_gradients(params_, *options_.grad_clip_norm);
  if (fused_) {
    step_fused();
  } else {
    step_single_tensor();
  }
}

void AdamW::step_single_tensor() {
  const double lr = options_.lr;
  const double beta1 = options_.beta1;
  const double beta2 = options_.beta2;
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(steps_));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(steps_));
  const double step_size = lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& param = params_[i];
    const at::Tensor& grad = param.grad();
    if (!grad.defined()) continue;
    if (options_.weight_decay != 0) param.mul_(1 - lr * options_.weight_decay);
    exp_avg_[i].lerp_(grad, 1 - beta1);
    exp_avg_sq_[i].mul_(beta2).addcmul_(grad, grad, 1 - beta2);
    at::Tensor& denom = denom_[i];
    at::sqrt_out(denom, exp_avg_sq_[i]);
    denom.div_(bias_correction2_sqrt).add_(options_.eps);
    param.addcdiv_(exp_avg_[i], denom, -step_size);
  }
}

void AdamW::step_fused() {
  // Grouped by dtype as torch's _group_tensors_by_device_and_dtype does (one device here).
  std::map<at::ScalarType, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].grad().defined()) groups[params_[i].scalar_type()].push_back(i);
  }
  for (const auto& [dtype, indices] : groups) {
    std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
    for (std::size_t i : indices) {
      params.push_back(params_[i]);
      grads.push_back(params_[i].grad());
      exp_avgs.push_back(exp_avg_[i]);
      exp_avg_sqs.push_back(exp_avg_sq_[i]);
      steps.push_back(fused_steps_[i]);
    }
    at::_foreach_add_(steps, 1);
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, options_.lr,
                      options_.beta1, options_.beta2, options_.weight_decay, options_.eps,
                      /*amsgrad=*/false, /*maximize=*/false);
  }
}

void AdamW::zero_grad(ZeroGrad mode) {
  grads_.clear();
  if (mode == ZeroGrad::none) {
    for (auto& p : params_) p.mutable_grad().reset();
    return;
  }
  for (auto& p : params_) {
    at::Tensor& grad = p.mutable_grad();
    if (!grad.defined()) continue;
    if (grad.grad_fn()) {
      grad = grad.detach();
    } else {
      grad.requires_grad_(false);
    }
    grads_.push_back(grad);
  }
  if (!grads_.empty()) at::_foreach_zero_(grads_);
}

int64_t AdamW::state_step() const {
  if (!initialised_) return 0;
  if (fused_ && !fused_steps_.empty()) return static_cast<int64_t>(fused_steps_.front().item<float>());
  return steps_;
}

}  // namespace tokbench::train
