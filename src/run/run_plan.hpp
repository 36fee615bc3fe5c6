// A validated run: what `tokbench run` trains and how, every field checked and derived by
// resolve.hpp before any work. The executors (run_benchmark, python_executor), the report and
// the JSON read it; nothing below resolve reads the raw options for a decision.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "distributed/dist_settings.hpp"
#include "model/config.hpp"
#include "model/counting.hpp"
#include "run/compiler_choice.hpp"
#include "run/cuda_graph_choice.hpp"
#include "run/run_options.hpp"
#include "train/train_options.hpp"
#include "tokbench/throughput.hpp"

namespace tokbench::run {

enum class DeviceKind { cpu, cuda };

// The per-device peak used for MFU and where it came from.
struct PeakChoice {
  double flops_per_s = 0;
  std::string chip;       // what the peak describes
  std::string source;     // table entry, CPU measurement (env --calibrate), CPU estimate or --peak-tflops
  bool estimate = false;  // true for the CPU estimate
};

// One run's configuration, parsed once (run_options.hpp), validated and derived once
// (resolve.hpp) and passed down by reference. It is made of the lower layers' own records: the
// loop's options (train::TrainOptions: B, T, GA, iterations, seed, dtype, AdamW, data) and the
// distributed settings (world, rank, strategy), so a figure such as the sequence length has
// one home here, `train.seq_len`, which the loop, the metrics, the report and the JSON all read.
struct RunPlan {
  RunOptions options;  // as given, for the config echo and the JSON "config" block
  // Options the run ignores where the reference only warns (resolve.cpp): rank 0 prints each
  // on stderr as one line, and the JSON keeps them (config.warnings).
  std::vector<std::string> warnings;
  model::Config config;  // finalized, overrides applied
  std::string model_label;
  train::TrainOptions train;              // what the timed loop runs
  distributed::DistributedSettings dist;  // typed: nothing below resolve reads the raw strings
  DeviceKind device_kind = DeviceKind::cpu;
  int device_index = 0;
  std::string device_string;  // "cpu", "cuda:0"
  std::string device_name;    // CPU model or GPU name
  // caching | system: what serves CPU tensors (--cpu-allocator, or the executor's default:
  // caching for tokbench's, system for the Python executors, whose torch has its own).
  std::string cpu_allocator;
  CompilerChoice compiler;  // --compile: the name as given and the executor it picks
  CudaGraphChoice cuda_graphs;  // --cuda-graphs: whether the step is captured, and why not
  bool tf32 = false;          // effective: CUDA and fp32 only
  Precision precision = Precision::fp32;
  model::FlopConvention convention = model::FlopConvention::matmul;
  int64_t flops_per_microbatch = 0;  // forward + backward, one device: model FLOPs (MFU's)
  // What the device executes: the model FLOPs plus, with activation checkpointing, every
  // block's forward again (model::count_recompute_flops): HFU's.
  int64_t hardware_flops_per_microbatch = 0;
  bool checkpoint_activations = false;
  int64_t param_count = 0;           // whole model
  std::optional<PeakChoice> peak;    // nullopt: MFU is N/A
  std::filesystem::path json_path;   // empty: no file
  bool json_to_stdout = false;
  std::filesystem::path profile_path;  // empty: no --profile; with several ranks this rank's file
  // With several ranks: after the lead's line on its trace, where every rank's went ("" else).
  std::string profile_ranks_note;
  int64_t profile_iters = 0;
  std::filesystem::path memory_snapshot_path;  // empty: no --dump-memory-snapshot
  int64_t unit_timing_iters = 0;     // the per-unit timing pass; 0: none (unit_timings null)
  int64_t time_account_iters = 0;    // the time account's profiled pass; 0: none (time_account null)
  // Test hook (resolve_time_account.hpp): seconds the host sleeps at every iteration's start.
  double test_host_delay_seconds = 0;
  // Test hook (resolve.hpp, TOKBENCH_TEST_SAME_START): a Python executor starts from tokbench's
  // initial weights and synthetic tokens.
  bool test_same_start = false;
  int64_t memory_estimate_bytes = 0;  // model::estimate_training_memory(...).total_bytes()
  int64_t memory_capacity_bytes = 0;  // device memory; on the CPU the host's (MemAvailable or cgroup)
  int64_t token_buffer_bytes = 0;     // host token buffers (x, y as int64; GA of them on CUDA)

  int64_t world_size() const { return dist.env.world_size; }
  // G = B * GA * W sequences per iteration (resolve checks that it fits in int64).
  int64_t global_batch() const { return train.micro_batch * train.grad_accum * dist.env.world_size; }
};

}  // namespace tokbench::run
