// before_grad_accumulated: runs a callback each time a gradient reaches a parameter, before
// autograd accumulates it (a hook on the leaf, which autograd runs ahead of accumulation).
// FSDP uses it to point a unit's .grad fields into one flat gradient just before the first
// arrives, so accumulation writes straight into the buffer it reduce-scatters.
//
// on_grad_accumulated: runs a callback each time autograd has accumulated a gradient into a parameter's .grad
// (PyTorch's register_post_accumulate_grad_hook). DDP and FSDP use it to start a bucket's
// or a unit's communication as soon as its last gradient is in, overlapping the rest of
// backward. A parameter has one such slot; a second registration replaces the first.
// The callback runs inside a DeviceScope of the rank's device: on CUDA, autograd runs it on
// an engine thread of its own, whose current device is not the rank's by any promise of ours.
#pragma once

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <functional>
#include <memory>

#include "distributed/device_binding.hpp"

namespace tokbench::distributed {

inline void on_grad_accumulated(const at::Tensor& param, const c10::Device& device, std::function<void()> callback) {
  struct Hook final : torch::autograd::PostAccumulateGradHook {
    Hook(const c10::Device& d, std::function<void()> f) : device(d), fn(std::move(f)) {}
    void operator()(const torch::autograd::Variable& /*param*/) override {
      const DeviceScope on(device);
      fn();
    }
    c10::Device device;
    std::function<void()> fn;
  };
  torch::autograd::impl::set_post_acc_grad_hooks(param, std::make_unique<Hook>(device, std::move(callback)));
}

inline void before_grad_accumulated(at::Tensor& param, const c10::Device& device, std::function<void()> callback) {
  param.register_hook([device, fn = std::move(callback)](const at::Tensor& /*grad*/) {
    const DeviceScope on(device);
    fn();
  });
}

}  // namespace tokbench::distributed
