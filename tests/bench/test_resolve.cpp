// Validation: every usage error is one line naming the option and what is valid, and the
// derived fields (GA, dtype, FLOPs, peak) follow the contract. Runs against a pretend
// machine so results do not depend on the host.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bench/resolve.hpp"
#include "model/catalog.hpp"
#include "model/memory_estimate.hpp"

namespace tokbench::bench {
namespace {

MachineInfo cpu_machine() {
  MachineInfo m;
  m.cuda_status = "no CUDA driver";
  m.mem_total_bytes = 16'000'000'000;
  m.mem_available_bytes = 16'000'000'000;
  m.cpu_model = "Test CPU";
  return m;
}

BenchOptions small() {
  BenchOptions o;
  o.model_name = "pythia-14m";
  o.seq_len = 32;
  o.micro_batch_size = 2;
  o.max_iters = 6;
  o.warmup_iters = 2;
  return o;
}

// Expects a usage error whose single line contains each of `needles`.
void expect_usage(const BenchOptions& o, std::initializer_list<std::string> needles,
                  const MachineInfo& m = cpu_machine()) {
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
  BenchOptions o = small();
  o.global_batch_size = 4;
  RunPlan p = resolve_run(o, cpu_machine());
  EXPECT_EQ(p.grad_accum, 2);
  EXPECT_EQ(p.global_batch, 4);
  EXPECT_EQ(p.seq_len, 32);
  EXPECT_EQ(p.device_kind, DeviceKind::cpu);
  EXPECT_EQ(p.dtype, model::TrainPrecision::fp32);  // auto on CPU
  EXPECT_FALSE(p.tf32);
  EXPECT_GT(p.flops_per_microbatch, 0);
  EXPECT_GT(p.param_count, 14'000'000);
}

TEST(Resolve, SeqLenDefaultsToBlockSize) {
  BenchOptions o = small();
  o.seq_len.reset();
  EXPECT_EQ(resolve_run(o, cpu_machine()).seq_len, model::config_by_name("pythia-14m").block_size);
}

TEST(Resolve, PeakTflopsOverrides) {
  BenchOptions o = small();
  o.peak_tflops = 1.5;
  RunPlan p = resolve_run(o, cpu_machine());
  ASSERT_TRUE(p.peak);
  EXPECT_DOUBLE_EQ(p.peak->flops_per_s, 1.5e12);
  EXPECT_EQ(p.peak->source, "--peak-tflops");
}

TEST(Resolve, UnknownModelNamesClosest) {
  BenchOptions o = small();
  o.model_name = "pythia-14";
  expect_usage(o, {"--model-name", "pythia-14", "pythia-14m"});
}

TEST(Resolve, GlobalBatchNotAMultiple) {
  BenchOptions o = small();
  o.global_batch_size = 5;
  expect_usage(o, {"--global-batch-size", "5", "micro batch 2", "valid"});
}

TEST(Resolve, WarmupNotFewerThanMaxIters) {
  BenchOptions o = small();
  o.warmup_iters = 6;
  expect_usage(o, {"--warmup-iters", "6", "--max-iters"});
}

TEST(Resolve, NonPositiveSizes) {
  BenchOptions o = small();
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

TEST(Resolve, ChoicesAreChecked) {
  BenchOptions o = small();
  o.dtype = "fp16";
  expect_usage(o, {"--dtype", "fp16", "bf16-true"});
  o = small();
  o.compile = "inductor";
  expect_usage(o, {"--compile", "inductor", "eager"});
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
  o.bucketing_mode = "size";
  expect_usage(o, {"--bucketing-mode", "size", "layer"});
}

TEST(Resolve, CudaWithoutGpu) {
  BenchOptions o = small();
  o.device = "cuda";
  expect_usage(o, {"--device", "cuda", "no usable CUDA device", "cpu"});
}

TEST(Resolve, Bf16OnOldGpu) {
  MachineInfo m = cpu_machine();
  m.cuda_status = "ok";
  m.cuda_devices.push_back({0, "Tesla V100-SXM2-16GB", 16'000'000'000, 7, 0, 80});
  BenchOptions o = small();
  o.device = "cuda:0";
  o.dtype = "bf16-true";
  expect_usage(o, {"--dtype", "bf16-true", "V100", "fp32"}, m);
  o.device = "cuda:1";
  expect_usage(o, {"--device", "cuda:1", "cuda:0"}, m);
}

TEST(Resolve, DistributedModesNeedMoreThanOneRank) {
  BenchOptions o = small();
  o.distributed_mode = "fsdp";
  expect_usage(o, {"--distributed-mode", "fsdp", "more than one rank", "--nproc-per-node", "none"});
}

TEST(Resolve, ManyRanksNeedADistributedMode) {
  BenchOptions o = small();
  o.nproc_per_node = 2;
  expect_usage(o, {"--distributed-mode", "none", "2 ranks", "ddp, fsdp"});
}

TEST(Resolve, LauncherAndShardingOptionsAreChecked) {
  BenchOptions o = small();
  o.distributed_mode = "fsdp";
  o.nproc_per_node = 4;
  o.sharding_size = 3;
  expect_usage(o, {"--sharding-size", "3", "divisor of 4"});
  o.sharding_size.reset();
  o.shard_mode = "hybrid_zero3";
  expect_usage(o, {"--shard-mode", "hybrid_zero3", "--sharding-size"});
  o.shard_mode = "zero3";
  o.bucketing_mode = "layer";
  expect_usage(o, {"--bucketing-mode", "layer", "zero3", "none, block"});
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

TEST(Resolve, DistributedPlanIsTyped) {
  BenchOptions o = small();
  o.distributed_mode = "fsdp";
  o.shard_mode = "hybrid_zero3";
  o.sharding_size = 2;
  o.bucketing_mode = "block";
  o.nproc_per_node = 4;
  const RunPlan plan = resolve_run(o, cpu_machine());
  EXPECT_EQ(plan.world_size, 4);
  EXPECT_EQ(plan.dist.mode, dist::DistMode::fsdp);
  EXPECT_EQ(plan.dist.shard_mode, dist::ShardMode::zero3);
  EXPECT_EQ(plan.dist.units, dist::UnitPolicy::per_block);
  EXPECT_EQ(plan.dist.shard_group_size, 2);
  EXPECT_EQ(dist::distributed_mode_label(plan.dist), "fsdp_hybrid_zero3_block_bucketing");
  EXPECT_EQ(plan.global_batch, 8);  // B x W by default
}

TEST(Resolve, UnwritableJsonPathCreatesNothing) {
  BenchOptions o = small();
  o.json_path = "/nonexistent-dir-tokbench/x.json";
  expect_usage(o, {"--json-path", "/nonexistent-dir-tokbench/x.json", "does not exist"});
  EXPECT_FALSE(std::filesystem::exists("/nonexistent-dir-tokbench"));
  o.json_path = std::filesystem::temp_directory_path().string();
  expect_usage(o, {"--json-path", "directory"});
}

TEST(Resolve, ModelTooBigForMemory) {
  BenchOptions o = small();
  o.model_name = "Llama-2-70b-hf";
  o.seq_len = 4096;
  expect_usage(o, {"--model-name", "Llama-2-70b-hf", "GB", "--n-layers"});
}

TEST(Resolve, DataFileChecks) {
  BenchOptions o = small();
  o.data = "/nonexistent/tokens.bin";
  expect_usage(o, {"--data", "/nonexistent/tokens.bin", "random"});
  const auto file = std::filesystem::temp_directory_path() / "tokbench_test_tokens.bin";
  { std::ofstream(file, std::ios::binary).write("abc", 3); }
  o.data = file.string();
  expect_usage(o, {"--data", "uint16"});
  std::filesystem::remove(file);
}

TEST(Resolve, MemoryEstimateGrowsWithBatch) {
  BenchOptions o = small();
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

}  // namespace
}  // namespace tokbench::bench
