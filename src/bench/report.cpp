// Report formatting. Reference lines keep the reference's fixed two decimals; tokbench's own
// lines use four significant digits, because CPU figures (0.0123 TFLOP/s) and GPU figures
// (492.6 TFLOP/s) must both stay readable.
#include "bench/report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <optional>
#include <string>

namespace tokbench::bench {
namespace {

std::string fixed2(const std::optional<double>& value, double scale = 1.0) {
  return value ? fmt::format("{:.2f}", *value * scale) : "N/A";
}

std::string sig4(const std::optional<double>& value, double scale = 1.0) {
  return value ? fmt::format("{:.4g}", *value * scale) : "N/A";
}

}  // namespace

std::string distributed_mode_label(const RunPlan& plan) { return dist::distributed_mode_label(plan.dist); }

void print_config_echo(const RunPlan& plan, std::ostream& out) {
  const auto& c = plan.config;
  fmt::print(out, "# tokbench run: {} (n_layer {}, n_embd {}, n_head {}, vocab {}), {} parameters\n",
             plan.model_label, c.n_layer, c.n_embd, c.n_head, c.vocab(), plan.param_count);
  fmt::print(out, "# batch: micro {} x GA {} x world {} = global {} sequences of {} tokens\n", plan.micro_batch,
             plan.grad_accum, plan.world_size, plan.global_batch, plan.seq_len);
  fmt::print(out, "# iterations: {} ({} warm-up, {} measured); seed {}; AdamW lr {} wd {} betas ({}, {}); "
                  "zero_grad {}\n",
             plan.max_iters, plan.warmup_iters, plan.max_iters - plan.warmup_iters, plan.options.seed,
             plan.options.lr, plan.options.weight_decay, plan.options.beta1, plan.options.beta2,
             plan.zero_grad == train::ZeroGrad::none ? "none (gradients freed after each step)"
                                                     : "inplace (gradients kept, zeroed)");
  fmt::print(out, "# device: {} ({}), dtype {}{}, executor {}, data {}\n", plan.device_string, plan.device_name,
             to_string(plan.dtype), plan.tf32 ? " (TF32 matmuls)" : "", plan.options.compile,
             plan.token_file.empty() ? "random" : plan.token_file.string());
  fmt::print(out, "# FLOPs per micro-batch (fwd+bwd, {} convention): {}; memory estimate {:.2f} GB of {:.2f} GB\n",
             model::to_string(plan.convention), plan.flops_per_microbatch, plan.memory_estimate_bytes / 1e9,
             plan.memory_capacity_bytes / 1e9);
}

void print_report(const RunPlan& plan, const MeasuredRun& run, const BenchMetrics& m, std::ostream& out) {
  const auto& o = plan.options;
  // The reference's lines, in its order.
  fmt::print(out, "Model name: {}\n", plan.model_label);
  fmt::print(out, "Seq Length: {}\n", plan.seq_len);
  fmt::print(out, "Micro BS: {}\n", plan.micro_batch);
  fmt::print(out, "Global BS: {}\n", plan.global_batch);
  fmt::print(out, "Number of Layers: {}\n", plan.config.n_layer);
  fmt::print(out, "Number of parameters: {:.2f}B\n", static_cast<double>(plan.param_count) / 1e9);
  fmt::print(out, "Distributed Mode: {}\n", distributed_mode_label(plan));
  if (plan.dist.mode == dist::DistMode::fsdp) {
    fmt::print(out, "Sharding Mode: {}\n", dist::shard_mode_label(plan.dist));
    fmt::print(out, "Sharding Size: {}\n",
               plan.dist.shard_group_size ? std::to_string(*plan.dist.shard_group_size) : "None");
    fmt::print(out, "Bucketing: {}\n", dist::to_string(plan.dist.units));
  }
  fmt::print(out, "Compiler: {}\n", o.compile);
  fmt::print(out, "Average iter time: {} ms\n", fixed2(m.average_iter_time_ms));
  fmt::print(out, "Memory used: {:.2f} GB\n", m.memory_allocated_peak_GB);
  fmt::print(out, "Tokens/s: {}\n", fixed2(m.tokens_per_s));
  fmt::print(out, "Tokens/s/GPU: {}\n", fixed2(m.tokens_per_s_per_device));
  fmt::print(out, "TFLOP/s: {}\n", fixed2(m.flops_per_s_total, 1e-12));
  // tokbench's lines.
  fmt::print(out, "# --- tokbench ---\n");
  fmt::print(out, "Status: {}{}\n", to_string(run.outcome), run.message.empty() ? "" : " (" + run.message + ")");
  fmt::print(out, "Parameters (whole model): {}\n", plan.param_count);
  fmt::print(out, "Measured iterations: {} of {} (after {} warm-up), window {:.3f} s\n", m.measured_iters,
             plan.max_iters - plan.warmup_iters, plan.warmup_iters, m.window_seconds);
  if (m.iter_time_ms) {
    const auto& s = *m.iter_time_ms;
    fmt::print(out, "Iter time (ms): median {:.2f}, p10 {:.2f}, p90 {:.2f}, min {:.2f}, max {:.2f}, "
                    "mean {:.2f} ± {:.2f} (CV {:.1f}%)\n",
               s.median, s.p10, s.p90, s.min, s.max, s.mean, s.stddev, 100.0 * s.cv);
  } else {
    fmt::print(out, "Iter time (ms): N/A\n");
  }
  fmt::print(out, "Tokens/s total: {}   per device: {}\n", sig4(m.tokens_per_s), sig4(m.tokens_per_s_per_device));
  fmt::print(out, "Model FLOPs per iteration: {} per device, {} total ({} convention)\n",
             m.flops_per_iter_per_device, m.flops_per_iter_total, model::to_string(plan.convention));
  fmt::print(out, "TFLOP/s per device: {}   total: {}\n", sig4(m.flops_per_s_per_device, 1e-12),
             sig4(m.flops_per_s_total, 1e-12));
  if (plan.peak) {
    fmt::print(out, "MFU: {} of {} peak {:.4g} TFLOP/s ({}; source: {}{})\n",
               m.mfu ? fmt::format("{:.2f}%", *m.mfu * 100) : "N/A", to_string(plan.precision),
               plan.peak->flops_per_s / 1e12, plan.peak->chip, plan.peak->source,
               plan.peak->estimate ? ", an estimate" : "");
  } else {
    fmt::print(out, "MFU: N/A (no known peak for {} in {}; pass --peak-tflops)\n", plan.device_name,
               to_string(plan.dtype));
  }
  fmt::print(out, "Memory (GB = 1e9 B): allocated peak {:.3f}, reserved peak {:.3f}{}; gradients {}\n",
             m.memory_allocated_peak_GB, m.memory_reserved_peak_GB,
             plan.device_kind == DeviceKind::cpu ? fmt::format(", process peak RSS {:.3f}", m.peak_rss_GB) : "",
             plan.zero_grad == train::ZeroGrad::none ? "freed after each step" : "kept between steps");
  fmt::print(out, "Loss: {} -> {} (first -> last measured)\n", m.loss_first ? fmt::format("{:.4f}", *m.loss_first) : "N/A",
             m.loss_last ? fmt::format("{:.4f}", *m.loss_last) : "N/A");
  fmt::print(out, "Device: {} ({}), dtype {}{}\n", plan.device_string, plan.device_name, to_string(plan.dtype),
             plan.tf32 ? " + TF32" : "");
  if (!run.kernel_note.empty()) fmt::print(out, "Kernels: {}\n", run.kernel_note);
  if (!run.ranks.empty()) {
    // Each rank's own mean and exposed communication; the reported average is the slowest's.
    fmt::print(out, "Ranks: {} ({}); average iter time is the slowest rank's\n", run.ranks.size(),
               distributed_mode_label(plan));
    for (const auto& r : run.ranks) {
      const double mean_ms = r.measured_iters > 0 ? r.window_seconds * 1e3 / static_cast<double>(r.measured_iters) : 0;
      const double comm_ms = r.measured_iters > 0 ? r.exposed_comm_seconds * 1e3 / static_cast<double>(r.measured_iters) : 0;
      fmt::print(out, "  rank {}: {}{}, mean iter {:.2f} ms, exposed communication {:.2f} ms/iter ({:.1f}%), "
                      "memory allocated peak {:.3f} GB\n",
                 r.rank, r.status, r.message.empty() ? "" : " (" + r.message + ")", mean_ms, comm_ms,
                 mean_ms > 0 ? 100.0 * comm_ms / mean_ms : 0.0, r.allocated_peak_bytes / 1e9);
    }
  }
  fmt::print(out, "Harness overhead: {}\n",
             m.harness_overhead_percent ? fmt::format("{:.3f}% of the measured window", *m.harness_overhead_percent)
                                        : "N/A");
}

}  // namespace tokbench::bench
