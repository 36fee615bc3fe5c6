// --cuda-graphs (cuda_graph_choice.hpp): the reasons capture is not possible, checked in one
// place, in the order a user would fix them (device, executor, strategy, model, iterations).
#include "run/cuda_graph_choice.hpp"

#include <fmt/format.h>

#include "run/run_plan.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::run {
namespace {

// Why the plan's step cannot be captured, or "" when it can. `on` refuses with it; `auto`
// records it as its fallback.
std::string impossible(const RunOptions& o, const RunPlan& plan) {
  if (plan.device_kind != DeviceKind::cuda)
    return fmt::format("CUDA graphs need a CUDA device (device is {})", plan.device_string);
  if (is_python(plan.compiler.executor))
    return fmt::format("--compile {} runs PyTorch's own step in Python, which tokbench does not capture",
                       usage::printable(o.compile));
  if (plan.dist.mode != distributed::DistMode::none || plan.world_size() > 1)
    return fmt::format("--distributed-mode {} with {} rank(s): the DDP and FSDP steps' collectives are not "
                       "captured yet (one device, --distributed-mode none, only)",
                       usage::printable(o.distributed_mode), plan.world_size());
  // Both MoE forwards read how many tokens each expert got on the host (model/gpt.cpp), a sync
  // a graph cannot hold.
  if (plan.config.n_expert > 0)
    return fmt::format("{} routes tokens to {} experts, whose sizes the step reads on the host", plan.model_label,
                       plan.config.n_expert);
  if (plan.train.warmup_iters < kCudaGraphMinWarmupIters)
    return fmt::format("--warmup-iters {} leaves no room to warm up ({} eager iterations) and capture (1) before "
                       "the measured window; needs --warmup-iters {} or more",
                       plan.train.warmup_iters, kCudaGraphEagerWarmups, kCudaGraphMinWarmupIters);
  return {};
}

}  // namespace

CudaGraphChoice resolve_cuda_graphs(const RunOptions& o, const RunPlan& plan) {
  CudaGraphChoice choice;
  choice.mode = o.cuda_graphs;  // a word check_fields let through: auto, on or off
  if (choice.mode == "off") {
    choice.note = "off as asked (--cuda-graphs off)";
    return choice;
  }
  if (const std::string why = impossible(o, plan); !why.empty()) {
    if (choice.mode == "on")
      usage::refuse(fmt::format("--cuda-graphs on: {}; valid: --cuda-graphs auto (falls back to eager) or off", why));
    choice.note = "off (auto): " + why;
    return choice;
  }
  // tokbench's eager executor is the reference's eager step, launch for launch: auto keeps it so
  // (its comparisons with PyTorch's eager stay like for like); `on` captures it.
  if (choice.mode == "auto" && plan.compiler.executor == Executor::eager) {
    choice.note = "off (auto): --compile eager is the reference's eager step, launch for launch "
                  "(--cuda-graphs on captures it)";
    return choice;
  }
  choice.on = true;
  // The passes after the window hook into the step's operators (unit timings), or split them by
  // their ranges (the time account, --profile); a replayed graph runs neither hooks nor ranges.
  if (plan.unit_timing_iters > 0 || plan.time_account_iters > 0 || !plan.profile_path.empty())
    choice.note = "the passes after the window (unit timings, time account, profile) run the step eagerly";
  return choice;
}

std::string cuda_graphs_state(const CudaGraphChoice& choice, const std::string& runtime_fallback) {
  return choice.on && runtime_fallback.empty() ? "on" : "off";
}

std::string cuda_graphs_note(const CudaGraphChoice& choice, const std::string& runtime_fallback) {
  return runtime_fallback.empty() ? choice.note : runtime_fallback;
}

}  // namespace tokbench::run
