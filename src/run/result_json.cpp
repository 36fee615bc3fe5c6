// JSON result construction, and its write through files/atomic_file.hpp.
#include "run/result_json.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "run/report.hpp"
#include "account/time_account_json.hpp"
#include "distributed/dist_settings.hpp"
#include "machine/environment_keys.hpp"
#include "parallel/comm_plan.hpp"
#include "files/atomic_file.hpp"
#include "results/comm_plan_json.hpp"
#include "results/record_blocks.hpp"
#include "results/result_columns.hpp"
#include "results/run_record.hpp"

namespace tokbench::run {
namespace {


// What the step sends per iteration, unit by unit (docs/run.md, "Per-unit timings"): the plan
// over the layout the step built its DDP buckets or FSDP units from (TrainStep::comm_layout),
// the plan `tokbench predict` times over the layout of the run it predicts. Null where no step
// of tokbench's laid out the communication (PyTorch's fully_shard, the Python executors).
nlohmann::ordered_json communication_json(const RunPlan& plan, const train::UnitTimings& t) {
  const distributed::DistributedSettings& d = plan.dist;
  if (!d.multi_rank() || d.mode == parallel::DistMode::none) return results::comm_plan_json(parallel::CommPlan{});
  if (d.mode == parallel::DistMode::fsdp2 || !t.comm_layout) return nullptr;
  parallel::CommSettings settings;
  settings.mode = d.mode;
  settings.shard_mode = d.shard_mode;
  settings.world_size = plan.world_size();
  settings.grad_accum = plan.train.grad_accum;
  settings.ddp_skip_sync = d.skip_sync_until_last_micro;
  settings.backend = d.backend;
  return results::comm_plan_json(parallel::plan_communication(*t.comm_layout, settings));
}

// Linear interpolation between order statistics (numpy's default) of sorted, non-empty values.
double quantile_of_sorted(const std::vector<double>& v, double q) {
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(at);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// The reference probe beside and inside the window (docs/run.md, "The reference probe"): each
// product's milliseconds before, after and between the window's iterations; the level it gives
// (median and quartiles) is read from the products inside the window where there are at least
// kMinWithinWindowProbes of them (the window's own moment), else from both sides together. Or
// why none ran.
constexpr std::size_t kMinWithinWindowProbes = 3;

results::ReferenceProbeBlock reference_probe_block(const MeasuredRun& run) {
  const auto& p = run.reference_probe;
  results::ReferenceProbeBlock block;
  if (!p || p->before_seconds.empty()) {
    block.why = !run.reference_probe_why.empty() ? run.reference_probe_why
                                                 : std::string("this executor's step runs outside tokbench's loop");
    return block;
  }
  const auto to_ms = [](const std::vector<double>& seconds) {
    std::vector<double> ms;
    for (const double s : seconds) ms.push_back(s * 1e3);
    return ms;
  };
  block.before_ms = to_ms(p->before_seconds);
  block.after_ms = to_ms(p->after_seconds);
  block.within_ms = to_ms(p->within_seconds);
  double total = 0;
  for (const auto* side : {&block.before_ms, &block.after_ms, &block.within_ms})
    for (const double ms : *side) total += ms / 1e3;
  const bool inside = block.within_ms.size() >= kMinWithinWindowProbes;
  std::vector<double> level = block.within_ms;
  if (!inside) {
    level = block.before_ms;
    level.insert(level.end(), block.after_ms.begin(), block.after_ms.end());
  }
  std::sort(level.begin(), level.end());
  const double median = quantile_of_sorted(level, 0.5), q1 = quantile_of_sorted(level, 0.25),
               q3 = quantile_of_sorted(level, 0.75);
  block.ran = true;
  block.what = fmt::format("{}, {} intra-op thread(s): the product of tokbench comm's compute_sharing",
                           train::reference_gemm_words(p->size), p->threads);
  block.gemm_size = p->size;
  block.threads = p->threads;
  block.when = inside ? fmt::format("{} between the measured iterations (outside their times), the level read from "
                                    "them; and {}",
                                    block.within_ms.size(),
                                    block.after_ms.empty() ? "before the warm-up (the run did not finish its window)"
                                                           : "before the warm-up and after the window")
               : block.after_ms.empty() ? std::string("before the warm-up only (the run did not finish its window)")
                                        : std::string("before the warm-up and after the measured window, outside both");
  block.repeats = static_cast<std::int64_t>(level.size());
  block.median_ms = median;
  block.q1_ms = q1;
  block.q3_ms = q3;
  block.relative_iqr = median > 0 ? (q3 - q1) / median : 0.0;
  block.seconds = total;
  return block;
}

// The per-unit timings (docs/run.md, "Per-unit timings"); null when the run has none. The
// model's parameters in registration order, each with its timed unit, are what a prediction lays
// the target's buckets and units out over (predict/measured_run.cpp reads them back).
nlohmann::ordered_json unit_timings_json(const RunPlan& plan, const std::optional<train::UnitTimings>& timings) {
  if (!timings) return nullptr;
  const train::UnitTimings& t = *timings;
  results::UnitTimingsBlock b;
  b.iterations = t.iterations;
  b.clock = t.clock;
  b.micro_batches_per_iteration = t.micro_batches_per_iteration;
  b.iteration_seconds = t.iteration_seconds;
  b.exposed_comm_seconds = t.exposed_comm_seconds;
  b.optimizer_seconds = t.optimizer_seconds;
  b.units.emplace();
  for (const auto& u : t.units)
    b.units->push_back({.name = u.name,
                        .kind = u.kind,
                        .parameters = u.parameters,
                        .forward_seconds = u.forward_seconds,
                        .backward_seconds = u.backward_seconds,
                        .optimizer_seconds = u.optimizer_seconds});
  b.communication = communication_json(plan, t);
  b.parameter_shapes.emplace();
  for (const auto& p : t.parameter_shapes) {
    const bool known = p.timed_unit >= 0 && p.timed_unit < static_cast<int64_t>(t.units.size());
    b.parameter_shapes->push_back(
        {.name = p.name, .unit = known ? t.units[p.timed_unit].name : std::string("?"), .elements = p.elements});
  }
  return results::to_json(b);
}

// A time account (docs/time-account.md): a pass's shares applied to the mean iteration
// `iteration_seconds`, against the run's model FLOPs per device and peak; null when there is
// no pass or it recorded no iteration. `rank`: whose pass, on many ranks.
nlohmann::ordered_json time_account_json(const RunPlan& plan, const std::optional<train::ProfiledTimeAccount>& pass,
                                         double iteration_seconds, const BenchMetrics& m,
                                         std::optional<int64_t> rank) {
  if (!pass || !(iteration_seconds > 0)) return nullptr;
  account::AccountInputs in;
  in.source = pass->source;
  in.measured_iteration_seconds = iteration_seconds;
  in.profiled_clock_seconds = pass->clock_seconds;
  in.model_flops_per_iter = m.flops_per_iter_per_device;
  if (plan.peak) {
    in.peak_flop_per_s = plan.peak->flops_per_s;
    in.peak_source = plan.peak->source;
  }
  in.exposed_comm_seconds = pass->exposed_comm_seconds;
  in.device = pass->device;
  in.exposed_comm_source = pass->exposed_comm_source;
  in.rank = rank;
  try {
    return account::to_json(account::make_time_account(pass->pass, in));
  } catch (const std::invalid_argument&) {  // a pass that recorded no iteration: no account
    return nullptr;
  }
}

// The record's time account: that of the process, or on many ranks the slowest rank's (the
// one whose window the run reports, so it adds up to average_iter_time and ends at the mfu).
nlohmann::ordered_json time_account_json(const RunPlan& plan, const MeasuredRun& run, const BenchMetrics& m) {
  if (run.outcome != Outcome::ok || !m.average_iter_time_ms) return nullptr;
  return time_account_json(plan, run.time_account, *m.average_iter_time_ms / 1e3, m, run.time_account_rank);
}

// The memory breakdown in GB, null where unknown: the record's keys and each rank's.
results::MemoryBreakdownGB memory_breakdown_gb(const std::optional<train::MemoryBreakdown>& b) {
  auto gb = [&](int64_t train::MemoryBreakdown::*part) {
    return b ? std::optional<double>(static_cast<double>((*b).*part) / 1e9) : std::nullopt;
  };
  return {gb(&train::MemoryBreakdown::parameters),    gb(&train::MemoryBreakdown::gradients),
          gb(&train::MemoryBreakdown::optimizer_state), gb(&train::MemoryBreakdown::activations),
          gb(&train::MemoryBreakdown::comm_buffers),  gb(&train::MemoryBreakdown::allocator_reserve)};
}

std::optional<double> scaled(const std::optional<double>& value, double scale) {
  return value ? std::optional<double>(*value * scale) : std::nullopt;
}

}  // namespace

results::RunRecord build_run_record(const RunPlan& plan, const MeasuredRun& run, const BenchMetrics& m,
                                    const machine::Environment& env) {
  using json = nlohmann::ordered_json;
  const auto& o = plan.options;
  results::RunRecord r;
  // Reference keys (docs/reference-benchmark.md, "The JSON result"), meanings fixed by
  // docs/PERFORMANCE.md, "The contract".
  r.average_iter_time = m.average_iter_time_ms;  // ms, window / M
  // One micro-batch, fwd+bwd, one device; with --dynamic the mean over the measured window of
  // the real lengths' FLOPs.
  const bool dynamic = plan.train.data.dynamic_lengths;
  r.model_flops = dynamic && m.measured_iters > 0 ? m.flops_per_iter_per_device / plan.train.grad_accum
                                                  : plan.flops_per_microbatch;
  r.model_flop_per_sec = m.flops_per_s_total;  // all devices, GA included
  r.tokens_per_sec = m.tokens_per_s;           // global
  const std::optional<double> allocated_peak =
      run.allocation_peaks_known ? std::optional<double>(m.memory_allocated_peak_GB) : std::nullopt;
  r.memory_used_gb = allocated_peak;  // 10^9 bytes
  r.model_name = plan.model_label;
  r.num_gpus = plan.world_size();
  r.seq_len = plan.train.seq_len;
  r.micro_bs = plan.train.micro_batch;
  r.global_bs = plan.global_batch();
  r.ga = plan.train.grad_accum;
  r.distributed_mode = distributed_mode_label(plan);
  r.sharding_size = distributed::is_sharded(plan.dist.mode) && plan.dist.shard_group_size
                        ? results::Field<results::Given>(*plan.dist.shard_group_size)
                        : nullptr;
  r.compiler = o.compile;
  // tokbench's own.
  r.schema_version = kResultSchemaVersion;
  r.status = to_string(run.outcome);
  r.message = run.message;
  // `compiler` above is the name the user passed (the reference's runner pivots on it); this is
  // what ran it (compiler_choice.hpp).
  r.executor = to_string(plan.compiler.executor);
  const bool thunder = plan.compiler.executor == Executor::python_thunder;
  r.thunder_front_end = thunder ? results::Field<std::string>(to_string(plan.compiler.thunder_front_end)) : nullptr;
  r.thunder_executors =
      thunder && !env.thunder_executors.empty() ? results::Field<std::string>(env.thunder_executors) : nullptr;
  r.kernels = run.kernel_note.empty() ? json(nullptr) : json(run.kernel_note);  // the executor's kernel choice
  r.attention_kernel = run.attention_kernel.empty() ? results::Field<std::string>(nullptr)
                                                    : results::Field<std::string>(run.attention_kernel);
  r.cuda_graphs = cuda_graphs_state(plan.cuda_graphs, run.cuda_graph_fallback);
  const std::string graph_note = cuda_graphs_note(plan.cuda_graphs, run.cuda_graph_fallback);
  r.cuda_graphs_note = graph_note.empty() ? results::Field<std::string>(nullptr) : results::Field<std::string>(graph_note);
  r.tokens_per_sec_per_device = m.tokens_per_s_per_device;
  r.positions_per_sec = m.positions_per_s;  // --dynamic: padded positions processed, global
  r.model_flops_per_iter_per_device = m.flops_per_iter_per_device;
  r.model_flops_per_iter_total = m.flops_per_iter_total;
  r.model_tflop_per_s_per_device = scaled(m.flops_per_s_per_device, 1e-12);
  r.model_tflop_per_s_total = scaled(m.flops_per_s_total, 1e-12);
  r.mfu = m.mfu;  // fraction of the per-device peak
  r.checkpoint_activations = plan.checkpoint_activations;
  r.hardware_flops = plan.hardware_flops_per_microbatch;  // model_flops + the recomputed forward
  r.hardware_tflop_per_s_per_device = scaled(m.hardware_flops_per_s_per_device, 1e-12);
  r.hfu = m.hfu;
  if (plan.peak) {
    r.mfu_peak_tflop_per_s = plan.peak->flops_per_s / 1e12;
    r.mfu_peak_chip = plan.peak->chip;
    r.mfu_peak_source = plan.peak->source;
    r.mfu_peak_is_estimate = plan.peak->estimate;
  } else {
    r.mfu_peak_tflop_per_s = nullptr;
    r.mfu_peak_chip = nullptr;
    r.mfu_peak_source = nullptr;
    r.mfu_peak_is_estimate = nullptr;
  }
  r.mfu_precision = std::string(to_string(plan.precision));
  r.flops_convention = std::string(model::to_string(plan.convention));
  r.warmup_iters = plan.train.warmup_iters;
  r.max_iters = plan.train.max_iters;
  r.measured_iters = m.measured_iters;
  r.measured_window_s = m.window_seconds;
  json stats = nullptr;
  if (m.iter_time_ms) {
    const auto& s = *m.iter_time_ms;
    stats = results::to_json(results::IterTimeStatsBlock{.mean = s.mean, .median = s.median, .p10 = s.p10,
                                                         .p90 = s.p90, .min = s.min, .max = s.max,
                                                         .stddev = s.stddev, .cv = s.cv});
  }
  r.iter_time_ms = stats;
  std::vector<results::IterationEntry> per_iteration;
  for (const auto& it : run.iterations) {
    results::IterationEntry e;
    e.index = it.index;
    e.warmup = it.warmup;
    e.time_ms = it.seconds * 1e3;
    if (std::isfinite(it.loss)) e.loss = it.loss;
    // --dynamic: the real tokens this process trained on in the iteration (rank 0's on many ranks).
    if (dynamic) e.real_tokens = it.real_tokens;
    per_iteration.push_back(e);
  }
  r.iterations = results::to_json(per_iteration);
  r.loss_first = m.loss_first;
  r.loss_last = m.loss_last;
  r.parameters = plan.param_count;
  r.n_layer = plan.config.n_layer;
  r.memory_allocated_peak_gb = allocated_peak;
  r.memory_reserved_peak_gb =
      run.allocation_peaks_known ? std::optional<double>(m.memory_reserved_peak_GB) : std::nullopt;
  r.peak_rss_gb = plan.device_kind == DeviceKind::cpu ? std::optional<double>(m.peak_rss_GB) : std::nullopt;
  results::put_memory_breakdown(r, memory_breakdown_gb(run.memory_breakdown));
  r.memory_estimate_gb = plan.memory_estimate_bytes / 1e9;
  r.harness_overhead_percent = m.harness_overhead_percent;
  // Every rank's own figures (multi-rank runs): the reported average is the slowest rank's,
  // memory the maximum over ranks.
  std::vector<results::RankEntry> ranks;
  for (const auto& rr : run.ranks) {
    const double m_iters = static_cast<double>(rr.measured_iters);
    auto known = [](bool yes, double v) { return yes ? std::optional<double>(v) : std::nullopt; };
    ranks.push_back({
        .rank = rr.rank,
        .status = rr.status,
        .message = rr.message,
        .host = rr.host,
        .measured_iters = rr.measured_iters,
        .average_iter_time = known(rr.measured_iters > 0, rr.window_seconds * 1e3 / m_iters),
        .exposed_comm_ms_per_iter =
            known(rr.measured_iters > 0 && run.exposed_comm_known, rr.exposed_comm_seconds * 1e3 / m_iters),
        .memory_allocated_peak_gb = known(rr.reported && run.allocation_peaks_known, rr.allocated_peak_bytes / 1e9),
        .memory_reserved_peak_gb = known(rr.reported && run.allocation_peaks_known, rr.reserved_peak_bytes / 1e9),
        .peak_rss_gb = known(rr.reported, rr.peak_rss_bytes / 1e9),
        .kernels = rr.kernels.empty() ? std::nullopt : std::optional<std::string>(rr.kernels),
        .memory = memory_breakdown_gb(rr.memory_breakdown),
        // The rank's own account, over its own mean iteration (docs/time-account.md).
        .time_account = run.outcome == Outcome::ok && rr.measured_iters > 0
                            ? time_account_json(plan, rr.time_account, rr.window_seconds / m_iters, m, rr.rank)
                            : json(nullptr)});
  }
  r.world_size = plan.world_size();
  const bool fsdp = distributed::is_sharded(plan.dist.mode);
  r.sharding_mode = fsdp ? results::Field<std::string>(distributed::shard_mode_label(plan.dist)) : nullptr;
  r.bucketing = fsdp ? results::Field<std::string>(distributed::to_string(plan.dist.units)) : nullptr;
  r.ranks = results::to_json(ranks);
  r.device = plan.device_string;
  r.device_name = plan.device_name;
  r.dtype = std::string(to_string(plan.train.dtype));
  r.tf32 = plan.tf32;
  r.zero_grad = train::to_string(plan.train.zero_grad);  // none: gradients freed after each step
  r.unit_timings = run.outcome == Outcome::ok ? unit_timings_json(plan, run.unit_timings) : json(nullptr);
  r.reference_probe = results::to_json(reference_probe_block(run));
  r.time_account = time_account_json(plan, run, m);
  // The options as given, but where resolution decided a value the record says what ran.
  json config = options_json(o);
  results::ResolvedConfig resolved;
  // The threshold the size units were cut by (tokbench predict lays out the same).
  resolved.fsdp_min_unit_params =
      plan.dist.units == parallel::UnitPolicy::by_size && fsdp ? results::Field<int64_t>(plan.dist.min_unit_params) : nullptr;
  resolved.skip_data_sync = plan.dist.skip_sync_until_last_micro;
  resolved.dist_launcher = plan.dist.env.source;
  resolved.dist_backend =
      plan.world_size() > 1 ? results::Field<std::string>(distributed::to_string(plan.dist.backend)) : nullptr;
  resolved.cpu_allocator = plan.cpu_allocator;
  resolved.warnings = plan.warnings;
  results::put_resolved(config, resolved);
  r.config = config;
  json environment = environment_record(env, {plan.device_name});
  // The Python executors' interpreter and packages: their torch may differ from the LibTorch
  // tokbench is built against, and a table comparing the two should say so.
  if (!env.python_torch_version.empty()) {
    environment[machine::environment_key::python_version] = env.python_version;
    environment[machine::environment_key::python_torch_version] = env.python_torch_version;
    environment[machine::environment_key::litgpt_version] = env.litgpt_version;
    if (!env.thunder_version.empty()) environment[machine::environment_key::thunder_version] = env.thunder_version;
    environment[machine::environment_key::python_executable] = env.python_executable;
  }
  r.environment = environment;
  return r;
}

nlohmann::ordered_json build_result_json(const RunPlan& plan, const MeasuredRun& run, const BenchMetrics& m,
                                         const machine::Environment& env) {
  // Keys in the column table's order (results::to_json).
  return results::to_json(build_run_record(plan, run, m, env));
}

void write_json_atomically(const std::filesystem::path& path, const nlohmann::ordered_json& json) {
  files::write_file_atomically(path, json.dump(4) + "\n");
}

}  // namespace tokbench::run
