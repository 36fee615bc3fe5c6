// Runs a callback each time autograd has accumulated a gradient into a parameter's .grad
// (PyTorch's register_post_accumulate_grad_hook). DDP and FSDP use it to start a bucket's
// or a unit's communication as soon as its last gradient is in, overlapping the rest of
// backward. A parameter has one such slot; a second registration replaces the first.
#pragma once

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <functional>
#include <memory>

namespace tokbench::dist {

inline void on_grad_accumulated(const at::Tensor& param, std::function<void()> callback) {
  struct Hook final : torch::autograd::PostAccumulateGradHook {
    explicit Hook(std::function<void()> f) : fn(std::move(f)) {}
    void operator()(const torch::autograd::Variable& /*param*/) override { fn(); }
    std::function<void()> fn;
  };
  torch::autograd::impl::set_post_acc_grad_hooks(param, std::make_unique<Hook>(std::move(callback)));
}

}  // namespace tokbench::dist
