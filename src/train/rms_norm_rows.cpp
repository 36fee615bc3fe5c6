// rms_norm_rows (rms_norm_rows.hpp): the autograd function, argument checks, the rows spread
// over ATen's intra-op threads, and each row handed to the kernel of the ISA ATen uses on
// this machine (at::get_cpu_capability), chosen once per process.
#include "train/rms_norm_rows.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/saved_data_keys.hpp"
#include "train/profile_trace.hpp"
#include "train/cuda_row_kernels.hpp"
#include "train/rms_norm_rows_kernel.hpp"

namespace tokbench::train {

namespace sdk = model::saved_data_key;  // the keys of ctx->saved_data
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct RowKernels {
  const char* isa;
  float (*forward_fp32)(const float*, const float*, float*, int64_t, float);
  float (*forward_bf16)(const c10::BFloat16*, const float*, c10::BFloat16*, float*, int64_t, float);
  void (*backward_fp32)(const float*, const float*, const float*, float, float*, float*, int64_t);
  void (*backward_bf16)(const c10::BFloat16*, const c10::BFloat16*, const float*, float, c10::BFloat16*, float*,
                        float*, int64_t);
};

#define TOKBENCH_RMS_NORM_KERNELS_OF(isa)                                                                 \
  RowKernels{#isa, &rms_norm_kernel::isa::rms_norm_forward_row, &rms_norm_kernel::isa::rms_norm_forward_row, \
             &rms_norm_kernel::isa::rms_norm_backward_row, &rms_norm_kernel::isa::rms_norm_backward_row}

const RowKernels& row_kernels() {
  static const RowKernels chosen = []() -> RowKernels {
#if defined(__x86_64__)
    const std::string isa = at::get_cpu_capability();
    if (isa == "AVX512") return TOKBENCH_RMS_NORM_KERNELS_OF(AVX512);
    if (isa == "AVX2") return TOKBENCH_RMS_NORM_KERNELS_OF(AVX2);
#endif
    return TOKBENCH_RMS_NORM_KERNELS_OF(DEFAULT);
  }();
  return chosen;
}

// Rows per part of the grad_weight reduction: enough that one part's C-wide partial sum is
// small beside the rows it sums.
constexpr int64_t kMinRowsPerPart = 16;

class RmsNormRowsFunction : public torch::autograd::Function<RmsNormRowsFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight, bool unit_offset,
                            double eps) {
    TraceRange range(account::ranges::kRmsNormRows);  // named in profiles (a custom forward records no op)
    const int64_t width = weight.size(0);
    const auto x2 = x.contiguous().view({-1, width});  // (R, C)
    const int64_t rows = x2.size(0);
    // The effective scale in weight's dtype first (litgpt: 1 + weight), then fp32.
    const auto scale = (unit_offset ? 1 + weight : weight).to(at::kFloat).contiguous();  // (C)
    auto y = at::empty_like(x2);                                                          // (R, C)
    auto rstd = at::empty({rows}, x2.options().dtype(at::kFloat));                        // (R)
    ctx->save_for_backward({x2, scale, rstd});
    ctx->saved_data[sdk::x_sizes] = x.sizes().vec();
    ctx->saved_data[sdk::weight_dtype] = weight.scalar_type();
    if (x2.is_cuda()) {
      rms_norm_cuda_forward(x2, scale, y, rstd, eps);
      return y.view(x.sizes());
    }
    const bool bf16 = x2.scalar_type() == at::kBFloat16;
    const float* w = scale.data_ptr<float>();
    float* rstd_of = rstd.data_ptr<float>();
    const float eps_f = static_cast<float>(eps);
    const RowKernels& k = row_kernels();
    at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
      if (bf16) {
        std::vector<float> scratch(width);
        const auto* in = x2.data_ptr<c10::BFloat16>();
        auto* out = y.data_ptr<c10::BFloat16>();
        for (int64_t r = begin; r < end; ++r)
          rstd_of[r] = k.forward_bf16(in + r * width, w, out + r * width, scratch.data(), width, eps_f);
      } else {
        const auto* in = x2.data_ptr<float>();
        auto* out = y.data_ptr<float>();
        for (int64_t r = begin; r < end; ++r) rstd_of[r] = k.forward_fp32(in + r * width, w, out + r * width, width, eps_f);
      }
    });
    return y.view(x.sizes());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    TraceRange range(account::ranges::kRmsNormRowsBackward);
    const auto saved = ctx->get_saved_variables();
    const auto& x2 = saved[0];     // (R, C)
    const auto& scale = saved[1];  // (C) fp32
    const auto& rstd = saved[2];   // (R) fp32
    const int64_t rows = x2.size(0), width = x2.size(1);
    const auto g = grad_outputs[0].contiguous().view({rows, width}).to(x2.scalar_type());
    const bool want_weight = ctx->needs_input_grad(1);
    auto grad_x = at::empty_like(x2);
    if (x2.is_cuda()) {
      const at::Tensor grad_weight = rms_norm_cuda_backward(g, x2, scale, rstd, grad_x, want_weight);
      return {grad_x.view(ctx->saved_data[sdk::x_sizes].toIntVector()),
              want_weight ? grad_weight.to(ctx->saved_data[sdk::weight_dtype].toScalarType()) : at::Tensor(),
              at::Tensor(),
              at::Tensor()};
    }
    // Parts split the rows by count alone (not by which thread runs them), so the sums
    // and their order depend only on the row count and the thread count.
    const int64_t parts =
        std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), rows / kMinRowsPerPart));
    auto partial = want_weight ? at::zeros({parts, width}, x2.options().dtype(at::kFloat)) : at::Tensor();
    const bool bf16 = x2.scalar_type() == at::kBFloat16;
    const float* w = scale.data_ptr<float>();
    const float* rstd_of = rstd.data_ptr<float>();
    const RowKernels& k = row_kernels();
    at::parallel_for(0, parts, 1, [&](int64_t first_part, int64_t end_part) {
      std::vector<float> scratch(bf16 ? 2 * width : 0);
      for (int64_t part = first_part; part < end_part; ++part) {
        float* sum = want_weight ? partial.data_ptr<float>() + part * width : nullptr;
        const int64_t begin = rows * part / parts, end = rows * (part + 1) / parts;
        if (bf16) {
          const auto* g_in = g.data_ptr<c10::BFloat16>();
          const auto* x_in = x2.data_ptr<c10::BFloat16>();
          auto* out = grad_x.data_ptr<c10::BFloat16>();
          for (int64_t r = begin; r < end; ++r)
            k.backward_bf16(g_in + r * width, x_in + r * width, w, rstd_of[r], out + r * width, sum, scratch.data(),
                            width);
        } else {
          const auto* g_in = g.data_ptr<float>();
          const auto* x_in = x2.data_ptr<float>();
          auto* out = grad_x.data_ptr<float>();
          for (int64_t r = begin; r < end; ++r)
            k.backward_fp32(g_in + r * width, x_in + r * width, w, rstd_of[r], out + r * width, sum, width);
        }
      }
    });
    at::Tensor grad_weight;
    if (want_weight) grad_weight = partial.sum(0).to(ctx->saved_data[sdk::weight_dtype].toScalarType());
    return {grad_x.view(ctx->saved_data[sdk::x_sizes].toIntVector()), grad_weight, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor rms_norm_rows(const at::Tensor& x, const at::Tensor& weight, bool unit_offset, double eps) {
  TORCH_CHECK((x.device().is_cpu() || x.device().is_cuda()) && weight.device() == x.device(),
              "rms_norm_rows: x and weight on one CPU or CUDA device expected, got x on ", x.device(), ", weight on ",
              weight.device());
  TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16,
              "rms_norm_rows: fp32 or bf16 x expected, got ", x.scalar_type());
  TORCH_CHECK(weight.dim() == 1 && x.dim() >= 1 && x.size(-1) == weight.size(0), "rms_norm_rows: x ", x.sizes(),
              " does not end in the width of weight ", weight.sizes());
  return RmsNormRowsFunction::apply(x, weight, unit_offset, eps);
}

const char* rms_norm_rows_isa() { return row_kernels().isa; }

}  // namespace tokbench::train
