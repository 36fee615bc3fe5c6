// Python's numbers and literals as LibTorch arguments, so the C++ model issues the operators
// litgpt's Python issues (docs/eager-parity.md). PyTorch's argument parser turns a number given
// where an operator takes a tensor (`x + 1e-6`, `loss / 4`) into a 0-dim CPU tensor marked as a
// wrapped number (double for a float, long for an int) and calls the Tensor overload; LibTorch's
// `x / 4.0` calls the Scalar overload, which for some operators (div) dispatches the Tensor
// overload again: another operator record, and a double where Python passed a long.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/ScalarOps.h>
#include <ATen/TensorIndexing.h>
#include <ATen/core/LegacyTypeDispatch.h>

#include <cstdint>

namespace tokbench::model {

// The 0-dim tensor Python passes for a float argument.
inline at::Tensor python_number(double value) {
  at::Tensor t = c10::scalar_to_tensor(value);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// The 0-dim tensor Python passes for an int argument.
inline at::Tensor python_number(int64_t value) {
  at::Tensor t = c10::scalar_to_tensor(value);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// `torch.tensor(value, dtype=dtype)`: an empty 0-dim CPU tensor written in place, then
// to(device, dtype) (a no-op), lift_fresh and detach_, the operators that constructor records.
inline at::Tensor python_tensor(double value, at::ScalarType dtype) {
  at::Tensor t = at::empty({}, at::TensorOptions(at::kCPU).dtype(dtype).layout(at::kStrided).pinned_memory(false));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "python_tensor",
                                  [&] { *t.data_ptr<scalar_t>() = static_cast<scalar_t>(value); });
  t = t.to(at::Device(at::kCPU), dtype, /*non_blocking=*/false, /*copy=*/false);
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    t = at::lift_fresh(t);
  }
  t.detach_();
  return t;
}

// A factory's `dtype=like.dtype, device=like.device` as Python's parser passes them: no layout,
// pin_memory False (LibTorch's like.options() carries a layout and no pin_memory).
inline at::TensorOptions python_factory_options(const at::Tensor& like) {
  return at::TensorOptions().dtype(like.scalar_type()).device(like.device()).pinned_memory(false);
}

// The value Python's `t[...] = number` stores: the number as a 0-dim tensor of t's dtype, on the
// CPU (also for a CUDA t), through lift_fresh; `t.index_put_(indices, number)` in C++ makes it
// without lift_fresh.
inline at::Tensor python_setitem_value(double value, const at::Tensor& target) {
  at::AutoDispatchBelowADInplaceOrView guard;
  const at::Device device = target.is_cuda() ? at::Device(at::kCPU) : target.device();
  at::Tensor t = at::indexing::scalarToTensor(value, target.options(), device);
  return device == at::Device(at::kCPU) ? at::lift_fresh(t) : t;
}

}  // namespace tokbench::model
