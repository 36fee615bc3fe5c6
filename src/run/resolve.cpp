// Turns raw options into a RunPlan or one usage error. Each option alone, and each section's
// options together, are checked first, beside their sections (config::check_fields); then what
// needs more than one section, the machine or the registries, in the order of the cost of a mistake: the model, sizes, files, last the memory fit.
// Nothing here creates a file or touches a device.
#include "run/resolve.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "config/checks.hpp"
#include "config/row_record_keys.hpp"
#include "files/atomic_file.hpp"
#include "model/catalog.hpp"
#include "model/checked_int.hpp"
#include "model/memory_estimate.hpp"
#include "parallel/layout.hpp"
#include "run/resolve_time_account.hpp"
#include "train/run_plan_keys.hpp"
#include "train/sequence_lengths.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::run {
namespace {

using usage::refuse;
using usage::require_choice;
using usage::printable;

using model::checked_mul;
using namespace limits;


double gb(int64_t bytes) { return static_cast<double>(bytes) / 1e9; }

void resolve_device(const RunOptions& o, const machine::MachineInfo& m, RunPlan& plan) {
  const std::string& d = o.device;
  const bool has_cuda = !m.cuda_devices.empty();
  if (d == "auto") {
    plan.device_kind = has_cuda ? DeviceKind::cuda : DeviceKind::cpu;
    plan.device_index = 0;
  } else if (d == "cpu") {
    plan.device_kind = DeviceKind::cpu;
  } else if (d == "cuda" || d.rfind("cuda:", 0) == 0) {
    int index = 0;
    if (d.size() > 5) {
      const std::string digits = d.substr(5);
      if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit))
        refuse(fmt::format("--device '{}' is not valid; valid: auto, cpu, cuda, cuda:N", d));
      const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
      if (error != std::errc() || end != digits.data() + digits.size())
        refuse(fmt::format("--device '{}' is not valid; valid: auto, cpu, cuda, cuda:N with N a device index", d));
    }
    if (!has_cuda)
      refuse(fmt::format("--device '{}' cannot run here: no usable CUDA device ({}); valid here: auto, cpu",
                        d, m.cuda_status));
    if (index >= static_cast<int>(m.cuda_devices.size()))
      refuse(fmt::format("--device '{}' cannot run here: {} CUDA device(s) visible; valid: cuda:0..cuda:{}",
                        d, m.cuda_devices.size(), m.cuda_devices.size() - 1));
    plan.device_kind = DeviceKind::cuda;
    plan.device_index = index;
  } else {
    refuse(fmt::format("--device '{}' is not valid; valid: auto, cpu, cuda, cuda:N", d));
  }
  // Each rank of a node takes the GPU of its local rank, as torchrun scripts do. Where Slurm bound
  // GPUs to each task (srun --gpus-per-task) a task sees only its own, from device 0, whatever
  // its local rank.
  const bool bound_per_task = plan.dist.env.gpus_bound_per_task;
  if (plan.device_kind == DeviceKind::cuda && plan.world_size() > 1 && (d == "auto" || d == "cuda")) {
    if (!bound_per_task && plan.dist.env.local_rank >= static_cast<int64_t>(m.cuda_devices.size()))
      refuse(fmt::format("local rank {} has no GPU: {} CUDA device(s) visible for {} ranks on this node; valid: at "
                        "most {} ranks per node", plan.dist.env.local_rank, m.cuda_devices.size(),
                        plan.dist.env.local_world_size, m.cuda_devices.size()));
    plan.device_index = bound_per_task ? 0 : static_cast<int>(plan.dist.env.local_rank);
  }
  // The collectives' library, now that the device is known.
  const bool cuda = plan.device_kind == DeviceKind::cuda;
  if (o.dist_backend == "nccl" && !cuda)
    refuse(fmt::format("--dist-backend nccl needs a CUDA device, and this run is on {}; valid here: auto, gloo",
                      plan.device_kind == DeviceKind::cpu ? "the CPU" : "another device"));
  plan.dist.backend = o.dist_backend == "gloo" || (o.dist_backend == "auto" && !cuda) ? distributed::CommBackend::gloo
                                                                                       : distributed::CommBackend::nccl;
  if (plan.dist.backend == distributed::CommBackend::nccl && plan.world_size() > 1 && plan.dist.env.local_world_size > 1 &&
      d.rfind("cuda:", 0) == 0 && !bound_per_task)  // bound, each task's cuda:N is a GPU of its own
    refuse(fmt::format("--device {} puts the {} ranks of this node on one GPU, which NCCL refuses; valid: "
                      "--dist-backend gloo, or --device cuda (one GPU per rank)", d, plan.dist.env.local_world_size));
  if (plan.device_kind == DeviceKind::cuda) {
    const auto& dev = m.cuda_devices[plan.device_index];
    plan.device_string = fmt::format("cuda:{}", plan.device_index);
    plan.device_name = dev.name;
  } else {
    plan.device_string = "cpu";
    plan.device_name = m.cpu_model;
  }
}

void resolve_dtype(const RunOptions& o, const machine::MachineInfo& m, RunPlan& plan) {
  // A word of its row's choices (check_fields): auto or a canonical name.
  if (o.dtype == "auto")
    plan.train.dtype = plan.device_kind == DeviceKind::cuda ? model::TrainPrecision::bf16_true : model::TrainPrecision::fp32;
  else
    plan.train.dtype = model::train_precision_from_string(o.dtype);
  if (plan.device_kind == DeviceKind::cuda && plan.train.dtype != model::TrainPrecision::fp32) {
    const auto& dev = m.cuda_devices[plan.device_index];
    if (dev.compute_capability_major < 8)
      refuse(fmt::format("--dtype '{}' cannot run on {} (compute capability {}.{}, bf16 needs 8.0+); valid here: fp32",
                        to_string(plan.train.dtype), dev.name, dev.compute_capability_major,
                        dev.compute_capability_minor));
  }
  // The fused executor's own CUDA kernels are built for compute capability 8.0 and up
  // (src/cuda/CMakeLists.txt: sm_80 and sm_90 code, PTX for newer): an older GPU has no image of
  // them, and its first kernel would fail the run.
  if (plan.device_kind == DeviceKind::cuda && plan.compiler.executor == Executor::fused) {
    const auto& dev = m.cuda_devices[plan.device_index];
    if (dev.compute_capability_major < 8)
      refuse(fmt::format("--executor fused runs tokbench's CUDA kernels, built for compute capability 8.0 and up, and "
                         "{} has {}.{}; valid here: --executor eager or a Python executor",
                         dev.name, dev.compute_capability_major, dev.compute_capability_minor));
  }
  plan.tf32 = o.tf32 && plan.device_kind == DeviceKind::cuda && plan.train.dtype == model::TrainPrecision::fp32;
  if (plan.train.dtype == model::TrainPrecision::fp32)
    plan.precision = plan.tf32 ? Precision::tf32 : Precision::fp32;
  else
    plan.precision = Precision::bf16;
}

// fp8 training, the reference's two recipes: TransformerEngine's (--low-precision-mode) and
// torchao's float8 linears (--use-torchao-fp8-*). Both run in the Python executors, whose
// litgpt takes those libraries' layers, on GPUs with fp8 tensor cores (compute capability 8.9
// and up, as the reference checks). Anywhere else they are refused here, before any work. An
// fp8 run's MFU is against the datasheet's fp8 peak, and the record says so (mfu_precision).
void resolve_low_precision(const RunOptions& o, const machine::MachineInfo& m, RunPlan& plan) {
  const bool te = o.low_precision_mode != "none";
  const bool torchao = o.use_torchao_fp8_linear;
  const auto& thunder = plan.compiler.thunder_executors;
  const bool thunder_te = std::find(thunder.begin(), thunder.end(), kThunderTransformerEngine) != thunder.end();
  // The section's own pairs (torchao's refinements, one recipe at a time): config::check_device.
  if (!te && !torchao) {
    if (thunder_te)  // as the reference: transformerengine is its fp8 recipe's executor
      refuse(fmt::format("--compile {}: thunder's transformerengine executor runs the fp8 recipe; valid: add "
                         "--low-precision-mode fp8-default-te or fp8-default-te-wo_layernorm",
                         printable(o.compile)));
    return;
  }
  const std::string option = te ? "--low-precision-mode " + o.low_precision_mode : "--use-torchao-fp8-linear";
  if (plan.device_kind != DeviceKind::cuda)
    refuse(fmt::format("{}: fp8 training needs an NVIDIA GPU of compute capability 8.9 or newer (Ada, Hopper, "
                       "Blackwell), and this run is on the CPU; valid here: without it", option));
  const auto& gpu = m.cuda_devices[plan.device_index];
  if (gpu.compute_capability_major * 10 + gpu.compute_capability_minor < 89)
    refuse(fmt::format("{}: fp8 training needs compute capability 8.9 or newer, and {} has {}.{}; valid here: "
                       "without it", option, gpu.name, gpu.compute_capability_major, gpu.compute_capability_minor));
  const ExecutorEntry& executor = executor_entry(plan.compiler.executor);
  if (!executor.fp8_layers)
    refuse(fmt::format("{}: tokbench's own executor ({}) has no fp8 layers; valid: --compile python-eager or "
                       "inductor{}", option, executor.name, te ? ", or a thunder name" : ""));
  if (torchao) {
    if (executor.no_torchao != nullptr)
      refuse(fmt::format("--use-torchao-fp8-linear: {} ({}); valid: --compile python-eager or inductor",
                         executor.no_torchao, printable(o.compile)));
    if (!parallel::mode_entry(plan.dist.mode).torchao_fp8)
      refuse(fmt::format("--use-torchao-fp8-linear with --distributed-mode {}: torchao's float8 training runs "
                         "on one rank or under fully_shard, as the reference; valid: {}",
                         distributed::to_string(plan.dist.mode),
                         fmt::join(parallel::mode_words([](const parallel::ModeEntry& e) { return e.torchao_fp8; }),
                                   ", ")));
  }
  // torchao's float8 products (torch._scaled_mm) need every dimension a multiple of 16; the
  // weight gradient's inner one is the micro-batch's tokens, which the model does not fix.
  if (torchao && (plan.train.micro_batch * plan.train.seq_len) % 16 != 0)
    refuse(fmt::format("--use-torchao-fp8-linear: torchao's fp8 matrix products need the micro-batch's tokens "
                       "(--micro-batch-size {} x --seq-len {} = {}) to be a multiple of 16; valid: a --seq-len or "
                       "--micro-batch-size that makes them one",
                       plan.train.micro_batch, plan.train.seq_len, plan.train.micro_batch * plan.train.seq_len));
  // TE's fp8 GEMMs need these multiples; the reference enlarges the model to reach them, which
  // would train a model other than the one counted.
  if (te && (plan.config.vocab() % 16 != 0 || plan.config.n_embd % 8 != 0))
    refuse(fmt::format("{}: TransformerEngine's fp8 GEMMs need a padded vocabulary that is a multiple of 16 and "
                       "n_embd a multiple of 8, and {} has {} and {}; valid: a model that has them (the reference "
                       "pads the model, which tokbench does not, as its FLOPs would no longer be this model's)",
                       option, plan.model_label, plan.config.vocab(), plan.config.n_embd));
  if (te && plan.compiler.executor == Executor::python_thunder && !thunder_te)  // the reference appends it
    plan.compiler.thunder_executors.insert(plan.compiler.thunder_executors.begin(), kThunderTransformerEngine);
  plan.precision = Precision::fp8;
}

void resolve_model(const RunOptions& o, RunPlan& plan) {
  model::Config base;
  if (!o.model_config.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o.model_config, ec))
      refuse(fmt::format("--model-config '{}' is not a readable file", o.model_config));
    try {
      base = model::load_model_config(o.model_config);
    } catch (const std::invalid_argument& e) {
      refuse(fmt::format("--model-config '{}': {}", o.model_config, e.what()));
    }
    plan.model_label = base.name.empty() ? std::filesystem::path(o.model_config).stem().string() : base.name;
  } else {
    try {
      base = model::config_by_name(o.model_name);
    } catch (const model::UnknownModelError& e) {
      refuse(fmt::format("--model-name '{}': {}", o.model_name, e.what()));
    }
    plan.model_label = o.model_name;
  }
  model::ModelOverrides overrides;
  overrides.n_layer = o.n_layers;
  overrides.seq_len = o.seq_len;
  try {
    plan.config = model::with_overrides(base, overrides);
  } catch (const std::invalid_argument& e) {
    refuse(fmt::format("--model-name '{}' with overrides: {}", plan.model_label, e.what()));
  }
  plan.train.seq_len = plan.config.block_size;
}

// --bucketing-mode size and --fsdp-bucket-params, as the reference reads them: its threshold
// is a float (the reference's type) that must name a whole, positive count; thunder refuses
// size (the reference asserts it); where the reference only warns (fsdp2 ignores the bucketing
// mode; the threshold is ignored without size) the run goes on with one warning line, recorded.
void resolve_size_units(const RunOptions& o, RunPlan& plan) {
  distributed::DistributedSettings& d = plan.dist;
  if (d.units != distributed::UnitPolicy::by_size) {
    if (o.fsdp_bucket_params)
      plan.warnings.push_back(fmt::format("--fsdp-bucket-params {:.0f} is ignored: it applies to --bucketing-mode size "
                                          "only (mode is {})", *o.fsdp_bucket_params, o.bucketing_mode));
    return;
  }
  // An executor that refuses size units (thunder) says so in resolve_executor.
  if (const char* ignored = parallel::mode_entry(d.mode).size_units_ignored) {
    // The reference's fully_shard wraps each block whatever the bucketing mode; so does this
    // run, and its label says block.
    plan.warnings.push_back(ignored);
    d.units = parallel::effective_unit_policy(d.mode, d.units);
    return;
  }
  d.min_unit_params = o.fsdp_bucket_params ? static_cast<int64_t>(*o.fsdp_bucket_params)
                                           : parallel::kDefaultMinUnitParams;
}

void resolve_distributed(const RunOptions& o, const machine::MachineInfo& m, RunPlan& plan) {
  if (!m.dist_env_error.empty()) refuse(m.dist_env_error);
  distributed::DistributedSettings& d = plan.dist;
  d.env = m.dist_env;
  config::check_launcher(o);  // its pairs (its rows were checked first)
  // Under the built-in launcher this process only starts ranks: validate as one of them.
  if (o.nproc_per_node) {
    d.env.world_size = *o.nproc_per_node * o.nnodes;
    d.env.local_world_size = *o.nproc_per_node;
    d.env.rank = o.node_rank * *o.nproc_per_node;
    d.env.master_addr = o.master_addr;
  }
  const int64_t w = d.env.world_size;
  const std::string where = d.env.source == "none" && !o.nproc_per_node ? "one process (no launcher)"
                            : fmt::format("{} ranks", w);
  d.mode = parallel::parse_dist_mode(o.distributed_mode);
  const parallel::ModeEntry& mode = parallel::mode_entry(d.mode);
  if (!mode.multi_rank && w > 1)
    refuse(fmt::format("--distributed-mode '{}' cannot run on {}: every rank would train alone; valid: {}", mode.word,
                      where, fmt::join(parallel::mode_words([](const parallel::ModeEntry& e) { return e.multi_rank; }),
                                       ", ")));
  if (mode.multi_rank && w <= 1)
    refuse(fmt::format("--distributed-mode '{}' needs more than one rank, but this is {}; valid here: {} "
                      "(start ranks with --nproc-per-node N, torchrun --no-python or srun)",
                      mode.word, where,
                      fmt::join(parallel::mode_words([](const parallel::ModeEntry& e) { return !e.multi_rank; }),
                                ", ")));
  const CompilerChoice& compiler = plan.compiler;
  // An executor's own refusals of a mode (thunder.jit's of fsdp2) are its registry entry's.
  if (mode.own_step_refusal != nullptr && !is_python(compiler.executor))
    refuse(fmt::format(fmt::runtime(mode.own_step_refusal), o.compile));
  const parallel::ShardWord shard = parallel::parse_shard_word(o.shard_mode);  // checked by its row
  d.shard_mode = shard.mode;
  d.units = parallel::parse_unit_policy(o.bucketing_mode);
  resolve_size_units(o, plan);
  if (o.sharding_size) {
    if (w > 1 && w % *o.sharding_size != 0)
      refuse(fmt::format("--sharding-size {} does not divide the world size {}; valid: a divisor of {}",
                        *o.sharding_size, w, w));
    if (*o.sharding_size > w && w > 1)
      refuse(fmt::format("--sharding-size {} exceeds the world size {}", *o.sharding_size, w));
  }
  // A hybrid mode without --sharding-size, or --sharding-size without a sharded mode: config::check_parallelism.
  d.shard_group_size = o.sharding_size;
  d.ddp_bucket_bytes = static_cast<int64_t>(o.ddp_bucket_size_mb * 1e6);
  d.ddp_overlap = o.ddp_overlap;
  // tokbench's FSDP reduce-scatters every micro-batch: an explicit --skip-data-sync is refused
  // there rather than ignored; the default (the reference's later choice) applies to DDP and
  // to the Python executors' FSDP (no_sync).
  if (mode.own_step_skip_sync_refusal != nullptr && !is_python(compiler.executor)) {
    if (o.skip_data_sync_given && o.skip_data_sync) refuse(mode.own_step_skip_sync_refusal);
    d.skip_sync_until_last_micro = false;
  } else {
    d.skip_sync_until_last_micro = o.skip_data_sync;
  }
  d.timeout_seconds = o.dist_timeout_s;
}

void resolve_batches(const RunOptions& o, const machine::MachineInfo& m, RunPlan& plan) {
  resolve_distributed(o, m, plan);

  plan.train.micro_batch = o.micro_batch_size;
  const std::optional<int64_t> micro_batches_per_step = checked_mul(plan.train.micro_batch, plan.world_size());
  if (!micro_batches_per_step)
    refuse(fmt::format("--micro-batch-size {} x world size {} overflows int64; valid: a smaller --micro-batch-size",
                      plan.train.micro_batch, plan.world_size()));
  const int64_t per_step = *micro_batches_per_step;
  const int64_t global_batch = o.global_batch_size.value_or(per_step);
  if (global_batch % per_step != 0)
    refuse(fmt::format("--global-batch-size {} is not a multiple of micro batch {} x world size {} = {}; "
                      "valid: {}, {}, {}, ...",
                      global_batch, plan.train.micro_batch, plan.world_size(), per_step, per_step,
                      2 * per_step, 3 * per_step));
  plan.train.grad_accum = global_batch / per_step;
  // GA > kMaxGradAccum implies per_step x kMaxGradAccum < G, so the product below fits.
  if (plan.train.grad_accum > kMaxGradAccum)
    refuse(fmt::format("--global-batch-size {} is {} micro-batches per device per iteration (GA = G / (micro batch "
                      "{} x world size {})); valid: GA at most {}, i.e. --global-batch-size at most {}",
                      global_batch, plan.train.grad_accum, plan.train.micro_batch, plan.world_size(), kMaxGradAccum,
                      per_step * kMaxGradAccum));

  plan.train.max_iters = o.max_iters;
  plan.train.warmup_iters = o.warmup_iters;
}

// What python/tokbench_python_step.py does not implement is refused here, before the child
// starts, one line per option: it trains litgpt's model from a model name or a --model-config
// file on random tokens, on one process or on many through torch.distributed (DDP, FSDP,
// fully_shard). Also the test hook TOKBENCH_TEST_SAME_START (resolve.hpp).
void resolve_python_executor(const RunOptions& o, RunPlan& plan) {
  if (const char* same = std::getenv(kTestSameStartEnv); same != nullptr && *same != '\0') {
    const std::string value = same;
    if (value != "0" && value != "1")
      refuse(fmt::format("{} '{}' is not a test hook's value; valid: 1 (a Python executor starts from "
                         "tokbench's initial weights and tokens) or 0", kTestSameStartEnv, value));
    plan.test_same_start = value == "1";
  }
  const CompilerChoice& compiler = plan.compiler;
  if (!is_python(compiler.executor)) return;
  const auto unsupported = [&](const std::string& what, const std::string& valid) {
    refuse(fmt::format("--executor {} does not support {}; valid with it: {} (or --executor eager)", o.compile, what,
                       valid));
  };
  if (plan.dist.mode == distributed::DistMode::ddp && !o.ddp_overlap)
    unsupported("--no-ddp-overlap (PyTorch's DDP always all-reduces its buckets during backward)", "--ddp-overlap");
  if (o.data != "random") unsupported(fmt::format("--data '{}'", o.data), "--data random");
  if (o.cpu_memory_cap_mb) unsupported("--cpu-memory-cap-mb", "no cap");
  if (o.cpu_allocator == "caching")
    unsupported("--cpu-allocator caching (Python's torch allocates CPU memory itself)", "--cpu-allocator system");
}

// The executor's own refusals (its registry entry's), once device, dtype and parallel mode are
// known: thunder's of size units, fsdp2 under thunder.jit, hybrid sharding, checkpointing and
// its CUDA-only executors on the CPU; fused's of bf16-mixed.
void resolve_executor(const RunOptions& o, RunPlan& plan) {
  const ExecutorEntry& executor = executor_entry(plan.compiler.executor);
  if (executor.refuses == nullptr) return;
  if (const std::string why = executor.refuses(o, plan, plan.warnings); !why.empty()) refuse(why);
}

void resolve_training(const RunOptions& o, RunPlan& plan) {
  plan.checkpoint_activations = o.checkpoint_activations;
  resolve_executor(o, plan);
  plan.train.seed = o.seed;
  // The training and data sections go down whole, each row's default filled in (--data-seed: --seed).
  const config::RunOptions defaulted = config::with_defaults(o);
  static_cast<config::TrainingSection&>(plan.train.adamw) = defaulted;
  static_cast<config::DataSection&>(plan.train.data) = defaulted;
  plan.train.num_threads = o.num_threads;
  plan.cpu_allocator = !o.cpu_allocator.empty()            ? o.cpu_allocator
                       : is_python(plan.compiler.executor) ? "system"
                                                           : "caching";
  plan.train.zero_grad = o.zero_grad == "none" ? train::ZeroGrad::none : train::ZeroGrad::inplace;
  if (o.dynamic) {
    if (plan.train.seq_len < train::kMinDynamicLength)
      refuse(fmt::format("--dynamic with --seq-len {}: sequences are drawn {}..T long, as the reference draws "
                        "them; valid: --seq-len {} or more", plan.train.seq_len, train::kMinDynamicLength,
                        train::kMinDynamicLength));
    plan.train.data.dynamic_lengths = true;
  }
  plan.train.data.token_bytes = o.data_dtype == "uint16" ? 2 : 4;
  if (o.data != "random") {
    std::error_code ec;
    const std::filesystem::path file(o.data);
    if (!std::filesystem::is_regular_file(file, ec) || ::access(file.c_str(), R_OK) != 0)
      refuse(fmt::format("--data '{}' is not a readable file; valid: random or a .bin file of {} tokens",
                        o.data, o.data_dtype));
    const auto size = static_cast<int64_t>(std::filesystem::file_size(file, ec));
    if (size % plan.train.data.token_bytes != 0)
      refuse(fmt::format("--data '{}' has {} bytes, not a whole number of {} tokens (--data-dtype)", o.data,
                        size, o.data_dtype));
    if (size / plan.train.data.token_bytes < plan.train.seq_len + 1)
      refuse(fmt::format("--data '{}' holds {} tokens; a sequence needs --seq-len + 1 = {}", o.data,
                        size / plan.train.data.token_bytes, plan.train.seq_len + 1));
    plan.train.data.token_file = file;
  }
  plan.convention = model::flop_convention_from_string(o.flops_convention);  // a word check_fields let through
  if (o.cpu_memory_cap_mb) {
    if (plan.device_kind != DeviceKind::cpu)
      refuse(fmt::format("--cpu-memory-cap-mb {} applies to --device cpu only (device is {})",
                        *o.cpu_memory_cap_mb, plan.device_string));
    plan.train.cpu_memory_cap_bytes = *o.cpu_memory_cap_mb * 1000000;  // check_fields bounds it to fit
  }
  if (o.cpu_memory_cap_rank) {
    if (!o.cpu_memory_cap_mb || *o.cpu_memory_cap_rank < 0 || *o.cpu_memory_cap_rank >= plan.world_size())
      refuse(fmt::format("--cpu-memory-cap-rank {} is not valid; valid: 0..{} together with --cpu-memory-cap-mb",
                        *o.cpu_memory_cap_rank, plan.world_size() - 1));
    if (*o.cpu_memory_cap_rank != plan.dist.env.rank) plan.train.cpu_memory_cap_bytes.reset();
  }
}

// An output file the run will write: not a directory, in an existing writable directory,
// writable if it exists.
std::filesystem::path writable_file_path(const char* option, const std::string& text) {
  const std::filesystem::path path(text);
  const std::string why = files::why_not_writable(path);
  if (!why.empty())
    refuse(fmt::format("{} '{}' cannot be written: {}; valid: a file path in an existing, writable folder", option,
                       printable(text), why));
  return path;
}

void resolve_output(const RunOptions& o, RunPlan& plan) {
  if (o.json_path.empty()) {
    plan.json_to_stdout = o.return_metrics_as_json;
    return;
  }
  plan.json_path = writable_file_path("--json-path", o.json_path);
}

// --profile PATH [--profile-iters N]: the file writable before any work. With several ranks
// every rank records its own trace (each rank's profiler sees only its own process), PATH with
// _rankR before its extension, as --dump-memory-snapshot names its files; every rank runs the
// same profiled iterations after the window, so their collectives stay in step as in the time
// account's pass.
void resolve_profile(const RunOptions& o, RunPlan& plan) {
  if (o.profile_path.empty()) return;  // --profile-iters without it: config::check_diagnostics
  plan.profile_iters = o.profile_iters.value_or(3);  // a given one is bounded by config::check_diagnostics
  const std::filesystem::path given = writable_file_path("--profile", o.profile_path);
  if (plan.world_size() == 1) {
    plan.profile_path = given;
    return;
  }
  plan.profile_path = rank_profile_path(given, plan.dist.env.rank);
  plan.profile_ranks_note = fmt::format("every rank records its own trace: {} .. {}",
                                        rank_profile_path(given, 0).string(),
                                        rank_profile_path(given, plan.world_size() - 1).filename().string());
}

// --dump-memory-snapshot: the reference's file name, in the working directory,
// MODEL_COMPILE_MODE[_SHARDING[_BUCKETING]][_DDPBUCKETMB].pickle; with several ranks each
// writes its own (the reference keeps rank 0's only), _rankN added.
// The reference's remaining switches: thunder's traces need thunder (--use-hf and --nsys-enabled
// are refused by config::check_compatibility); fp8_shard_intermediate_activation is read nowhere
// in the reference's script.
void resolve_reference_switches(const RunOptions& o, const RunPlan& plan) {
  if (o.dump_thunder_traces && plan.compiler.executor != Executor::python_thunder)
    refuse(fmt::format("--dump-thunder-traces prints thunder's traces, and --compile {} is not thunder; valid: a "
                       "thunder --compile name", printable(o.compile)));
  if (o.fp8_shard_intermediate_activation)
    fmt::print(stderr, "tokbench: --fp8-shard-intermediate-activation has no effect (the reference's script never "
                       "reads it either)\n");
}

void resolve_memory_snapshot(const RunOptions& o, RunPlan& plan) {
  if (!o.dump_memory_snapshot) return;
  if (is_python(plan.compiler.executor) && plan.device_kind == DeviceKind::cpu)
    refuse(fmt::format("--dump-memory-snapshot with --compile {} on the CPU: the CPU snapshot comes from tokbench's "
                       "counting allocator, which records tokbench's executors; valid: --compile eager or fused, or "
                       "a CUDA device", printable(o.compile)));
  std::string name = fmt::format("{}_{}_{}", plan.model_label, o.compile, o.distributed_mode);
  const parallel::ModeEntry& mode = parallel::mode_entry(plan.dist.mode);
  if (mode.sharded) {
    name += "_" + o.shard_mode;
    if (mode.layout == parallel::LayoutKind::fsdp_units) name += "_" + o.bucketing_mode;
  }
  if (mode.layout == parallel::LayoutKind::ddp_buckets) name += fmt::format("_{}", o.ddp_bucket_size_mb);
  if (plan.world_size() > 1) name += fmt::format("_rank{}", plan.dist.env.rank);
  std::replace(name.begin(), name.end(), '/', '_');  // a Hugging Face id or a config file's path
  plan.memory_snapshot_path = writable_file_path("--dump-memory-snapshot", name + ".pickle");
}

// --unit-timing-iters N: the per-unit timing pass after the window (2 by default); tokbench's
// own steps only, since the Python executors' steps are litgpt's, without tokbench's hooks.
void resolve_unit_timing(const RunOptions& o, RunPlan& plan) {
  const bool python = is_python(plan.compiler.executor);
  plan.unit_timing_iters = o.unit_timing_iters.value_or(python ? 0 : 2);  // a given one: check_fields
  if (python && plan.unit_timing_iters > 0)
    refuse(fmt::format("--executor {} does not support --unit-timing-iters {} (per-unit timings hook into "
                      "tokbench's own steps); valid with it: --unit-timing-iters 0 (or --executor eager)",
                      o.compile, plan.unit_timing_iters));
}

void resolve_counts_and_peak(const RunOptions& o, const machine::MachineInfo& m, RunPlan& plan) {
  plan.param_count = model::count_params(plan.config).total;
  try {
    plan.flops_per_microbatch =
        model::count_flops(plan.config, plan.train.micro_batch, plan.train.seq_len, plan.convention).total();
    plan.hardware_flops_per_microbatch = plan.flops_per_microbatch;
    if (plan.checkpoint_activations &&
        __builtin_add_overflow(plan.flops_per_microbatch,
                               model::count_recompute_flops(plan.config, plan.train.micro_batch, plan.train.seq_len, plan.convention),
                               &plan.hardware_flops_per_microbatch))
      throw std::overflow_error("hardware FLOPs overflow int64");
  } catch (const std::overflow_error& e) {
    refuse(fmt::format("--micro-batch-size {} x --seq-len {}: the FLOP count overflows ({}); valid: a smaller "
                      "--micro-batch-size or --seq-len", plan.train.micro_batch, plan.train.seq_len, e.what()));
  }
  if (o.peak_tflops) {
    plan.peak = PeakChoice{*o.peak_tflops * 1e12, plan.device_name, "--peak-tflops", false};
    return;
  }
  if (plan.device_kind == DeviceKind::cuda) {
    if (auto peak = lookup_device_peak(plan.device_name, plan.precision))
      plan.peak = PeakChoice{peak->flops_per_s, peak->chip, peak->source, false};
    return;
  }
  // The CPU: a peak measured by `tokbench env --calibrate` on this machine at this thread
  // count and LibTorch version, else the clock-based estimate (which oneDNN can exceed).
  const int threads = o.num_threads > 0 ? o.num_threads : m.default_threads;
  const CpuInfo cpu = detect_cpu();
  if (const auto calibration = machine::find_calibration(
          m.cpu_calibrations, machine::CalibrationKey{cpu.model, cpu.logical_cpus, threads, TORCH_VERSION})) {
    if (const auto measured = machine::peak_for(*calibration, std::string(to_string(plan.precision)))) {
      plan.peak = PeakChoice{measured->flops_per_s, cpu.model, machine::measured_peak_source(*calibration, *measured), false};
      return;
    }
  }
  if (auto peak = estimate_cpu_peak(cpu, plan.precision))
    plan.peak = PeakChoice{peak->flops_per_s, peak->chip,
                           peak->source + fmt::format("; `tokbench env --calibrate{}` measures this CPU's peak",
                                                      o.num_threads > 0 ? fmt::format(" --num-threads {}", threads) : ""),
                           true};
}

// Every count derived from the options, checked before any work: a product that does not
// fit int64 (or a run whose token count would no longer be exact as a double) is refused
// naming the options it comes from, never left to wrap or to fail halfway through a run.
void resolve_derived_counts(RunPlan& plan) {
  const std::optional<int64_t> tokens_per_iter = checked_mul(plan.global_batch(), plan.train.seq_len);
  const std::optional<int64_t> tokens_per_run =
      tokens_per_iter ? checked_mul(*tokens_per_iter, plan.train.max_iters) : std::nullopt;
  const std::string global_batch =
      plan.options.global_batch_size
          ? fmt::format("--global-batch-size {}", plan.global_batch())
          : fmt::format("global batch {} (--micro-batch-size {} x world size {})", plan.global_batch(),
                        plan.train.micro_batch, plan.world_size());
  if (!tokens_per_run || *tokens_per_run > kMaxTokensPerRun)
    refuse(fmt::format("--max-iters {} x {} x --seq-len {} is {} tokens; valid: at most 2^53 = {} tokens per run "
                      "(token counts stay exact in the rates): fewer --max-iters, a smaller --global-batch-size, "
                      "--micro-batch-size or --seq-len",
                      plan.train.max_iters, global_batch, plan.train.seq_len,
                      tokens_per_run ? std::to_string(*tokens_per_run) : std::string("more than 2^63"),
                      kMaxTokensPerRun));
  if (!checked_mul(plan.flops_per_microbatch, plan.train.grad_accum, plan.world_size()))
    refuse(fmt::format("model FLOPs per iteration ({} per micro-batch of --micro-batch-size {} x --seq-len {}, x GA "
                      "{} x world size {}) overflow int64; valid: a smaller --global-batch-size, "
                      "--micro-batch-size or --seq-len",
                      plan.flops_per_microbatch, plan.train.micro_batch, plan.train.seq_len, plan.train.grad_accum, plan.world_size()));
  // One micro-batch's buffers: the logits (B·T·V; the memory estimate counts their bytes)
  // and the host token buffers, x and y as int64 (2·8·B·T bytes each; on CUDA the batcher
  // keeps GA of them in pinned memory, one per micro-batch of an iteration).
  if (!checked_mul(plan.train.micro_batch, plan.train.seq_len, plan.config.vocab(), 4))
    refuse(fmt::format("--micro-batch-size {} x --seq-len {} x vocabulary {} logits overflow int64 bytes; valid: a "
                      "smaller --micro-batch-size or --seq-len",
                      plan.train.micro_batch, plan.train.seq_len, plan.config.vocab()));
  const int64_t host_buffers = plan.device_kind == DeviceKind::cuda ? plan.train.grad_accum : 1;
  const std::optional<int64_t> token_bytes = checked_mul(host_buffers, plan.train.micro_batch, plan.train.seq_len, 2 * 8);
  if (!token_bytes)
    refuse(fmt::format("token buffers of --micro-batch-size {} x --seq-len {} x {} buffer(s) overflow int64 bytes; "
                      "valid: a smaller --micro-batch-size, --seq-len or --global-batch-size",
                      plan.train.micro_batch, plan.train.seq_len, host_buffers));
  plan.token_buffer_bytes = *token_bytes;
}

void resolve_memory_fit(const machine::MachineInfo& m, RunPlan& plan) {
  const std::string what =
      fmt::format("--model-name '{}' (n_layer {}, --micro-batch-size {}, --seq-len {}, --dtype {})", plan.model_label,
                  plan.config.n_layer, plan.train.micro_batch, plan.train.seq_len, to_string(plan.train.dtype));
  const char* remedies = "valid: a smaller model, --n-layers, --micro-batch-size or --seq-len";
  try {
    plan.memory_estimate_bytes =
        model::estimate_training_memory(plan.config, plan.train.micro_batch, plan.train.seq_len, plan.train.dtype,
                                        plan.checkpoint_activations)
            .total_bytes();
  } catch (const std::overflow_error& e) {
    refuse(fmt::format("{}: the training-memory estimate overflows ({}); {}", what, e.what(), remedies));
  }
  // Host memory: MemAvailable, or less when this process's cgroup limit leaves less.
  int64_t host_bytes = m.mem_available_bytes;
  std::string host_label = "available (MemAvailable)";
  if (m.cgroup_available_bytes && (host_bytes <= 0 || *m.cgroup_available_bytes < host_bytes)) {
    host_bytes = *m.cgroup_available_bytes;
    host_label = fmt::format("available under the cgroup memory limit ({:.2f} GB limit, {:.2f} GB in use)",
                             gb(m.cgroup_limit_bytes), gb(m.cgroup_usage_bytes));
  }
  const bool cuda = plan.device_kind == DeviceKind::cuda;
  plan.memory_capacity_bytes = cuda ? m.cuda_devices[plan.device_index].total_memory_bytes : host_bytes;
  // Compared with the machine even under --cpu-memory-cap-mb: the cap exists to reach a real
  // out-of-memory error and is never pre-empted, but a run the machine itself cannot hold
  // would allocate its model (built before the cap applies) and thrash first.
  const int64_t need = cuda ? plan.memory_estimate_bytes
                            : model::checked_add(plan.memory_estimate_bytes, plan.token_buffer_bytes)
                                  .value_or(std::numeric_limits<int64_t>::max());
  if (plan.memory_capacity_bytes > 0 && need > plan.memory_capacity_bytes)
    refuse(fmt::format("{} needs about {:.2f} GB to train but {} has {:.2f} GB {}; {}", what, gb(need),
                      plan.device_string, gb(plan.memory_capacity_bytes), cuda ? "in total" : host_label, remedies));
  if (cuda && host_bytes > 0 && plan.token_buffer_bytes > host_bytes)
    refuse(fmt::format("--global-batch-size {} (GA {}) x --micro-batch-size {} x --seq-len {} needs {:.2f} GB of pinned "
                      "host token buffers but the host has {:.2f} GB {}; valid: a smaller --global-batch-size, "
                      "--micro-batch-size or --seq-len",
                      plan.global_batch(), plan.train.grad_accum, plan.train.micro_batch, plan.train.seq_len, gb(plan.token_buffer_bytes),
                      gb(host_bytes), host_label));
}

}  // namespace

std::string with_option_names(const std::string& message) {
  // The names train::validate_options gives (train/train_loop.cpp) and TokenFile's.
  namespace plan_key = train::run_plan_key;
  static const std::vector<std::pair<std::string, std::string>> kFieldToOption = {
      {plan_key::micro_batch, "--micro-batch-size"},
      {plan_key::seq_len, "--seq-len"},
      {plan_key::grad_accum, "--global-batch-size (GA)"},
      {plan_key::max_iters, "--max-iters"},
      {plan_key::warmup_iters, "--warmup-iters"},
      {config::config_key::num_threads, "--num-threads"},
      {plan_key::dtype, "--dtype"},
      {"token_file", "--data"},
      {"cpu_memory_cap_bytes", "--cpu-memory-cap-mb"}};
  std::string out = message;
  for (const auto& [field, option] : kFieldToOption) {
    if (out.rfind(field + ":", 0) == 0 || out.rfind(field + " ", 0) == 0) out = option + out.substr(field.size());
    for (std::size_t at = out.find("(fewer than " + field + ")"); at != std::string::npos;
         at = out.find("(fewer than " + field + ")"))
      out.replace(at + 12, field.size(), option);
  }
  return out;
}

std::filesystem::path rank_profile_path(const std::filesystem::path& path, int rank) {
  std::filesystem::path out = path;
  out.replace_filename(fmt::format("{}_rank{}{}", path.stem().string(), rank, path.extension().string()));
  return out;
}

RunPlan resolve_run(const RunOptions& options, const machine::MachineInfo& machine) {
  config::check_fields(options);  // each option alone, from its row; what follows needs more than one
  RunPlan plan;
  plan.options = options;
  plan.compiler = choose_compiler(options.compile);  // first: the checks below depend on the executor
  resolve_batches(options, machine, plan);
  resolve_python_executor(options, plan);
  resolve_device(options, machine, plan);
  resolve_dtype(options, machine, plan);
  resolve_model(options, plan);
  resolve_training(options, plan);
  resolve_low_precision(options, machine, plan);  // after the executors' own device checks
  resolve_output(options, plan);
  resolve_profile(options, plan);
  resolve_memory_snapshot(options, plan);
  resolve_reference_switches(options, plan);
  resolve_unit_timing(options, plan);
  resolve_time_account(options, plan);
  plan.cuda_graphs = resolve_cuda_graphs(options, plan);  // device, executor, mode and passes known
  resolve_counts_and_peak(options, machine, plan);
  resolve_derived_counts(plan);
  resolve_memory_fit(machine, plan);
  return plan;
}

MetricInputs metric_inputs(const RunPlan& plan) {
  MetricInputs in{plan.train, plan.world_size()};
  in.flops_per_microbatch = plan.flops_per_microbatch;
  in.hardware_flops_per_microbatch = plan.hardware_flops_per_microbatch;
  if (plan.peak) in.peak_flops_per_s = plan.peak->flops_per_s;
  if (plan.train.data.dynamic_lengths) {
    // Every rank's lengths, as the batchers draw them; one sequence's FLOPs by its length,
    // each length counted once (there are at most T - 9 of them).
    const auto flops_by_length = std::make_shared<std::map<int64_t, int64_t>>();
    in.dynamic_work = [&plan, flops_by_length](int64_t iteration) {
      IterationWork work;
      const int64_t B = plan.train.micro_batch, W = plan.world_size();
      for (int64_t micro = 0; micro < plan.train.grad_accum; ++micro)
        for (int64_t rank = 0; rank < W; ++rank)
          for (int64_t b = 0; b < B; ++b) {
            const int64_t count = iteration * plan.train.grad_accum + micro;
            const int64_t t = train::dynamic_length(*plan.train.data.data_seed, train::sequence_index(count, rank, W, B, b),
                                                    plan.train.seq_len);
            auto [it, added] = flops_by_length->try_emplace(t, 0);
            if (added) it->second = model::count_flops(plan.config, 1, t, plan.convention).total();
            work.tokens += t;
            work.model_flops += it->second;
          }
      return work;
    };
  }
  return in;
}

}  // namespace tokbench::run
