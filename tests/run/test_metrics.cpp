// The metric contract on synthetic runs: tokens/s × average iteration time = G·T exactly,
// FLOPs include GA (the reference's bug), MFU is unknown without a peak, warm-up is left out,
// and a run stopped early reports over what it measured.
#include <gtest/gtest.h>

#include <deque>

#include <cmath>

#include "run/metrics.hpp"

namespace tokbench::run {
namespace {

MeasuredRun synthetic_run(int warmup, int measured, double first_seconds = 0.5) {
  MeasuredRun run;
  double t = 0;
  for (int i = 0; i < warmup + measured; ++i) {
    const double seconds = i < warmup ? first_seconds : 0.1 + 0.01 * (i % 3);
    t += seconds;
    run.iterations.push_back({i, i < warmup, seconds, 10.0 - 0.1 * i, t});
  }
  double warmup_end = warmup > 0 ? run.iterations[warmup - 1].end_time : 0;
  run.measured_window_seconds = t - warmup_end;
  run.allocated_peak_bytes = 2'500'000'000;
  run.reserved_peak_bytes = 3'000'000'000;
  run.overhead_seconds = 0.001;
  return run;
}

MetricInputs inputs(int64_t B, int64_t GA, int64_t T, int64_t warmup) {
  // MetricInputs reads the run's loop options where they live; these live as long as the program.
  static std::deque<train::TrainOptions> loops;
  train::TrainOptions& loop = loops.emplace_back();
  loop.micro_batch = B;
  loop.grad_accum = GA;
  loop.seq_len = T;
  loop.warmup_iters = warmup;
  MetricInputs in{loop, 1};
  in.flops_per_microbatch = 1'000'000'000;
  return in;
}

TEST(Metrics, TokensTimesIterTimeIsGlobalBatchTimesSeqLen) {
  for (int measured : {1, 4, 20}) {
    const auto in = inputs(2, 3, 512, 5);
    const auto m = compute_metrics(in, synthetic_run(5, measured));
    ASSERT_TRUE(m.tokens_per_s && m.average_iter_time_ms) << measured;
    const double product = *m.tokens_per_s * *m.average_iter_time_ms / 1e3;
    const double expected = 2.0 * 3 * 512;  // G·T with W = 1
    EXPECT_NEAR(product / expected, 1.0, 1e-9) << measured;
    EXPECT_EQ(m.measured_iters, measured);
  }
}

TEST(Metrics, WarmupIsLeftOutOfTheWindow) {
  const auto m = compute_metrics(inputs(1, 1, 8, 3), synthetic_run(3, 6, /*first_seconds=*/100.0));
  ASSERT_TRUE(m.average_iter_time_ms);
  EXPECT_LT(*m.average_iter_time_ms, 200.0);  // slow warm-up iterations (100 s) are not in it
  ASSERT_TRUE(m.iter_time_ms);
  EXPECT_LT(m.iter_time_ms->max, 200.0);
  EXPECT_DOUBLE_EQ(*m.loss_first, 10.0 - 0.1 * 3);
  EXPECT_DOUBLE_EQ(*m.loss_last, 10.0 - 0.1 * 8);
}

TEST(Metrics, FlopsIncludeGradientAccumulation) {
  const auto in = inputs(2, 4, 16, 2);
  const auto m = compute_metrics(in, synthetic_run(2, 5));
  EXPECT_EQ(m.flops_per_iter_per_device, 4 * in.flops_per_microbatch);
  ASSERT_TRUE(m.flops_per_s_total && m.average_iter_time_ms);
  // model_flop_per_sec × average iteration time = per-iteration FLOPs (all devices).
  EXPECT_NEAR(*m.flops_per_s_total * *m.average_iter_time_ms / 1e3 / m.flops_per_iter_total, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(*m.flops_per_s_per_device, *m.flops_per_s_total);  // W = 1
}

TEST(Metrics, MfuNeedsAPeak) {
  auto in = inputs(1, 1, 16, 1);
  auto m = compute_metrics(in, synthetic_run(1, 3));
  EXPECT_FALSE(m.mfu.has_value());
  in.peak_flops_per_s = 1e11;
  m = compute_metrics(in, synthetic_run(1, 3));
  ASSERT_TRUE(m.mfu && m.flops_per_s_per_device);
  EXPECT_NEAR(*m.mfu, *m.flops_per_s_per_device / 1e11, 1e-15);
}

// HFU divides the FLOPs executed (with activation checkpointing, the model's plus the
// recomputed forward) by the same peak as MFU: HFU·peak = hardware FLOP/s, hardware FLOP/s ×
// average iteration time = hardware FLOPs per iteration (GA included), and HFU/MFU is the ratio
// of hardware to model FLOPs. Without checkpointing the two coincide.
TEST(Metrics, HfuIsHardwareFlopsOverThePeak) {
  auto in = inputs(2, 3, 16, 1);
  in.peak_flops_per_s = 2e11;
  const auto plain = compute_metrics(in, synthetic_run(1, 4));
  ASSERT_TRUE(plain.hfu && plain.mfu);
  EXPECT_NEAR(*plain.hfu / *plain.mfu, 1.0, 1e-12);
  in.hardware_flops_per_microbatch = 1'250'000'000;  // 1.25 x the model's
  const auto m = compute_metrics(in, synthetic_run(1, 4));
  ASSERT_TRUE(m.hfu && m.mfu && m.hardware_flops_per_s_per_device && m.average_iter_time_ms);
  EXPECT_NEAR(*m.hfu * 2e11 / *m.hardware_flops_per_s_per_device, 1.0, 1e-12);
  EXPECT_NEAR(*m.hardware_flops_per_s_per_device * *m.average_iter_time_ms / 1e3 / (3 * 1'250'000'000.0), 1.0, 1e-9);
  EXPECT_NEAR(*m.hfu / *m.mfu, 1.25, 1e-9);
  EXPECT_DOUBLE_EQ(*m.mfu, *plain.mfu);  // MFU does not move
}

TEST(Metrics, MemoryIsInDecimalGigabytes) {
  const auto m = compute_metrics(inputs(1, 1, 16, 1), synthetic_run(1, 3));
  EXPECT_DOUBLE_EQ(m.memory_allocated_peak_GB, 2.5);
  EXPECT_DOUBLE_EQ(m.memory_reserved_peak_GB, 3.0);
}

TEST(Metrics, StoppedDuringWarmupHasNoRates) {
  MeasuredRun run = synthetic_run(2, 0);
  run.outcome = Outcome::interrupted;
  run.measured_window_seconds = 0;
  const auto m = compute_metrics(inputs(1, 1, 16, 5), run);
  EXPECT_EQ(m.measured_iters, 0);
  EXPECT_FALSE(m.tokens_per_s);
  EXPECT_FALSE(m.average_iter_time_ms);
  EXPECT_FALSE(m.loss_first);
}

TEST(Metrics, InterruptedRunReportsWhatItMeasured) {
  MeasuredRun run = synthetic_run(2, 3);
  run.outcome = Outcome::interrupted;
  run.measured_window_seconds = 0;
  const auto m = compute_metrics(inputs(1, 2, 16, 2), run);
  EXPECT_EQ(m.measured_iters, 3);
  ASSERT_TRUE(m.tokens_per_s && m.average_iter_time_ms);
  EXPECT_NEAR(*m.tokens_per_s * *m.average_iter_time_ms / 1e3 / (2.0 * 16), 1.0, 1e-9);
}

TEST(Metrics, ExitCodes) {
  EXPECT_EQ(exit_code(Outcome::ok), 0);
  EXPECT_EQ(exit_code(Outcome::error), 1);
  EXPECT_EQ(exit_code(Outcome::oom), 3);
  EXPECT_EQ(exit_code(Outcome::nan), 4);
  EXPECT_EQ(exit_code(Outcome::interrupted), 5);
}

// --dynamic: tokens/s, the model's FLOPs and MFU count the real tokens of each measured
// iteration (warm-up left out), positions/s the padded ones; HFU keeps the positions' work.
TEST(Metrics, DynamicLengthsCountRealTokensAndTheirFlops) {
  auto in = inputs(2, 3, 512, 2);
  in.world_size = 2;
  in.peak_flops_per_s = 1e12;
  // Iteration i: 100·(i+1) real tokens and 1000·(i+1)² FLOPs over both ranks.
  in.dynamic_work = [](int64_t i) { return IterationWork{100 * (i + 1), 1000 * (i + 1) * (i + 1)}; };
  const MeasuredRun run = synthetic_run(2, 3);
  const auto m = compute_metrics(in, run);
  const double window = run.measured_window_seconds;
  ASSERT_TRUE(m.tokens_per_s && m.positions_per_s && m.flops_per_s_total && m.mfu && m.hfu);
  EXPECT_NEAR(*m.tokens_per_s, (300.0 + 400 + 500) / window, 1e-9);  // iterations 2, 3, 4
  EXPECT_NEAR(*m.positions_per_s, 3 * 2 * 3 * 512 * 2 / window, 1e-6);  // M·G·T, G = B·GA·W
  EXPECT_NEAR(*m.tokens_per_s_per_device, *m.tokens_per_s / 2, 1e-12);
  EXPECT_NEAR(*m.flops_per_s_total, (9000.0 + 16000 + 25000) / window, 1e-9);
  EXPECT_EQ(m.flops_per_iter_total, 16667);  // the mean, rounded
  EXPECT_NEAR(*m.mfu, *m.flops_per_s_total / 2 / 1e12, 1e-18);
  // The executed work is the padded positions': 1e9 FLOPs per micro-batch as without --dynamic.
  EXPECT_NEAR(*m.hardware_flops_per_s_per_device, 1e9 * 3 * 3 / window, 1e-3);

  in.dynamic_work = nullptr;  // the same run with fixed lengths: every position is a token
  const auto fixed = compute_metrics(in, run);
  EXPECT_FALSE(fixed.positions_per_s);
  EXPECT_NEAR(*fixed.tokens_per_s, *m.positions_per_s, 1e-6);
}

}  // namespace
}  // namespace tokbench::run
