// The CUDA graph step (train/cuda_graph_step.hpp) against the step it captures, through the timed
// loop: one block of pythia-14m in fp32 (TF32 off), the fused and the eager computation, GA 1 and
// 2, gradients freed or zeroed in place. Every iteration's loss — the eager warm-ups, the capture
// iteration and the replays — equals the eager run's, the optimizer's device counter says one
// step per iteration, nothing fell back, and the per-unit timing pass after the window still runs
// (on the eager step, once the graph's pool is given back). The learning rate is large enough that a replay that skipped the update,
// or read stale tokens, gives other losses. ctest label `gpu` (the cuda_kernels suite): skipped
// with its reason where no CUDA device is present.
#include <ATen/Context.h>
#include <gtest/gtest.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "model/catalog.hpp"
#include "train/cuda_graph_step.hpp"
#include "train/train_loop.hpp"

namespace tokbench::train {
namespace {

constexpr int64_t kMaxIters = 7;
constexpr int64_t kWarmupIters = 3;  // 2 eager, then the capture: 4 replays in the window
constexpr double kLossTolerance = 1e-4;  // relative; the same kernels in the same order

bool have_cuda() { return torch::cuda::is_available() && cuda_graphs_built(); }
#define REQUIRE_CUDA() \
  if (!have_cuda()) GTEST_SKIP() << "no CUDA device here: the CUDA graph step runs in scripts/gpu-acceptance"

struct Case {
  bool fused;
  int64_t grad_accum;
  ZeroGrad zero_grad;
};

std::unique_ptr<TrainStep> make_step(const Case& c, bool captured, model::GPT& gpt, const torch::Device& cuda) {
  at::globalContext().setAllowTF32CuBLAS(false);
  AdamWOptions adamw;
  adamw.lr = 1e-2;
  std::unique_ptr<TrainStep> step;
  if (c.fused) {
    FusedStepOptions o;
    o.adamw = adamw;
    o.zero_grad = c.zero_grad;
    o.rows_per_micro_batch = 2 * 64;
    o.use_gemm_cache = false;
    step = make_fused_step(gpt, cuda, o);
  } else {
    step = make_eager_step(gpt, cuda, EagerStepOptions{.adamw = adamw, .zero_grad = c.zero_grad});
  }
  if (captured) step = make_cuda_graph_step(std::move(step), cuda, {.eager_warmups = 2, .fall_back = false});
  return step;
}

model::GPT small_model(const torch::Device& cuda) {
  model::GPT gpt(model::with_overrides(model::config_by_name("pythia-14m"), {.n_layer = 1, .seq_len = 64}),
                 torch::TensorOptions().dtype(torch::kFloat).device(cuda));
  gpt->reset_parameters(1337);
  return gpt;
}

TrainResult run_loop(TrainStep& step, const Case& c, model::GPT& gpt, const torch::Device& cuda,
                     int64_t unit_timing_iters) {
  TrainOptions train;
  train.micro_batch = 2;
  train.seq_len = 64;
  train.grad_accum = c.grad_accum;
  TokenBatcher data(batch_options_for(train, gpt->config().vocab()), cuda);
  LoopOptions loop;
  loop.grad_accum = c.grad_accum;
  loop.max_iters = kMaxIters;
  loop.warmup_iters = kWarmupIters;
  loop.unit_timing_iters = unit_timing_iters;
  return run_timed_loop(step, data, cuda, loop, nullptr, nullptr);
}

TrainResult run(const Case& c, bool captured) {
  const torch::Device cuda(torch::kCUDA, 0);
  model::GPT gpt = small_model(cuda);
  const std::unique_ptr<TrainStep> step = make_step(c, captured, gpt, cuda);
  return run_loop(*step, c, gpt, cuda, /*unit_timing_iters=*/1);
}

int64_t reserved_bytes() { return c10::cuda::CUDACachingAllocator::getDeviceStats(0).reserved_bytes[0].current; }

class CudaGraphStep : public ::testing::TestWithParam<Case> {};

TEST_P(CudaGraphStep, ReplaysGiveTheEagerLosses) {
  REQUIRE_CUDA();
  const Case& c = GetParam();
  const TrainResult eager = run(c, false);
  const TrainResult graph = run(c, true);
  ASSERT_EQ(eager.status, RunStatus::ok) << eager.message;
  ASSERT_EQ(graph.status, RunStatus::ok) << graph.message;  // fall_back off: a failed capture fails
  EXPECT_EQ(graph.graph_fallback, "");
  ASSERT_EQ(graph.iterations.size(), static_cast<std::size_t>(kMaxIters));
  ASSERT_EQ(eager.iterations.size(), static_cast<std::size_t>(kMaxIters));
  for (int64_t i = 0; i < kMaxIters; ++i) {
    const double want = eager.iterations[i].loss;
    const double got = graph.iterations[i].loss;
    EXPECT_LE(std::abs(got - want), kLossTolerance * std::abs(want)) << "iteration " << i << ": " << got << " vs " << want;
  }
  // The comparison can fail: training moved the loss by far more than the tolerance.
  EXPECT_GT(std::abs(eager.iterations.front().loss - eager.iterations.back().loss),
            100 * kLossTolerance * std::abs(eager.iterations.front().loss));
  EXPECT_EQ(graph.optimizer_steps, kMaxIters);  // the device counter: every replay stepped
  EXPECT_TRUE(graph.unit_timings.has_value()) << graph.unit_timing_message;
}

// The passes after the window step the inner step eagerly, with activations of their own:
// eager() gives the graph's private pool back first (gradients zeroed in place live outside it),
// and the wrapper refuses to be stepped after that.
TEST(CudaGraphStepMemory, EagerGivesTheGraphsPoolBack) {
  REQUIRE_CUDA();
  const torch::Device cuda(torch::kCUDA, 0);
  const Case c{true, 1, ZeroGrad::inplace};
  model::GPT gpt = small_model(cuda);
  const std::unique_ptr<TrainStep> step = make_step(c, true, gpt, cuda);
  const TrainResult result = run_loop(*step, c, gpt, cuda, /*unit_timing_iters=*/0);
  ASSERT_EQ(result.status, RunStatus::ok) << result.message;
  ASSERT_EQ(result.graph_fallback, "");
  torch::cuda::synchronize();
  const int64_t with_graph = reserved_bytes();
  TrainStep& inner = step->eager();
  EXPECT_LT(reserved_bytes(), with_graph) << "the graph's pool is still reserved";
  EXPECT_EQ(&step->eager(), &inner);  // idempotent
  // The inner step goes on eagerly; the wrapper is stepped no more.
  TokenBatcher data(batch_options_for(TrainOptions{.micro_batch = 2, .seq_len = 64}, gpt->config().vocab()), cuda);
  const at::Tensor loss = inner.optimizer_step(inner.forward_backward(data.next(), 0, 1));
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
  EXPECT_THROW(step->forward_backward(data.next(), 0, 1), c10::Error);
}

INSTANTIATE_TEST_SUITE_P(Steps, CudaGraphStep,
                         ::testing::Values(Case{true, 1, ZeroGrad::none}, Case{true, 2, ZeroGrad::none},
                                           Case{true, 2, ZeroGrad::inplace}, Case{false, 2, ZeroGrad::none}),
                         [](const auto& info) {
                           return std::string(info.param.fused ? "fused" : "eager") + "_ga" +
                                  std::to_string(info.param.grad_accum) +
                                  (info.param.zero_grad == ZeroGrad::none ? "_free" : "_inplace");
                         });

}  // namespace
}  // namespace tokbench::train
