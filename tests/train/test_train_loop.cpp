// run_training on the real GPT (pythia-14m cut to one layer, T = 32, micro batch 2) through
// each end state: ok, oom (a tiny CPU allocation cap), nan (a huge learning rate),
// interrupted (the stop flag from the callback) and error; plus the timing identities of
// the metric contract, gradient accumulation, determinism, dtype modes and file data.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include "model/catalog.hpp"
#include "train/train_loop.hpp"
#include "train/unit_timing_pass.hpp"
#include "unit_timing_checks.hpp"

namespace tokbench::train {
namespace {

const torch::Device kCpu(torch::kCPU);

model::Config tiny_config() {
  return model::with_overrides(model::config_by_name("pythia-14m"), {.n_layer = 1, .seq_len = 32});
}

model::GPT tiny_model(uint64_t seed = 1337) {
  model::GPT gpt(tiny_config(), torch::TensorOptions().dtype(torch::kFloat).device(kCpu));
  gpt->reset_parameters(seed);
  return gpt;
}

TrainOptions tiny_options() {
  TrainOptions options;
  options.micro_batch = 2;
  options.seq_len = 32;
  options.max_iters = 4;
  options.warmup_iters = 2;
  return options;
}

int64_t parameter_bytes(model::GPT& gpt) {
  int64_t bytes = 0;
  for (const auto& p : gpt->parameters()) bytes += p.numel() * static_cast<int64_t>(p.element_size());
  return bytes;
}

// The tokens (and --dynamic's lengths) follow the data seed; the weights' seed leaves them.
TEST(RunTraining, TokensFollowTheDataSeedNotTheWeightsSeed) {
  TrainOptions base = tiny_options();
  base.seed = 1;
  base.data.data_seed = 5;
  TrainOptions other_weights = base;
  other_weights.seed = 2;
  TrainOptions other_data = base;
  other_data.data.data_seed = 6;
  TokenBatcher a(batch_options_for(base, 100), kCpu);
  TokenBatcher b(batch_options_for(other_weights, 100), kCpu);
  TokenBatcher c(batch_options_for(other_data, 100), kCpu);
  const at::Tensor xa = a.next().x.clone();
  EXPECT_TRUE(at::equal(xa, b.next().x.clone()));
  EXPECT_FALSE(at::equal(xa, c.next().x.clone()));
  EXPECT_EQ(batch_options_for(base, 100).run_seed, 5u);
}

TEST(RunTraining, ShortRunMeasuresByTheContract) {
  model::GPT gpt = tiny_model();
  int callbacks = 0;
  const TrainResult result = run_training(gpt, kCpu, tiny_options(),
                                          [&](const IterationRecord&) { ++callbacks; }, nullptr);
  ASSERT_EQ(result.status, RunStatus::ok) << result.message;
  ASSERT_EQ(result.iterations.size(), 4u);
  EXPECT_EQ(callbacks, 4);
  EXPECT_EQ(result.measured_iters, 2);  // M = max - warmup
  EXPECT_TRUE(result.iterations[1].warmup);
  EXPECT_FALSE(result.iterations[2].warmup);
  EXPECT_EQ(result.optimizer_steps, 4);
  // The window runs from the end of the last warm-up iteration to the end of the last one,
  // and the measured iteration times tile it exactly.
  EXPECT_NEAR(result.measured_window_seconds, result.iterations[3].end_time - result.iterations[1].end_time, 1e-9);
  EXPECT_NEAR(result.measured_window_seconds, result.iterations[2].seconds + result.iterations[3].seconds, 1e-9);
  EXPECT_GT(result.measured_window_seconds, 0);
  EXPECT_GE(result.overhead_seconds, 0);
  EXPECT_LT(result.overhead_seconds, result.measured_window_seconds);
  EXPECT_DOUBLE_EQ(result.overhead_seconds,
                   result.iterations[2].overhead_seconds + result.iterations[3].overhead_seconds);
  for (const auto& record : result.iterations) EXPECT_LE(record.overhead_seconds, record.seconds);
  // Random init predicts nearly uniformly over the padded vocabulary.
  const double uniform = std::log(static_cast<double>(gpt->config().vocab()));
  EXPECT_NEAR(result.iterations[0].loss, uniform, 1.0);
  for (const auto& record : result.iterations) EXPECT_TRUE(std::isfinite(record.loss));
  // What the run added on top of the parameters it started with: AdamW's two moments and,
  // at the peak, at least the logits (B·T·V floats).
  const int64_t logits_bytes = 2 * 32 * gpt->config().vocab() * 4;
  EXPECT_GE(result.memory.allocated_bytes, 3 * parameter_bytes(gpt) + logits_bytes);
  EXPECT_GT(result.memory.peak_rss_bytes, parameter_bytes(gpt));
  EXPECT_TRUE(result.fused_adamw);
  // The run installed the counting allocator only for its duration.
  EXPECT_NO_THROW(CpuMemoryCounter());
}

// The breakdown counts what one process holds, part by part: the parameters, one gradient
// each, AdamW's two moments (plus its step counts), no communication; and it measures what
// forward left for backward, which holds at least the logits and their log-softmax (B·T·V
// floats each) and stays below the peak above the resident state.
TEST(RunTraining, MemoryBreakdownCountsEachPart) {
  model::GPT gpt = tiny_model();
  const TrainResult result = run_training(gpt, kCpu, tiny_options(), nullptr, nullptr);
  ASSERT_EQ(result.status, RunStatus::ok) << result.message;
  const MemoryBreakdown& b = result.memory_breakdown;
  const int64_t p = parameter_bytes(gpt);
  EXPECT_EQ(b.parameters, p);
  EXPECT_EQ(b.gradients, p);
  EXPECT_GE(b.optimizer_state, 2 * p);
  EXPECT_LE(b.optimizer_state, 2 * p + 4096);  // the per-tensor step counts
  EXPECT_EQ(b.comm_buffers, 0);
  const int64_t logits_bytes = 2 * 32 * gpt->config().vocab() * 4;
  EXPECT_GE(b.activations, 2 * logits_bytes);
  EXPECT_LE(b.activations, result.memory.allocated_bytes - b.parameters - b.optimizer_state);
  EXPECT_EQ(b.allocator_reserve, result.memory.reserved_bytes - result.memory.allocated_bytes);
}

// The reference frees gradients after each step; keeping them (zeroed) holds every gradient
// through the next forward too. Where the activations at the peak (logits and their
// softmax, B·T·V floats each) exceed the gradients, the peak comes at the start of backward,
// before any parameter gradient exists, so keeping them adds exactly their bytes.
TEST(RunTraining, KeptGradientsAddTheirBytesToThePeak) {
  TrainOptions options = tiny_options();
  options.micro_batch = 8;
  options.seq_len = 32;
  options.max_iters = 3;
  options.warmup_iters = 1;
  model::GPT freed_model = tiny_model();
  const int64_t gradient_bytes = parameter_bytes(freed_model);
  ASSERT_GT(2 * options.micro_batch * options.seq_len * freed_model->config().vocab() * 4, gradient_bytes);
  options.zero_grad = ZeroGrad::none;
  const TrainResult freed = run_training(freed_model, kCpu, options, nullptr, nullptr);
  model::GPT kept_model = tiny_model();
  options.zero_grad = ZeroGrad::inplace;
  const TrainResult kept = run_training(kept_model, kCpu, options, nullptr, nullptr);
  ASSERT_EQ(freed.status, RunStatus::ok) << freed.message;
  ASSERT_EQ(kept.status, RunStatus::ok) << kept.message;
  // The allocator rounds nothing on the CPU counter; allow 0.1% for small temporaries.
  EXPECT_NEAR(kept.memory.allocated_bytes - freed.memory.allocated_bytes, gradient_bytes, 0.001 * gradient_bytes);
  for (const auto& p : freed_model->parameters()) EXPECT_FALSE(p.grad().defined());
  for (const auto& p : kept_model->parameters()) EXPECT_TRUE(p.grad().defined());
}

TEST(RunTraining, GradientAccumulationTakesOneOptimizerStepPerIteration) {
  model::GPT gpt = tiny_model();
  TrainOptions options = tiny_options();
  options.grad_accum = 2;
  options.max_iters = 3;
  options.warmup_iters = 1;
  const TrainResult result = run_training(gpt, kCpu, options, nullptr, nullptr);
  ASSERT_EQ(result.status, RunStatus::ok) << result.message;
  EXPECT_EQ(result.iterations.size(), 3u);
  EXPECT_EQ(result.optimizer_steps, 3);
  EXPECT_NEAR(result.iterations[0].loss, std::log(static_cast<double>(gpt->config().vocab())), 1.0);
}

TEST(RunTraining, PerParameterAdamWMatchesFusedLosses) {
  std::vector<double> losses[2];
  for (int fused = 0; fused < 2; ++fused) {
    model::GPT gpt = tiny_model(3);
    TrainOptions options = tiny_options();
    options.max_iters = 3;
    options.warmup_iters = 1;
    options.adamw.fused = fused == 1;
    const TrainResult result = run_training(gpt, kCpu, options, nullptr, nullptr);
    ASSERT_EQ(result.status, RunStatus::ok) << result.message;
    EXPECT_EQ(result.fused_adamw, fused == 1);
    EXPECT_EQ(result.optimizer_steps, 3);
    for (const auto& record : result.iterations) losses[fused].push_back(record.loss);
  }
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(losses[0][i], losses[1][i], 1e-3) << "iteration " << i;
}

TEST(RunTraining, SameSeedsGiveTheSameLosses) {
  std::vector<double> losses[2];
  for (auto& run : losses) {
    model::GPT gpt = tiny_model(42);
    TrainOptions options = tiny_options();
    options.max_iters = 3;
    options.warmup_iters = 1;
    const TrainResult result = run_training(gpt, kCpu, options, nullptr, nullptr);
    ASSERT_EQ(result.status, RunStatus::ok) << result.message;
    for (const auto& record : result.iterations) run.push_back(record.loss);
  }
  ASSERT_EQ(losses[0].size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(losses[0][i], losses[1][i]) << "iteration " << i;
  EXPECT_NE(losses[0][0], losses[0][2]);  // the optimizer changed the model
}

TEST(RunTraining, TinyMemoryCapEndsWithOom) {
  model::GPT gpt = tiny_model();
  TrainOptions options = tiny_options();
  options.cpu_memory_cap_bytes = parameter_bytes(gpt) + (1 << 20);  // the model plus 1 MiB
  const TrainResult result = run_training(gpt, kCpu, options, nullptr, nullptr);
  EXPECT_EQ(result.status, RunStatus::oom);
  EXPECT_STREQ(to_string(result.status), "oom");
  EXPECT_NE(result.message.find("CPU memory cap exceeded"), std::string::npos) << result.message;
  EXPECT_TRUE(result.iterations.empty());
  EXPECT_GT(result.memory.allocated_bytes, parameter_bytes(gpt));
  for (const auto& p : gpt->parameters()) EXPECT_FALSE(p.grad().defined());  // freed after the OOM
  // The cap went with the run: training now works.
  EXPECT_EQ(run_training(gpt, kCpu, tiny_options(), nullptr, nullptr).status, RunStatus::ok);
}

TEST(RunTraining, HugeLearningRateEndsWithNan) {
  model::GPT gpt = tiny_model();
  TrainOptions options = tiny_options();
  options.max_iters = 10;
  options.warmup_iters = 1;
  options.adamw.lr = 1e30;
  int64_t callbacks = 0;
  const TrainResult result =
      run_training(gpt, kCpu, options, [&](const IterationRecord&) { ++callbacks; }, nullptr);
  ASSERT_EQ(result.status, RunStatus::nan) << result.message;
  EXPECT_EQ(callbacks, static_cast<int64_t>(result.iterations.size()));  // the NaN one too
  ASSERT_FALSE(result.iterations.empty());
  EXPECT_LT(result.iterations.size(), 10u);  // stopped at once
  EXPECT_FALSE(std::isfinite(result.iterations.back().loss));
  for (std::size_t i = 0; i + 1 < result.iterations.size(); ++i) {
    EXPECT_TRUE(std::isfinite(result.iterations[i].loss));
  }
}

TEST(RunTraining, StopFlagEndsAfterTheCurrentIteration) {
  model::GPT gpt = tiny_model();
  TrainOptions options = tiny_options();
  options.max_iters = 6;
  std::atomic<bool> stop{false};
  const TrainResult result = run_training(
      gpt, kCpu, options, [&](const IterationRecord& record) { if (record.index == 2) stop = true; }, &stop);
  EXPECT_EQ(result.status, RunStatus::interrupted);
  EXPECT_EQ(result.iterations.size(), 3u);
  EXPECT_EQ(result.measured_iters, 1);
  EXPECT_EQ(result.optimizer_steps, 3);
}

TEST(RunTraining, CallbackExceptionEndsWithError) {
  model::GPT gpt = tiny_model();
  const TrainResult result = run_training(
      gpt, kCpu, tiny_options(), [](const IterationRecord&) { throw std::runtime_error("display broke"); }, nullptr);
  EXPECT_EQ(result.status, RunStatus::error);
  EXPECT_EQ(result.message, "display broke");
  EXPECT_EQ(result.iterations.size(), 1u);
}

TEST(RunTraining, Bf16ModesTrain) {
  for (model::TrainPrecision mode : {model::TrainPrecision::bf16_true, model::TrainPrecision::bf16_mixed}) {
    model::GPT gpt = tiny_model();
    TrainOptions options = tiny_options();
    options.dtype = mode;
    options.max_iters = 2;
    options.warmup_iters = 1;
    const TrainResult result = run_training(gpt, kCpu, options, nullptr, nullptr);
    ASSERT_EQ(result.status, RunStatus::ok) << to_string(mode) << ": " << result.message;
    EXPECT_NEAR(result.iterations[0].loss, std::log(static_cast<double>(gpt->config().vocab())), 1.0);
    EXPECT_EQ(gpt->parameters().front().scalar_type(), param_dtype(mode)) << to_string(mode);
  }
}

TEST(RunTraining, TrainsOnATokenFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tokbench_train_loop_" + std::to_string(::getpid()) + ".bin");
  {
    std::ofstream out(path, std::ios::binary);
    for (uint32_t i = 0; i < 1000; ++i) {
      const uint32_t id = (i * 7919u) % 50000u;
      out.write(reinterpret_cast<const char*>(&id), 4);  // little-endian host assumed by the test
    }
  }
  model::GPT gpt = tiny_model();
  TrainOptions options = tiny_options();
  options.data.token_file = path;
  options.data.token_bytes = 4;
  const TrainResult result = run_training(gpt, kCpu, options, nullptr, nullptr);
  EXPECT_EQ(result.status, RunStatus::ok) << result.message;
  std::filesystem::remove(path);
}

// ---- per-unit timings (unit_timing_pass.hpp) ----------------------------------------------

// Three blocks of pythia-14m, B = 2, T = 32, GA 2: 2 iterations in the window, then the pass.
constexpr int64_t kUnitLayers = 3;

model::GPT unit_timing_model(bool checkpoint_activations = false) {
  model::GPT gpt(model::with_overrides(model::config_by_name("pythia-14m"), {.n_layer = kUnitLayers, .seq_len = 32}),
                 torch::TensorOptions().dtype(torch::kFloat).device(kCpu));
  gpt->reset_parameters(1337);
  gpt->set_activation_checkpointing(checkpoint_activations);
  return gpt;
}

int64_t parameter_count(const model::GPT& gpt) {
  int64_t n = 0;
  for (const auto& p : gpt->parameters()) n += p.numel();
  return n;
}

TrainResult run_with_unit_timing(model::GPT gpt, int64_t unit_timing_iters) {
  TrainOptions options = tiny_options();
  options.grad_accum = 2;
  TokenBatcher data(batch_options_for(options, gpt->config().vocab()), kCpu);
  auto step = make_eager_step(gpt, kCpu, EagerStepOptions{});
  LoopOptions loop;
  loop.grad_accum = options.grad_accum;
  loop.max_iters = options.max_iters;
  loop.warmup_iters = options.warmup_iters;
  loop.unit_timing_iters = unit_timing_iters;
  return run_timed_loop(*step, data, kCpu, loop, nullptr, nullptr);
}

TEST(UnitTimings, EagerStepTimesEveryUnitInOrder) {
  for (const bool checkpointing : {false, true}) {
    const std::string what = checkpointing ? "eager, checkpointed" : "eager";
    model::GPT gpt = unit_timing_model(checkpointing);
    const TrainResult result = run_with_unit_timing(gpt, 2);
    ASSERT_EQ(result.status, RunStatus::ok) << result.message;
    ASSERT_TRUE(result.unit_timings.has_value()) << result.unit_timing_message;
    EXPECT_EQ(result.unit_timing_message, "");
    const UnitTimings& t = *result.unit_timings;
    testing::expect_unit_structure(t, kUnitLayers, 2, 2, parameter_count(gpt), what);
    testing::expect_units_account_for_the_iteration(t, what);
    EXPECT_EQ(t.exposed_comm_seconds, 0) << what;  // one process
    // The embedding is wte alone; the head is the final norm and lm_head (litgpt ties nothing).
    const auto& c = gpt->config();
    EXPECT_EQ(t.units.front().parameters, c.vocab() * c.n_embd) << what;
    EXPECT_EQ(t.units.back().parameters, c.vocab() * c.n_embd + 2 * c.n_embd) << what;
    // The pass trained (two more optimizer steps) but is not in the run's own records.
    EXPECT_EQ(result.iterations.size(), 4u) << what;
    EXPECT_EQ(result.optimizer_steps, 4) << what;
  }
}

// A step that stands in for another, as the CUDA graph step does (cuda_graph_step.hpp), and
// counts the micro-batches it is handed: the passes after the window go to its eager() step.
class StandIn final : public TrainStep {
 public:
  explicit StandIn(std::unique_ptr<TrainStep> inner) : inner_(std::move(inner)) {}
  at::Tensor forward_backward(const TokenBatch& batch, int64_t micro, int64_t grad_accum) override {
    ++micro_batches;
    return inner_->forward_backward(batch, micro, grad_accum);
  }
  at::Tensor optimizer_step(const at::Tensor& loss) override { return inner_->optimizer_step(loss); }
  int64_t resident_state_bytes() const override { return inner_->resident_state_bytes(); }
  int64_t optimizer_state_bytes() const override { return inner_->optimizer_state_bytes(); }
  int64_t optimizer_state_step() const override { return inner_->optimizer_state_step(); }
  int64_t optimizer_steps_taken() const override { return inner_->optimizer_steps_taken(); }
  bool fused_adamw() const override { return inner_->fused_adamw(); }
  void release_after_failure() override { inner_->release_after_failure(); }
  std::vector<at::Tensor> full_parameters() override { return inner_->full_parameters(); }
  MemoryBreakdown memory_parts() const override { return inner_->memory_parts(); }
  void set_forward_end_callback(std::function<void()> callback) override {
    inner_->set_forward_end_callback(std::move(callback));
  }
  model::GPT model() const override { return inner_->model(); }
  TrainStep& eager() override { return *inner_; }
  std::string graph_fallback() const override { return "fell back"; }
  int64_t micro_batches = 0;

 private:
  std::unique_ptr<TrainStep> inner_;
};

TEST(UnitTimings, PassesAfterTheWindowRunTheEagerStep) {
  model::GPT gpt = unit_timing_model();
  TrainOptions options = tiny_options();
  TokenBatcher data(batch_options_for(options, gpt->config().vocab()), kCpu);
  StandIn step(make_eager_step(gpt, kCpu, EagerStepOptions{}));
  LoopOptions loop;
  loop.max_iters = options.max_iters;
  loop.warmup_iters = options.warmup_iters;
  loop.unit_timing_iters = 1;
  const TrainResult result = run_timed_loop(step, data, kCpu, loop, nullptr, nullptr);
  ASSERT_EQ(result.status, RunStatus::ok) << result.message;
  EXPECT_EQ(step.micro_batches, options.max_iters);  // GA 1: the window's iterations, not the pass's
  ASSERT_TRUE(result.unit_timings.has_value()) << result.unit_timing_message;
  EXPECT_EQ(result.graph_fallback, "fell back");  // the step's word reaches the result
}

TEST(UnitTimings, ZeroIterationsMeansNone) {
  const TrainResult result = run_with_unit_timing(unit_timing_model(), 0);
  ASSERT_EQ(result.status, RunStatus::ok) << result.message;
  EXPECT_FALSE(result.unit_timings.has_value());
  EXPECT_EQ(result.unit_timing_message, "");
}

// The pass runs after the window and after the loop has read its peaks: a run from the same
// seed reports the same losses, memory peaks and breakdown with and without it.
TEST(UnitTimings, PassLeavesTheRunsFiguresUnchanged) {
  const TrainResult without = run_with_unit_timing(unit_timing_model(), 0);
  const TrainResult with = run_with_unit_timing(unit_timing_model(), 2);
  ASSERT_EQ(without.status, RunStatus::ok) << without.message;
  ASSERT_EQ(with.status, RunStatus::ok) << with.message;
  ASSERT_TRUE(with.unit_timings.has_value()) << with.unit_timing_message;
  EXPECT_EQ(with.memory.allocated_bytes, without.memory.allocated_bytes);
  EXPECT_EQ(with.memory.reserved_bytes, without.memory.reserved_bytes);
  EXPECT_EQ(with.memory_breakdown.activations, without.memory_breakdown.activations);
  EXPECT_EQ(with.memory_breakdown.gradients, without.memory_breakdown.gradients);
  EXPECT_EQ(with.memory_breakdown.optimizer_state, without.memory_breakdown.optimizer_state);
  EXPECT_EQ(with.measured_iters, without.measured_iters);
  EXPECT_EQ(with.optimizer_steps, without.optimizer_steps);
  ASSERT_EQ(with.iterations.size(), without.iterations.size());
  for (std::size_t i = 0; i < with.iterations.size(); ++i)
    EXPECT_DOUBLE_EQ(with.iterations[i].loss, without.iterations[i].loss) << "iteration " << i;
}

// ---- the reference probe (reference_gemm.hpp) ----------------------------------------------

TEST(ReferenceProbe, WithinTheWindowAtMostSixteenProductsAndNoneAfterTheLast) {
  EXPECT_EQ(within_window_stride(0), 0);
  EXPECT_EQ(within_window_stride(1), 0);  // a window of one: the after-side follows it
  for (const int64_t measured : {2, 7, 17, 18, 45, 1000}) {
    const int64_t stride = within_window_stride(measured);
    ASSERT_GT(stride, 0) << measured;
    int64_t products = 0;
    for (int64_t k = 0; k + 1 < measured; ++k) products += k % stride == 0 ? 1 : 0;
    EXPECT_LE(products, kMaxWithinWindowProbes) << measured;
    // As many as fit: one stride less would have put more than 16 in the window.
    if (stride > 1) {
      EXPECT_GT((measured - 2) / (stride - 1) + 1, kMaxWithinWindowProbes) << measured;
    }
  }
  EXPECT_EQ(within_window_stride(17), 1);  // 16 gaps, one product in each
}

TrainResult run_with_reference_probe(int64_t probe_repeats) {
  model::GPT gpt = unit_timing_model();
  TrainOptions options = tiny_options();
  options.max_iters = 9;  // 7 measured: a product after each of the first 6
  TokenBatcher data(batch_options_for(options, gpt->config().vocab()), kCpu);
  auto step = make_eager_step(gpt, kCpu, EagerStepOptions{});
  LoopOptions loop;
  loop.max_iters = options.max_iters;
  loop.warmup_iters = options.warmup_iters;
  loop.reference_probe_repeats = probe_repeats;
  return run_timed_loop(*step, data, kCpu, loop, nullptr, nullptr);
}

// The products between the window's iterations are in none of the run's figures: not in the
// iteration that follows one (a product is 10-20 ms, an iteration's time outside its step here
// well under a millisecond), not in the memory peaks, not in the losses.
TEST(ReferenceProbe, ProductsInsideTheWindowAreOutsideItsFigures) {
  const TrainResult without = run_with_reference_probe(0);
  const TrainResult with = run_with_reference_probe(kReferenceProbeRepeats);
  ASSERT_EQ(without.status, RunStatus::ok) << without.message;
  ASSERT_EQ(with.status, RunStatus::ok) << with.message;
  EXPECT_FALSE(without.reference_probe.has_value());
  ASSERT_TRUE(with.reference_probe.has_value());
  const ReferenceProbeTimes& probe = *with.reference_probe;
  EXPECT_EQ(probe.before_seconds.size(), 4u);
  EXPECT_EQ(probe.after_seconds.size(), 4u);
  ASSERT_EQ(probe.within_seconds.size(), 6u);
  const double within = std::accumulate(probe.within_seconds.begin(), probe.within_seconds.end(), 0.0);
  double overhead = 0, iterations = 0;
  for (const IterationRecord& r : with.iterations)
    if (!r.warmup) {
      overhead += r.overhead_seconds;
      iterations += r.seconds;
    }
  // Each product ran twice (one untimed): charged to the iterations, their overhead would be at
  // least twice `within`.
  EXPECT_LT(overhead, 0.5 * within) << "overhead " << overhead << " s beside products of " << within << " s";
  EXPECT_NEAR(with.measured_window_seconds, iterations, 1e-6);
  EXPECT_EQ(with.memory.allocated_bytes, without.memory.allocated_bytes);
  EXPECT_EQ(with.memory.reserved_bytes, without.memory.reserved_bytes);
  ASSERT_EQ(with.iterations.size(), without.iterations.size());
  for (std::size_t i = 0; i < with.iterations.size(); ++i)
    EXPECT_DOUBLE_EQ(with.iterations[i].loss, without.iterations[i].loss) << "iteration " << i;
}

// The pass wraps the hooks a step installed (FSDP's gathers) instead of replacing them: they
// see every call while it runs, and are the model's hooks again afterwards.
TEST(UnitTimings, PassWrapsTheStepsForwardHooks) {
  struct Counting final : model::GPTImpl::ForwardHooks {
    int roots = 0, embeddings = 0, block_starts = 0, block_ends = 0, root_ends = 0;
    void before_root() override { ++roots; }
    torch::Tensor after_embedding(torch::Tensor x) override {
      ++embeddings;
      return x;
    }
    void before_block(int64_t) override { ++block_starts; }
    torch::Tensor after_block(int64_t, torch::Tensor out) override {
      ++block_ends;
      return out;
    }
    torch::Tensor after_root(torch::Tensor logits) override {
      ++root_ends;
      return logits;
    }
  };
  model::GPT gpt = unit_timing_model();
  auto counting = std::make_shared<Counting>();
  gpt->set_forward_hooks(counting);
  TrainOptions options = tiny_options();
  TokenBatcher data(batch_options_for(options, gpt->config().vocab()), kCpu);
  auto step = make_eager_step(gpt, kCpu, EagerStepOptions{});
  const auto timings = measure_unit_timings(*step, data, kCpu, /*grad_accum=*/2, /*iterations=*/3, {});
  ASSERT_TRUE(timings.has_value());
  testing::expect_unit_structure(*timings, kUnitLayers, 2, 3, parameter_count(gpt), "wrapped hooks");
  const int micro_batches = 2 * 3;
  EXPECT_EQ(counting->roots, micro_batches);
  EXPECT_EQ(counting->embeddings, micro_batches);
  EXPECT_EQ(counting->block_starts, kUnitLayers * micro_batches);
  EXPECT_EQ(counting->block_ends, kUnitLayers * micro_batches);
  EXPECT_EQ(counting->root_ends, micro_batches);
  EXPECT_EQ(gpt->forward_hooks(), counting);
  // A stop request at an iteration start ends the pass without timings.
  EXPECT_FALSE(measure_unit_timings(*step, data, kCpu, 1, 2, [] { return true; }).has_value());
  EXPECT_EQ(gpt->forward_hooks(), counting);
}

// A step that hands everything to a real one and sleeps in the optimizer step of one iteration:
// what a neighbour holding the core for a moment does to a pass.
class OneSlowOptimizerStep final : public TrainStep {
 public:
  OneSlowOptimizerStep(TrainStep& inner, int slow_call, std::chrono::milliseconds delay)
      : inner_(inner), slow_call_(slow_call), delay_(delay) {}
  at::Tensor forward_backward(const TokenBatch& b, int64_t micro, int64_t ga) override {
    return inner_.forward_backward(b, micro, ga);
  }
  at::Tensor optimizer_step(const at::Tensor& loss) override {
    if (calls_++ == slow_call_) std::this_thread::sleep_for(delay_);
    return inner_.optimizer_step(loss);
  }
  int64_t resident_state_bytes() const override { return inner_.resident_state_bytes(); }
  int64_t optimizer_state_bytes() const override { return inner_.optimizer_state_bytes(); }
  int64_t optimizer_state_step() const override { return inner_.optimizer_state_step(); }
  int64_t optimizer_steps_taken() const override { return inner_.optimizer_steps_taken(); }
  bool fused_adamw() const override { return inner_.fused_adamw(); }
  void release_after_failure() override { inner_.release_after_failure(); }
  std::vector<at::Tensor> full_parameters() override { return inner_.full_parameters(); }
  MemoryBreakdown memory_parts() const override { return inner_.memory_parts(); }
  void set_forward_end_callback(std::function<void()> callback) override {
    inner_.set_forward_end_callback(std::move(callback));
  }
  model::GPT model() const override { return inner_.model(); }

 private:
  TrainStep& inner_;
  int slow_call_;
  std::chrono::milliseconds delay_;
  int calls_ = 0;
};

// The pass reports each figure's median over its iterations: one iteration of five whose
// optimizer step a neighbour held for 3 s moves neither the optimizer's time nor the
// iteration's. The bound holds for a median however loaded the machine (CI runs two tests at
// once): at least three of the five iterations last the median or longer, at most one of them
// is the disturbed one, so the other four sum to twice the median at least, and they fit in
// the pass less the delay; likewise the optimizer's steps inside them. A mean breaks it: it
// holds at least a fifth of the pass (the optimizer's, delay / 5), over the bound whenever the
// pass is under 5 s (4.2 s), that is, whenever an undisturbed iteration takes under 0.5 s.
TEST(UnitTimings, OneDisturbedIterationOfFiveMovesNothing) {
  constexpr double kDelaySeconds = 3.0;
  constexpr int kIterations = 5;
  model::GPT gpt = unit_timing_model();
  TrainOptions options = tiny_options();
  TokenBatcher data(batch_options_for(options, gpt->config().vocab()), kCpu);
  auto real = make_eager_step(gpt, kCpu, EagerStepOptions{});
  OneSlowOptimizerStep step(*real, /*slow_call=*/1, std::chrono::milliseconds(static_cast<int>(kDelaySeconds * 1000)));
  const auto pass_start = std::chrono::steady_clock::now();
  const auto timings = measure_unit_timings(step, data, kCpu, /*grad_accum=*/1, kIterations, {});
  const double pass_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - pass_start).count();
  ASSERT_TRUE(timings.has_value());
  testing::expect_unit_structure(*timings, kUnitLayers, 1, kIterations, parameter_count(gpt), "one slow optimizer step");
  const double bound = (pass_seconds - kDelaySeconds) / 2;
  EXPECT_LE(timings->iteration_seconds, bound) << "pass " << pass_seconds << " s";
  EXPECT_LE(timings->optimizer_seconds, bound) << "pass " << pass_seconds << " s";
  double units_optimizer = 0;
  for (const auto& u : timings->units) units_optimizer += u.optimizer_seconds;
  EXPECT_NEAR(units_optimizer, timings->optimizer_seconds, 1e-9 + 1e-9 * timings->optimizer_seconds);
}

// The host clock is exact on the CPU because autograd runs a CPU graph's backward, and the
// tensor hooks the pass registers, on the thread that called backward: a mark taken in a hook
// falls between the kernels before and after it.
TEST(UnitTimings, CpuBackwardRunsTensorHooksOnTheCallingThread) {
  auto x = torch::randn({8, 8}).requires_grad_(true);
  auto y = torch::tanh(x.mm(x));
  std::thread::id hook_thread;
  y.register_hook([&](const torch::Tensor& grad) {
    hook_thread = std::this_thread::get_id();
    return grad;
  });
  y.sum().backward();
  EXPECT_EQ(hook_thread, std::this_thread::get_id());
}

TEST(ValidateOptions, NamesTheOptionAndTheValidRange) {
  const model::Config config = tiny_config();
  auto message_for = [&](const TrainOptions& options) -> std::string {
    try {
      validate_options(options, config, kCpu);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  TrainOptions options = tiny_options();
  EXPECT_EQ(message_for(options), "");
  options.seq_len = 64;
  EXPECT_EQ(message_for(options).rfind("seq_len:", 0), 0u) << message_for(options);
  EXPECT_NE(message_for(options).find("1..32"), std::string::npos) << message_for(options);
  options = tiny_options();
  options.warmup_iters = 4;
  EXPECT_EQ(message_for(options).rfind("warmup_iters:", 0), 0u) << message_for(options);
  options = tiny_options();
  options.data.token_file = "/nonexistent/tokens.bin";
  EXPECT_EQ(message_for(options).rfind("token_file:", 0), 0u) << message_for(options);
  options = tiny_options();
  options.micro_batch = 0;
  EXPECT_EQ(message_for(options).rfind("micro_batch:", 0), 0u) << message_for(options);
  // The train layer speaks of its fields; the bench layer names the options.
  model::GPT gpt = tiny_model();
  options.micro_batch = 0;
  EXPECT_THROW(run_training(gpt, kCpu, options, nullptr, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace tokbench::train
