// The CUDA kernels of the gated MLP activation (cuda/gated_activation_kernels.cu, through
// gated_activation) and of the rotary embedding (cuda/rope_kernels.cu, through rope_rotation)
// against their CPU references, the eager model's ATen compositions run on the CPU
// (mlp_rope_references.hpp): output and every input gradient, fp32 and bf16; SiLU and both
// GELUs, through the 16-byte path (sizes a multiple of 8) and the one-value path (odd sizes);
// full and partial rotary, heads read strided from a qkv projection's output, Gemma-3's
// strided per-layer tables; empty inputs; and fixture models with both kernels installed
// against the same models on the CPU. ctest label `gpu` (one ctest, cuda_kernels, with the
// other CUDA suites): where no CUDA device is present every case is skipped, saying so.
// Tolerance: relative norm.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "fixture_model.hpp"
#include "mlp_rope_references.hpp"
#include "row_kernel_references.hpp"
#include "train/gated_activation.hpp"
#include "train/rope_rotation.hpp"

namespace tokbench::train {
namespace {

using model::GateActivation;
using testing::relative_error;

constexpr double kFp32Tolerance = 1e-5;
// bf16 keeps 8 significant bits; the kernels round once where the compositions round after
// each operator, so values differ by about one bf16 ulp.
constexpr double kBf16Tolerance = 1e-2;
double tolerance_of(torch::ScalarType dtype) { return dtype == torch::kBFloat16 ? kBf16Tolerance : kFp32Tolerance; }

using testing::close;

bool have_cuda() { return torch::cuda::is_available(); }
#define REQUIRE_CUDA() \
  if (!have_cuda()) GTEST_SKIP() << "no CUDA device here: the CUDA kernels run in scripts/gpu-acceptance"

const torch::Device kCuda(torch::kCUDA, 0);

// ---- the gated activation ----------------------------------------------------------------

struct GateOutcome {
  torch::Tensor h, grad_gate, grad_up;  // on the CPU
};

// h = f(gate, up) on `device` and the gradients of Σ h·g; inputs drawn on the CPU from a fixed
// seed, so both devices see the same values. transposed: gate and up are transposed views.
template <typename F>
GateOutcome gate_outcome(torch::ScalarType dtype, std::vector<int64_t> shape, bool transposed,
                         const torch::Device& device, F&& f) {
  torch::manual_seed(23);
  const auto gate0 = (torch::randn(shape) * 3).to(dtype);  // far into both tails of the activations
  const auto up0 = torch::randn(shape).to(dtype);
  auto gate = gate0.to(device).requires_grad_(true);
  auto up = up0.to(device).requires_grad_(true);
  const auto h = transposed ? f(gate.transpose(0, 1), up.transpose(0, 1)) : f(gate, up);
  const auto g0 = torch::randn(h.sizes()).to(dtype);
  (h.to(torch::kFloat) * g0.to(device).to(torch::kFloat)).sum().backward();
  return {h.detach().cpu(), gate.grad().cpu(), up.grad().cpu()};
}

void expect_gate_equals_cpu_reference(torch::ScalarType dtype, GateActivation act, std::vector<int64_t> shape,
                                      bool transposed = false) {
  const auto got = gate_outcome(dtype, shape, transposed, kCuda,
                                [&](const auto& gate, const auto& up) { return gated_activation(gate, up, act); });
  const auto want = gate_outcome(dtype, shape, transposed, torch::kCPU, [&](const auto& gate, const auto& up) {
    return testing::aten_gated_activation(gate, up, act);
  });
  EXPECT_TRUE(close(got.h, want.h, tolerance_of(dtype))) << "output";
  EXPECT_TRUE(close(got.grad_gate, want.grad_gate, tolerance_of(dtype))) << "grad gate";
  EXPECT_TRUE(close(got.grad_up, want.grad_up, tolerance_of(dtype))) << "grad up";
}

TEST(GatedActivationCuda, SiluEqualsCpuReferenceFp32) {
  REQUIRE_CUDA();
  expect_gate_equals_cpu_reference(torch::kFloat, GateActivation::silu, {6, 33, 257});
}
TEST(GatedActivationCuda, GeluEqualsCpuReferenceFp32) {
  REQUIRE_CUDA();
  expect_gate_equals_cpu_reference(torch::kFloat, GateActivation::gelu, {6, 33, 257});
}
TEST(GatedActivationCuda, GeluTanhEqualsCpuReferenceFp32) {
  REQUIRE_CUDA();
  expect_gate_equals_cpu_reference(torch::kFloat, GateActivation::gelu_tanh, {6, 33, 257});
}
TEST(GatedActivationCuda, SiluEqualsCpuReferenceBf16) {
  REQUIRE_CUDA();
  expect_gate_equals_cpu_reference(torch::kBFloat16, GateActivation::silu, {6, 33, 257});
}
TEST(GatedActivationCuda, GeluEqualsCpuReferenceBf16) {
  REQUIRE_CUDA();
  expect_gate_equals_cpu_reference(torch::kBFloat16, GateActivation::gelu, {6, 33, 257});
}
TEST(GatedActivationCuda, GeluTanhEqualsCpuReferenceBf16) {
  REQUIRE_CUDA();
  expect_gate_equals_cpu_reference(torch::kBFloat16, GateActivation::gelu_tanh, {6, 33, 257});
}
TEST(GatedActivationCuda, NotContiguousEqualsCpuReference) {
  REQUIRE_CUDA();
  expect_gate_equals_cpu_reference(torch::kFloat, GateActivation::silu, {7, 5, 40}, true);
}
TEST(GatedActivationCuda, ManyElementsLoopOverTheGrid) {  // more elements than one launch's threads
  REQUIRE_CUDA();
  expect_gate_equals_cpu_reference(torch::kBFloat16, GateActivation::silu, {4, 2048, 2304});
}
TEST(GatedActivationCuda, EmptyInput) {  // an MoE expert without tokens
  REQUIRE_CUDA();
  expect_gate_equals_cpu_reference(torch::kFloat, GateActivation::silu, {0, 64});
}

// The comparison can fail: SiLU against the tanh GELU is far beyond the tolerance.
TEST(GatedActivationCuda, ComparisonDetectsTheWrongActivation) {
  REQUIRE_CUDA();
  const auto got = gate_outcome(torch::kFloat, {6, 33, 257}, false, kCuda, [](const auto& gate, const auto& up) {
    return gated_activation(gate, up, GateActivation::silu);
  });
  const auto want = gate_outcome(torch::kFloat, {6, 33, 257}, false, torch::kCPU, [](const auto& gate, const auto& up) {
    return testing::aten_gated_activation(gate, up, GateActivation::gelu_tanh);
  });
  EXPECT_FALSE(close(got.h, want.h, kFp32Tolerance));
  EXPECT_FALSE(close(got.grad_gate, want.grad_gate, kFp32Tolerance));
}

// ---- the rotary embedding ----------------------------------------------------------------

struct RopeCase {
  torch::ScalarType dtype;
  int64_t batch, heads, groups, time, head_size, rotated;
  bool litgpt_tables = true;  // cos and sin as litgpt builds them (each angle twice); else any angles
  bool gemma3_tables = false;  // (1, T, n, 2) tables, the local one taken by index (strided)
};

struct RopeOutcome {
  torch::Tensor q, k, grad_qkv;  // on the CPU
};

// q and k taken from one (B, T, (H + 2G)·D) projection output as the model takes them (views,
// strided), rotated by f on `device`, and the gradient of Σ q·gq + Σ k·gk in the projection.
template <typename F>
RopeOutcome rope_outcome(const RopeCase& c, const torch::Device& device, F&& f) {
  torch::manual_seed(29);
  const int64_t B = c.batch, T = c.time, H = c.heads, G = c.groups, D = c.head_size, n = c.rotated;
  const auto qkv0 = torch::randn({B, T, (H + 2 * G) * D}).to(c.dtype);
  torch::Tensor angles;  // (T, n)
  if (c.litgpt_tables) {
    const auto theta = torch::rand({n / 2}) * 0.9 + 0.05;
    angles = torch::outer(torch::arange(T).to(torch::kFloat), theta).repeat({1, 2});
  } else {
    angles = torch::randn({T, n}) * 4;
  }
  auto cos0 = angles.cos().unsqueeze(0), sin0 = angles.sin().unsqueeze(0);  // (1, T, n)
  const auto gq = torch::randn({B, H, T, D}).to(c.dtype), gk = torch::randn({B, G, T, D}).to(c.dtype);

  auto qkv = qkv0.to(device).requires_grad_(true);
  auto cos = cos0.to(device, c.dtype), sin = sin0.to(device, c.dtype);
  if (c.gemma3_tables) {  // the second of two stacked tables, as GPT::forward_hidden picks a layer's
    cos = torch::stack({torch::zeros_like(cos), cos}, -1).index({torch::indexing::Ellipsis, 1});
    sin = torch::stack({torch::zeros_like(sin), sin}, -1).index({torch::indexing::Ellipsis, 1});
  }
  auto parts = qkv.split_with_sizes({H * D, G * D, G * D}, -1);
  const auto q = f(parts[0].view({B, T, H, D}).transpose(1, 2), cos, sin);
  const auto k = f(parts[1].view({B, T, G, D}).transpose(1, 2), cos, sin);
  ((q.to(torch::kFloat) * gq.to(device).to(torch::kFloat)).sum() +
   (k.to(torch::kFloat) * gk.to(device).to(torch::kFloat)).sum())
      .backward();
  return {q.detach().cpu(), k.detach().cpu(), qkv.grad().cpu()};
}

void expect_rope_equals_cpu_reference(const RopeCase& c) {
  const auto got = rope_outcome(c, kCuda, [](const auto& x, const auto& cos, const auto& sin) {
    return rope_rotation(x, cos, sin);
  });
  const auto want = rope_outcome(c, torch::kCPU, [](const auto& x, const auto& cos, const auto& sin) {
    return testing::aten_rope(x, cos, sin);
  });
  EXPECT_TRUE(close(got.q, want.q, tolerance_of(c.dtype))) << "q";
  EXPECT_TRUE(close(got.k, want.k, tolerance_of(c.dtype))) << "k";
  EXPECT_TRUE(close(got.grad_qkv, want.grad_qkv, tolerance_of(c.dtype))) << "grad of the projection";
}

TEST(RopeRotationCuda, FullRotaryEqualsCpuReferenceFp32) {
  REQUIRE_CUDA();
  expect_rope_equals_cpu_reference({torch::kFloat, 2, 4, 2, 37, 16, 16});
}
TEST(RopeRotationCuda, PartialRotaryEqualsCpuReferenceFp32) {  // pythia, phi-2: n < head size
  REQUIRE_CUDA();
  expect_rope_equals_cpu_reference({torch::kFloat, 2, 4, 4, 37, 20, 8});
}
TEST(RopeRotationCuda, AnyTablesEqualsCpuReferenceFp32) {  // cos, sin halves unequal: the transpose's indices
  REQUIRE_CUDA();
  expect_rope_equals_cpu_reference({torch::kFloat, 2, 3, 1, 11, 12, 8, false});
}
TEST(RopeRotationCuda, Gemma3StridedTablesEqualsCpuReferenceFp32) {
  REQUIRE_CUDA();
  expect_rope_equals_cpu_reference({torch::kFloat, 1, 4, 2, 9, 16, 16, true, true});
}
TEST(RopeRotationCuda, NoRotaryEqualsCpuReference) {  // rotary_percentage 0
  REQUIRE_CUDA();
  expect_rope_equals_cpu_reference({torch::kFloat, 1, 2, 2, 5, 8, 0});
}
TEST(RopeRotationCuda, FullRotaryEqualsCpuReferenceBf16) {
  REQUIRE_CUDA();
  expect_rope_equals_cpu_reference({torch::kBFloat16, 2, 4, 2, 37, 16, 16});
}
TEST(RopeRotationCuda, PartialRotaryEqualsCpuReferenceBf16) {
  REQUIRE_CUDA();
  expect_rope_equals_cpu_reference({torch::kBFloat16, 2, 4, 4, 37, 20, 8});
}
TEST(RopeRotationCuda, LargeEqualsCpuReferenceBf16) {  // Llama-3.2-1B's heads, T = 512
  REQUIRE_CUDA();
  expect_rope_equals_cpu_reference({torch::kBFloat16, 2, 32, 8, 512, 64, 64});
}

// The comparison can fail: the plain rotation's sign flipped (the inverse applied forward)
// is far beyond the tolerance.
TEST(RopeRotationCuda, ComparisonDetectsTheInverseRotation) {
  REQUIRE_CUDA();
  const RopeCase c{torch::kFloat, 1, 2, 2, 9, 16, 16};
  const auto got = rope_outcome(c, kCuda, [](const auto& x, const auto& cos, const auto& sin) {
    return rope_rotation(x, cos, -sin);
  });
  const auto want = rope_outcome(c, torch::kCPU, [](const auto& x, const auto& cos, const auto& sin) {
    return testing::aten_rope(x, cos, sin);
  });
  EXPECT_FALSE(close(got.q, want.q, kFp32Tolerance));
  EXPECT_FALSE(close(got.grad_qkv, want.grad_qkv, kFp32Tolerance));
}

// ---- both installed in fixture models ----------------------------------------------------

// forward_hidden of a fixture model on `device` and its gradients (fixture_model.hpp), fp32;
// with the CUDA kernels as the model's gate and rope functions when `kernels`.
testing::ModelOutcome model_outcome(const std::string& family, const torch::Device& device, bool kernels) {
  auto fixture = testing::fixture_model(family, torch::kFloat, device);
  if (kernels) {
    fixture.gpt->set_gate_function(&gated_activation);
    fixture.gpt->set_rope_function(&rope_rotation);
  }
  return testing::forward_and_backward(fixture);
}

class MlpRopeKernelsInModel : public ::testing::TestWithParam<std::string> {};

TEST_P(MlpRopeKernelsInModel, EqualTheCpuModel) {
  REQUIRE_CUDA();
  const auto got = model_outcome(GetParam(), kCuda, true);
  const auto want = model_outcome(GetParam(), torch::kCPU, false);
  // The model's other CUDA operators (GEMMs, attention) sum in their own order: a looser bound.
  constexpr double kModelTolerance = 1e-4;
  EXPECT_TRUE(close(got.hidden, want.hidden, kModelTolerance)) << "hidden";
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (const auto& [name, grad] : want.grads) {
    if (grad.abs().max().item<double>() == 0) {  // e.g. an MoE expert that got no token
      EXPECT_EQ(got.grads.at(name).abs().max().item<double>(), 0.0) << "grad of " << name;
      continue;
    }
    EXPECT_TRUE(close(got.grads.at(name), grad, kModelTolerance)) << "grad of " << name;
  }
}

// qwen3: LLaMAMLP; gemma-3: GemmaMLP (tanh GELU), per-layer rope tables; phi-2: partial
// rotary; mixtral: LLaMAMoE experts.
INSTANTIATE_TEST_SUITE_P(Families, MlpRopeKernelsInModel, ::testing::Values("qwen3", "gemma-3", "phi-2", "mixtral"),
                         [](const auto& info) { return model::testing::test_name(info.param); });

}  // namespace
}  // namespace tokbench::train
