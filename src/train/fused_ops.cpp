// FusedLinear and the chunked lm_head + cross-entropy as custom autograd functions
// (fused_ops.hpp). Forward bodies run with grad mode off (Function::apply), so nothing
// inside them records autograd history.
#include "train/fused_ops.hpp"

#include "model/saved_data_keys.hpp"
#include "train/cross_entropy_rows.hpp"
#include "train/cuda_row_kernels.hpp"
#include "train/profile_trace.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

namespace tokbench::train {

namespace sdk = model::saved_data_key;  // the keys of ctx->saved_data
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The three kernels of one call, packed in an int so the context can carry them to backward
// (the choice is made once, in forward, from the forward shape).
int64_t pack(GemmKernel forward, GemmKernel grad_input, GemmKernel grad_weight) {
  return static_cast<int64_t>(forward) | static_cast<int64_t>(grad_input) << 1 |
         static_cast<int64_t>(grad_weight) << 2;
}
GemmKernel unpack(int64_t code, GemmRole role) { return static_cast<GemmKernel>((code >> static_cast<int>(role)) & 1); }

int64_t pack_choices(const GemmChoices& choices, const GemmShape& shape) {
  return pack(choices.choose(GemmRole::forward, shape), choices.choose(GemmRole::grad_input, shape),
              choices.choose(GemmRole::grad_weight, shape));
}

class FusedLinearFunction : public torch::autograd::Function<FusedLinearFunction> {
 public:
  // bias travels as an optional: an undefined tensor cannot be a graph input.
  // compute_output false: the graph only (model/gpt_checkpoint.hpp), no forward GEMM.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const std::optional<at::Tensor>& maybe_bias, int64_t kernels, bool compute_output) {
    TraceRange range(account::ranges::kLinear);  // a custom forward records no operator of its own
    const at::Tensor bias = maybe_bias.value_or(at::Tensor());
    const auto x2 = x.reshape({-1, x.size(-1)});  // (M, K)
    ctx->save_for_backward({x2, weight});
    ctx->saved_data[sdk::kernels] = kernels;
    ctx->saved_data[sdk::has_bias] = bias.defined();
    ctx->saved_data[sdk::x_sizes] = x.sizes().vec();
    auto sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    if (!compute_output) return at::empty(sizes, x.options());
    auto y = linear_forward(unpack(kernels, GemmRole::forward), x2, weight, bias);  // (M, N)
    return y.view(sizes);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    TraceRange range(account::ranges::kLinear);
    const auto saved = ctx->get_saved_variables();
    const auto& x2 = saved[0];
    const auto& weight = saved[1];
    const int64_t kernels = ctx->saved_data[sdk::kernels].toInt();
    const auto dy = grad_outputs[0].reshape({-1, weight.size(0)});  // (M, N)
    at::Tensor grad_x, grad_w, grad_b;
    if (ctx->needs_input_grad(0))
      grad_x = linear_grad_input(unpack(kernels, GemmRole::grad_input), dy, weight)
                   .view(ctx->saved_data[sdk::x_sizes].toIntVector());
    if (ctx->needs_input_grad(1)) grad_w = linear_grad_weight(unpack(kernels, GemmRole::grad_weight), dy, x2);
    if (ctx->saved_data[sdk::has_bias].toBool() && ctx->needs_input_grad(2)) grad_b = dy.sum(0);
    return {grad_x, grad_w, grad_b, at::Tensor(), at::Tensor()};
  }
};

// The chunk's loss (added to loss_sum) and gradient with whole-chunk ATen ops: the path for
// devices without a row kernel. z: (r, V) lm_head output; safe_targets: (r, 1), ignored rows
// pointing at column 0; valid: (r) bool. Returns d(mean loss)/dz in z's dtype.
at::Tensor cross_entropy_rows_with_aten_ops(at::Tensor z, const at::Tensor& safe_targets, const at::Tensor& valid,
                                            const at::Tensor& inv_count, double softcap, at::Tensor& loss_sum) {
  at::Tensor capped_tanh;
  if (softcap > 0) {
    capped_tanh = at::tanh(z / softcap);
    z = capped_tanh * softcap;
  }
  const auto logits = z.to(at::kFloat);
  const auto lse = at::logsumexp(logits, 1, /*keepdim=*/true);  // (r, 1)
  const auto counted = valid.to(at::kFloat).unsqueeze(1);        // (r, 1)
  loss_sum.add_(((lse - logits.gather(1, safe_targets)) * counted).sum());
  // d(mean loss)/d(logits) = (softmax − onehot(target)) · counted / count
  auto g = (logits - lse).exp_();
  g.scatter_add_(1, safe_targets, at::full_like(safe_targets, -1, g.options()));
  g.mul_(counted * inv_count);
  if (softcap > 0) g.mul_(1 - capped_tanh.to(at::kFloat).square());
  return g.to(z.scalar_type());
}

class ChunkedLinearCrossEntropyFunction : public torch::autograd::Function<ChunkedLinearCrossEntropyFunction> {
 public:
  // softcap 0: none. Returns the fp32 mean loss; stores the gradients of that loss.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& hidden, const at::Tensor& weight,
                            const std::optional<at::Tensor>& maybe_bias, const at::Tensor& targets,
                            int64_t chunk_rows, double softcap, int64_t kernels) {
    const at::Tensor bias = maybe_bias.value_or(at::Tensor());
    const int64_t rows = hidden.size(0);
    const auto valid = targets.ne(-1);
    // 1 / (number of counted targets) as a device tensor: no host read. inf when none
    // counts, so the loss is 0·inf = NaN as in torch.
    const auto inv_count = valid.sum().to(at::kFloat).reciprocal();
    const auto safe_targets = targets.clamp_min(0).unsqueeze(1);  // ignored rows gather column 0
    auto loss_sum = at::zeros({}, hidden.options().dtype(at::kFloat));
    at::Tensor grad_hidden = at::empty_like(hidden), grad_weight, grad_bias;
    // CPU: the one-pass row kernel, which takes the gradient scale as a host number (reading a
    // CPU scalar is no device sync). CUDA: the row kernel of cuda/cross_entropy_kernels.cu,
    // which reads the scale from device memory. Other dtypes: whole-chunk ATen ops.
    const bool row_dtype = weight.scalar_type() == at::kFloat || weight.scalar_type() == at::kBFloat16;
    const bool cpu_row_kernel = hidden.is_cpu() && row_dtype;
    const bool cuda_row_kernel = hidden.is_cuda() && row_dtype;
    const double host_inv_count = cpu_row_kernel ? inv_count.item<double>() : 0.0;
    const std::optional<double> cap = softcap > 0 ? std::optional<double>(softcap) : std::nullopt;
    for (int64_t start = 0; start < rows; start += chunk_rows) {
      const int64_t end = std::min(rows, start + chunk_rows);
      const auto h = hidden.slice(0, start, end);  // (r, C)
      auto z = linear_forward(unpack(kernels, GemmRole::forward), h, weight, bias);  // (r, V)
      at::Tensor g;  // (r, V) d(mean loss)/dz, in the weight's dtype
      {
        TraceRange rows_range(account::ranges::kCrossEntropyRows);  // a row kernel records no operator
        if (cpu_row_kernel) {
          g = z.contiguous();
          loss_sum.add_(cross_entropy_rows_in_place(g, targets.slice(0, start, end), cap, host_inv_count).sum());
        } else if (cuda_row_kernel) {
          g = z.contiguous();
          loss_sum.add_(cross_entropy_rows_cuda_in_place(g, targets.slice(0, start, end), cap, inv_count).sum());
        } else {
          g = cross_entropy_rows_with_aten_ops(z, safe_targets.slice(0, start, end), valid.slice(0, start, end),
                                               inv_count, softcap, loss_sum);
        }
      }
      grad_hidden.slice(0, start, end).copy_(linear_grad_input(unpack(kernels, GemmRole::grad_input), g, weight));
      auto chunk_grad_weight = linear_grad_weight(unpack(kernels, GemmRole::grad_weight), g, h);  // (V, C)
      grad_weight = grad_weight.defined() ? grad_weight.add_(chunk_grad_weight) : chunk_grad_weight;
      if (bias.defined()) grad_bias = grad_bias.defined() ? grad_bias.add_(g.sum(0)) : g.sum(0);
    }
    if (!grad_weight.defined()) grad_weight = at::zeros_like(weight);  // no rows at all
    if (bias.defined() && !grad_bias.defined()) grad_bias = at::zeros_like(bias);
    ctx->saved_data[sdk::grad_hidden] = grad_hidden;
    ctx->saved_data[sdk::grad_weight] = grad_weight;
    if (bias.defined()) ctx->saved_data[sdk::grad_bias] = grad_bias;
    return loss_sum * inv_count;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto& scale = grad_outputs[0];  // d(final)/d(loss): 1 / grad_accum in a training step
    auto take = [&](const char* name, size_t input) -> at::Tensor {
      auto found = ctx->saved_data.find(name);
      if (found == ctx->saved_data.end() || !ctx->needs_input_grad(input)) return {};
      auto grad = found->second.toTensor();
      found->second = at::IValue();  // hand the buffer over; backward runs once
      return grad.mul_(scale.to(grad.scalar_type()));
    };
    return {take(sdk::grad_hidden, 0), take(sdk::grad_weight, 1), take(sdk::grad_bias, 2), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor()};
  }
};

std::optional<at::Tensor> optional_tensor(const at::Tensor& t) {
  return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt;
}

}  // namespace

at::Tensor fused_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                        const GemmChoices& choices) {
  const GemmShape shape{x.numel() / std::max<int64_t>(1, x.size(-1)), weight.size(1), weight.size(0)};
  return FusedLinearFunction::apply(x, weight, optional_tensor(bias), pack_choices(choices, shape), true);
}

at::Tensor fused_linear_graph_only(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                   const GemmChoices& choices) {
  const GemmShape shape{x.numel() / std::max<int64_t>(1, x.size(-1)), weight.size(1), weight.size(0)};
  return FusedLinearFunction::apply(x, weight, optional_tensor(bias), pack_choices(choices, shape), false);
}

int64_t default_chunk_rows(int64_t vocab) {
  // 1 GB of fp32 logits per chunk. Each chunk re-reads the V×C head weight and its gradient, so
  // small chunks pay in memory traffic: at 256 MB, Qwen3-0.6B (V = 152k) ran 441-row chunks and
  // was 6-9% slower than at 1 GB, pythia-160m 5% (docs/results/cpu-fused-2026-11-30.md), while
  // peak memory stayed below eager's either way.
  constexpr int64_t kChunkLogitElements = int64_t{256} << 20;
  return std::max<int64_t>(128, kChunkLogitElements / std::max<int64_t>(1, vocab));
}

at::Tensor chunked_linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& bias,
                                        const at::Tensor& targets, const GemmChoices& choices,
                                        const ChunkedCrossEntropyOptions& options) {
  TORCH_CHECK(hidden.dim() == 2 && weight.dim() == 2 && hidden.size(1) == weight.size(1),
              "chunked_linear_cross_entropy: hidden (N, C) and weight (V, C) expected, got ", hidden.sizes(), " and ",
              weight.sizes());
  TORCH_CHECK(targets.dim() == 1 && targets.size(0) == hidden.size(0),
              "chunked_linear_cross_entropy: targets (N) expected, got ", targets.sizes());
  TORCH_CHECK(options.chunk_rows > 0, "chunked_linear_cross_entropy: chunk_rows must be positive");
  TORCH_CHECK(!options.softcap || *options.softcap > 0, "chunked_linear_cross_entropy: softcap must be positive");
  const GemmShape shape{std::min(options.chunk_rows, hidden.size(0)), weight.size(1), weight.size(0)};
  return ChunkedLinearCrossEntropyFunction::apply(hidden, weight, optional_tensor(bias), targets, options.chunk_rows,
                                                  options.softcap.value_or(0.0), pack_choices(choices, shape));
}

}  // namespace tokbench::train
