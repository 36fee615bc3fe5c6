// swiglu (swiglu.hpp): the autograd function, argument checks, the elements spread over
// ATen's intra-op threads, and the loops of the ISA ATen uses on this machine
// (at::get_cpu_capability), chosen once per process.
#include "train/swiglu.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <string>

#include "train/profile_trace.hpp"
#include "train/swiglu_kernel.hpp"

namespace tokbench::train {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using c10::BFloat16;

struct Kernels {
  void (*forward_fp32)(const float*, const float*, float*, int64_t);
  void (*forward_bf16)(const BFloat16*, const BFloat16*, BFloat16*, int64_t);
  void (*backward_fp32)(const float*, const float*, const float*, float*, float*, int64_t);
  void (*backward_bf16)(const BFloat16*, const BFloat16*, const BFloat16*, BFloat16*, BFloat16*, int64_t);
};

#define TOKBENCH_SWIGLU_KERNELS_OF(isa)                                                          \
  Kernels{&swiglu_kernel::isa::swiglu_forward, &swiglu_kernel::isa::swiglu_forward,             \
          &swiglu_kernel::isa::swiglu_backward, &swiglu_kernel::isa::swiglu_backward}

const Kernels& kernels() {
  static const Kernels chosen = []() -> Kernels {
#if defined(__x86_64__)
    const std::string isa = at::get_cpu_capability();
    if (isa == "AVX512") return TOKBENCH_SWIGLU_KERNELS_OF(AVX512);
    if (isa == "AVX2") return TOKBENCH_SWIGLU_KERNELS_OF(AVX2);
#endif
    return TOKBENCH_SWIGLU_KERNELS_OF(DEFAULT);
  }();
  return chosen;
}

// Elements per task: large enough that scheduling costs little beside the work.
constexpr int64_t kGrain = 32768;

class SwigluFunction : public torch::autograd::Function<SwigluFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gate, const at::Tensor& up) {
    TraceRange range("tokbench::swiglu");  // named in profiles (a custom forward records no op)
    const auto a = gate.contiguous(), b = up.contiguous();
    auto y = at::empty_like(a);
    const bool bf16 = a.scalar_type() == at::kBFloat16;
    const Kernels& k = kernels();
    at::parallel_for(0, a.numel(), kGrain, [&](int64_t begin, int64_t end) {
      if (bf16)
        k.forward_bf16(a.data_ptr<BFloat16>() + begin, b.data_ptr<BFloat16>() + begin, y.data_ptr<BFloat16>() + begin,
                       end - begin);
      else
        k.forward_fp32(a.data_ptr<float>() + begin, b.data_ptr<float>() + begin, y.data_ptr<float>() + begin,
                       end - begin);
    });
    ctx->save_for_backward({a, b});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    TraceRange range("tokbench::swiglu_backward");
    const auto saved = ctx->get_saved_variables();
    const auto& a = saved[0];
    const auto& b = saved[1];
    const auto g = grad_outputs[0].contiguous();
    auto grad_a = at::empty_like(a), grad_b = at::empty_like(b);
    const bool bf16 = a.scalar_type() == at::kBFloat16;
    const Kernels& k = kernels();
    at::parallel_for(0, a.numel(), kGrain, [&](int64_t begin, int64_t end) {
      if (bf16)
        k.backward_bf16(g.data_ptr<BFloat16>() + begin, a.data_ptr<BFloat16>() + begin, b.data_ptr<BFloat16>() + begin,
                        grad_a.data_ptr<BFloat16>() + begin, grad_b.data_ptr<BFloat16>() + begin, end - begin);
      else
        k.backward_fp32(g.data_ptr<float>() + begin, a.data_ptr<float>() + begin, b.data_ptr<float>() + begin,
                        grad_a.data_ptr<float>() + begin, grad_b.data_ptr<float>() + begin, end - begin);
    });
    return {grad_a, grad_b};
  }
};

}  // namespace

at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up) {
  TORCH_CHECK(gate.device().is_cpu() && up.device().is_cpu(), "swiglu: CPU tensors expected, got ", gate.device(),
              " and ", up.device());
  TORCH_CHECK(gate.sizes() == up.sizes() && gate.scalar_type() == up.scalar_type(),
              "swiglu: gate and up must have one shape and dtype, got ", gate.sizes(), " ", gate.scalar_type(),
              " and ", up.sizes(), " ", up.scalar_type());
  TORCH_CHECK(gate.scalar_type() == at::kFloat || gate.scalar_type() == at::kBFloat16,
              "swiglu: fp32 or bf16 expected, got ", gate.scalar_type());
  return SwigluFunction::apply(gate, up);
}

}  // namespace tokbench::train
