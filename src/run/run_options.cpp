// CLI11 registration of RunOptions. Names are "--kebab,--snake" pairs; booleans are flags
// that also take "=True/False" (the reference's jsonargparse spelling). Checks of values
// happen in resolve.cpp, so that every usage error has the same one-line shape.
#include "run/run_options.hpp"

#include <fmt/format.h>

#include <cctype>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

namespace tokbench::run {
namespace {

// The value as it may be echoed on one line: control characters (a newline, say) shown as '?'.
std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (std::iscntrl(static_cast<unsigned char>(c))) c = '?';
  return out;
}

std::string refusal(const std::string& text, const std::string& valid) {
  return fmt::format("'{}' is not valid; valid: {}", printable(text), valid);
}

}  // namespace

template <typename T>
CLI::Validator whole_number(const std::string& valid) {
  static_assert(std::is_integral_v<T>);
  return CLI::Validator(
      [valid](std::string& text) -> std::string {
        const char* first = text.data();
        const char* const last = first + text.size();
        bool negative = false;
        if (first != last && (*first == '+' || *first == '-')) negative = *first++ == '-';
        if (first == last || !std::all_of(first, last, [](char c) { return c >= '0' && c <= '9'; }))
          return refusal(text, valid);
        if (negative && std::is_unsigned_v<T>) return refusal(text, valid);
        // Base 10 always, and out-of-range is an error (strtoll would saturate).
        T value{};
        std::string digits;
        if (negative) digits.push_back('-');
        digits.append(first, last);
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (error != std::errc() || end != digits.data() + digits.size()) return refusal(text, valid);
        text = std::to_string(value);  // what CLI11 converts next: no leading zero (octal), no sign
        return {};
      },
      "", "");
}
template CLI::Validator whole_number<int>(const std::string&);
template CLI::Validator whole_number<int64_t>(const std::string&);
template CLI::Validator whole_number<uint64_t>(const std::string&);

CLI::Validator finite_number(const std::string& valid) {
  return CLI::Validator(
      [valid](std::string& text) -> std::string {
        if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return refusal(text, valid);
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);  // LC_NUMERIC is "C" (main)
        if (end != text.c_str() + text.size() || !std::isfinite(value)) return refusal(text, valid);
        return {};
      },
      "", "");
}

void add_bench_options(CLI::App& app, RunOptions& o) {
  using namespace limits;
  const auto up_to = [](auto max) { return fmt::format("a whole number 1..{}", max); };
  app.option_defaults()->always_capture_default();
  // A repeated option takes its last value, so a base command line can be overridden.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // Model
  app.add_option("--model-name,--model_name", o.model_name,
                 "litgpt model name or Hugging Face id (see `tokbench models`)")->group("Model");
  app.add_option("--model-config,--model_config", o.model_config,
                 "TOML/JSON file of litgpt config fields; used instead of --model-name")->group("Model");
  app.add_option("--n-layers,--n_layers", o.n_layers, "override the model's n_layer")
      ->transform(whole_number<int64_t>(up_to(kMaxLayers)))->group("Model");
  app.add_option("--seq-len,--seq_len,--block-size,--block_size", o.seq_len,
                 "tokens per sequence T (default: the model's block_size)")
      ->transform(whole_number<int64_t>("a positive whole number"))->group("Model");
  // Batch and iterations
  app.add_option("--micro-batch-size,--micro_batch_size", o.micro_batch_size,
                 "sequences per micro-batch per device (B)")
      ->transform(whole_number<int64_t>("a positive whole number"))->group("Batch");
  app.add_option("--global-batch-size,--global_batch_size", o.global_batch_size,
                 "sequences per optimizer step over all devices (G = B x GA x W; default B x W)")
      ->transform(whole_number<int64_t>("a positive multiple of --micro-batch-size x world size"))->group("Batch");
  app.add_option("--max-iters,--max_iters", o.max_iters, "iterations in total, warm-up included")
      ->transform(whole_number<int64_t>(up_to(kMaxIters)))->group("Batch");
  app.add_option("--warmup-iters,--warmup_iters", o.warmup_iters,
                 "iterations run first and left out of every metric")
      ->transform(whole_number<int64_t>("a whole number from 0 to --max-iters - 1"))->group("Batch");
  // Device
  app.add_option("--device", o.device, "auto | cpu | cuda | cuda:N (auto: cuda:0 when present)")
      ->group("Device");
  app.add_option("--dtype", o.dtype,
                 "auto | fp32 | bf16-true | bf16-mixed (auto: bf16-true on CUDA, fp32 on CPU)")
      ->group("Device");
  app.add_flag("--tf32,!--no-tf32", o.tf32, "allow TF32 matmuls for fp32 on CUDA (=True/False)")
      ->group("Device");
  app.add_option("--compile,--executor", o.compile,
                 "executor: eager (tokbench's LibTorch step) | fused (GEMM kernels measured per machine, chunked "
                 "lm_head + loss; one device or many ranks (DDP, FSDP), fp32 or bf16-true) | python-eager | "
                 "python-inductor | python-thunder (the same step by litgpt in Python: PyTorch eager, "
                 "torch.compile or thunder.jit, on many ranks through torch.distributed's DDP/FSDP/fully_shard or "
                 "thunder's ddp/fsdp; needs torch, litgpt and lightning-thunder importable); and the reference's "
                 "names: inductor (= python-inductor), thunder (= python-thunder), thunder_inductor, "
                 "thunder_inductor_cat, thunder_cudnn, thunder_transformerengine, thunder_jit, thunder_dynamo "
                 "(thunder with those executors or front end). The JSON `compiler` is the name given, `executor` "
                 "what ran it. Note: eager is tokbench's step; PyTorch's eager litgpt is python-eager")
      ->group("Device");
  app.add_flag("--checkpoint-activations,--checkpoint_activations", o.checkpoint_activations,
               "recompute each block's forward in backward instead of keeping its activations (less memory, "
               "more FLOPs: HFU counts them, MFU does not)");
  app.add_option("--num-threads,--num_threads", o.num_threads,
                 "CPU threads for LibTorch (0: LibTorch's default)")
      ->transform(whole_number<int>(fmt::format("a whole number 0..{} (0: LibTorch's default)", kMaxThreads)))
      ->group("Device");
  app.add_flag("--use-sdpa,--use_sdpa", o.use_sdpa,
               "attention kernels in the reference's priority: cuDNN, flash, efficient, math, each where the "
               "device has it (PyTorch's own order puts cuDNN last); tokbench's executors, python-eager and "
               "python-inductor (thunder picks its own, as in the reference) (=True/False)")->group("Device");
  app.add_option("--low-precision-mode,--low_precision_mode", o.low_precision_mode,
                 "fp8 training through TransformerEngine: none | fp8-default-te | fp8-default-te-wo_layernorm "
                 "(its layers and fp8 autocast on python-eager/python-inductor, its executor with thunder); GPUs of "
                 "compute capability 8.9+ only")->group("Device");
  app.add_flag("--use-torchao-fp8-linear,--use_torchao_fp8_linear", o.use_torchao_fp8_linear,
               "fp8 training through torchao: every Linear but lm_head a float8 linear with dynamic scaling "
               "(python-eager/python-inductor, one rank or fsdp2; GPUs of compute capability 8.9+) (=True/False)")
      ->group("Device");
  app.add_flag("--use-torchao-fp8-allgather,--use_torchao_fp8_allgather", o.use_torchao_fp8_allgather,
               "with --use-torchao-fp8-linear and fsdp2: all-gather the weights in fp8 (=True/False)")->group("Device");
  app.add_flag("--use-torchao-fp8-precompute-scale-for-fsdp,--use_torchao_fp8_precompute_scale_for_fsdp",
               o.use_torchao_fp8_precompute_scale_for_fsdp,
               "with the fp8 all-gather: one all-reduce of every weight's scale after the optimizer step "
               "(=True/False)")->group("Device");
  app.add_option("--cpu-allocator,--cpu_allocator", o.cpu_allocator,
                 "CPU tensor memory: caching (blocks kept across iterations, jemalloc arena; tokbench's "
                 "executors' default) | system (LibTorch's allocator; the Python executors' only one)")->group("Device");
  // Distribution
  app.add_option("--distributed-mode,--distributed_mode", o.distributed_mode,
                 "none | ddp | fsdp | fsdp2 (more than one rank; fsdp2: PyTorch's fully_shard, Python executors "
                 "only)")->group("Distributed");
  app.add_option("--shard-mode,--shard_mode", o.shard_mode,
                 "FSDP sharding: zero2 | zero3 | hybrid_zero2 | hybrid_zero3 (hybrid needs --sharding-size)")
      ->group("Distributed");
  app.add_option("--sharding-size,--sharding_size", o.sharding_size,
                 "FSDP hybrid sharding: shard within groups of this many ranks, replicate across them")
      ->transform(whole_number<int64_t>("a positive divisor of the world size"))->group("Distributed");
  app.add_option("--bucketing-mode,--bucketing_mode", o.bucketing_mode,
                 "FSDP units: none (whole model) | block (one per transformer block + root) | layer | size "
                 "(modules cut by parameter count, PyTorch's size_based_auto_wrap_policy; --fsdp-bucket-params)")
      ->group("Distributed");
  app.add_option("--fsdp-bucket-params,--fsdp_bucket_params", o.fsdp_bucket_params,
                 "--bucketing-mode size: a module becomes an FSDP unit once the parameters of its subtree not yet "
                 "in a unit reach this many (min_num_params; default 1e8, PyTorch's)")
      ->transform(finite_number("a positive whole number of parameters, e.g. 1e8"))->group("Distributed");
  app.add_option("--ddp-bucket-size,--ddp_bucket_size", o.ddp_bucket_size_mb,
                 "DDP gradient bucket size in MB (10^6 bytes)")
      ->transform(finite_number("a size in MB in (0, 1000000]"))->group("Distributed");
  app.add_flag("--ddp-overlap,!--no-ddp-overlap", o.ddp_overlap,
               "DDP: all-reduce buckets during backward (=True/False)")->group("Distributed");
  app.add_flag("--skip-data-sync,--skip_data_sync,!--no-skip-data-sync", o.skip_data_sync,
               "DDP (and the Python executors' FSDP): no gradient sync on the first GA-1 micro-batches "
               "(=True/False; default True, but False with tokbench's own FSDP, which refuses True)")
      ->each([&o](const std::string&) { o.skip_data_sync_given = true; })
      ->group("Distributed");
  app.add_option("--dist-backend,--dist_backend", o.dist_backend,
                 "collectives: auto (NCCL on CUDA, Gloo on the CPU) | gloo (also CUDA tensors: several ranks may "
                 "share one GPU) | nccl (CUDA only, one GPU per rank)")
      ->group("Distributed");
  app.add_option("--dist-timeout,--dist_timeout", o.dist_timeout_s,
                 "seconds any collective (and the rendezvous) may take before the run ends with 'timeout'")
      ->transform(finite_number("seconds from 1 to 604800"))->group("Distributed");
  // Launcher (torchrun's options): starts the ranks of this node itself.
  app.add_option("--nproc-per-node,--nproc_per_node", o.nproc_per_node,
                 "start this many ranks on this node (the built-in launcher)")
      ->transform(whole_number<int64_t>(up_to(kMaxRanksPerNode)))->group("Launcher");
  app.add_option("--nnodes", o.nnodes, "nodes in the job (with --nproc-per-node)")
      ->transform(whole_number<int64_t>(up_to(kMaxNodes)))->group("Launcher");
  app.add_option("--node-rank,--node_rank", o.node_rank, "this node's index, 0..nnodes-1")
      ->transform(whole_number<int64_t>("a whole number from 0 to --nnodes - 1"))->group("Launcher");
  app.add_option("--master-addr,--master_addr", o.master_addr, "address of rank 0's store")->group("Launcher");
  app.add_option("--master-port,--master_port", o.master_port,
                 "port of rank 0's store (0: a free one; one node only)")
      ->transform(whole_number<int64_t>("0 (a free port) or 1..65535"))->group("Launcher");
  // The reference's profiling and compile switches, accepted so its command lines run.
  app.add_flag("--fp8-shard-intermediate-activation,--fp8_shard_intermediate_activation",
               o.fp8_shard_intermediate_activation,
               "the reference's switch, which its script never reads: accepted, with a warning, for its command lines")
      ->group("Compatibility");
  app.add_option("--profiler-start,--profiler_start", o.profiler_start,
                 "the reference's nsys window start (an iteration); no effect, as --nsys-enabled True is refused")
      ->transform(whole_number<int64_t>("a whole number"))->group("Compatibility");
  app.add_option("--profiler-stop,--profiler_stop", o.profiler_stop,
                 "the reference's nsys window end (an iteration); no effect, as --nsys-enabled True is refused")
      ->transform(whole_number<int64_t>("a whole number"))->group("Compatibility");
  app.add_flag("--use-hf,--use_hf", o.use_hf,
               "the reference's Hugging Face transformers models: True is refused (tokbench trains litgpt's)")
      ->group("Compatibility");
  app.add_flag("--nsys-enabled,--nsys_enabled", o.nsys_enabled,
               "the reference's Nsight switch; True is refused (profile with nsys around tokbench)")
      ->group("Compatibility");
  app.add_flag("--dynamic", o.dynamic,
               "variable-length sequences, as the reference: each sequence's length drawn in [10, T] (the same on "
               "every executor for a seed) and padded to T; tokens/s, the model's FLOPs and MFU count the real "
               "tokens, positions_per_sec the padded positions (=True/False)")->group("Training");
  // Training
  app.add_option("--seed", o.seed, "seed of the initial weights and of the data")
      ->transform(whole_number<uint64_t>(fmt::format("a whole number 0..{}", std::numeric_limits<uint64_t>::max())))
      ->group("Training");
  app.add_option("--lr", o.lr, "AdamW learning rate")
      ->transform(finite_number("a positive finite number"))->group("Training");
  app.add_option("--zero-grad,--zero_grad", o.zero_grad,
                 "after each step: none (free gradients, as the reference: set_to_none=True) | inplace "
                 "(zero them, keep their memory)")->group("Training");
  app.add_option("--weight-decay,--weight_decay", o.weight_decay, "AdamW weight decay")
      ->transform(finite_number("a finite number >= 0"))->group("Training");
  app.add_option("--beta1", o.beta1, "AdamW beta1")
      ->transform(finite_number("a number in [0, 1)"))->group("Training");
  app.add_option("--beta2", o.beta2, "AdamW beta2")
      ->transform(finite_number("a number in [0, 1)"))->group("Training");
  app.add_option("--data", o.data,
                 "random (ids 0..99, as the reference) or a .bin file of tokens (memory-mapped)")
      ->group("Training");
  app.add_option("--data-dtype,--data_dtype", o.data_dtype, "token type of a --data file: uint16 | uint32")
      ->group("Training");
  // Metrics and output
  app.add_option("--peak-tflops,--peak_tflops", o.peak_tflops,
                 "per-device peak TFLOP/s for MFU (default: datasheet table / CPU estimate)")
      ->transform(finite_number(fmt::format("a number of TFLOP/s in (0, {:.0f}]", kMaxPeakTflops)))->group("Output");
  app.add_option("--flops-convention,--flops_convention", o.flops_convention,
                 "model FLOP count: matmul | causal | palm (docs/PERFORMANCE.md)")->group("Output");
  app.add_option("--json-path,--json_path", o.json_path,
                 "write the JSON result here (atomically; also on failure)")->group("Output");
  app.add_flag("--return-metrics-as-json,--return_metrics_as_json", o.return_metrics_as_json,
               "emit the JSON result; without --json-path it goes to stdout (report to stderr)")
      ->group("Output");
  app.add_option("--log-every,--log_every", o.log_every,
                 "plain progress line every N iterations (0: live line on a terminal)")
      ->transform(whole_number<int64_t>(fmt::format("a whole number 0..{}", kMaxLogEvery)))->group("Output");
  app.add_flag("--quiet,-q", o.quiet, "no progress lines and no config echo")->group("Output");
  app.add_option("--profile", o.profile_path,
                 "write a Chrome trace (Kineto) of --profile-iters iterations run after the measured window")
      ->group("Output");
  app.add_option("--profile-iters,--profile_iters", o.profile_iters, "iterations in the --profile trace (default 3)")
      ->transform(whole_number<int64_t>(up_to(kMaxProfileIters)))->group("Output");
  app.add_flag("--dump-memory-snapshot,--dump_memory_snapshot", o.dump_memory_snapshot,
               "write the timed loop's allocation history in PyTorch's memory snapshot format (pytorch.org/memory_viz) "
               "to MODEL_COMPILE_MODE[...].pickle here, as the reference names it (each rank its own, _rankN); "
               "CUDA: c10's allocator history; CPU: tokbench's counting allocator (=True/False)")->group("Output");
  app.add_flag("--dump-thunder-traces,--dump_thunder_traces", o.dump_thunder_traces,
               "with a thunder --compile: print thunder's last forward and backward traces after the run, as the "
               "reference (=True/False)")->group("Output");
  app.add_option("--unit-timing-iters,--unit_timing_iters", o.unit_timing_iters,
                 "iterations after the measured window that time each unit (embedding, blocks, head) for the "
                 "JSON's unit_timings; 0: none (default 2; 0 with the Python executors)")
      ->transform(whole_number<int64_t>(fmt::format("a whole number 0..{}", kMaxUnitTimingIters)))->group("Output");
  app.add_option("--time-account-iters,--time_account_iters", o.time_account_iters,
                 "iterations after the measured window run under the profiler to split the iteration time into "
                 "GEMMs, attention, norms, elementwise, loss, optimizer, data/host, ... for the JSON's time_account "
                 "and the report's waterfall (docs/time-account.md); 0: none (default 2 on the CPU: eager and "
                 "fused on one rank or every rank of DDP and FSDP, the Python executors on one rank; else 0)")
      ->transform(whole_number<int64_t>(fmt::format("a whole number 0..{}", kMaxTimeAccountIters)))->group("Output");
  app.add_option("--cpu-memory-cap-mb,--cpu_memory_cap_mb", o.cpu_memory_cap_mb,
                 "testing aid: cap CPU tensor memory (MB) to exercise the out-of-memory path")
      ->transform(whole_number<int64_t>(
          fmt::format("a whole number of MB 1..{}", std::numeric_limits<int64_t>::max() / 1000000)))
      ->group("Testing");
  app.add_option("--cpu-memory-cap-rank,--cpu_memory_cap_rank", o.cpu_memory_cap_rank,
                 "testing aid: apply --cpu-memory-cap-mb on this rank only")
      ->transform(whole_number<int64_t>("a rank from 0 to the world size - 1"))->group("Testing");
}

nlohmann::ordered_json options_json(const RunOptions& o) {
  using json = nlohmann::ordered_json;
  const auto or_null = [](const auto& value) { return value ? json(*value) : json(nullptr); };
  // Order: the record's "config" block as users know it; new options go at the end.
  return json{{"model_config", o.model_config},
              {"data", o.data},
              {"data_dtype", o.data_dtype},
              {"seed", o.seed},
              {"lr", o.lr},
              {"weight_decay", o.weight_decay},
              {"beta1", o.beta1},
              {"beta2", o.beta2},
              {"zero_grad", o.zero_grad},
              {"n_layers", or_null(o.n_layers)},
              {"peak_tflops", or_null(o.peak_tflops)},
              {"flops_convention", o.flops_convention},
              {"distributed_mode", o.distributed_mode},
              {"shard_mode", o.shard_mode},
              {"bucketing_mode", o.bucketing_mode},
              {"fsdp_bucket_params", or_null(o.fsdp_bucket_params)},
              {"fsdp_min_unit_params", nullptr},  // the record puts the threshold the units were cut by here
              {"sharding_size", or_null(o.sharding_size)},
              {"ddp_bucket_size_mb", o.ddp_bucket_size_mb},
              {"ddp_overlap", o.ddp_overlap},
              {"skip_data_sync", o.skip_data_sync},
              {"dist_timeout_s", o.dist_timeout_s},
              {"dist_launcher", nullptr},  // the record puts where the ranks came from here
              {"dist_backend", o.dist_backend},
              {"dynamic", o.dynamic},
              {"tf32", o.tf32},
              {"device", o.device},
              {"dtype", o.dtype},
              {"cpu_memory_cap_rank", or_null(o.cpu_memory_cap_rank)},
              {"num_threads", o.num_threads},
              {"cpu_allocator", o.cpu_allocator},
              {"cpu_memory_cap_mb", or_null(o.cpu_memory_cap_mb)},
              {"use_sdpa", o.use_sdpa},
              {"dump_memory_snapshot", o.dump_memory_snapshot},
              {"dump_thunder_traces", o.dump_thunder_traces},
              {"fp8_shard_intermediate_activation", o.fp8_shard_intermediate_activation},
              {"use_hf", o.use_hf},
              {"low_precision_mode", o.low_precision_mode},
              {"use_torchao_fp8_linear", o.use_torchao_fp8_linear},
              {"use_torchao_fp8_allgather", o.use_torchao_fp8_allgather},
              {"use_torchao_fp8_precompute_scale_for_fsdp", o.use_torchao_fp8_precompute_scale_for_fsdp},
              {"time_account_iters", or_null(o.time_account_iters)}};
}

}  // namespace tokbench::run
