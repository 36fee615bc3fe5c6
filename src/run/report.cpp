// The resolved-config echo. The report after the run is results::write_run_report over the
// run's record.
#include "run/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fmt/ostream.h>

#include <optional>
#include <string>

namespace tokbench::run {

std::string distributed_mode_label(const RunPlan& plan) { return distributed::distributed_mode_label(plan.dist); }

void print_config_echo(const RunPlan& plan, std::ostream& out) {
  const auto& c = plan.config;
  fmt::print(out, "# tokbench run: {} (n_layer {}, n_embd {}, n_head {}, vocab {}), {} parameters\n",
             plan.model_label, c.n_layer, c.n_embd, c.n_head, c.vocab(), plan.param_count);
  fmt::print(out, "# batch: micro {} x GA {} x world {} = global {} sequences of {} tokens\n", plan.train.micro_batch,
             plan.train.grad_accum, plan.world_size(), plan.global_batch(), plan.train.seq_len);
  fmt::print(out, "# iterations: {} ({} warm-up, {} measured); seed {}; AdamW lr {} wd {} betas ({}, {}); "
                  "zero_grad {}\n",
             plan.train.max_iters, plan.train.warmup_iters, plan.train.max_iters - plan.train.warmup_iters, plan.train.seed,
             plan.train.adamw.lr, plan.train.adamw.weight_decay, plan.train.adamw.beta1, plan.train.adamw.beta2,
             plan.train.zero_grad == train::ZeroGrad::none ? "none (gradients freed after each step)"
                                                     : "inplace (gradients kept, zeroed)");
  const CompilerChoice& compiler = plan.compiler;
  const std::string executor =
      compiler.compiler == to_string(compiler.executor)
          ? compiler.compiler
          : fmt::format("{} (--compile {})", to_string(compiler.executor), compiler.compiler);
  fmt::print(out, "# device: {} ({}), dtype {}{}, executor {}, data {}\n", plan.device_string, plan.device_name,
             to_string(plan.train.dtype), plan.tf32 ? " (TF32 matmuls)" : "", executor,
             plan.train.data.token_file.empty() ? "random" : plan.train.data.token_file.string());
  if (compiler.executor == Executor::python_thunder)
    fmt::print(out, "# thunder: {}{}{}\n", compiler.thunder_front_end == ThunderFrontEnd::jit ? "thunder.jit"
                                                                       : "torch.compile with thunder as its backend",
               compiler.thunder_executors.empty() ? "" : ", ahead of thunder's defaults: ",
               fmt::format("{}", fmt::join(compiler.thunder_executors, ", ")));
  fmt::print(out, "# FLOPs per micro-batch (fwd+bwd, {} convention): {}; memory estimate {:.2f} GB of {:.2f} GB\n",
             model::to_string(plan.convention), plan.flops_per_microbatch, plan.memory_estimate_bytes / 1e9,
             plan.memory_capacity_bytes / 1e9);
}

}  // namespace tokbench::run
