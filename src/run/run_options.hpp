// The options of `tokbench run`, one struct whose member initialisers are the defaults that
// --help prints. Every option has a kebab-case name and the reference benchmark's snake_case
// twin (docs/reference-benchmark.md, "Options"), so a reference command line runs unchanged.
// Values here are raw user input; resolve.hpp turns them into a validated RunPlan.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "parallel/strategy.hpp"

namespace tokbench::run {

struct RunOptions {
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
  // Recompute each transformer block's forward in backward instead of keeping its activations
  // (model/gpt_checkpoint.hpp; the reference's --checkpoint_activations).
  bool checkpoint_activations = false;
  int num_threads = 0;          // 0: LibTorch's default
  // Attention kernels in the reference's --use_sdpa priority (cuDNN, flash, efficient, math).
  bool use_sdpa = false;
  // fp8 training, the reference's recipes (resolve.cpp, resolve_low_precision): TransformerEngine's
  // (none | fp8-default-te | fp8-default-te-wo_layernorm) or torchao's float8 linears.
  std::string low_precision_mode = "none";
  bool use_torchao_fp8_linear = false;
  bool use_torchao_fp8_allgather = false;
  bool use_torchao_fp8_precompute_scale_for_fsdp = false;
  // CPU tensor memory: caching (blocks kept across iterations in a jemalloc arena,
  // train/caching_cpu_allocator.hpp) | system (LibTorch's own CPU allocator, freed at once).
  // Empty: the executor's own (RunPlan::cpu_allocator).
  std::string cpu_allocator;
  // Distribution (src/distributed)
  std::string distributed_mode = "none";
  std::string shard_mode = "zero2";
  std::optional<int64_t> sharding_size;
  std::string bucketing_mode = "none";
  // --bucketing-mode size: PyTorch FSDP's size_based_auto_wrap_policy min_num_params, as the
  // reference takes it (a float, "1e6"); resolve.cpp requires a positive whole count.
  std::optional<double> fsdp_bucket_params;
  double ddp_bucket_size_mb = parallel::kDefaultDdpBucketMb;
  bool ddp_overlap = true;
  bool skip_data_sync = true;        // as the reference's later versions ...
  bool skip_data_sync_given = false;  // ... unless not given with tokbench's FSDP (resolve.cpp)
  double dist_timeout_s = 1800;    // torch.distributed's default for Gloo/NCCL
  std::string dist_backend = "auto";  // auto (NCCL on CUDA, Gloo on the CPU) | gloo | nccl
  // Launcher: when nproc_per_node is set, this process starts the node's ranks itself.
  std::optional<int64_t> nproc_per_node;
  int64_t nnodes = 1;
  int64_t node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int64_t master_port = 0;
  // The reference's switches, accepted for its command lines.
  bool nsys_enabled = false;
  bool dynamic = false;  // train/sequence_lengths.hpp
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
  // Chrome trace of profile_iters iterations run after the measured window (train/profile_trace.hpp).
  std::string profile_path;
  std::optional<int64_t> profile_iters;  // unset: 3 with --profile
  // The reference's --dump_memory_snapshot: the loop's allocation history in PyTorch's format.
  bool dump_memory_snapshot = false;
  bool dump_thunder_traces = false;  // the reference's: thunder's last traces, printed
  // The reference declares these and reads nothing of them (fp8_shard_intermediate_activation)
  // or trains Hugging Face's models instead of litgpt's (use_hf): resolve.cpp answers both.
  bool fp8_shard_intermediate_activation = false;
  // The reference's nsys window (iterations); nothing without --nsys-enabled, which is refused.
  int64_t profiler_start = 15;
  int64_t profiler_stop = 15;
  bool use_hf = false;
  // Iterations of the per-unit timing pass after the measured window (train/unit_timing_pass.hpp):
  // the record's unit_timings. Unset: 2 for tokbench's executors, 0 (none) for the Python ones.
  std::optional<int64_t> unit_timing_iters;
  // Iterations of the time account's profiled pass after the unit timings
  // (train/time_account_pass.hpp): the record's time_account. Unset: 2 where the account is
  // available (on the CPU: tokbench's executors on one rank or many, the Python executors on one
  // rank, which profile their own pass), else 0 (resolve_time_account.hpp).
  std::optional<int64_t> time_account_iters;
  // Testing aid: cap the CPU counting allocator (MB, 10^6 bytes) to drive the OOM path.
  std::optional<int64_t> cpu_memory_cap_mb;
  std::optional<int64_t> cpu_memory_cap_rank;  // the cap applies to this rank only (multi-rank tests)
};

// Upper bounds on values that are absurd for a benchmark: past them a run would not end in
// any useful time, would allocate its own size before failing, or its counts would stop
// being exact. resolve.cpp refuses them (exit 2) with one line; docs/run.md, "Bounds".
namespace limits {
// Every iteration's time and loss are kept and written to the JSON (~60 bytes each).
inline constexpr int64_t kMaxIters = 1'000'000;
// Micro-batches per device per iteration (GA = G / (B·W)); a stop request is honoured
// between micro-batches, but an iteration of more than this is not a benchmark.
inline constexpr int64_t kMaxGradAccum = 1'000'000;
// --n-layers: the deepest litgpt config has 126 layers; per-layer lists are built from it.
inline constexpr int64_t kMaxLayers = 100'000;
inline constexpr int kMaxThreads = 1024;  // --num-threads
inline constexpr int64_t kMaxLogEvery = kMaxIters;
// Per device; the fastest datasheet peak is a few thousand TFLOP/s.
inline constexpr double kMaxPeakTflops = 1e6;
// max_iters·G·T: token counts are turned into doubles for the rates, exact up to 2^53.
inline constexpr int64_t kMaxTokensPerRun = int64_t{1} << 53;
inline constexpr int64_t kMaxRanksPerNode = 4096;  // --nproc-per-node
inline constexpr int64_t kMaxNodes = 4096;         // --nnodes
// --profile-iters: a trace of every operator grows by megabytes per iteration.
inline constexpr int64_t kMaxProfileIters = 100;
// --unit-timing-iters: each is a full iteration run after the window, on top of the run's.
inline constexpr int64_t kMaxUnitTimingIters = 100;
// --time-account-iters: each is a full iteration under the profiler, whose events are kept in memory.
inline constexpr int64_t kMaxTimeAccountIters = 100;
}  // namespace limits

// Parse-time checks of numeric values. CLI11 alone would turn "1e30" into INT64_MAX (strtoll
// saturates), read "010" as octal, "-1" as 2^64-1 for an unsigned option and "" as 0; these
// accept only a plain decimal integer that fits T (rewritten to canonical decimal before
// CLI11 converts it) or, for real numbers, a finite one. A refusal reads
// "--option: 'VALUE' is not valid; valid: <valid>" (one line; exit 2). Attach them with
// Option::transform: Option::check would make them non-modifying, and CLI11 would then
// convert the original text ("010" as 8).
template <typename T>
CLI::Validator whole_number(const std::string& valid);  // T: int, int64_t or uint64_t
CLI::Validator finite_number(const std::string& valid);

// Registers every option on `app`, bound to `options` (whose current values are the defaults
// shown by --help).
void add_bench_options(CLI::App& app, RunOptions& options);

// The options as given, keyed by their snake_case names (unset optionals are null): the JSON
// record's "config" block and the "options" the Python step reads. It sits beside the
// registration so that an option is declared, registered and echoed in one place; an option
// that needs no resolution (a switch such as --use-sdpa) is read from here by the Python step
// and from RunPlan::options by tokbench's, with nothing copied in between.
nlohmann::ordered_json options_json(const RunOptions& options);

}  // namespace tokbench::run
