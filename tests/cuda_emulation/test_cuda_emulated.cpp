// tokbench's CUDA kernels (src/cuda/*.cu), their own source run on the CPU through the emulated
// CUDA runtime (include/, docs/cuda-emulation.md), against the CPU references the GPU suite
// (tests/train/test_*_cuda.cpp, label gpu) holds them to: RMSNorm and LayerNorm forward and
// backward with and without the residual add, the cross-entropy rows, the gated activations
// (packed and element by element) and rotary embeddings, fp32 and bf16, at widths that take
// 256, 512 and 1024 threads a block. It checks what the emulation can: indexing, the
// reductions and their barriers, the partial sums, rounding to bf16, and races (the same bits
// whatever order the threads run in); not speed. The emulation's own rules are
// test_emulation_rules.cpp's. Tolerance: relative norm, the GPU suite's.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "add_norm_references.hpp"
#include "cuda/cross_entropy_kernels.hpp"
#include "cuda/gated_activation_kernels.hpp"
#include "cuda/layer_norm_kernels.hpp"
#include "cuda/rms_norm_kernels.hpp"
#include "cuda/rope_kernels.hpp"
#include "mlp_rope_references.hpp"
#include "row_kernel_references.hpp"
#include "thread_order.hpp"

namespace tokbench::train {
namespace {

using testing::close;

constexpr double kFp32Tolerance = 1e-5;
constexpr double kBf16Tolerance = 1e-2;  // 8 significant bits; a different sum order may round a value the other way
double tolerance_of(torch::ScalarType dtype) { return dtype == torch::kBFloat16 ? kBf16Tolerance : kFp32Tolerance; }

cuda::RowType row_type(const torch::Tensor& t) {
  return t.scalar_type() == torch::kBFloat16 ? cuda::RowType::bf16 : cuda::RowType::f32;
}

float* floats_or_null(const torch::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

// ---- RMSNorm and LayerNorm ----

struct NormCase {
  torch::ScalarType dtype;
  int64_t rows, width;
  int64_t parts;             // backward's blocks, each a range of rows
  bool unit_offset = false;  // RMSNorm: Gemma's 1 + weight
  bool affine = true;        // LayerNorm: with weight and bias
};

struct NormInputs {
  torch::Tensor x, weight, bias, g;
};

NormInputs norm_inputs(const NormCase& c) {
  torch::manual_seed(11);
  return {(torch::randn({c.rows, c.width}) * 2 + 0.5).to(c.dtype),
          ((c.unit_offset ? 0 : 1) + torch::randn({c.width}) * 0.2).to(c.dtype),
          (torch::randn({c.width}) * 0.1).to(c.dtype), torch::randn({c.rows, c.width}).to(c.dtype)};
}

// The emulated kernels' y, rstd, grad_x and grad_w partials for case c (RMSNorm, or LayerNorm's
// y, mean, rstd, grad_x and both partials).
std::vector<torch::Tensor> emulated_rms_norm(const NormCase& c, const NormInputs& in, double eps) {
  const auto scale = (c.unit_offset ? 1 + in.weight : in.weight).to(torch::kFloat).contiguous();
  auto y = torch::empty_like(in.x), grad_x = torch::empty_like(in.x);
  auto rstd = torch::empty({c.rows}), partial = torch::empty({c.parts, c.width});
  EXPECT_EQ(cuda::rms_norm_forward(row_type(in.x), in.x.data_ptr(), scale.data_ptr<float>(), y.data_ptr(),
                                   rstd.data_ptr<float>(), c.rows, c.width, eps, nullptr),
            "");
  EXPECT_EQ(cuda::rms_norm_backward(row_type(in.x), in.g.data_ptr(), in.x.data_ptr(), scale.data_ptr<float>(),
                                    rstd.data_ptr<float>(), grad_x.data_ptr(), partial.data_ptr<float>(), c.parts,
                                    c.rows, c.width, nullptr),
            "");
  return {y, rstd, grad_x, partial};
}

void expect_rms_norm_equals_reference(const NormCase& c) {
  SCOPED_TRACE(::testing::Message() << c.dtype << " " << c.rows << "x" << c.width << " parts " << c.parts);
  const auto in = norm_inputs(c);
  constexpr double eps = 1e-6;
  auto x = in.x.clone().requires_grad_(true), weight = in.weight.clone().requires_grad_(true);
  const auto want = testing::aten_rms_norm(x, weight, c.unit_offset, eps);
  (want.to(torch::kFloat) * in.g.to(torch::kFloat)).sum().backward();

  const auto got = emulated_rms_norm(c, in, eps);
  const double tolerance = tolerance_of(c.dtype);
  EXPECT_TRUE(close(got[0], want.detach(), tolerance)) << "output";
  EXPECT_TRUE(close(got[2], x.grad(), tolerance)) << "grad x";
  EXPECT_TRUE(close(got[3].sum(0).to(c.dtype), weight.grad(), tolerance)) << "grad weight";
  // Without the weight's gradient (a null partial) grad_x is the same.
  const auto scale = (c.unit_offset ? 1 + in.weight : in.weight).to(torch::kFloat).contiguous();
  auto grad_x_alone = torch::empty_like(in.x);
  ASSERT_EQ(cuda::rms_norm_backward(row_type(in.x), in.g.data_ptr(), in.x.data_ptr(), scale.data_ptr<float>(),
                                    got[1].data_ptr<float>(), grad_x_alone.data_ptr(), nullptr, c.parts, c.rows,
                                    c.width, nullptr),
            "");
  EXPECT_TRUE(torch::equal(grad_x_alone, got[2]));
}

TEST(CudaKernelsEmulated, RmsNormEqualsTheEagerComposition) {
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    expect_rms_norm_equals_reference({dtype, 35, 67, 4});              // 256 threads, uneven parts
    expect_rms_norm_equals_reference({dtype, 35, 67, 4, true});        // Gemma's unit offset
    expect_rms_norm_equals_reference({dtype, 12, 5, 12});              // narrower than a warp, a row per part
    expect_rms_norm_equals_reference({dtype, 3, 4100, 2});             // 512 threads
  }
}

std::vector<torch::Tensor> emulated_layer_norm(const NormCase& c, const NormInputs& in, double eps) {
  const auto w = c.affine ? in.weight.to(torch::kFloat).contiguous() : torch::Tensor();
  const auto b = c.affine ? in.bias.to(torch::kFloat).contiguous() : torch::Tensor();
  auto y = torch::empty_like(in.x), grad_x = torch::empty_like(in.x);
  auto mean = torch::empty({c.rows}), rstd = torch::empty({c.rows});
  auto w_partial = torch::empty({c.parts, c.width}), b_partial = torch::empty({c.parts, c.width});
  EXPECT_EQ(cuda::layer_norm_forward(row_type(in.x), in.x.data_ptr(), floats_or_null(w), floats_or_null(b),
                                     y.data_ptr(), mean.data_ptr<float>(), rstd.data_ptr<float>(), c.rows, c.width, eps,
                                     nullptr),
            "");
  EXPECT_EQ(cuda::layer_norm_backward(row_type(in.x), in.g.data_ptr(), in.x.data_ptr(), floats_or_null(w),
                                      mean.data_ptr<float>(), rstd.data_ptr<float>(), grad_x.data_ptr(),
                                      w_partial.data_ptr<float>(), b_partial.data_ptr<float>(), c.parts, c.rows,
                                      c.width, nullptr),
            "");
  return {y, mean, rstd, grad_x, w_partial, b_partial};
}

void expect_layer_norm_equals_reference(const NormCase& c) {
  SCOPED_TRACE(::testing::Message() << c.dtype << " " << c.rows << "x" << c.width << " parts " << c.parts
                                    << (c.affine ? "" : " without weight and bias"));
  const auto in = norm_inputs(c);
  constexpr double eps = 1e-5;
  auto x = in.x.clone().requires_grad_(true);
  // Without parameters the reference's are 1 and 0, the kernels' null pointers.
  auto weight = c.affine ? in.weight.clone().requires_grad_(true) : torch::ones({c.width}, c.dtype);
  auto bias = c.affine ? in.bias.clone().requires_grad_(true) : torch::zeros({c.width}, c.dtype);
  const auto want = testing::aten_layer_norm(x, weight, bias, eps);
  (want.to(torch::kFloat) * in.g.to(torch::kFloat)).sum().backward();

  const auto got = emulated_layer_norm(c, in, eps);
  const double tolerance = tolerance_of(c.dtype);
  EXPECT_TRUE(close(got[0], want.detach(), tolerance)) << "output";
  EXPECT_TRUE(close(got[3], x.grad(), tolerance)) << "grad x";
  if (c.affine) {
    EXPECT_TRUE(close(got[4].sum(0).to(c.dtype), weight.grad(), tolerance)) << "grad weight";
    EXPECT_TRUE(close(got[5].sum(0).to(c.dtype), bias.grad(), tolerance)) << "grad bias";
  }
}

TEST(CudaKernelsEmulated, LayerNormEqualsTheEagerComposition) {
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    expect_layer_norm_equals_reference({dtype, 37, 96, 5});
    expect_layer_norm_equals_reference({dtype, 37, 96, 5, false, false});  // OLMo's, without parameters
    expect_layer_norm_equals_reference({dtype, 6, 3, 4});                   // narrower than a warp
    expect_layer_norm_equals_reference({dtype, 3, 4100, 3});                // 512 threads, a row per part
  }
}

// The residual add fused in front of either norm, as one autograd function over the emulated
// kernels, run through the GPU suite's own harness (add_norm_references.hpp). An absent weight
// or bias enters as an empty tensor (a custom function takes no undefined input).
struct EmulatedAddNorm : torch::autograd::Function<EmulatedAddNorm> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a,
                                                const torch::Tensor& x, const torch::Tensor& weight,
                                                const torch::Tensor& bias, bool rms, bool unit_offset, double eps) {
    const int64_t width = x.size(-1);
    const auto a2 = a.contiguous().view({-1, width}), x2 = x.contiguous().view({-1, width});
    const int64_t rows = x2.size(0);
    const auto w = weight.numel() == 0 ? torch::Tensor()
                   : rms             ? (unit_offset ? 1 + weight : weight).to(torch::kFloat).contiguous()
                                     : weight.to(torch::kFloat).contiguous();
    const auto b = bias.numel() > 0 ? bias.to(torch::kFloat).contiguous() : torch::Tensor();
    auto sum = torch::empty_like(x2), y = torch::empty_like(x2);
    auto mean = torch::empty({rows}), rstd = torch::empty({rows});
    const std::string launched =
        rms ? cuda::add_rms_norm_forward(row_type(x2), a2.data_ptr(), x2.data_ptr(), floats_or_null(w), sum.data_ptr(),
                                         y.data_ptr(), rstd.data_ptr<float>(), rows, width, eps, nullptr)
            : cuda::add_layer_norm_forward(row_type(x2), a2.data_ptr(), x2.data_ptr(), floats_or_null(w),
                                           floats_or_null(b), sum.data_ptr(), y.data_ptr(), mean.data_ptr<float>(),
                                           rstd.data_ptr<float>(), rows, width, eps, nullptr);
    TORCH_CHECK(launched.empty(), launched);
    ctx->save_for_backward({sum, w, mean, rstd});
    ctx->saved_data["rms"] = rms;
    ctx->saved_data["bias"] = bias.numel() > 0;
    return {sum.view(x.sizes()), y.view(x.sizes())};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &sum = saved[0], &w = saved[1], &mean = saved[2], &rstd = saved[3];
    const int64_t rows = sum.size(0), width = sum.size(1);
    const auto g_sum = grads[0].contiguous().view({rows, width}), g_y = grads[1].contiguous().view({rows, width});
    constexpr int64_t parts = 3;
    auto grad_input = torch::empty_like(sum);
    auto w_partial = w.defined() ? torch::empty({parts, width}) : torch::Tensor();
    auto b_partial = ctx->saved_data["bias"].toBool() ? torch::empty({parts, width}) : torch::Tensor();
    const std::string launched =
        ctx->saved_data["rms"].toBool()
            ? cuda::add_rms_norm_backward(row_type(sum), g_y.data_ptr(), g_sum.data_ptr(), sum.data_ptr(),
                                          floats_or_null(w), rstd.data_ptr<float>(), grad_input.data_ptr(),
                                          floats_or_null(w_partial), parts, rows, width, nullptr)
            : cuda::add_layer_norm_backward(row_type(sum), g_y.data_ptr(), g_sum.data_ptr(), sum.data_ptr(),
                                            floats_or_null(w), mean.data_ptr<float>(), rstd.data_ptr<float>(),
                                            grad_input.data_ptr(), floats_or_null(w_partial),
                                            floats_or_null(b_partial), parts, rows, width, nullptr);
    TORCH_CHECK(launched.empty(), launched);
    const auto grad_of = [&](const torch::Tensor& partial) {
      return partial.defined() ? partial.sum(0).to(sum.scalar_type()) : torch::Tensor();
    };
    const auto shaped = grad_input.view(grads[0].sizes());
    return {shaped, shaped.clone(), grad_of(w_partial), grad_of(b_partial), {}, {}, {}};
  }
};

// The GPU suite's add-norm outcome (add_norm_references.hpp) with the emulated kernels.
testing::AddNormOutcome emulated_add_norm_outcome(const testing::AddNormCase& c) {
  const bool rms = c.kind == testing::AddNormKind::rms;
  return testing::add_norm_outcome(c, torch::kCPU, [&](const auto& a, const auto& x, const auto& w, const auto& b) {
    const auto present = [](const torch::Tensor& t) { return t.defined() ? t : torch::empty({0}); };
    const auto out = EmulatedAddNorm::apply(a, x, present(w), present(b), rms, c.unit_offset, c.eps);
    return std::make_pair(out[0], out[1]);
  });
}

TEST(CudaKernelsEmulated, TheResidualAddFusedIntoEitherNormEqualsTheUnfusedComposition) {
  using testing::AddNormKind;
  for (const auto dtype : {torch::kFloat, torch::kBFloat16})
    for (const auto kind : {AddNormKind::rms, AddNormKind::layer, AddNormKind::layer_no_affine})
      for (const bool transposed : {false, true}) {
        const testing::AddNormCase c{dtype, {5, 7, 67}, kind == AddNormKind::rms, transposed, 1e-6, kind};
        SCOPED_TRACE(::testing::Message() << dtype << " kind " << static_cast<int>(kind) << " transposed "
                                          << transposed);
        const auto got = emulated_add_norm_outcome(c);
        testing::expect_add_norm_close(got, testing::unfused_add_norm_outcome(c), tolerance_of(dtype));
      }
}

// ---- the cross-entropy rows ----

struct CrossEntropyCase {
  torch::ScalarType dtype;
  int64_t rows, vocab;
  std::optional<double> softcap;
};

constexpr double kCrossEntropyScale = 0.037;  // 1 / count · 1 / grad_accum in the chunked head

// The emulated kernel's losses and gradient (in the logits' dtype) for the given rows.
std::vector<torch::Tensor> emulated_cross_entropy(const CrossEntropyCase& c, const torch::Tensor& logits,
                                                  const torch::Tensor& targets) {
  auto grad = logits.clone();
  auto losses = torch::empty({c.rows});
  const auto scale = torch::full({1}, kCrossEntropyScale, torch::kFloat);
  EXPECT_EQ(cuda::cross_entropy_rows_in_place(row_type(grad), grad.data_ptr(), targets.data_ptr<int64_t>(),
                                              losses.data_ptr<float>(), scale.data_ptr<float>(), c.rows, c.vocab,
                                              c.softcap ? static_cast<float>(*c.softcap) : 0.0f, nullptr),
            "");
  return {losses, grad};
}

void expect_cross_entropy_equals_reference(const CrossEntropyCase& c) {
  SCOPED_TRACE(::testing::Message() << c.dtype << " " << c.rows << "x" << c.vocab
                                    << (c.softcap ? " soft-capped" : ""));
  const auto [logits, targets] = testing::cross_entropy_inputs(c.rows, c.vocab, c.dtype);
  const auto want = testing::cross_entropy_reference(logits, targets, c.softcap, kCrossEntropyScale);
  const auto got = emulated_cross_entropy(c, logits, targets);
  // The losses are fp32 whatever the logits; the bf16 logits' values are the reference's inputs.
  EXPECT_TRUE(close(got[0], want.losses, kFp32Tolerance)) << "losses";
  EXPECT_TRUE(close(got[1].to(torch::kFloat), want.grad, tolerance_of(c.dtype))) << "gradient";
}

TEST(CudaKernelsEmulated, CrossEntropyRowsEqualAtensLossAndGradient) {
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    expect_cross_entropy_equals_reference({dtype, 9, 1000, std::nullopt});  // 256 threads a row
    expect_cross_entropy_equals_reference({dtype, 9, 1000, 30.0});          // Gemma-2's soft cap
  }
  expect_cross_entropy_equals_reference({torch::kBFloat16, 4, 20000, std::nullopt});  // 1024 threads a row
  expect_cross_entropy_equals_reference({torch::kBFloat16, 2, 128256, std::nullopt});  // Llama 3's vocabulary
}

TEST(CudaKernelsEmulated, CrossEntropyTargetsOutsideTheVocabularyGiveNanAndNoGradient) {
  auto logits = torch::randn({3, 300});
  const auto targets = torch::tensor({5, 300, -2}, torch::kLong);
  auto losses = torch::empty({3});
  const auto scale = torch::ones({1});
  ASSERT_EQ(cuda::cross_entropy_rows_in_place(cuda::RowType::f32, logits.data_ptr(), targets.data_ptr<int64_t>(),
                                              losses.data_ptr<float>(), scale.data_ptr<float>(), 3, 300, 0.0f, nullptr),
            "");
  EXPECT_TRUE(std::isfinite(losses[0].item<float>()));
  EXPECT_TRUE(std::isnan(losses[1].item<float>()));
  EXPECT_TRUE(std::isnan(losses[2].item<float>()));
  EXPECT_EQ(logits.slice(0, 1, 3).abs().sum().item<float>(), 0.0f);
}

// ---- the gated activation ----

struct GatedCase {
  torch::ScalarType dtype;
  model::GateActivation activation;
  int64_t count;
};

cuda::GateActivation kernel_activation(model::GateActivation activation) {
  switch (activation) {
    case model::GateActivation::silu: return cuda::GateActivation::silu;
    case model::GateActivation::gelu: return cuda::GateActivation::gelu;
    case model::GateActivation::gelu_tanh: return cuda::GateActivation::gelu_tanh;
  }
  return cuda::GateActivation::silu;
}

struct GatedInputs {
  torch::Tensor gate, up, grad_h;
};

GatedInputs gated_inputs(const GatedCase& c) {
  torch::manual_seed(5);
  return {(torch::randn({c.count}) * 2).to(c.dtype), torch::randn({c.count}).to(c.dtype),
          torch::randn({c.count}).to(c.dtype)};
}

// The emulated kernels' h, grad_gate and grad_up.
std::vector<torch::Tensor> emulated_gated_activation(const GatedCase& c, const GatedInputs& in) {
  auto h = torch::empty_like(in.gate), grad_gate = torch::empty_like(in.gate), grad_up = torch::empty_like(in.gate);
  EXPECT_EQ(cuda::gated_activation_forward(row_type(in.gate), kernel_activation(c.activation), in.gate.data_ptr(),
                                           in.up.data_ptr(), h.data_ptr(), c.count, nullptr),
            "");
  EXPECT_EQ(cuda::gated_activation_backward(row_type(in.gate), kernel_activation(c.activation), in.grad_h.data_ptr(),
                                            in.gate.data_ptr(), in.up.data_ptr(), grad_gate.data_ptr(),
                                            grad_up.data_ptr(), c.count, nullptr),
            "");
  return {h, grad_gate, grad_up};
}

TEST(CudaKernelsEmulated, GatedActivationsEqualTheEagerCompositionPackedOrNot) {
  using model::GateActivation;
  for (const auto dtype : {torch::kFloat, torch::kBFloat16})
    for (const auto activation : {GateActivation::silu, GateActivation::gelu, GateActivation::gelu_tanh})
      // 4104 elements: whole 16-byte packs (8 bf16, 4 fp32) over 2 blocks; 4103: element by element.
      for (const int64_t count : {4104, 4103}) {
        const GatedCase c{dtype, activation, count};
        SCOPED_TRACE(::testing::Message() << dtype << " activation " << static_cast<int>(activation) << " count "
                                          << count);
        const auto in = gated_inputs(c);
        auto gate = in.gate.clone().requires_grad_(true), up = in.up.clone().requires_grad_(true);
        const auto want = testing::aten_gated_activation(gate, up, activation);
        want.backward(in.grad_h);
        const auto got = emulated_gated_activation(c, in);
        const double tolerance = tolerance_of(dtype);
        EXPECT_TRUE(close(got[0], want.detach(), tolerance)) << "h";
        EXPECT_TRUE(close(got[1], gate.grad(), tolerance)) << "grad gate";
        EXPECT_TRUE(close(got[2], up.grad(), tolerance)) << "grad up";
      }
}

// ---- rotary embeddings ----

constexpr int64_t kRopeBatch = 2, kRopeTime = 5, kRopeHeads = 3, kRopeHeadSize = 16;

struct RopeInputs {
  torch::Tensor stored;  // (B, T, H, D): attention reads it as (B, H, T, D) through strides
  torch::Tensor cos, sin, grad_y;
};

RopeInputs rope_inputs(torch::ScalarType dtype, int64_t rotated) {
  torch::manual_seed(3);
  const auto angles = torch::arange(kRopeTime * rotated / 2, torch::kFloat).view({kRopeTime, rotated / 2}) * 0.37;
  return {torch::randn({kRopeBatch, kRopeTime, kRopeHeads, kRopeHeadSize}).to(dtype),
          torch::cat({angles.cos(), angles.cos()}, -1).to(dtype).contiguous(),
          torch::cat({angles.sin(), angles.sin()}, -1).to(dtype).contiguous(),
          torch::randn({kRopeBatch, kRopeHeads, kRopeTime, kRopeHeadSize}).to(dtype)};
}

// The emulated kernel's rotated heads (B, H, T, D) and, from the inverse rotation of grad_y,
// the heads' gradient (B, H, T, D).
std::vector<torch::Tensor> emulated_rope(const RopeInputs& in, int64_t rotated) {
  constexpr int64_t B = kRopeBatch, H = kRopeHeads, T = kRopeTime, D = kRopeHeadSize;
  const auto heads = in.stored.transpose(1, 2);
  const cuda::RopeShape shape{B, H, T, D, heads.stride(0), heads.stride(1), heads.stride(2), rotated};
  auto y = torch::empty({B, H, T, D}, in.stored.scalar_type());
  EXPECT_EQ(cuda::rope_rotate(row_type(y), shape, heads.data_ptr(), in.cos.data_ptr(), in.sin.data_ptr(),
                              y.data_ptr(), false, nullptr),
            "");
  const cuda::RopeShape contiguous{B, H, T, D, H * T * D, T * D, D, rotated};
  auto grad_heads = torch::empty_like(y);
  EXPECT_EQ(cuda::rope_rotate(row_type(y), contiguous, in.grad_y.data_ptr(), in.cos.data_ptr(), in.sin.data_ptr(),
                              grad_heads.data_ptr(), true, nullptr),
            "");
  return {y, grad_heads};
}

TEST(CudaKernelsEmulated, RopeEqualsTheEagerCompositionAndItsInverseIsTheGradient) {
  for (const auto dtype : {torch::kFloat, torch::kBFloat16})
    for (const int64_t n : {kRopeHeadSize, kRopeHeadSize / 2}) {  // every channel rotated, or half (partial rotary)
      SCOPED_TRACE(::testing::Message() << dtype << " rotated " << n << " of " << kRopeHeadSize);
      const auto in = rope_inputs(dtype, n);
      auto x = in.stored.clone().requires_grad_(true);
      const auto want = testing::aten_rope(x.transpose(1, 2), in.cos.unsqueeze(0), in.sin.unsqueeze(0));
      want.backward(in.grad_y);
      const auto got = emulated_rope(in, n);
      const double tolerance = tolerance_of(dtype);
      EXPECT_TRUE(close(got[0], want.detach(), tolerance)) << "output";
      EXPECT_TRUE(close(got[1].transpose(1, 2), x.grad(), tolerance)) << "gradient";
    }
}

// ---- no races: the same bits whatever order the threads run in ----

// Runs `outputs` with threads and blocks in each order; every order's outputs equal the
// ascending order's, bit for bit. A kernel that reads what another thread writes without a
// barrier between (or two threads that write one value) gives different bits in another order.
template <typename Outputs>
void expect_the_same_bits_in_every_order(const std::string& what, Outputs&& outputs) {
  using cuda_emulation::ThreadOrder;
  struct Ascending {  // the order every other test assumes, however this one ends
    ~Ascending() { cuda_emulation::set_thread_order(ThreadOrder::ascending); }
  } restore;
  cuda_emulation::set_thread_order(ThreadOrder::ascending);
  const std::vector<torch::Tensor> first = outputs();
  for (const auto order : {ThreadOrder::descending, ThreadOrder::shuffled}) {
    cuda_emulation::set_thread_order(order);
    const std::vector<torch::Tensor> again = outputs();
    ASSERT_EQ(again.size(), first.size()) << what;
    for (size_t i = 0; i < first.size(); ++i)
      EXPECT_TRUE(first[i].defined() ? torch::equal(again[i], first[i]) : !again[i].defined())
          << what << ": output " << i << " differs with threads in order " << static_cast<int>(order);
  }
}

TEST(CudaKernelsEmulated, EveryKernelGivesTheSameBitsWhateverOrderItsThreadsRunIn) {
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    for (const NormCase& c : {NormCase{dtype, 35, 67, 4}, NormCase{dtype, 3, 4100, 2}}) {
      const auto in = norm_inputs(c);
      expect_the_same_bits_in_every_order("rms_norm", [&] { return emulated_rms_norm(c, in, 1e-6); });
      expect_the_same_bits_in_every_order("layer_norm", [&] { return emulated_layer_norm(c, in, 1e-5); });
    }
    using testing::AddNormKind;
    for (const auto kind : {AddNormKind::rms, AddNormKind::layer}) {
      const testing::AddNormCase c{dtype, {5, 7, 67}, false, false, 1e-6, kind};
      expect_the_same_bits_in_every_order("add_norm", [&] {
        const auto o = emulated_add_norm_outcome(c);
        return std::vector<torch::Tensor>{o.sum, o.y, o.grad_a, o.grad_x, o.grad_weight, o.grad_bias};
      });
    }
    for (const CrossEntropyCase& c : {CrossEntropyCase{dtype, 9, 1000, 30.0}, CrossEntropyCase{dtype, 2, 20000, {}}}) {
      const auto [logits, targets] = testing::cross_entropy_inputs(c.rows, c.vocab, c.dtype);
      expect_the_same_bits_in_every_order("cross_entropy", [&] { return emulated_cross_entropy(c, logits, targets); });
    }
    for (const int64_t count : {4104, 4103}) {
      const GatedCase c{dtype, model::GateActivation::silu, count};
      const auto in = gated_inputs(c);
      expect_the_same_bits_in_every_order("gated_activation", [&] { return emulated_gated_activation(c, in); });
    }
    const auto in = rope_inputs(dtype, kRopeHeadSize / 2);
    expect_the_same_bits_in_every_order("rope", [&] { return emulated_rope(in, kRopeHeadSize / 2); });
  }
}

}  // namespace
}  // namespace tokbench::train
