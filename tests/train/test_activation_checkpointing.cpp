// Activation checkpointing (model/gpt_checkpoint.hpp) changes what is kept, never what is
// computed: for the tiny model of every family of the equivalence fixtures, the losses and every
// parameter gradient with checkpointing equal those without (fp32, 1e-6 relative), in the eager
// and the fused step, at GA 1 and 2. The recomputation skips exactly the output projection's
// forward GEMM where nothing reads it (so the FLOPs it adds are count_recompute_flops), and the
// memory a micro-batch needs falls by what the closed form says.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "model/catalog.hpp"
#include "model/counting.hpp"
#include "model/gpt_checkpoint.hpp"
#include "model/memory_estimate.hpp"
#include "step_equivalence.hpp"
#include "train/cpu_memory_counter.hpp"
#include "train/gemm_kernels.hpp"

namespace tokbench::train {
namespace {

// Checkpointing recomputes the same operations on the same values: only rounding-free
// differences are allowed (the tolerance the issue asks for, ten times tighter than the fused
// step's against eager).
constexpr double kCheckpointTolerance = 1e-6;

enum class Executor { eager, fused };

StepOutcome outcome(const Fixture& f, int64_t grad_accum, Executor executor, bool checkpoint) {
  auto gpt = model_of(f);
  gpt->set_activation_checkpointing(checkpoint);
  std::unique_ptr<TrainStep> step;
  if (executor == Executor::fused) {
    FusedStepOptions options;
    options.only_kernel = GemmKernel::aten;
    options.chunk_rows = 5;
    step = make_fused_step(gpt, kCpu, options);
  } else {
    step = make_eager_step(gpt, kCpu, EagerStepOptions{});
  }
  return run_micro_batches(*step, gpt, micro_batches(f, grad_accum));
}

struct Case {
  std::string family;
  int64_t grad_accum;
  Executor executor;
};

class CheckpointEquivalence : public ::testing::TestWithParam<Case> {};

TEST_P(CheckpointEquivalence, LossesAndGradientsEqualTheStepWithout) {
  const auto& c = GetParam();
  const Fixture f = load_fixture(c.family);
  expect_same(outcome(f, c.grad_accum, c.executor, true), outcome(f, c.grad_accum, c.executor, false),
              kCheckpointTolerance);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* family : {"pythia", "phi-2", "llama-2", "llama-3.1", "mistral", "gemma-2", "gemma-3", "qwen3",
                             "qwen2.5", "olmo-2", "olmo", "falcon", "mixtral", "qwen3-moe"})
    for (int64_t ga : {1, 2})
      for (Executor e : {Executor::eager, Executor::fused}) out.push_back({family, ga, e});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Families, CheckpointEquivalence, ::testing::ValuesIn(cases()), [](const auto& info) {
  return model::testing::test_name(info.param.family + "_ga" + std::to_string(info.param.grad_accum) +
                                   (info.param.executor == Executor::fused ? "_fused" : "_eager"));
});

// The comparison can fail: gradients of GA 2 against GA 1 differ beyond the tolerance.
TEST(CheckpointEquivalenceCheck, DetectsDifferentGradients) {
  const Fixture f = load_fixture("llama-3.1");
  const auto two = outcome(f, 2, Executor::eager, true);
  const auto one = outcome(f, 1, Executor::eager, false);
  EXPECT_FALSE(close(two.grads.at("lm_head.weight"), one.grads.at("lm_head.weight"), kCheckpointTolerance));
}

// ---- what the recomputation runs ----------------------------------------------------------

// Counts the model's GEMMs (computed, and built as a graph only) through its linear function.
struct GemmCounts {
  int computed = 0;
  int graph_only = 0;
};

GemmCounts gemms_of_one_micro_batch(const std::string& family, bool checkpoint) {
  const Fixture f = load_fixture(family);
  auto gpt = model_of(f);
  gpt->set_activation_checkpointing(checkpoint);
  auto counts = std::make_shared<GemmCounts>();
  gpt->set_linear_function(
      [counts](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
        ++counts->computed;
        return at::linear(x, w, b.defined() ? std::optional<torch::Tensor>(b) : std::nullopt);
      },
      [counts](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
        ++counts->graph_only;
        return model::linear_graph_only(x, w, b);
      });
  auto step = make_eager_step(gpt, kCpu, EagerStepOptions{});
  step->forward_backward(micro_batches(f, 1)[0], 0, 1);
  return *counts;
}

TEST(CheckpointRecompute, EveryBlockRunsAgainLessTheProjectionNothingReads) {
  // llama-3.1: 2 blocks of qkv, proj, fc_1, fc_2, mlp.proj; lm_head outside (5·2 + 1 GEMMs).
  const GemmCounts plain = gemms_of_one_micro_batch("llama-3.1", false);
  EXPECT_EQ(plain.computed, 11);
  EXPECT_EQ(plain.graph_only, 0);
  const GemmCounts checkpointed = gemms_of_one_micro_batch("llama-3.1", true);
  EXPECT_EQ(checkpointed.computed, 11 + 2 * 4);  // each block again, but its mlp.proj ...
  EXPECT_EQ(checkpointed.graph_only, 2);         // ... whose graph is built without the GEMM
  // gemma-2 has a post-MLP norm, which reads the projection's output: it is recomputed.
  EXPECT_TRUE(model::recompute_skips_mlp_projection(load_fixture("llama-3.1").config));
  EXPECT_FALSE(model::recompute_skips_mlp_projection(load_fixture("gemma-2").config));
  const GemmCounts gemma = gemms_of_one_micro_batch("gemma-2", true);
  EXPECT_EQ(gemma.graph_only, 0);
  EXPECT_EQ(gemma.computed, 2 * gemms_of_one_micro_batch("gemma-2", false).computed - 1);  // all but lm_head again
}

TEST(CheckpointRecompute, GraphOnlyLinearHasAtLinearsGradients) {
  torch::manual_seed(3);
  for (const bool with_bias : {false, true}) {
    auto x = torch::randn({2, 5, 7}, torch::requires_grad());
    auto w = torch::randn({4, 7}, torch::requires_grad());
    auto b = with_bias ? torch::randn({4}, torch::requires_grad()) : torch::Tensor();
    auto dy = torch::randn({2, 5, 4});
    model::linear_graph_only(x, w, b).backward(dy);
    const auto gx = x.grad().clone(), gw = w.grad().clone();
    const auto gb = with_bias ? b.grad().clone() : torch::Tensor();
    x.mutable_grad().reset();
    w.mutable_grad().reset();
    if (with_bias) b.mutable_grad().reset();
    at::linear(x, w, with_bias ? std::optional<torch::Tensor>(b) : std::nullopt).backward(dy);
    EXPECT_TRUE(torch::equal(gx, x.grad()));
    EXPECT_TRUE(torch::equal(gw, w.grad()));
    if (with_bias) {
      EXPECT_TRUE(torch::equal(gb, b.grad()));
    }
  }
}

// ---- memory ---------------------------------------------------------------------------------

// A model whose activations dwarf its weights: 8 narrow blocks, a tiny vocabulary, long rows.
model::Config activation_heavy_config() {
  model::Config c = model::config_by_name("pythia-14m");
  c.n_layer = 8;
  c.n_embd = 64;
  c.n_head = 4;
  c.vocab_size = 128;
  c.padding_multiple = 128;
  c.block_size = 512;
  c.padded_vocab_size.reset();
  c.head_size.reset();
  c.n_query_groups.reset();
  c.intermediate_size.reset();
  c.finalize();
  return c;
}

constexpr int64_t kBatch = 8, kSeq = 512;

// Bytes one micro-batch's forward and backward need beyond what was allocated before it.
int64_t micro_batch_bytes(const model::Config& config, bool checkpoint) {
  model::GPT gpt(config, torch::TensorOptions().dtype(torch::kFloat));
  gpt->reset_parameters(5);
  gpt->set_activation_checkpointing(checkpoint);
  auto step = make_eager_step(gpt, kCpu, EagerStepOptions{});
  torch::manual_seed(9);
  TokenBatch batch{torch::randint(config.vocab_size, {kBatch, kSeq}, torch::kLong),
                   torch::randint(config.vocab_size, {kBatch, kSeq}, torch::kLong)};
  CpuMemoryCounter counter;
  const int64_t before = counter.current_bytes();
  counter.reset_peak();
  step->forward_backward(batch, 0, 1);
  const int64_t need = counter.peak_bytes() - before;
  step->release_after_failure();
  return need;
}

TEST(CheckpointMemory, AMicroBatchNeedsLessByTheClosedForm) {
  const model::Config config = activation_heavy_config();
  const int64_t without = micro_batch_bytes(config, false);
  const int64_t with = micro_batch_bytes(config, true);
  // The closed form (model/memory_estimate.hpp): without checkpointing every block's saved
  // tensors live to the end of forward; with it, each block's input, and one block's tensors
  // while backward recomputes it. The difference is what checkpointing saves.
  const auto estimate = [&](bool checkpoint) {
    return model::estimate_training_memory(config, kBatch, kSeq, model::TrainPrecision::fp32, checkpoint)
        .activations_bytes;
  };
  const double predicted = static_cast<double>(estimate(false) - estimate(true));
  const double measured = static_cast<double>(without - with);
  ASSERT_GT(predicted, 0);
  std::cout << "micro-batch needs " << without / 1e6 << " MB without checkpointing, " << with / 1e6
            << " MB with; saved " << measured / 1e6 << " MB, closed form " << predicted / 1e6 << " MB\n";
  EXPECT_NEAR(measured / predicted, 1.0, 0.15) << "measured saving " << measured / 1e6 << " MB, predicted "
                                               << predicted / 1e6 << " MB (without " << without / 1e6
                                               << " MB, with " << with / 1e6 << " MB)";
}

}  // namespace
}  // namespace tokbench::train
