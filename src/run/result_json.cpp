// JSON result construction, and its write through files/atomic_file.hpp.
#include "run/result_json.hpp"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "run/report.hpp"
#include "account/time_account_json.hpp"
#include "distributed/dist_settings.hpp"
#include "parallel/comm_plan.hpp"
#include "files/atomic_file.hpp"
#include "results/comm_plan_json.hpp"
#include "results/result_columns.hpp"

namespace tokbench::run {
namespace {

nlohmann::ordered_json opt(const std::optional<double>& value, double scale = 1.0) {
  return value ? nlohmann::ordered_json(*value * scale) : nlohmann::ordered_json(nullptr);
}


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

// The model's parameters in registration order, each with its timed unit: what a prediction
// lays the target's buckets and units out over (predict/measured_run.cpp reads them back).
nlohmann::ordered_json parameter_shapes_json(const train::UnitTimings& t) {
  nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
  for (const auto& p : t.parameter_shapes) {
    const bool known = p.timed_unit >= 0 && p.timed_unit < static_cast<int64_t>(t.units.size());
    shapes.push_back({{"name", p.name},
                      {"unit", known ? t.units[p.timed_unit].name : std::string("?")},
                      {"elements", p.elements}});
  }
  return shapes;
}

// The per-unit timings (docs/run.md, "Per-unit timings"); null when the run has none.
nlohmann::ordered_json unit_timings_json(const RunPlan& plan, const std::optional<train::UnitTimings>& timings) {
  using json = nlohmann::ordered_json;
  if (!timings) return nullptr;
  const train::UnitTimings& t = *timings;
  json units = json::array();
  for (const auto& u : t.units)
    units.push_back({{"name", u.name},
                     {"kind", u.kind},
                     {"parameters", u.parameters},
                     {"forward_seconds", u.forward_seconds},
                     {"backward_seconds", u.backward_seconds},
                     {"optimizer_seconds", u.optimizer_seconds}});
  return {{"iterations", t.iterations},
          {"clock", t.clock},
          {"micro_batches_per_iteration", t.micro_batches_per_iteration},
          {"iteration_seconds", t.iteration_seconds},
          {"exposed_comm_seconds", t.exposed_comm_seconds},
          {"optimizer_seconds", t.optimizer_seconds},
          {"units", units},
          {"communication", communication_json(plan, t)},
          {"parameter_shapes", parameter_shapes_json(t)}};
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

}  // namespace

// The memory breakdown's keys (result_columns.cpp), in GB, onto `j`; null where unknown.
template <typename Json>
void put_memory_breakdown(Json& j, const std::optional<train::MemoryBreakdown>& b) {
  auto gb = [&](int64_t train::MemoryBreakdown::*part) { return b ? Json(static_cast<double>((*b).*part) / 1e9) : Json(nullptr); };
  j["memory_parameters_GB"] = gb(&train::MemoryBreakdown::parameters);
  j["memory_gradients_GB"] = gb(&train::MemoryBreakdown::gradients);
  j["memory_optimizer_state_GB"] = gb(&train::MemoryBreakdown::optimizer_state);
  j["memory_activations_GB"] = gb(&train::MemoryBreakdown::activations);
  j["memory_comm_buffers_GB"] = gb(&train::MemoryBreakdown::comm_buffers);
  j["memory_allocator_reserve_GB"] = gb(&train::MemoryBreakdown::allocator_reserve);
}

nlohmann::ordered_json build_result_json(const RunPlan& plan, const MeasuredRun& run, const BenchMetrics& m,
                                         const machine::Environment& env) {
  using json = nlohmann::ordered_json;
  const auto& o = plan.options;
  json j;
  // Reference keys (docs/reference-benchmark.md, "The JSON result"), meanings fixed by
  // docs/PERFORMANCE.md, "The contract".
  j["average_iter_time"] = opt(m.average_iter_time_ms);  // ms, window / M
  // One micro-batch, fwd+bwd, one device; with --dynamic the mean over the measured window of
  // the real lengths' FLOPs.
  const bool dynamic = plan.train.data.dynamic_lengths;
  j["model_flops"] = dynamic && m.measured_iters > 0 ? m.flops_per_iter_per_device / plan.train.grad_accum
                                                     : plan.flops_per_microbatch;
  j["model_flop_per_sec"] = opt(m.flops_per_s_total);    // all devices, GA included
  j["tokens_per_sec"] = opt(m.tokens_per_s);             // global
  const json allocated_peak = run.allocation_peaks_known ? json(m.memory_allocated_peak_GB) : json(nullptr);
  j["memory_used_GB"] = allocated_peak;                  // 10^9 bytes
  j["model_name"] = plan.model_label;
  j["Num GPUS"] = plan.world_size();
  j["Seq Len"] = plan.train.seq_len;
  j["Micro BS"] = plan.train.micro_batch;
  j["Global BS"] = plan.global_batch();
  j["GA"] = plan.train.grad_accum;
  j["Distributed Mode"] = distributed_mode_label(plan);
  j["Sharding Size"] =
      distributed::is_sharded(plan.dist.mode) && plan.dist.shard_group_size ? json(*plan.dist.shard_group_size)
                                                                           : json(nullptr);
  j["compiler"] = o.compile;
  // tokbench's own.
  j["schema_version"] = kResultSchemaVersion;
  j["status"] = to_string(run.outcome);
  j["message"] = run.message;
  // `compiler` above is the name the user passed (the reference's runner pivots on it); this is
  // what ran it (compiler_choice.hpp).
  j["executor"] = to_string(plan.compiler.executor);
  const bool thunder = plan.compiler.executor == Executor::python_thunder;
  j["thunder_front_end"] = thunder ? json(to_string(plan.compiler.thunder_front_end)) : json(nullptr);
  j["thunder_executors"] = thunder && !env.thunder_executors.empty() ? json(env.thunder_executors) : json(nullptr);
  j["kernels"] = run.kernel_note.empty() ? json(nullptr) : json(run.kernel_note);  // the executor's kernel choice
  j["attention_kernel"] = run.attention_kernel.empty() ? json(nullptr) : json(run.attention_kernel);
  j["tokens_per_sec_per_device"] = opt(m.tokens_per_s_per_device);
  j["positions_per_sec"] = opt(m.positions_per_s);  // --dynamic: padded positions processed, global
  j["model_flops_per_iter_per_device"] = m.flops_per_iter_per_device;
  j["model_flops_per_iter_total"] = m.flops_per_iter_total;
  j["model_TFLOP_per_s_per_device"] = opt(m.flops_per_s_per_device, 1e-12);
  j["model_TFLOP_per_s_total"] = opt(m.flops_per_s_total, 1e-12);
  j["mfu"] = opt(m.mfu);  // fraction of the per-device peak
  j["checkpoint_activations"] = plan.checkpoint_activations;
  j["hardware_flops"] = plan.hardware_flops_per_microbatch;  // model_flops + the recomputed forward
  j["hardware_TFLOP_per_s_per_device"] = opt(m.hardware_flops_per_s_per_device, 1e-12);
  j["hfu"] = opt(m.hfu);
  j["mfu_peak_TFLOP_per_s"] = plan.peak ? json(plan.peak->flops_per_s / 1e12) : json(nullptr);
  j["mfu_peak_chip"] = plan.peak ? json(plan.peak->chip) : json(nullptr);
  j["mfu_peak_source"] = plan.peak ? json(plan.peak->source) : json(nullptr);
  j["mfu_peak_is_estimate"] = plan.peak ? json(plan.peak->estimate) : json(nullptr);
  j["mfu_precision"] = std::string(to_string(plan.precision));
  j["flops_convention"] = std::string(model::to_string(plan.convention));
  j["warmup_iters"] = plan.train.warmup_iters;
  j["max_iters"] = plan.train.max_iters;
  j["measured_iters"] = m.measured_iters;
  j["measured_window_s"] = m.window_seconds;
  json stats = nullptr;
  if (m.iter_time_ms) {
    const auto& s = *m.iter_time_ms;
    stats = json{{"mean", s.mean}, {"median", s.median}, {"p10", s.p10}, {"p90", s.p90}, {"min", s.min},
                 {"max", s.max},   {"stddev", s.stddev}, {"cv", s.cv}};
  }
  j["iter_time_ms"] = stats;
  json per_iteration = json::array();
  for (const auto& it : run.iterations) {
    per_iteration.push_back({{"index", it.index}, {"warmup", it.warmup}, {"time_ms", it.seconds * 1e3},
                             {"loss", std::isfinite(it.loss) ? json(it.loss) : json(nullptr)}});
    // --dynamic: the real tokens this process trained on in the iteration (rank 0's on many ranks).
    if (dynamic) per_iteration.back()["real_tokens"] = it.real_tokens;
  }
  j["iterations"] = per_iteration;
  j["loss_first"] = opt(m.loss_first);
  j["loss_last"] = opt(m.loss_last);
  j["parameters"] = plan.param_count;
  j["n_layer"] = plan.config.n_layer;
  j["memory_allocated_peak_GB"] = allocated_peak;
  j["memory_reserved_peak_GB"] = run.allocation_peaks_known ? json(m.memory_reserved_peak_GB) : json(nullptr);
  j["peak_rss_GB"] = plan.device_kind == DeviceKind::cpu ? json(m.peak_rss_GB) : json(nullptr);
  put_memory_breakdown(j, run.memory_breakdown);
  j["memory_estimate_GB"] = plan.memory_estimate_bytes / 1e9;
  j["harness_overhead_percent"] = opt(m.harness_overhead_percent);
  // Every rank's own figures (multi-rank runs): the reported average is the slowest rank's,
  // memory the maximum over ranks.
  json ranks = json::array();
  for (const auto& r : run.ranks) {
    const double m_iters = static_cast<double>(r.measured_iters);
    json rank = {{"rank", r.rank},
                     {"status", r.status},
                     {"message", r.message},
                     {"host", r.host},
                     {"measured_iters", r.measured_iters},
                     {"average_iter_time", r.measured_iters > 0 ? json(r.window_seconds * 1e3 / m_iters) : json(nullptr)},
                     {"exposed_comm_ms_per_iter", r.measured_iters > 0 && run.exposed_comm_known
                                                      ? json(r.exposed_comm_seconds * 1e3 / m_iters)
                                                      : json(nullptr)},
                     {"memory_allocated_peak_GB",
                      run.allocation_peaks_known ? json(r.allocated_peak_bytes / 1e9) : json(nullptr)},
                     {"memory_reserved_peak_GB",
                      run.allocation_peaks_known ? json(r.reserved_peak_bytes / 1e9) : json(nullptr)},
                     {"peak_rss_GB", r.peak_rss_bytes / 1e9},
                     {"kernels", r.kernels.empty() ? json(nullptr) : json(r.kernels)}};
    put_memory_breakdown(rank, r.memory_breakdown);
    // The rank's own account, over its own mean iteration (docs/time-account.md).
    rank["time_account"] = run.outcome == Outcome::ok && r.measured_iters > 0
                               ? time_account_json(plan, r.time_account, r.window_seconds / m_iters, m, r.rank)
                               : json(nullptr);
    ranks.push_back(std::move(rank));
  }
  j["world_size"] = plan.world_size();
  const bool fsdp = distributed::is_sharded(plan.dist.mode);
  j["sharding_mode"] = fsdp ? json(distributed::shard_mode_label(plan.dist)) : json(nullptr);
  j["bucketing"] = fsdp ? json(distributed::to_string(plan.dist.units)) : json(nullptr);
  j["ranks"] = ranks;
  j["device"] = plan.device_string;
  j["device_name"] = plan.device_name;
  j["dtype"] = std::string(to_string(plan.train.dtype));
  j["tf32"] = plan.tf32;
  j["zero_grad"] = train::to_string(plan.train.zero_grad);  // none: gradients freed after each step
  j["unit_timings"] = run.outcome == Outcome::ok ? unit_timings_json(plan, run.unit_timings) : nullptr;
  j["time_account"] = time_account_json(plan, run, m);
  // The options as given, but where resolution decided a value the record says what ran.
  j["config"] = options_json(o);
  // The threshold the size units were cut by (tokbench predict lays out the same).
  j["config"]["fsdp_min_unit_params"] =
      plan.dist.units == parallel::UnitPolicy::by_size && fsdp ? json(plan.dist.min_unit_params) : json(nullptr);
  j["config"]["skip_data_sync"] = plan.dist.skip_sync_until_last_micro;
  j["config"]["dist_launcher"] = plan.dist.env.source;
  j["config"]["dist_backend"] =
      plan.world_size() > 1 ? json(distributed::to_string(plan.dist.backend)) : json(nullptr);
  j["config"]["cpu_allocator"] = plan.cpu_allocator;
  j["config"]["warnings"] = plan.warnings;
  j["environment"] = machine::environment_record(env, {plan.device_name});
  // The Python executors' interpreter and packages: their torch may differ from the LibTorch
  // tokbench is built against, and a table comparing the two should say so.
  if (!env.python_torch_version.empty()) {
    j["environment"]["python_version"] = env.python_version;
    j["environment"]["python_torch_version"] = env.python_torch_version;
    j["environment"]["litgpt_version"] = env.litgpt_version;
    if (!env.thunder_version.empty()) j["environment"]["thunder_version"] = env.thunder_version;
    j["environment"]["python_executable"] = env.python_executable;
  }
  // Keys in the column table's order; a key without a column throws here (and in the tests).
  return results::in_column_order(j);
}

void write_json_atomically(const std::filesystem::path& path, const nlohmann::ordered_json& json) {
  files::write_file_atomically(path, json.dump(4) + "\n");
}

}  // namespace tokbench::run
