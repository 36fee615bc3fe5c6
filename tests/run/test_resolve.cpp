// Validation: every usage error is one line naming the option and what is valid, and the
// derived fields (GA, dtype, FLOPs, peak) follow the contract. Runs against a pretend
// machine so results do not depend on the host.
#include <gtest/gtest.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include "run/run_options.hpp"
#include "machine/machine_info.hpp"
#include "run/resolve_time_account.hpp"
#include "run/resolve.hpp"
#include "run/run_plan_json.hpp"
#include "model/catalog.hpp"
#include "model/memory_estimate.hpp"
#include "test_machines.hpp"

namespace tokbench::run {
namespace {

using testing::cpu_machine;
using testing::gpu_machine;

RunOptions small() {
  RunOptions o;
  o.model_name = "pythia-14m";
  o.seq_len = 32;
  o.micro_batch_size = 2;
  o.max_iters = 6;
  o.warmup_iters = 2;
  return o;
}

// Expects a usage error whose single line contains each of `needles`.
void expect_usage(const RunOptions& o, std::initializer_list<std::string> needles,
                  const machine::MachineInfo& m = cpu_machine()) {
  try {
    resolve_run(o, m);
    FAIL() << "no usage error";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    for (const auto& needle : needles) EXPECT_NE(what.find(needle), std::string::npos) << what << " lacks " << needle;
  }
}

TEST(Resolve, SmallCpuRun) {
  RunOptions o = small();
  o.global_batch_size = 4;
  RunPlan p = resolve_run(o, cpu_machine());
  EXPECT_EQ(p.train.grad_accum, 2);
  EXPECT_EQ(p.global_batch(), 4);
  EXPECT_EQ(p.train.seq_len, 32);
  EXPECT_EQ(p.device_kind, DeviceKind::cpu);
  EXPECT_EQ(p.train.dtype, model::TrainPrecision::fp32);  // auto on CPU
  EXPECT_FALSE(p.tf32);
  EXPECT_GT(p.flops_per_microbatch, 0);
  EXPECT_GT(p.param_count, 14'000'000);
}

// --data-seed seeds the tokens alone; unset, the run's --seed seeds them as it always has.
TEST(Resolve, DataSeedDefaultsToTheRunsSeed) {
  RunOptions o = small();
  o.seed = 11;
  RunPlan p = resolve_run(o, cpu_machine());
  EXPECT_EQ(p.train.seed, 11u);
  EXPECT_EQ(p.train.data.data_seed, 11u);
  o.data_seed = 12;
  p = resolve_run(o, cpu_machine());
  EXPECT_EQ(p.train.seed, 11u);
  EXPECT_EQ(p.train.data.data_seed, 12u);
}

// --adam-eps reaches AdamW on both sides: tokbench's optimizer reads the plan's AdamW options,
// the Python step the run plan's options.adam_eps; unset, torch.optim.AdamW's default.
TEST(Resolve, AdamEpsReachesBothOptimizers) {
  RunOptions o = small();
  RunPlan p = resolve_run(o, cpu_machine());
  EXPECT_EQ(p.train.adamw.eps, 1e-8);
  o.eps = 1e-6;
  p = resolve_run(o, cpu_machine());
  EXPECT_EQ(p.train.adamw.eps, 1e-6);
  EXPECT_EQ(to_json(p)["options"]["adam_eps"].get<double>(), 1e-6);
  EXPECT_EQ(p.options.eps, 1e-6);
}

// The run plan gives the Python step every option as given once, in `options` (by its record key),
// holding what tokbench's own step was given; its other sections keep only what resolution decided.
TEST(Resolve, PlanCarriesTheOptionsOnceAndTheResolvedRest) {
  RunOptions o = small();
  o.compile = "python-eager";
  o.seed = 7;
  o.lr = 1e-3;
  o.weight_decay = 0;
  o.beta1 = 0.8;
  o.beta2 = 0.9;
  o.zero_grad = "inplace";
  o.num_threads = 2;
  o.dynamic = true;
  o.dist_timeout_s = 100;
  const RunPlan p = resolve_run(o, cpu_machine());
  const auto plan = to_json(p);
  const auto& given = plan["options"];
  EXPECT_EQ(given["seed"].get<uint64_t>(), p.train.seed);
  EXPECT_EQ(given["lr"].get<double>(), p.train.adamw.lr);
  EXPECT_EQ(given["weight_decay"].get<double>(), p.train.adamw.weight_decay);
  EXPECT_EQ(given["beta1"].get<double>(), p.train.adamw.beta1);
  EXPECT_EQ(given["beta2"].get<double>(), p.train.adamw.beta2);
  EXPECT_EQ(given["adam_eps"].get<double>(), p.train.adamw.eps);
  EXPECT_EQ(given["zero_grad"].get<std::string>(), train::to_string(p.train.zero_grad));
  EXPECT_EQ(given["num_threads"].get<int>(), p.train.num_threads);
  EXPECT_EQ(given["dynamic"].get<bool>(), p.train.data.dynamic_lengths);
  EXPECT_EQ(given["data_seed"].get<uint64_t>(), *p.train.data.data_seed);
  EXPECT_EQ(given["distributed_mode"].get<std::string>(), distributed::to_string(p.dist.mode));
  EXPECT_EQ(given["dist_timeout_s"].get<double>(), p.dist.timeout_seconds);
  for (const char* gone : {"seed", "adamw", "zero_grad", "num_threads", "data", "cpu_memory_cap_bytes"})
    EXPECT_FALSE(plan["train"].contains(gone)) << gone;
  for (const char* gone : {"mode", "timeout_seconds", "ddp_overlap"}) EXPECT_FALSE(plan["dist"].contains(gone)) << gone;
  EXPECT_FALSE(plan["compiler"].contains("compiler"));
  EXPECT_EQ(plan["train"]["grad_accum"], p.train.grad_accum);
  EXPECT_EQ(plan["dist"]["ddp_bucket_bytes"], p.dist.ddp_bucket_bytes);
}

TEST(Resolve, SeqLenDefaultsToBlockSize) {
  RunOptions o = small();
  o.seq_len.reset();
  EXPECT_EQ(resolve_run(o, cpu_machine()).train.seq_len, model::config_by_name("pythia-14m").block_size);
}

TEST(Resolve, PeakTflopsOverrides) {
  RunOptions o = small();
  o.peak_tflops = 1.5;
  RunPlan p = resolve_run(o, cpu_machine());
  ASSERT_TRUE(p.peak);
  EXPECT_DOUBLE_EQ(p.peak->flops_per_s, 1.5e12);
  EXPECT_EQ(p.peak->source, "--peak-tflops");
}

TEST(Resolve, UnknownModelNamesClosest) {
  RunOptions o = small();
  o.model_name = "pythia-14";
  expect_usage(o, {"--model-name", "pythia-14", "pythia-14m"});
}

TEST(Resolve, GlobalBatchNotAMultiple) {
  RunOptions o = small();
  o.global_batch_size = 5;
  expect_usage(o, {"--global-batch-size", "5", "micro batch 2", "valid"});
}

TEST(Resolve, WarmupNotFewerThanMaxIters) {
  RunOptions o = small();
  o.warmup_iters = 6;
  expect_usage(o, {"--warmup-iters", "6", "--max-iters"});
}

TEST(Resolve, NonPositiveSizes) {
  RunOptions o = small();
  o.micro_batch_size = 0;
  expect_usage(o, {"--micro-batch-size", "0", "positive"});
  o = small();
  o.seq_len = -3;
  expect_usage(o, {"--seq-len", "-3"});
  o = small();
  o.n_layers = 0;
  expect_usage(o, {"--n-layers", "0"});
  o = small();
  o.max_iters = 0;
  o.warmup_iters = 0;
  expect_usage(o, {"--max-iters", "0"});
}

// The Python executors resolve as any run; what their step does not implement is refused.
TEST(Resolve, PythonExecutorsRefuseWhatTheStepLacks) {
  for (const char* executor : {"python-eager", "python-inductor", "python-thunder"}) {
    RunOptions o = small();
    o.compile = executor;
    EXPECT_EQ(resolve_run(o, cpu_machine()).options.compile, executor);
    // Many ranks run (through torch.distributed or thunder's transforms); DDP always overlaps.
    o.nproc_per_node = 2;
    o.distributed_mode = "ddp";
    EXPECT_EQ(resolve_run(o, cpu_machine()).dist.mode, distributed::DistMode::ddp);
    o.ddp_overlap = false;
    expect_usage(o, {"--executor", executor, "--no-ddp-overlap"});
    o = small();
    o.compile = executor;
    o.cpu_memory_cap_mb = 100;
    expect_usage(o, {"--executor", executor, "--cpu-memory-cap-mb"});
    // Python's torch allocates CPU memory itself: the default records system, caching is refused.
    o = small();
    o.compile = executor;
    EXPECT_EQ(resolve_run(o, cpu_machine()).cpu_allocator, "system");
    o.cpu_allocator = "caching";
    expect_usage(o, {"--executor", executor, "--cpu-allocator caching", "--cpu-allocator system"});
  }
  RunOptions o = small();
  EXPECT_EQ(resolve_run(o, cpu_machine()).cpu_allocator, "caching");  // tokbench's executors' default
}

// The reference's names resolve to the executors it would run, keep their spelling, and follow
// those executors' rules: thunder as torch.compile's backend runs inside fully_shard, thunder.jit
// does not; thunder's CUDA-only executors are refused on the CPU before any work.
TEST(Resolve, ReferenceCompilerNames) {
  RunOptions o = small();
  o.compile = "inductor";
  RunPlan plan = resolve_run(o, cpu_machine());
  EXPECT_EQ(plan.compiler.executor, Executor::python_inductor);
  EXPECT_EQ(plan.compiler.compiler, "inductor");
  EXPECT_EQ(plan.cpu_allocator, "system");
  EXPECT_EQ(plan.unit_timing_iters, 0);
  o.compile = "thunder_inductor";
  plan = resolve_run(o, cpu_machine());
  EXPECT_EQ(plan.compiler.executor, Executor::python_thunder);
  EXPECT_EQ(plan.compiler.thunder_executors, std::vector<std::string>{"torch_compile"});
  o.compile = "thunder_cudnn";
  expect_usage(o, {"--compile 'thunder_cudnn'", "cudnn", "CUDA only", "valid here:"});
  o.compile = "thunder_transformerengine";
  expect_usage(o, {"--compile 'thunder_transformerengine'", "transformer_engine", "CUDA only"});
  o = small();
  o.nproc_per_node = 2;
  o.distributed_mode = "fsdp2";
  o.compile = "thunder_dynamo";
  EXPECT_EQ(resolve_run(o, cpu_machine()).dist.mode, distributed::DistMode::fsdp2);
  o.compile = "thunder";
  expect_usage(o, {"--executor", "thunder", "fsdp2", "dynamo"});
  o.compile = "inductor";
  o.distributed_mode = "fsdp";
  EXPECT_TRUE(resolve_run(o, cpu_machine()).dist.skip_sync_until_last_micro);  // PyTorch FSDP's no_sync
}

// --unit-timing-iters: 2 by default, 0 turns the pass off, bounded like --profile-iters; the
// Python executors have no per-unit hooks, so they default to 0 and refuse an explicit N > 0.
TEST(Resolve, UnitTimingIterations) {
  RunOptions o = small();
  EXPECT_EQ(resolve_run(o, cpu_machine()).unit_timing_iters, 2);
  o.unit_timing_iters = 0;
  EXPECT_EQ(resolve_run(o, cpu_machine()).unit_timing_iters, 0);
  o.unit_timing_iters = limits::kMaxUnitTimingIters;
  EXPECT_EQ(resolve_run(o, cpu_machine()).unit_timing_iters, limits::kMaxUnitTimingIters);
  o.unit_timing_iters = limits::kMaxUnitTimingIters + 1;
  expect_usage(o, {"--unit-timing-iters", std::to_string(limits::kMaxUnitTimingIters + 1), "0.." + std::to_string(limits::kMaxUnitTimingIters)});
  o.unit_timing_iters = -1;
  expect_usage(o, {"--unit-timing-iters -1", "valid: 0.."});
  o = small();
  o.compile = "python-eager";
  EXPECT_EQ(resolve_run(o, cpu_machine()).unit_timing_iters, 0);
  o.unit_timing_iters = 0;
  EXPECT_EQ(resolve_run(o, cpu_machine()).unit_timing_iters, 0);
  o.unit_timing_iters = 2;
  expect_usage(o, {"--executor python-eager", "--unit-timing-iters 2", "--unit-timing-iters 0"});
}

// fsdp2 (PyTorch's fully_shard) is the Python executors' but thunder's; thunder shards over the
// whole world only; tokbench's FSDP refuses an explicit --skip-data-sync and runs without it.
TEST(Resolve, ShardingChoicesFollowTheExecutor) {
  RunOptions o = small();
  o.nproc_per_node = 4;
  o.distributed_mode = "fsdp2";
  expect_usage(o, {"--distributed-mode fsdp2", "python-eager", "'eager'", "--distributed-mode fsdp"});
  o.compile = "python-eager";
  o.sharding_size = 2;
  const RunPlan plan = resolve_run(o, cpu_machine());
  EXPECT_EQ(plan.dist.mode, distributed::DistMode::fsdp2);
  EXPECT_EQ(distributed::distributed_mode_label(plan.dist), "fsdp2_hybrid_zero2_none_bucketing");
  o.compile = "python-thunder";
  expect_usage(o, {"--executor", "python-thunder", "fsdp2"});
  o.distributed_mode = "fsdp";
  expect_usage(o, {"--executor", "python-thunder", "hybrid"});
  o.sharding_size.reset();
  EXPECT_TRUE(resolve_run(o, cpu_machine()).dist.skip_sync_until_last_micro);  // thunder's own no-sync
  o.compile = "eager";
  EXPECT_FALSE(resolve_run(o, cpu_machine()).dist.skip_sync_until_last_micro);
  o.skip_data_sync_given = true;  // --skip-data-sync, said
  expect_usage(o, {"--skip-data-sync", "fsdp", "--no-skip-data-sync"});
  o.skip_data_sync = false;  // --no-skip-data-sync
  EXPECT_FALSE(resolve_run(o, cpu_machine()).dist.skip_sync_until_last_micro);
  o = small();
  o.nproc_per_node = 2;
  o.distributed_mode = "ddp";
  EXPECT_TRUE(resolve_run(o, cpu_machine()).dist.skip_sync_until_last_micro);  // DDP: the reference's default
  EXPECT_EQ(resolve_run(o, cpu_machine()).dist.backend, distributed::CommBackend::gloo);
  o.dist_backend = "nccl";
  expect_usage(o, {"--dist-backend nccl", "CUDA", "auto, gloo"});
  o.dist_backend = "mpi";
  expect_usage(o, {"--dist-backend", "mpi", "gloo"});
}

TEST(Resolve, ChoicesAreChecked) {
  RunOptions o = small();
  o.dtype = "fp16";
  expect_usage(o, {"--dtype", "fp16", "bf16-true"});
  o = small();
  o.compile = "torchscript";
  expect_usage(o, {"--compile", "torchscript", "eager", "inductor", "thunder_inductor"});
  o = small();
  o.device = "tpu";
  expect_usage(o, {"--device", "tpu", "cuda:N"});
  o = small();
  o.flops_convention = "exact";
  expect_usage(o, {"--flops-convention", "exact", "matmul"});
  o = small();
  o.shard_mode = "zero4";
  expect_usage(o, {"--shard-mode", "zero4", "zero3"});
  o = small();
  o.bucketing_mode = "sized";
  expect_usage(o, {"--bucketing-mode", "sized", "layer, size"});
}

// --bucketing-mode size (the reference's): PyTorch's default threshold, or --fsdp-bucket-params
// as a whole count written as a float; refused with thunder (the reference asserts it), with
// tokbench's ZeRO-3 (gathers per block) and for a count that is not positive and whole; where
// the reference only warns (fsdp2 ignores size; a threshold without size) the run goes on with
// one warning, and fsdp2's label names the blocks it wraps.
TEST(Resolve, SizeBucketing) {
  RunOptions o = small();
  o.nproc_per_node = 2;
  o.distributed_mode = "fsdp";
  o.bucketing_mode = "size";
  RunPlan plan = resolve_run(o, cpu_machine());
  EXPECT_EQ(plan.dist.units, distributed::UnitPolicy::by_size);
  EXPECT_EQ(plan.dist.min_unit_params, 100'000'000);
  EXPECT_TRUE(plan.warnings.empty());
  EXPECT_EQ(distributed::distributed_mode_label(plan.dist), "fsdp_zero2_size_bucketing");
  o.fsdp_bucket_params = 1e6;
  EXPECT_EQ(resolve_run(o, cpu_machine()).dist.min_unit_params, 1'000'000);
  for (const double bad : {0.0, -5.0, 2.5, 1e300}) {
    o.fsdp_bucket_params = bad;
    expect_usage(o, {"--fsdp-bucket-params", "positive whole number"});
  }
  o.fsdp_bucket_params = 1e6;
  o.shard_mode = "zero3";  // tokbench's ZeRO-3 gathers each block's units, whatever cut them
  EXPECT_EQ(resolve_run(o, cpu_machine()).dist.units, distributed::UnitPolicy::by_size);
  EXPECT_EQ(distributed::distributed_mode_label(resolve_run(o, cpu_machine()).dist), "fsdp_zero3_size_bucketing");
  o.compile = "python-eager";  // PyTorch's FSDP cuts size units under FULL_SHARD too
  EXPECT_EQ(resolve_run(o, cpu_machine()).dist.units, distributed::UnitPolicy::by_size);
  o.shard_mode = "zero2";
  o.compile = "thunder";
  expect_usage(o, {"--bucketing-mode size", "'thunder'", "none, block, layer"});
  o.compile = "thunder_dynamo";
  expect_usage(o, {"--bucketing-mode size", "'thunder_dynamo'"});
  o.compile = "python-eager";
  o.distributed_mode = "fsdp2";
  plan = resolve_run(o, cpu_machine());
  EXPECT_EQ(plan.dist.units, distributed::UnitPolicy::per_block);
  EXPECT_EQ(distributed::distributed_mode_label(plan.dist), "fsdp2_zero2_block_bucketing");
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_NE(plan.warnings[0].find("ignored by --distributed-mode fsdp2"), std::string::npos) << plan.warnings[0];
  o.distributed_mode = "fsdp";
  o.bucketing_mode = "block";
  plan = resolve_run(o, cpu_machine());
  EXPECT_EQ(plan.dist.units, distributed::UnitPolicy::per_block);
  EXPECT_EQ(plan.dist.min_unit_params, 0);
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_NE(plan.warnings[0].find("--fsdp-bucket-params 1000000 is ignored"), std::string::npos) << plan.warnings[0];
}

// --executor fused becomes a typed plan; it runs on one device or many ranks, without
// autocast.
TEST(Resolve, FusedExecutor) {
  RunOptions o = small();
  EXPECT_EQ(resolve_run(o, cpu_machine()).compiler.executor, Executor::eager);
  o.compile = "fused";
  EXPECT_EQ(resolve_run(o, cpu_machine()).compiler.executor, Executor::fused);
  o.dtype = "bf16-mixed";
  expect_usage(o, {"--executor fused", "bf16-mixed", "fp32, bf16-true"});
  o = small();
  o.compile = "fused";
  o.distributed_mode = "ddp";
  o.nproc_per_node = 2;
  EXPECT_EQ(resolve_run(o, cpu_machine()).compiler.executor, Executor::fused);
  o.distributed_mode = "fsdp";
  o.shard_mode = "zero3";
  EXPECT_EQ(resolve_run(o, cpu_machine()).compiler.executor, Executor::fused);
  o.dtype = "bf16-mixed";  // refused on many ranks too
  expect_usage(o, {"--executor fused", "bf16-mixed", "fp32, bf16-true"});
}

// The time account is on by default on the CPU, on many ranks too: tokbench's executors (DDP,
// FSDP, hybrid) and the Python executors (DDP, FSDP, fsdp2), whose waits the profiler's events
// show (dist_cli_time_account_usage runs fsdp2 with --time-account-iters 2).
TEST(Resolve, TimeAccountOnManyRanks) {
  RunOptions o = small();
  o.nproc_per_node = 2;
  o.distributed_mode = "ddp";
  EXPECT_EQ(resolve_run(o, cpu_machine()).time_account_iters, 2);
  o.compile = "fused";
  o.distributed_mode = "fsdp";
  o.shard_mode = "zero3";
  EXPECT_EQ(resolve_run(o, cpu_machine()).time_account_iters, 2);
  o.nproc_per_node = 4;
  o.sharding_size = 2;
  EXPECT_EQ(resolve_run(o, cpu_machine()).time_account_iters, 2);
  o.time_account_iters = 0;
  EXPECT_EQ(resolve_run(o, cpu_machine()).time_account_iters, 0);
  o = small();
  o.nproc_per_node = 2;
  o.compile = "python-eager";
  for (const char* mode : {"ddp", "fsdp", "fsdp2"}) {
    o.distributed_mode = mode;
    EXPECT_EQ(resolve_run(o, cpu_machine()).time_account_iters, 2) << mode;
  }
  o.time_account_iters = 2;
  EXPECT_EQ(resolve_run(o, cpu_machine()).time_account_iters, 2);
}

// A --model-config file's model reaches the Python step as litgpt's fields, as tokbench read
// them (overrides applied); a catalog model goes by name alone.
TEST(Resolve, PythonExecutorsTakeAModelConfigFile) {
  const auto path = std::filesystem::temp_directory_path() / ("tokbench_test_resolve_moe_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream f(path);
    f << R"({"name": "tiny-moe", "block_size": 64, "vocab_size": 100, "padded_vocab_size": 128, "n_layer": 2,
             "n_head": 4, "n_embd": 64, "n_query_groups": 2, "bias": false, "norm_class_name": "RMSNorm",
             "mlp_class_name": "LLaMAMoE", "intermediate_size": 192, "moe_intermediate_size": 32,
             "n_expert": 8, "n_expert_per_token": 2})";
  }
  RunOptions o = small();
  o.compile = "python-eager";
  o.model_config = path.string();
  o.n_layers = 1;
  const auto model = to_json(resolve_run(o, cpu_machine()))["model"];
  std::filesystem::remove(path);
  ASSERT_TRUE(model["config"].is_object()) << model.dump();
  EXPECT_EQ(model["name"], "tiny-moe");
  EXPECT_EQ(model["config"]["mlp_class_name"], "LLaMAMoE");
  EXPECT_EQ(model["config"]["n_expert"], 8);
  EXPECT_EQ(model["config"]["moe_intermediate_size"], 32);
  EXPECT_EQ(model["config"]["n_layer"], 1);  // --n-layers applied
  o = small();
  o.compile = "python-eager";
  EXPECT_TRUE(to_json(resolve_run(o, cpu_machine()))["model"]["config"].is_null());
}

// TOKBENCH_TEST_SAME_START: 1 or 0 (unset: 0), for any executor; anything else is one line.
TEST(Resolve, TestSameStart) {
  RunOptions o = small();
  o.compile = "python-eager";
  auto same = [&](const char* value) {
    ::setenv(kTestSameStartEnv, value, 1);
    const bool on = resolve_run(o, cpu_machine()).test_same_start;
    ::unsetenv(kTestSameStartEnv);
    return on;
  };
  EXPECT_FALSE(resolve_run(o, cpu_machine()).test_same_start);
  EXPECT_TRUE(same("1"));
  EXPECT_FALSE(same("0"));
  EXPECT_TRUE(to_json([&] {
                ::setenv(kTestSameStartEnv, "1", 1);
                RunPlan plan = resolve_run(o, cpu_machine());
                ::unsetenv(kTestSameStartEnv);
                return plan;
              }())["test_same_start"]
                  .get<bool>());
  for (const char* bad : {"yes", "2", " 1"}) {
    ::setenv(kTestSameStartEnv, bad, 1);
    expect_usage(o, {kTestSameStartEnv, std::string("'") + bad + "'", "valid: 1", "or 0"});
    ::unsetenv(kTestSameStartEnv);
  }
}

// TOKBENCH_TEST_HOST_DELAY_MS: every rank, or one rank with @RANK (a straggler); anything else,
// or a rank outside the job, is one line naming the valid forms.
TEST(Resolve, TestHostDelayForOneRank) {
  RunOptions o = small();
  o.nproc_per_node = 2;
  o.distributed_mode = "ddp";
  auto delay = [&](const char* value) {
    ::setenv(kTestHostDelayEnv, value, 1);
    const double seconds = resolve_run(o, cpu_machine()).test_host_delay_seconds;
    ::unsetenv(kTestHostDelayEnv);
    return seconds;
  };
  EXPECT_DOUBLE_EQ(delay("150"), 0.15);
  EXPECT_DOUBLE_EQ(delay("150@0"), 0.15);  // this process is rank 0 of the job
  EXPECT_EQ(delay("150@1"), 0.0);          // another rank is the straggler
  for (const char* bad : {"150@2", "150@", "@1", "150@-1", "150@x", "1.5", "70000@0"}) {
    ::setenv(kTestHostDelayEnv, bad, 1);
    expect_usage(o, {kTestHostDelayEnv, std::string("'") + bad + "'", "@RANK", "0..1"});
    ::unsetenv(kTestHostDelayEnv);
  }
}

// On a CUDA device tokbench's executors read the device's timeline (account/device_timeline.hpp)
// and have the account by default; the Python executors' pass reads host events only, so asking
// them for it there is one usage line, and their default is 0.
TEST(Resolve, TimeAccountOnCuda) {
  machine::MachineInfo m = gpu_machine();
  RunOptions o = small();
  o.device = "cuda:0";
  EXPECT_EQ(resolve_run(o, m).time_account_iters, 2);
  o.compile = "fused";
  EXPECT_EQ(resolve_run(o, m).time_account_iters, 2);
  o.compile = "python-eager";  // the child sends the device's events too (python_time_account.hpp)
  EXPECT_EQ(resolve_run(o, m).time_account_iters, 2);
  o.time_account_iters = 0;
  EXPECT_EQ(resolve_run(o, m).time_account_iters, 0);
}

TEST(Resolve, CudaWithoutGpu) {
  RunOptions o = small();
  o.device = "cuda";
  expect_usage(o, {"--device", "cuda", "no usable CUDA device", "cpu"});
}

TEST(Resolve, Bf16OnOldGpu) {
  machine::MachineInfo m = cpu_machine();
  m.cuda_status = "ok";
  m.cuda_devices.push_back({0, "Tesla V100-SXM2-16GB", 16'000'000'000, 7, 0, 80});
  RunOptions o = small();
  o.device = "cuda:0";
  o.dtype = "bf16-true";
  expect_usage(o, {"--dtype", "bf16-true", "V100", "fp32"}, m);
  // fp32 runs there, but not the fused executor: its kernels are built for 8.0 and up.
  o.dtype = "fp32";
  EXPECT_EQ(resolve_run(o, m).train.dtype, model::TrainPrecision::fp32);
  o.compile = "fused";
  expect_usage(o, {"--executor fused", "compute capability 8.0", "V100", "7.0", "--executor eager"}, m);
  o.compile = "eager";
  o.device = "cuda:1";
  expect_usage(o, {"--device", "cuda:1", "cuda:0"}, m);
}

// A rank takes its local rank's GPU. A Slurm task whose GPUs Slurm bound to it
// (SLURM_GPUS_PER_TASK) takes its first, whatever its local rank, and may name it as cuda:0
// under NCCL; without that binding a rank without a GPU is refused, under Slurm too.
TEST(Resolve, RanksTakeTheirLocalRanksGpuOrTheOneSlurmBoundThemTo) {
  machine::MachineInfo m = gpu_machine();
  m.cuda_devices.resize(1);
  m.dist_env.world_size = 4;
  m.dist_env.local_world_size = 4;
  m.dist_env.rank = 3;
  m.dist_env.local_rank = 3;
  RunOptions o = small();
  o.distributed_mode = "ddp";
  o.device = "cuda";
  for (const char* source : {"torchrun", "slurm"}) {
    m.dist_env.source = source;
    expect_usage(o, {"local rank 3 has no GPU", "1 CUDA device(s) visible"}, m);
  }
  o.device = "cuda:0";
  expect_usage(o, {"--device cuda:0", "NCCL refuses"}, m);
  m.dist_env.gpus_bound_per_task = true;
  EXPECT_EQ(resolve_run(o, m).device_string, "cuda:0");
  o.device = "cuda";
  EXPECT_EQ(resolve_run(o, m).device_string, "cuda:0");
  machine::MachineInfo two = m;
  two.dist_env.gpus_bound_per_task = false;
  two.cuda_devices.push_back(m.cuda_devices[0]);
  two.cuda_devices[1].index = 1;
  two.dist_env.local_rank = 1;
  two.dist_env.rank = 1;
  EXPECT_EQ(resolve_run(o, two).device_string, "cuda:1");
}

TEST(Resolve, DistributedModesNeedMoreThanOneRank) {
  RunOptions o = small();
  o.distributed_mode = "fsdp";
  expect_usage(o, {"--distributed-mode", "fsdp", "more than one rank", "--nproc-per-node", "none"});
}

TEST(Resolve, ManyRanksNeedADistributedMode) {
  RunOptions o = small();
  o.nproc_per_node = 2;
  expect_usage(o, {"--distributed-mode", "none", "2 ranks", "ddp, fsdp"});
}

TEST(Resolve, LauncherAndShardingOptionsAreChecked) {
  RunOptions o = small();
  o.distributed_mode = "fsdp";
  o.nproc_per_node = 4;
  o.sharding_size = 3;
  expect_usage(o, {"--sharding-size", "3", "divisor of 4"});
  o.sharding_size.reset();
  o.shard_mode = "hybrid_zero3";
  expect_usage(o, {"--shard-mode", "hybrid_zero3", "--sharding-size"});
  o.shard_mode = "zero3";
  o.bucketing_mode = "layer";
  EXPECT_EQ(resolve_run(o, cpu_machine()).dist.units, distributed::UnitPolicy::per_layer);
  o.bucketing_mode = "block";
  o.node_rank = 1;
  expect_usage(o, {"--node-rank", "1", "0..0"});
  o.node_rank = 0;
  o.nnodes = 2;
  expect_usage(o, {"--master-port", "0", "--nnodes 2"});
  o.nnodes = 1;
  o.dist_timeout_s = 0;
  expect_usage(o, {"--dist-timeout", "0"});
  o.dist_timeout_s = 30;
  o.nsys_enabled = true;
  expect_usage(o, {"--nsys-enabled", "nsys profile"});
}

TEST(Resolve, FieldNamesBecomeOptionNames) {
  EXPECT_EQ(with_option_names("seq_len: invalid value '64'; valid: 1..32"), "--seq-len: invalid value '64'; valid: 1..32");
  EXPECT_EQ(with_option_names("token_file: '/x' is not readable"), "--data: '/x' is not readable");
  EXPECT_EQ(with_option_names("warmup_iters: invalid value '4'; valid: 0..3 (fewer than max_iters)"),
            "--warmup-iters: invalid value '4'; valid: 0..3 (fewer than --max-iters)");
  EXPECT_EQ(with_option_names("something else: seq_len"), "something else: seq_len");
}

TEST(Resolve, DistributedPlanIsTyped) {
  RunOptions o = small();
  o.distributed_mode = "fsdp";
  o.shard_mode = "hybrid_zero3";
  o.sharding_size = 2;
  o.bucketing_mode = "block";
  o.nproc_per_node = 4;
  const RunPlan plan = resolve_run(o, cpu_machine());
  EXPECT_EQ(plan.world_size(), 4);
  EXPECT_EQ(plan.dist.mode, distributed::DistMode::fsdp);
  EXPECT_EQ(plan.dist.shard_mode, distributed::ShardMode::zero3);
  EXPECT_EQ(plan.dist.units, distributed::UnitPolicy::per_block);
  EXPECT_EQ(plan.dist.shard_group_size, 2);
  EXPECT_EQ(distributed::distributed_mode_label(plan.dist), "fsdp_hybrid_zero3_block_bucketing");
  EXPECT_EQ(plan.global_batch(), 8);  // B x W by default
}

TEST(Resolve, UnwritableJsonPathCreatesNothing) {
  RunOptions o = small();
  o.json_path = "/nonexistent-dir-tokbench/x.json";
  expect_usage(o, {"--json-path", "/nonexistent-dir-tokbench/x.json", "does not exist"});
  EXPECT_FALSE(std::filesystem::exists("/nonexistent-dir-tokbench"));
  o.json_path = std::filesystem::temp_directory_path().string();
  expect_usage(o, {"--json-path", "directory"});
}

TEST(Resolve, ModelTooBigForMemory) {
  RunOptions o = small();
  o.model_name = "Llama-2-70b-hf";
  o.seq_len = 4096;
  expect_usage(o, {"--model-name", "Llama-2-70b-hf", "GB", "--n-layers"});
}

TEST(Resolve, DataFileChecks) {
  RunOptions o = small();
  o.data = "/nonexistent/tokens.bin";
  expect_usage(o, {"--data", "/nonexistent/tokens.bin", "random"});
  const auto file = std::filesystem::temp_directory_path() / "tokbench_test_tokens.bin";
  { std::ofstream(file, std::ios::binary).write("abc", 3); }
  o.data = file.string();
  expect_usage(o, {"--data", "uint16"});
  std::filesystem::remove(file);
}

TEST(Resolve, MemoryEstimateGrowsWithBatch) {
  RunOptions o = small();
  o.micro_batch_size = 1;
  const RunPlan one = resolve_run(o, cpu_machine());
  o.micro_batch_size = 8;
  const RunPlan eight = resolve_run(o, cpu_machine());
  EXPECT_LT(one.memory_estimate_bytes, eight.memory_estimate_bytes);
  // fp32 weights, gradients and AdamW's two moments: at least 4 x 4 bytes per parameter.
  EXPECT_GT(one.memory_estimate_bytes, 4 * 4 * one.param_count - 1);
  // The plan carries the model layer's estimate, not a figure of its own.
  EXPECT_EQ(eight.memory_estimate_bytes,
            model::estimate_training_memory(eight.config, 8, 32, model::TrainPrecision::fp32).total_bytes());
}

// --- absurd magnitudes: refused with one line, before any work ---

TEST(Resolve, AbsurdIterationAndBatchCountsAreRefused) {
  RunOptions o = small();
  o.max_iters = limits::kMaxIters + 1;
  expect_usage(o, {"--max-iters", "1000001", "1..1000000"});
  o = small();
  o.micro_batch_size = 1;
  o.global_batch_size = std::numeric_limits<int64_t>::max();  // GA in the quintillions: an iteration never ends
  expect_usage(o, {"--global-batch-size", "9223372036854775807", "GA at most 1000000", "at most 1000000"});
  o = small();
  o.micro_batch_size = int64_t{1} << 62;
  o.distributed_mode = "ddp";
  o.nproc_per_node = 4;
  expect_usage(o, {"--micro-batch-size", "4611686018427387904", "world size 4", "overflows"});
  o = small();
  o.n_layers = int64_t{1} << 31;  // must not build a config with 2^31 per-layer entries
  expect_usage(o, {"--n-layers", "2147483648", "1..100000"});
  o = small();
  o.num_threads = 1 << 30;
  expect_usage(o, {"--num-threads", "1073741824", "0..1024"});
  o = small();
  o.log_every = int64_t{1} << 40;
  expect_usage(o, {"--log-every", "1099511627776", "0..1000000"});
}

TEST(Resolve, AbsurdRealsAreRefused) {
  RunOptions o = small();
  o.peak_tflops = 1e30;
  expect_usage(o, {"--peak-tflops", "1e+30", "(0, 1000000]"});
  o = small();
  o.lr = std::numeric_limits<double>::quiet_NaN();
  expect_usage(o, {"--lr", "nan"});
  o = small();
  o.weight_decay = std::numeric_limits<double>::infinity();
  expect_usage(o, {"--weight-decay", "inf", "finite"});
  o = small();
  o.ddp_bucket_size_mb = 1e30;
  expect_usage(o, {"--ddp-bucket-size", "(0, 1000000]"});
  o = small();
  o.dist_timeout_s = std::numeric_limits<double>::quiet_NaN();
  expect_usage(o, {"--dist-timeout", "604800"});
}

TEST(Resolve, CpuMemoryCapInBytesMustFit) {
  RunOptions o = small();
  o.cpu_memory_cap_mb = std::numeric_limits<int64_t>::max();
  expect_usage(o, {"--cpu-memory-cap-mb", "9223372036854775807", "1..9223372036854"});
  o.cpu_memory_cap_mb = 9223372036854;
  EXPECT_EQ(*resolve_run(o, cpu_machine()).train.cpu_memory_cap_bytes, 9223372036854000000);
}

TEST(Resolve, LauncherValuesAreCheckedEvenWithoutTheLauncher) {
  RunOptions o = small();
  o.master_port = int64_t{1} << 31;
  expect_usage(o, {"--master-port", "2147483648", "1..65535"});
  o = small();
  o.nnodes = -1;
  expect_usage(o, {"--nnodes", "-1", "1..4096"});
  o = small();
  o.node_rank = int64_t{1} << 31;
  expect_usage(o, {"--node-rank", "2147483648", "0..0"});
  o = small();
  o.distributed_mode = "ddp";
  o.nproc_per_node = int64_t{1} << 31;
  expect_usage(o, {"--nproc-per-node", "2147483648", "1..4096"});
}

TEST(Resolve, TokensPerRunStayExact) {
  RunOptions o = small();
  o.seq_len = 2048;
  o.micro_batch_size = 8;
  o.global_batch_size = 8'000'000;  // GA 10^6, the bound
  o.max_iters = 1'000'000;          // 1.6e16 tokens > 2^53
  o.warmup_iters = 0;
  expect_usage(o, {"--max-iters 1000000", "--global-batch-size 8000000", "--seq-len 2048", "2^53"});
}

TEST(Resolve, FlopsPerIterationMustFitInt64) {
  RunOptions o = small();
  o.model_name = "Llama-2-70b-hf";
  o.seq_len = 4096;
  o.micro_batch_size = 1;
  o.global_batch_size = 1'000'000;
  o.max_iters = 1;
  o.warmup_iters = 0;
  expect_usage(o, {"model FLOPs per iteration", "GA 1000000", "overflow int64"});
}

TEST(Resolve, DeviceIndexOutOfIntRange) {
  machine::MachineInfo m = gpu_machine();
  RunOptions o = small();
  o.device = "cuda:99999999999";
  expect_usage(o, {"--device", "cuda:99999999999", "cuda:N"}, m);
}

TEST(Resolve, MemoryFitIsCheckedUnderTheTestingCapToo) {
  RunOptions o = small();
  o.model_name = "Llama-2-70b-hf";
  o.seq_len = 4096;
  o.cpu_memory_cap_mb = 100;
  expect_usage(o, {"Llama-2-70b-hf", "GB", "MemAvailable"});
}

TEST(Resolve, CgroupLimitBindsWhenTighterThanMemAvailable) {
  machine::MachineInfo m = cpu_machine();  // 16 GB MemAvailable
  m.cgroup_limit_bytes = 2'000'000'000;
  m.cgroup_usage_bytes = 1'900'000'000;
  m.cgroup_available_bytes = 100'000'000;
  RunOptions o = small();
  o.micro_batch_size = 8;  // about a third of a GB for pythia-14m at T = 32
  const auto estimate = resolve_run(o, cpu_machine()).memory_estimate_bytes;
  ASSERT_GT(estimate, 100'000'000);
  expect_usage(o, {"--model-name 'pythia-14m'", "available under the cgroup memory limit", "2.00 GB limit",
                   "1.90 GB in use", "0.10 GB"}, m);
  m.cgroup_available_bytes = 20'000'000'000;  // looser than MemAvailable: MemAvailable binds
  EXPECT_EQ(resolve_run(o, m).memory_capacity_bytes, 16'000'000'000);
  m.cgroup_available_bytes = 1'000'000'000;
  EXPECT_EQ(resolve_run(o, m).memory_capacity_bytes, 1'000'000'000);
}

// --- cgroup parsing (machine_info), from files handed in ---

machine::FileReader files(std::map<std::string, std::string> contents) {
  return [contents](const std::string& path) -> std::optional<std::string> {
    auto it = contents.find(path);
    if (it == contents.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ResolveCgroup, ParsesLimitValues) {
  EXPECT_EQ(machine::parse_cgroup_bytes("2147483648\n"), 2147483648);
  EXPECT_EQ(machine::parse_cgroup_bytes("0"), 0);
  EXPECT_FALSE(machine::parse_cgroup_bytes("max\n"));                 // v2: no limit
  EXPECT_FALSE(machine::parse_cgroup_bytes("9223372036854771712\n"));  // v1: no limit
  EXPECT_FALSE(machine::parse_cgroup_bytes(""));
  EXPECT_FALSE(machine::parse_cgroup_bytes("12abc"));
  EXPECT_FALSE(machine::parse_cgroup_bytes("-5"));
}

TEST(ResolveCgroup, V2TakesTheTightestLevel) {
  const std::string proc = "0::/user.slice/user-1000.slice/session-2.scope\n";
  const auto read = files({
      {"/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/memory.max", "max\n"},
      {"/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/memory.current", "1000\n"},
      {"/sys/fs/cgroup/user.slice/user-1000.slice/memory.max", "8000000000\n"},
      {"/sys/fs/cgroup/user.slice/user-1000.slice/memory.current", "3000000000\n"},
      {"/sys/fs/cgroup/user.slice/memory.max", "6000000000\n"},
      {"/sys/fs/cgroup/user.slice/memory.current", "500000000\n"},
  });
  const auto limit = machine::cgroup_memory_limit(proc, read);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->available_bytes, 5'000'000'000);  // 8e9 - 3e9 beats 6e9 - 0.5e9
  EXPECT_EQ(limit->limit_bytes, 8'000'000'000);
  EXPECT_EQ(limit->usage_bytes, 3'000'000'000);
  EXPECT_EQ(limit->limit_file, "/sys/fs/cgroup/user.slice/user-1000.slice/memory.max");
}

TEST(ResolveCgroup, V2InsideAContainerReadsTheRoot) {
  const auto limit = machine::cgroup_memory_limit("0::/\n", files({{"/sys/fs/cgroup/memory.max", "4294967296\n"},
                                                          {"/sys/fs/cgroup/memory.current", "5000000000\n"}}));
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->available_bytes, 0);  // usage above the limit: nothing left, never negative
  EXPECT_EQ(limit->limit_file, "/sys/fs/cgroup/memory.max");
}

TEST(ResolveCgroup, V1MemoryControllerWithTheHostPath) {
  // Docker on cgroup v1: the path is the host's, the container sees its own cgroup at the root.
  const std::string proc = "12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n0::/\n";
  const auto limit = machine::cgroup_memory_limit(
      proc, files({{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "4000000000\n"},
                   {"/sys/fs/cgroup/memory/memory.usage_in_bytes", "1000000000\n"}}));
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->available_bytes, 3'000'000'000);
  EXPECT_EQ(limit->limit_file, "/sys/fs/cgroup/memory/memory.limit_in_bytes");
  // A controller list naming memory among others.
  const auto joint = machine::cgroup_memory_limit(
      "4:cpu,memory:/job\n", files({{"/sys/fs/cgroup/memory/job/memory.limit_in_bytes", "100\n"},
                                    {"/sys/fs/cgroup/memory/job/memory.usage_in_bytes", "40\n"}}));
  ASSERT_TRUE(joint);
  EXPECT_EQ(joint->available_bytes, 60);
}

TEST(ResolveCgroup, NoLimitAnywhere) {
  // Hybrid v1 + v2 with v1's "unlimited" and no v2 memory controller (this kind of host).
  const std::string proc = "4:memory:/process_api/x\n0::/\n";
  EXPECT_FALSE(machine::cgroup_memory_limit(
      proc, files({{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"},
                   {"/sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes", "9223372036854771712\n"},
                   {"/sys/fs/cgroup/memory/process_api/x/memory.usage_in_bytes", "496680960\n"}})));
  EXPECT_FALSE(machine::cgroup_memory_limit("", files({})));
  EXPECT_FALSE(machine::cgroup_memory_limit("garbage without colons\n", files({})));
}

// --- parse-time checks of numeric values (run_options.cpp) ---

std::string parse_error(std::vector<std::string> args) {
  CLI::App app;
  RunOptions options;
  add_bench_options(app, options);
  std::vector<const char*> argv{"run"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

RunOptions parsed(std::vector<std::string> args) {
  CLI::App app;
  RunOptions options;
  add_bench_options(app, options);
  std::vector<const char*> argv{"run"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return options;
}

TEST(ResolveNumericOptions, ValuesCli11WouldMisreadAreRefused) {
  // strtoll would saturate 10^30 at INT64_MAX; "-1" would wrap to 2^64-1 as a seed.
  for (const auto& [args, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--max-iters", "1000000000000000000000000000000"}, "'1000000000000000000000000000000'"},
           {{"--max-iters", "2", "--max-iters", "nan"}, "'nan'"},
           {{"--max-iters", "1e3"}, "'1e3'"},
           {{"--max-iters", ""}, "''"},
           {{"--micro-batch-size", "four"}, "'four'"},
           {{"--seed", "-1"}, "'-1'"},
           {{"--num-threads", "2147483648"}, "'2147483648'"},
           {{"--lr", "nan"}, "'nan'"},
           {{"--lr", "inf"}, "'inf'"},
           {{"--peak-tflops", "1e400"}, "'1e400'"},
           {{"--beta1", "0.9x"}, "'0.9x'"}}) {
    const std::string what = parse_error(args);
    EXPECT_NE(what.find(args[args.size() - 2]), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_NE(what.find("valid: "), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(ResolveNumericOptions, PlainDecimalIsReadAsDecimal) {
  EXPECT_EQ(parsed({"--max-iters", "010"}).max_iters, 10);  // not octal 8
  EXPECT_EQ(parsed({"--n-layers", "+7"}).n_layers, 7);
  EXPECT_EQ(parsed({"--seed", "18446744073709551615"}).seed, UINT64_MAX);
  EXPECT_EQ(parsed({"--global-batch-size", "9223372036854775807"}).global_batch_size, INT64_MAX);
  EXPECT_EQ(parsed({"--warmup-iters", "-1"}).warmup_iters, -1);  // a number: resolve says what is valid
  EXPECT_DOUBLE_EQ(parsed({"--dist-timeout", "1e3"}).dist_timeout_s, 1000);
  EXPECT_NE(parse_error({"--max-iters", "0x10"}).find("'0x10'"), std::string::npos);
}

// fp8 (the reference's --low_precision_mode and --use_torchao_fp8_*): refused on the CPU, on a
// GPU without fp8 tensor cores and with tokbench's own executors, each in one line before any
// work; on an fp8 GPU a Python executor takes it, and MFU is against the fp8 peak.
TEST(Resolve, Fp8NeedsAnFp8GpuAndAPythonExecutor) {
  RunOptions o = small();
  o.use_torchao_fp8_linear = true;
  expect_usage(o, {"--use-torchao-fp8-linear", "compute capability 8.9", "on the CPU"});
  o.use_torchao_fp8_linear = false;
  o.low_precision_mode = "fp8-default-te";
  expect_usage(o, {"--low-precision-mode fp8-default-te", "compute capability 8.9", "on the CPU"});
  o.low_precision_mode = "fp8";
  expect_usage(o, {"--low-precision-mode", "'fp8'", "fp8-default-te-wo_layernorm"});
  o.low_precision_mode = "none";
  o.use_torchao_fp8_allgather = true;
  expect_usage(o, {"--use-torchao-fp8-allgather", "--use-torchao-fp8-linear"});

  machine::MachineInfo gpus = cpu_machine();
  gpus.cuda_status = "ok";
  gpus.cuda_devices.push_back({0, "NVIDIA A100-SXM4-80GB", 80'000'000'000, 8, 0, 108});
  gpus.cuda_devices.push_back({1, "NVIDIA H100 80GB HBM3", 80'000'000'000, 9, 0, 132});
  o = small();
  o.use_torchao_fp8_linear = true;
  o.compile = "python-eager";
  o.device = "cuda:0";
  expect_usage(o, {"--use-torchao-fp8-linear", "A100", "8.0"}, gpus);
  o.device = "cuda:1";
  const RunPlan eager_fp8 = resolve_run(o, gpus);
  EXPECT_EQ(eager_fp8.precision, Precision::fp8);
  // torchao's float8 in eager runs, and says once that the library is meant to be compiled;
  // under inductor, as its users run it, nothing is said.
  ASSERT_EQ(eager_fp8.warnings.size(), 1u);
  EXPECT_NE(eager_fp8.warnings[0].find("meant to be compiled"), std::string::npos);
  o.compile = "inductor";
  const RunPlan compiled_fp8 = resolve_run(o, gpus);
  EXPECT_EQ(compiled_fp8.precision, Precision::fp8);
  EXPECT_TRUE(compiled_fp8.warnings.empty());
  // Its products need the micro-batch's tokens a multiple of 16 (torch._scaled_mm).
  RunOptions odd = o;
  odd.seq_len = 25;
  expect_usage(odd, {"--use-torchao-fp8-linear", "--micro-batch-size 2 x --seq-len 25 = 50", "multiple of 16"}, gpus);
  o.compile = "eager";
  expect_usage(o, {"tokbench's own executor", "python-eager"}, gpus);
  o.compile = "thunder";
  expect_usage(o, {"torchao", "thunder"}, gpus);
  o.use_torchao_fp8_linear = false;
  o.low_precision_mode = "fp8-default-te";
  EXPECT_EQ(resolve_run(o, gpus).compiler.thunder_executors, std::vector<std::string>{"transformer_engine"});
}

}  // namespace
}  // namespace tokbench::run
