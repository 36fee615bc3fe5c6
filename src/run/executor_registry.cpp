// The executor table (executor_registry.hpp): each executor's names, kind, refusals and help in
// one entry. The refusals here are the ones an executor makes of its own; the Python
// executors' common ones (what python/tokbench_python_step.py does not implement) stay in
// resolve.cpp, keyed by ExecutorEntry::python.
#include "run/executor_registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "config/device.hpp"
#include "run/compiler_choice.hpp"
#include "run/run_plan.hpp"

namespace tokbench::run {
namespace {

std::string fused_refuses(const RunOptions&, const RunPlan& plan, std::vector<std::string>&) {
  if (plan.train.dtype == model::TrainPrecision::bf16_mixed)
    return "--executor fused does not support --dtype bf16-mixed (autocast); valid: fp32, bf16-true";
  return "";
}

std::string python_eager_refuses(const RunOptions& o, const RunPlan&, std::vector<std::string>& warnings) {
  // torchao runs in eager, but that is not how its users run it: torch.compile fuses its
  // scaling and casts, which eager runs as separate kernels (4.6x slower than bf16 on an H200).
  if (o.use_torchao_fp8_linear && o.low_precision_mode == "none")
    warnings.push_back("--use-torchao-fp8-linear under python-eager: torchao's float8 training is meant to "
                       "be compiled (--compile inductor fuses its scaling and casts); in eager it runs "
                       "unfused, slower than bf16");
  return "";
}

// thunder.jit shards with thunder's own transforms, ddp and fsdp (ZeRO-2/3); thunder as
// torch.compile's backend (dynamo) runs inside PyTorch's DDP/FSDP/fully_shard, as the reference
// orders it. The reference refuses hybrid sharding and size bucketing with any thunder name.
std::string thunder_refuses(const RunOptions& o, const RunPlan& plan, std::vector<std::string>&) {
  const auto unsupported = [&](const std::string& what, const std::string& valid) {
    return fmt::format("--executor {} does not support {}; valid with it: {} (or --executor eager)", o.compile, what,
                       valid);
  };
  if (o.bucketing_mode == "size")
    return fmt::format("--bucketing-mode size is not supported with --compile '{}' (the reference asserts it for "
                       "thunder, whose FSDP buckets by none, block or layer); valid: none, block, layer", o.compile);
  if (parallel::mode_entry(plan.dist.mode).layout == parallel::LayoutKind::fully_shard &&
      plan.compiler.thunder_front_end == ThunderFrontEnd::jit)
    return unsupported("--distributed-mode fsdp2 (thunder.jit's own transforms are ddp and fsdp; thunder under "
                       "fully_shard is a name with dynamo, e.g. thunder_dynamo)", "ddp, fsdp");
  if (plan.dist.hybrid()) return unsupported("hybrid sharding (thunder's fsdp shards over the whole world)", "zero2, zero3");
  if (o.checkpoint_activations)
    return unsupported("--checkpoint-activations (thunder.jit over torch.utils.checkpoint is not measured here)",
                       "no checkpointing");
  if (const auto cuda_only = plan.compiler.cuda_only_executors();
      !cuda_only.empty() && plan.device_kind != DeviceKind::cuda)
    return fmt::format("--compile '{}' needs thunder's {} executor, which runs on CUDA only, and this run is on the "
                       "CPU; valid here: thunder names without transformerengine or cudnn (e.g. thunder, "
                       "thunder_inductor)", o.compile, fmt::join(cuda_only, " and "));
  return "";
}

const std::vector<ExecutorEntry> kExecutors = {
    {Executor::eager, config::kDefaultExecutor, {}, nullptr, nullptr, nullptr, false, false, nullptr, "tokbench's LibTorch step", nullptr},
    {Executor::fused, "fused", {}, nullptr, nullptr, nullptr, false, false, nullptr,
     "GEMM kernels measured per machine, chunked lm_head + loss; one device or many ranks (DDP, FSDP), fp32 or "
     "bf16-true", fused_refuses},
    {Executor::python_eager, "python-eager", {}, nullptr, nullptr, nullptr, true, true, nullptr,
     "litgpt in Python, PyTorch eager", python_eager_refuses},
    {Executor::python_inductor, "python-inductor", {kInductorWord}, nullptr, nullptr, nullptr, true, true, nullptr,
     "litgpt in Python under torch.compile", nullptr},
    {Executor::python_thunder, "python-thunder", {}, kThunderWord, choose_thunder_name,
     "thunder joined by '_' with inductor, inductor_cat, transformerengine, cudnn, jit or dynamo (e.g. "
     "thunder_inductor)",
     true, true, "torchao's float8 linears run under PyTorch, not thunder",
     "litgpt in Python under lightning-thunder (thunder.jit, or thunder_dynamo: torch.compile's backend)",
     thunder_refuses},
};

}  // namespace

const std::vector<ExecutorEntry>& executor_entries() { return kExecutors; }

const ExecutorEntry& executor_entry(Executor executor) {
  for (const ExecutorEntry& e : kExecutors)
    if (e.id == executor) return e;
  throw std::logic_error("executor without an entry in executor_registry.cpp's table");
}

const char* to_string(Executor executor) { return executor_entry(executor).name; }

bool is_python(Executor executor) { return executor_entry(executor).python; }

std::string valid_compiler_names() {
  std::vector<std::string> names, families;
  for (const ExecutorEntry& e : kExecutors) names.emplace_back(e.name);
  for (const ExecutorEntry& e : kExecutors) names.insert(names.end(), e.aliases.begin(), e.aliases.end());
  for (const ExecutorEntry& e : kExecutors)
    if (e.family_help != nullptr) families.emplace_back(e.family_help);
  return fmt::format("{}, or {}", fmt::join(names, ", "), fmt::join(families, ", or "));
}

std::string executor_help() {
  std::vector<std::string> lines;
  for (const ExecutorEntry& e : kExecutors) {
    std::vector<std::string> also = e.aliases;
    if (e.family_word != nullptr) {
      also.emplace_back(e.family_word);
      also.emplace_back(e.family_help);
    }
    lines.push_back(fmt::format("{} ({}{}{}{})", e.name, e.help, also.empty() ? "" : "; also ",
                                fmt::join(also, ", "), e.python ? "; needs Python with torch and litgpt" : ""));
  }
  return fmt::format("executor: {}. The JSON `compiler` is the name given, `executor` what ran it. Note: eager is "
                     "tokbench's step; PyTorch's eager litgpt is python-eager",
                     fmt::join(lines, " | "));
}

}  // namespace tokbench::run
