// FLOPs of matrix-product operators from their recorded input shapes (matmul_flops.hpp).
#include "account/matmul_flops.hpp"

#include <array>
#include <functional>
#include <numeric>

namespace tokbench::account {
namespace {

using namespace std::string_view_literals;

bool has_rank(const Shapes& shapes, std::size_t index, std::size_t rank) {
  return index < shapes.size() && shapes[index].size() == rank;
}

// a (M, K) · b (K, N)
std::optional<int64_t> mm(const Shapes& s, std::size_t a, std::size_t b) {
  if (!has_rank(s, a, 2) || !has_rank(s, b, 2) || s[a][1] != s[b][0]) return std::nullopt;
  return 2 * s[a][0] * s[a][1] * s[b][1];
}

// a (B, M, K) · b (B, K, N)
std::optional<int64_t> bmm(const Shapes& s, std::size_t a, std::size_t b) {
  if (!has_rank(s, a, 3) || !has_rank(s, b, 3) || s[a][2] != s[b][1]) return std::nullopt;
  return 2 * s[a][0] * s[a][1] * s[a][2] * s[b][2];
}

// a (M, K) · v (K)
std::optional<int64_t> mv(const Shapes& s, std::size_t a, std::size_t v) {
  if (!has_rank(s, a, 2) || !has_rank(s, v, 1)) return std::nullopt;
  return 2 * s[a][0] * s[a][1];
}

// oneDNN's linear: input (..., K) · weight (N, K)ᵀ
std::optional<int64_t> linear(const Shapes& s) {
  if (s.size() < 2 || s[0].empty() || !has_rank(s, 1, 2) || s[0].back() != s[1][1]) return std::nullopt;
  const int64_t rows = std::accumulate(s[0].begin(), s[0].end() - 1, int64_t{1}, std::multiplies<>());
  return 2 * rows * s[1][0] * s[1][1];
}

// q (B, H, L, E) · kᵀ (B, H, S, E), then the scores · v (B, H, S, Ev): 2·B·H·L·S·(E + Ev).
std::optional<int64_t> attention(const Shapes& s, std::size_t q) {
  if (!has_rank(s, q, 4) || !has_rank(s, q + 1, 4) || !has_rank(s, q + 2, 4)) return std::nullopt;
  const auto &Q = s[q], &K = s[q + 1], &V = s[q + 2];
  return 2 * Q[0] * Q[1] * Q[2] * K[2] * (Q[3] + V[3]);
}

// The SDPA kernels: forward takes (query, key, value, ...), backward (grad_out, query, key, value, ...).
constexpr std::array kAttentionKernels = {
    "aten::_scaled_dot_product_flash_attention_for_cpu"sv, "aten::_scaled_dot_product_flash_attention"sv,
    "aten::_scaled_dot_product_efficient_attention"sv,     "aten::_scaled_dot_product_cudnn_attention"sv,
    "aten::_scaled_dot_product_fused_attention_overrideable"sv,
};

bool is_attention_forward(std::string_view name) {
  for (auto k : kAttentionKernels)
    if (name == k) return true;
  return false;
}

bool is_attention_backward(std::string_view name) {
  constexpr std::string_view kSuffix = "_backward";
  return name.ends_with(kSuffix) && is_attention_forward(name.substr(0, name.size() - kSuffix.size()));
}

std::optional<int64_t> gemm_flops(std::string_view name, const Shapes& s) {
  if (name == "aten::mm") return mm(s, 0, 1);
  if (name == "aten::addmm" || name == "aten::_addmm_activation") return mm(s, 1, 2);  // (bias, a, b)
  if (name == "aten::bmm") return bmm(s, 0, 1);
  if (name == "aten::baddbmm" || name == "aten::addbmm") return bmm(s, 1, 2);
  if (name == "aten::mv") return mv(s, 0, 1);
  if (name == "aten::addmv") return mv(s, 1, 2);
  if (name == "aten::dot") {
    if (!has_rank(s, 0, 1)) return std::nullopt;
    return 2 * s[0][0];
  }
  if (name == "mkldnn::_linear_pointwise" || name == "aten::mkldnn_linear") return linear(s);
  return std::nullopt;
}

constexpr std::array kGemmKernels = {"aten::mm"sv,    "aten::addmm"sv, "aten::_addmm_activation"sv,
                                     "aten::bmm"sv,   "aten::baddbmm"sv, "aten::addbmm"sv,
                                     "aten::mv"sv,    "aten::addmv"sv, "aten::dot"sv,
                                     "mkldnn::_linear_pointwise"sv, "aten::mkldnn_linear"sv};

}  // namespace

bool counts_matmul_flops(std::string_view name) {
  for (auto k : kGemmKernels)
    if (name == k) return true;
  return is_attention_forward(name) || is_attention_backward(name);
}

std::optional<MatmulFlops> matmul_flops(std::string_view name, const Shapes& shapes) {
  if (is_attention_forward(name)) {
    if (auto f = attention(shapes, 0)) return MatmulFlops{Category::attention, *f};
    return std::nullopt;
  }
  if (is_attention_backward(name)) {  // dq, dk, dv and the scores' gradient: twice the forward
    if (auto f = attention(shapes, 1)) return MatmulFlops{Category::attention, 2 * *f};
    return std::nullopt;
  }
  if (auto f = gemm_flops(name, shapes)) return MatmulFlops{Category::gemm, *f};
  return std::nullopt;
}

}  // namespace tokbench::account
