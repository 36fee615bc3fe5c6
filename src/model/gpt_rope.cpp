// litgpt's rope cache and rotation. Every step mirrors litgpt's tensor ops one for one (e.g.
// `1.0 / t` is reciprocal-then-multiply in PyTorch), so fp32 caches agree exactly with litgpt's
// and the equivalence fixtures hold at tight tolerances.
#include "model/gpt_rope.hpp"

#include <ATen/TensorIndexing.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <vector>

namespace tokbench::model {
namespace {

// theta_i = 1 / base^(2i/n), i in [0, n/2): (n/2,) fp32.
at::Tensor inverse_frequencies(double base, int64_t n, const at::Device& device) {
  auto exponent = at::arange(0, n, 2, at::TensorOptions().device(device).dtype(at::kLong))
                      .to(at::kFloat) / n;
  return at::pow(base, exponent).reciprocal() * 1.0;
}

// Llama-3.1 smoothing or linear scaling of the frequencies (litgpt rope_adjustments).
at::Tensor adjust_frequencies(const at::Tensor& theta, const RopeAdjustments& adj) {
  if (!adj.is_llama3()) return theta / adj.factor;
  TORCH_CHECK(adj.high_freq_factor && adj.original_max_seq_len,
              "rope_adjustments: Llama-3 style needs factor, low_freq_factor, high_freq_factor and "
              "original_max_seq_len");
  const double low = *adj.low_freq_factor;
  const double high = *adj.high_freq_factor;
  auto wavelen = theta.reciprocal() * (2.0 * M_PI);                            // 2π / θ
  auto ratio = wavelen.reciprocal() * static_cast<double>(*adj.original_max_seq_len);
  auto smooth = ((ratio - low) / (high - low)).clamp(0.0, 1.0);
  return (1 - smooth) * (theta / adj.factor) + smooth * theta;
}

// (seq_len, n): positions × frequencies, each frequency used for both halves.
at::Tensor angles(const at::Tensor& positions, const at::Tensor& theta, int64_t n) {
  auto idx_theta = at::outer(positions, theta).repeat({1, 2});
  if (idx_theta.size(-1) > n && n > 1) idx_theta = idx_theta.slice(-1, 0, n);
  return idx_theta;
}

}  // namespace

RopeCache build_rope_cache(const Config& config, int64_t seq_len, const at::Device& device) {
  const int64_t n = config.rope_n_elem;
  auto theta = inverse_frequencies(config.rope_base, n, device);
  if (config.rope_adjustments) theta = adjust_frequencies(theta, *config.rope_adjustments);
  auto positions = at::arange(seq_len, at::TensorOptions().device(device).dtype(at::kLong))
                       .to(at::kFloat) / config.rope_condense_ratio;
  auto idx_theta = angles(positions, theta, n);  // (T, n)
  if (config.rope_local_base_freq) {
    // Gemma-3: a second cache with the local base (no adjustments), stacked last: (T, n, 2).
    auto local = angles(positions, inverse_frequencies(*config.rope_local_base_freq, n, device), n);
    idx_theta = at::stack({idx_theta, local}, -1);
  }
  return {idx_theta.cos(), idx_theta.sin()};
}

at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  // Python's indexing (x[..., :half]) through LibTorch's twin of it, and cos.view rather than
  // unsqueeze: the operators litgpt records (docs/eager-parity.md).
  using namespace at::indexing;
  const int64_t half = x.size(-1) / 2;
  auto x1 = x.index({Ellipsis, Slice(None, half)});         // (B, H, T, n/2)
  auto x2 = x.index({Ellipsis, Slice(half, None)});         // (B, H, T, n/2)
  auto rotated = at::cat({-x2, x1}, -1);                    // (B, H, T, n)
  at::Tensor c = cos, s = sin;
  const int64_t dims_diff = x.dim() - cos.dim();
  if (dims_diff > 0) {  // (1, T, n) -> (1, 1, T, n)
    std::vector<int64_t> shape{cos.size(0)};
    shape.insert(shape.end(), static_cast<std::size_t>(dims_diff), 1);
    shape.insert(shape.end(), cos.sizes().begin() + 1, cos.sizes().end());
    c = cos.view(shape);
    s = sin.view(shape);
  }
  return ((x * c) + (rotated * s)).to(x.scalar_type());
}

}  // namespace tokbench::model
