// The options of `tokbench run`, one struct whose member initialisers are the defaults that
// --help prints. Every option has a kebab-case name and the reference benchmark's snake_case
// twin (thunder_bench.md §1.2), so a reference command line runs unchanged. Values here are
// raw user input; resolve.hpp turns them into a validated RunPlan.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace tokbench::bench {

struct BenchOptions {
  // Model
  std::string model_name = "pythia-14m";  // small, so the default run fits in minutes on a CPU
  std::string model_config;               // TOML/JSON file of litgpt fields; wins over model_name
  std::optional<int64_t> n_layers;
  std::optional<int64_t> seq_len;         // unset: the model's block_size (as the reference)
  // Batch and iterations
  int64_t micro_batch_size = 1;
  std::optional<int64_t> global_batch_size;  // unset: micro_batch_size × world size
  int64_t max_iters = 45;
  int64_t warmup_iters = 25;
  // Device and numerics
  std::string device = "auto";  // auto | cpu | cuda | cuda:N
  std::string dtype = "auto";   // auto | fp32 | bf16-true | bf16-mixed
  bool tf32 = true;             // the reference sets allow_tf32=True
  std::string compile = "eager";
  int num_threads = 0;          // 0: LibTorch's default
  // Distribution (src/dist)
  std::string distributed_mode = "none";
  std::string shard_mode = "zero2";
  std::optional<int64_t> sharding_size;
  std::string bucketing_mode = "none";
  double ddp_bucket_size_mb = 25;  // PyTorch DDP's bucket_cap_mb default
  bool ddp_overlap = true;
  bool skip_data_sync = true;      // as the reference's later versions
  double dist_timeout_s = 1800;    // torch.distributed's default for Gloo/NCCL
  // Launcher: when nproc_per_node is set, this process starts the node's ranks itself.
  std::optional<int64_t> nproc_per_node;
  int64_t nnodes = 1;
  int64_t node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int64_t master_port = 0;
  // The reference's switches, accepted for its command lines.
  bool nsys_enabled = false;
  bool dynamic = false;
  // Training
  uint64_t seed = 1337;
  double lr = 5e-4;
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  std::string zero_grad = "none";  // none (set_to_none, the reference's) | inplace
  std::string data = "random";
  std::string data_dtype = "uint16";
  // Metrics and output
  std::optional<double> peak_tflops;
  std::string flops_convention = "matmul";
  std::string json_path;
  bool return_metrics_as_json = false;
  int64_t log_every = 0;  // 0: a live line on a terminal, every iteration otherwise
  bool quiet = false;
  // Testing aid: cap the CPU counting allocator (MB, 10^6 bytes) to drive the OOM path.
  std::optional<int64_t> cpu_memory_cap_mb;
  std::optional<int64_t> cpu_memory_cap_rank;  // the cap applies to this rank only (multi-rank tests)
};

// Registers every option on `app`, bound to `options` (whose current values are the defaults
// shown by --help).
void add_bench_options(CLI::App& app, BenchOptions& options);

}  // namespace tokbench::bench
