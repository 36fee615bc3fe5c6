// The time account's profiled pass (train/time_account_pass.hpp) on the real GPT, eager and
// fused, fp32 on the CPU — the validation docs/time-account.md promises:
//   - the matrix products the pass counts from the operators' shapes are the model's FLOPs
//     exactly (its hardware FLOPs under activation checkpointing): no product missed, none twice;
//   - the categories sum to the iteration: compared with the pass's own host clock rather than
//     the measured window, because the profiler slows the profiled iterations themselves (that
//     slowdown is what the account scales away) and only the clock of the same iterations
//     tells whether time fell outside every category;
//   - a host delay injected between iterations (LoopOptions' test hook) appears in data/host at
//     its length and in no other category.
#include <gtest/gtest.h>

#include <numeric>

#include "model/catalog.hpp"
#include "model/counting.hpp"
#include "train/train_loop.hpp"

namespace tokbench::train {
namespace {

using account::Category;
using account::index_of;

const torch::Device kCpu(torch::kCPU);
constexpr int64_t kMicroBatch = 2;
constexpr int64_t kSeqLen = 64;
constexpr int64_t kGradAccum = 2;

// The sum is checked on the real vocabulary, where the head and the loss weigh as in a run.
model::Config small_config() {
  return model::with_overrides(model::config_by_name("pythia-14m"), {.n_layer = 2, .seq_len = kSeqLen});
}

// pythia-14m with a 1k vocabulary: iterations of a few milliseconds, for the FLOP counts and so
// that the host-delay test's noise is small beside its delay.
model::Config tiny_config(int64_t n_layer = 2) {
  model::Config c = model::with_overrides(model::config_by_name("pythia-14m"), {.n_layer = n_layer, .seq_len = kSeqLen});
  c.vocab_size = 1024;
  c.padded_vocab_size.reset();
  c.finalize();
  return c;
}

enum class Executor { eager, fused_aten, fused_onednn };

struct AccountRun {
  TrainResult result;
  model::Config config;
};

AccountRun run_with_account(Executor executor, bool checkpoint = false, double host_delay_seconds = 0,
                     int64_t iterations = 2, const model::Config& config = small_config()) {
  model::GPT gpt(config, torch::TensorOptions().dtype(torch::kFloat).device(kCpu));
  gpt->reset_parameters(1337);
  gpt->set_activation_checkpointing(checkpoint);
  std::unique_ptr<TrainStep> step;
  if (executor == Executor::eager) {
    step = make_eager_step(gpt, kCpu, EagerStepOptions{});
  } else {
    FusedStepOptions options;
    options.only_kernel = executor == Executor::fused_aten ? GemmKernel::aten : GemmKernel::onednn;
    options.rows_per_micro_batch = kMicroBatch * kSeqLen;
    step = make_fused_step(gpt, kCpu, options);
  }
  TrainOptions train;
  train.micro_batch = kMicroBatch;
  train.seq_len = kSeqLen;
  TokenBatcher data(batch_options_for(train, config.vocab()), kCpu);
  LoopOptions loop;
  loop.grad_accum = kGradAccum;
  loop.max_iters = 3;
  loop.warmup_iters = 1;
  loop.time_account_iters = iterations;
  loop.test_host_delay_seconds = host_delay_seconds;
  return {run_timed_loop(*step, data, kCpu, loop, {}, nullptr), config};
}

double per_iteration(const ProfiledTimeAccount& t, Category c) {
  return t.pass.seconds[index_of(c)] / static_cast<double>(t.pass.iterations);
}

const char* name(Executor e) {
  switch (e) {
    case Executor::eager: return "eager";
    case Executor::fused_aten: return "fused_aten";
    case Executor::fused_onednn: return "fused_onednn";
  }
  return "?";
}

class TimeAccountPass : public ::testing::TestWithParam<Executor> {
 protected:
  void SetUp() override {
    if (GetParam() == Executor::fused_onednn && !onednn_linear_available())
      GTEST_SKIP() << "this LibTorch has no oneDNN linear";
  }
};

TEST_P(TimeAccountPass, CountsTheModelsFlopsExactly) {
  const AccountRun run = run_with_account(GetParam(), false, 0, 2, tiny_config());
  ASSERT_EQ(run.result.status, RunStatus::ok) << run.result.message;
  ASSERT_TRUE(run.result.time_account.has_value()) << run.result.time_account_message;
  const account::ProfiledPass& pass = run.result.time_account->pass;
  ASSERT_EQ(pass.iterations, 2);
  EXPECT_EQ(pass.uncounted_matmuls, 0);
  const int64_t model_flops = model::count_flops(run.config, kMicroBatch, kSeqLen).total() * kGradAccum;
  EXPECT_EQ((pass.gemm_flops + pass.attention_flops) / pass.iterations, model_flops);
  EXPECT_GT(pass.attention_flops, 0);  // SDPA's products are counted at the kernel
}

TEST_P(TimeAccountPass, CountsTheRecomputationUnderCheckpointing) {
  const AccountRun run = run_with_account(GetParam(), /*checkpoint=*/true, 0, 2, tiny_config());
  ASSERT_EQ(run.result.status, RunStatus::ok) << run.result.message;
  ASSERT_TRUE(run.result.time_account.has_value()) << run.result.time_account_message;
  const account::ProfiledPass& pass = run.result.time_account->pass;
  const int64_t hardware_flops = (model::count_flops(run.config, kMicroBatch, kSeqLen).total() +
                                  model::count_recompute_flops(run.config, kMicroBatch, kSeqLen)) *
                                 kGradAccum;
  EXPECT_EQ((pass.gemm_flops + pass.attention_flops) / pass.iterations, hardware_flops);
}

TEST_P(TimeAccountPass, CategoriesSumToTheIteration) {
  const AccountRun run = run_with_account(GetParam());
  ASSERT_TRUE(run.result.time_account.has_value()) << run.result.time_account_message;
  const ProfiledTimeAccount& t = *run.result.time_account;
  const double iterations = static_cast<double>(t.pass.iterations);
  const double categories = std::accumulate(t.pass.seconds.begin(), t.pass.seconds.end(), 0.0) / iterations;
  const double clock = t.clock_seconds / iterations;
  EXPECT_NEAR(categories, clock, 0.05 * clock) << name(GetParam());
  // The rules know the model's operators: what no rule claims (the step's gaps between
  // operators, unknown operators) stays a small part.
  EXPECT_LT(per_iteration(t, Category::other), 0.15 * clock) << name(GetParam());
  for (const Category c : {Category::gemm, Category::attention, Category::normalization, Category::elementwise,
                           Category::loss, Category::optimizer, Category::data_host})
    EXPECT_GT(per_iteration(t, c), 0) << name(GetParam()) << ": " << account::json_name(c);
}

TEST_P(TimeAccountPass, AHostDelayLandsInDataHostAlone) {
  // Large beside the tiny model's iteration (~10 ms here): after a sleep the first operators run
  // slower (cold caches, a descheduled core) by a few milliseconds, which is real time of theirs.
  constexpr double kDelay = 0.2;
  // One thread: on a busy machine idle OpenMP workers make a step's operators' times jump.
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const AccountRun quiet = run_with_account(GetParam(), false, 0, 4, tiny_config(1));
  const AccountRun delayed = run_with_account(GetParam(), false, kDelay, 4, tiny_config(1));
  at::set_num_threads(threads);
  ASSERT_TRUE(quiet.result.time_account && delayed.result.time_account);
  const ProfiledTimeAccount &q = *quiet.result.time_account, &d = *delayed.result.time_account;
  const double added = per_iteration(d, Category::data_host) - per_iteration(q, Category::data_host);
  EXPECT_NEAR(added, kDelay, 0.1 * kDelay) << name(GetParam());
  // Every other category keeps its time: what moves is noise, a small part of the delay.
  double moved = 0;
  for (const Category c : account::all_categories())
    if (c != Category::data_host) moved += std::abs(per_iteration(d, c) - per_iteration(q, c));
  EXPECT_LT(moved, 0.1 * kDelay) << name(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Executors, TimeAccountPass,
                         ::testing::Values(Executor::eager, Executor::fused_aten, Executor::fused_onednn),
                         [](const auto& info) { return std::string(name(info.param)); });

}  // namespace
}  // namespace tokbench::train
