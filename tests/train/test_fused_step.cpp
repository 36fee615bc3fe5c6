// The fused executor computes what the eager step computes: the chunked lm_head + loss
// equals at::cross_entropy (mean, ignore_index = -1) in value and gradients; FusedLinear on
// either kernel equals at::linear; and for a tiny model of every family of the equivalence
// fixtures (tests/fixtures/model/equivalence), the fused step's losses and every parameter
// gradient equal the eager step's at GA 1 and 2, on each GEMM kernel. It also holds less
// memory at its peak when the logits dominate. Tolerance: relative norm ‖a − b‖ / ‖b‖.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>
#include <unistd.h>

#include "../model/test_gpt_support.hpp"
#include "step_equivalence.hpp"
#include "model/catalog.hpp"
#include "model/config_json.hpp"
#include "train/fused_ops.hpp"
#include "train/gemm_kernels.hpp"
#include "train/memory_tracking.hpp"
#include "train/train_loop.hpp"
#include "train/train_step.hpp"
#include "unit_timing_checks.hpp"

namespace tokbench::train {
namespace {

// ---- chunked lm_head + cross-entropy ----------------------------------------------------

struct CeCase {
  int64_t rows, dim, vocab, chunk_rows;
  bool bias;
  std::optional<double> softcap;
};

void check_chunked_ce(const CeCase& c) {
  torch::manual_seed(7);
  auto hidden = torch::randn({c.rows, c.dim}).requires_grad_(true);
  auto weight = (torch::randn({c.vocab, c.dim}) * 0.3).requires_grad_(true);
  auto bias = c.bias ? (torch::randn({c.vocab}) * 0.1).requires_grad_(true) : torch::Tensor();
  auto targets = torch::randint(c.vocab, {c.rows}, torch::kLong);
  targets.index_put_({torch::rand({c.rows}) < 0.3}, -1);  // about 30% ignored
  targets[0] = -1;

  auto logits = at::linear(hidden, weight, bias.defined() ? std::optional<torch::Tensor>(bias) : std::nullopt);
  if (c.softcap) logits = torch::tanh(logits / *c.softcap) * *c.softcap;
  auto want = at::cross_entropy_loss(logits, targets, {}, at::Reduction::Mean, -1);
  (want * 0.5).backward();  // an upstream scale, as 1 / grad_accum
  auto want_gh = hidden.grad().clone(), want_gw = weight.grad().clone();
  auto want_gb = c.bias ? bias.grad().clone() : torch::Tensor();
  hidden.mutable_grad().reset();
  weight.mutable_grad().reset();
  if (c.bias) bias.mutable_grad().reset();

  GemmChoices choices;
  auto got = chunked_linear_cross_entropy(hidden, weight, bias, targets, choices, {c.chunk_rows, c.softcap});
  (got * 0.5).backward();
  EXPECT_TRUE(close(got, want)) << "loss";
  EXPECT_EQ(got.scalar_type(), torch::kFloat);
  EXPECT_TRUE(close(hidden.grad(), want_gh)) << "grad hidden";
  EXPECT_TRUE(close(weight.grad(), want_gw)) << "grad weight";
  if (c.bias) {
    EXPECT_TRUE(close(bias.grad(), want_gb)) << "grad bias";
  }
}

TEST(ChunkedCrossEntropy, EqualsCrossEntropyOverSeveralChunks) { check_chunked_ce({50, 16, 37, 7, false, {}}); }
TEST(ChunkedCrossEntropy, EqualsCrossEntropyInOneChunk) { check_chunked_ce({20, 8, 11, 64, false, {}}); }
TEST(ChunkedCrossEntropy, EqualsCrossEntropyWithBias) { check_chunked_ce({33, 12, 29, 8, true, {}}); }
TEST(ChunkedCrossEntropy, EqualsCrossEntropyWithSoftcap) { check_chunked_ce({33, 12, 29, 5, false, 3.0}); }

TEST(ChunkedCrossEntropy, AllIgnoredIsNanAsTorch) {
  auto hidden = torch::randn({6, 4}), weight = torch::randn({9, 4});
  auto targets = torch::full({6}, -1, torch::kLong);
  auto got = chunked_linear_cross_entropy(hidden, weight, {}, targets, GemmChoices{}, {4, {}});
  auto want = at::cross_entropy_loss(at::linear(hidden, weight), targets, {}, at::Reduction::Mean, -1);
  EXPECT_TRUE(std::isnan(want.item<double>()));
  EXPECT_TRUE(std::isnan(got.item<double>()));
}

// The comparison can fail: counting ignored targets in the mean (a plain mean over all
// rows) changes the loss beyond the tolerance.
TEST(ChunkedCrossEntropy, ComparisonDetectsAWrongMean) {
  torch::manual_seed(3);
  auto hidden = torch::randn({40, 8}), weight = torch::randn({13, 8});
  auto targets = torch::randint(13, {40}, torch::kLong);
  targets.slice(0, 0, 10).fill_(-1);
  auto got = chunked_linear_cross_entropy(hidden, weight, {}, targets, GemmChoices{}, {9, {}});
  auto wrong = at::cross_entropy_loss(at::linear(hidden, weight), targets, {}, at::Reduction::Sum, -1) / 40.0;
  EXPECT_FALSE(close(got, wrong));
}

// ---- FusedLinear on each kernel ---------------------------------------------------------

class FusedLinearKernel : public ::testing::TestWithParam<GemmKernel> {};

TEST_P(FusedLinearKernel, EqualsAtLinearInValueAndGradients) {
  if (GetParam() == GemmKernel::onednn && !onednn_linear_available()) GTEST_SKIP() << "no oneDNN linear";
  torch::manual_seed(11);
  for (bool with_bias : {false, true}) {
    auto x = torch::randn({3, 17, 24}).requires_grad_(true);
    auto w = (torch::randn({40, 24}) * 0.2).requires_grad_(true);
    auto b = with_bias ? torch::randn({40}).requires_grad_(true) : torch::Tensor();
    auto dy = torch::randn({3, 17, 40});
    auto want = at::linear(x, w, with_bias ? std::optional<torch::Tensor>(b) : std::nullopt);
    want.backward(dy);
    auto want_gx = x.grad().clone(), want_gw = w.grad().clone();
    auto want_gb = with_bias ? b.grad().clone() : torch::Tensor();
    x.mutable_grad().reset();
    w.mutable_grad().reset();
    if (with_bias) b.mutable_grad().reset();
    GemmChoices choices;
    choices.everywhere = GetParam();
    auto got = fused_linear(x, w, b, choices);
    got.backward(dy);
    EXPECT_TRUE(close(got, want)) << "output, bias " << with_bias;
    EXPECT_TRUE(close(x.grad(), want_gx)) << "grad x, bias " << with_bias;
    EXPECT_TRUE(close(w.grad(), want_gw)) << "grad w, bias " << with_bias;
    if (with_bias) {
      EXPECT_TRUE(close(b.grad(), want_gb)) << "grad b";
    }
  }
  // An empty batch (an MoE expert without tokens) still gives zero-sized outputs and a zero
  // weight gradient.
  auto x = torch::randn({0, 24}).requires_grad_(true);
  auto w = torch::randn({40, 24}).requires_grad_(true);
  GemmChoices choices;
  choices.everywhere = GetParam();
  fused_linear(x, w, {}, choices).sum().backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().abs().sum().item<double>(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Kernels, FusedLinearKernel, ::testing::Values(GemmKernel::aten, GemmKernel::onednn),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---- calibration and its cache ----------------------------------------------------------

TEST(GemmCalibration, MeasuresOnceThenReadsTheCache) {
  if (!onednn_linear_available()) GTEST_SKIP() << "no oneDNN linear";
  const auto file = std::filesystem::temp_directory_path() / ("tokbench-gemm-test-" + std::to_string(::getpid()) +
                                                              ".json");
  std::filesystem::remove(file);
  GemmCalibrationOptions options;
  options.cache_file = file;
  options.repetitions = 1;
  const std::vector<GemmShape> shapes{{64, 32, 48}, {64, 48, 32}};
  const auto first = calibrate_gemm_choices(shapes, torch::kFloat, kCpu, options);
  EXPECT_FALSE(first.from_cache);
  EXPECT_EQ(first.by_class.size(), 6u);  // 3 roles x 2 shapes
  ASSERT_TRUE(std::filesystem::exists(file));
  const auto doc = model::testing::read_json(file);
  ASSERT_TRUE(doc.contains(gemm_machine_key(torch::kFloat)));
  EXPECT_EQ(doc.at(gemm_machine_key(torch::kFloat)).size(), 6u);
  const auto second = calibrate_gemm_choices(shapes, torch::kFloat, kCpu, options);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.by_class, first.by_class);
  EXPECT_NE(second.summary().find("cached"), std::string::npos);
  std::filesystem::remove(file);
}

// ---- the fused step against the eager step, every fixture family ------------------------

StepOutcome eager_outcome(const Fixture& f, int64_t grad_accum) {
  auto gpt = model_of(f);
  auto step = make_eager_step(gpt, kCpu, EagerStepOptions{});
  return run_micro_batches(*step, gpt, micro_batches(f, grad_accum));
}

StepOutcome fused_outcome(const Fixture& f, int64_t grad_accum, GemmKernel kernel) {
  auto gpt = model_of(f);
  FusedStepOptions options;
  options.only_kernel = kernel;
  options.chunk_rows = 5;  // several chunks, the last one short
  auto step = make_fused_step(gpt, kCpu, options);
  return run_micro_batches(*step, gpt, micro_batches(f, grad_accum));
}

struct FamilyCase {
  std::string family;
  int64_t grad_accum;
  GemmKernel kernel;
};

class FusedStepEquivalence : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(FusedStepEquivalence, LossesAndGradientsEqualTheEagerStep) {
  const auto& c = GetParam();
  if (c.kernel == GemmKernel::onednn && !onednn_linear_available()) GTEST_SKIP() << "no oneDNN linear";
  const Fixture f = load_fixture(c.family);
  expect_same(fused_outcome(f, c.grad_accum, c.kernel), eager_outcome(f, c.grad_accum));
}

std::vector<FamilyCase> family_cases() {
  std::vector<FamilyCase> cases;
  for (const char* family : {"pythia", "phi-2", "llama-2", "llama-3.1", "mistral", "gemma-2", "gemma-3", "qwen3",
                             "qwen2.5", "olmo-2", "olmo", "falcon", "mixtral", "qwen3-moe"})
    for (int64_t ga : {1, 2})
      for (GemmKernel kernel : {GemmKernel::aten, GemmKernel::onednn}) cases.push_back({family, ga, kernel});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Families, FusedStepEquivalence, ::testing::ValuesIn(family_cases()),
                         [](const auto& info) {
                           return model::testing::test_name(info.param.family + "_ga" +
                                                            std::to_string(info.param.grad_accum) + "_" +
                                                            to_string(info.param.kernel));
                         });

// The comparison can fail: the fused step at GA 2 against the eager step at GA 1 (half the
// gradient of micro-batch 0, plus micro-batch 1's) must not pass.
TEST(FusedStepEquivalenceCheck, DetectsDifferentGradients) {
  const Fixture f = load_fixture("pythia");
  const auto fused = fused_outcome(f, 2, GemmKernel::aten);
  const auto eager = eager_outcome(f, 1);
  EXPECT_FALSE(close(fused.grads.at("lm_head.weight"), eager.grads.at("lm_head.weight")));
}

// ---- memory: the chunked head holds less than B×T×V logits -------------------------------

int64_t peak_bytes_of(bool fused) {
  auto config = model::with_overrides(model::config_by_name("pythia-14m"), {.n_layer = 1, .seq_len = 128});
  model::GPT gpt(config, torch::TensorOptions().dtype(torch::kFloat));
  gpt->reset_parameters(5);
  std::unique_ptr<TrainStep> step;
  if (fused) {
    FusedStepOptions options;
    options.only_kernel = GemmKernel::aten;
    options.chunk_rows = 64;
    step = make_fused_step(gpt, kCpu, options);
  } else {
    step = make_eager_step(gpt, kCpu, EagerStepOptions{});
  }
  torch::manual_seed(9);
  TokenBatch batch{torch::randint(100, {4, 128}, torch::kLong), torch::randint(100, {4, 128}, torch::kLong)};
  CpuMemoryCounter counter;
  step->forward_backward(batch, 0, 1);
  const int64_t peak = counter.peak_bytes();
  step->release_after_failure();
  return peak;
}

TEST(FusedStepMemory, PeakBelowEagerWhenLogitsDominate) {
  const int64_t eager = peak_bytes_of(false);
  const int64_t fused = peak_bytes_of(true);
  // B·T·V fp32 logits: 4·128·50304·4 ≈ 103 MB; eager holds them and their gradient.
  const int64_t logits_bytes = int64_t{4} * 128 * 50304 * 4;
  EXPECT_GT(eager, logits_bytes);
  EXPECT_LT(fused, eager - logits_bytes) << "fused " << fused << " B, eager " << eager << " B";
}

// ---- per-unit timings: the fused computation goes through the model's block entry points ----

// forward_hidden runs the blocks through the same hooks as the eager forward, and the chunked
// head + loss ends the root's forward with after_head and the forward-end callback, so the
// pass marks the same units, with and without activation checkpointing.
TEST(FusedStepUnitTimings, EveryUnitIsTimedInOrder) {
  const int64_t layers = 3;
  for (const bool checkpointing : {false, true}) {
    const std::string what = checkpointing ? "fused, checkpointed" : "fused";
    auto config = model::with_overrides(model::config_by_name("pythia-14m"), {.n_layer = layers, .seq_len = 32});
    model::GPT gpt(config, torch::TensorOptions().dtype(torch::kFloat));
    gpt->reset_parameters(5);
    gpt->set_activation_checkpointing(checkpointing);
    FusedStepOptions options;
    options.only_kernel = GemmKernel::aten;
    options.chunk_rows = 24;  // B·T = 64 rows: three chunks, the last one short
    auto step = make_fused_step(gpt, kCpu, options);
    TokenBatchOptions batches;
    batches.micro_batch = 2;
    batches.seq_len = 32;
    batches.vocab_size = config.vocab();
    batches.host_buffers = 2;  // GA, as the loop's batcher
    TokenBatcher data(batches, kCpu);
    LoopOptions loop;
    loop.grad_accum = 2;
    loop.max_iters = 3;
    loop.warmup_iters = 1;
    loop.unit_timing_iters = 2;
    const TrainResult result = run_timed_loop(*step, data, kCpu, loop, nullptr, nullptr);
    ASSERT_EQ(result.status, RunStatus::ok) << result.message;
    ASSERT_TRUE(result.unit_timings.has_value()) << result.unit_timing_message;
    int64_t parameters = 0;
    for (const auto& p : gpt->parameters()) parameters += p.numel();
    testing::expect_unit_structure(*result.unit_timings, layers, 2, 2, parameters, what);
    testing::expect_units_account_for_the_iteration(*result.unit_timings, what);
  }
}

}  // namespace
}  // namespace tokbench::train
