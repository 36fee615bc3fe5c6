// The column table. Meanings: docs/run.md ("The JSON result") and docs/PERFORMANCE.md ("The
// contract"); the reference's keys keep its spelling ("Num GPUS") so its readers find them.
#include "results/result_columns.hpp"
#include "results/record_keys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tokbench::results {
namespace {

using S = Section;

std::vector<Column> make_columns() {
  std::vector<Column> columns{
      // The reference benchmark's keys, in its order; where people see the key itself, the label is the key.
      {key::average_iter_time, "Average iter time", "ms", "{:.2f}", S::reference},
      {key::model_flops, "Model FLOPs per micro-batch", "FLOPs", "", S::reference},
      {key::model_flop_per_sec, "Model FLOP/s total", "FLOP/s", "{:.4g}", S::reference},
      {key::tokens_per_sec, "Tokens/s", "tokens/s", "{:.1f}", S::reference},
      {key::memory_used_gb, "Memory used", "GB", "{:.3f}", S::reference},
      {key::model_name, key::model_name, "", "", S::reference},
      {key::num_gpus, key::num_gpus, "", "", S::reference},
      {key::seq_len, key::seq_len, "tokens", "", S::reference},
      {key::micro_bs, key::micro_bs, "sequences", "", S::reference},
      {key::global_bs, key::global_bs, "sequences", "", S::reference},
      {key::ga, key::ga, "", "", S::reference},
      {key::distributed_mode, key::distributed_mode, "", "", S::reference},
      {key::sharding_size, key::sharding_size, "", "", S::reference},
      {key::compiler, "Compiler", "", "", S::reference},
      // tokbench's own.
      {key::schema_version, "Schema version", "", "", S::tokbench, false},
      {key::status, "Status", "", "", S::tokbench},
      {key::message, "Message", "", "", S::tokbench},
      {key::executor, "Executor", "", "", S::tokbench},
      // python-thunder only: how thunder took the model (jit, dynamo) and the executors it was
      // given, highest priority first, as the Python step reported them.
      {key::thunder_front_end, "thunder front end", "", "", S::tokbench, true, false, true},
      {key::thunder_executors, "thunder executors", "", "", S::tokbench, true, false, true},
      // The fused executor's GEMM choice per role and shape class (null for other executors).
      {key::kernels, "Kernels", "", "", S::tokbench, true, false, true},
      // The attention kernel PyTorch's dispatcher chose (flash_attention, cudnn_attention, ...;
      // --use-sdpa sets the reference's priority); null where the executor cannot say (thunder).
      {key::attention_kernel, "Attention kernel", "", "", S::tokbench, true, false, true},
      // --cuda-graphs: "on" when the whole step was captured once and replayed, else "off"; the note
      // says why it is off (auto's fallback, a capture abandoned at run time) or what to know when on.
      {key::cuda_graphs, "CUDA graphs", "", "", S::tokbench, true, false, true},
      {key::cuda_graphs_note, "CUDA graphs note", "", "", S::tokbench, true, false, true},
      {key::tokens_per_sec_per_device, "Tokens/s per device", "tokens/s", "{:.1f}", S::tokbench},
      // --dynamic: the padded positions processed per second (tokens_per_sec counts real tokens).
      {key::positions_per_sec, "Positions/s (padded)", "positions/s", "{:.1f}", S::tokbench, true, false, true},
      {key::model_flops_per_iter_per_device, "Model FLOPs per iteration per device", "FLOPs", "", S::tokbench},
      {key::model_flops_per_iter_total, "Model FLOPs per iteration total", "FLOPs", "", S::tokbench},
      {key::model_tflop_per_s_per_device, "TFLOP/s per device", "TFLOP/s", "{:.4g}", S::tokbench},
      {key::model_tflop_per_s_total, "TFLOP/s total", "TFLOP/s", "{:.4g}", S::tokbench},
      {key::mfu, "MFU", "fraction of peak", "{:.4f}", S::tokbench, true, true},
      // With activation checkpointing the device also runs every block's forward again: the
      // FLOPs executed (hardware FLOPs) exceed the model's, and HFU divides those.
      {key::checkpoint_activations, "Activation checkpointing", "", "", S::tokbench},
      {key::hardware_flops, "Hardware FLOPs per micro-batch", "FLOPs", "", S::tokbench},
      {key::hardware_tflop_per_s_per_device, "Hardware TFLOP/s per device", "TFLOP/s", "{:.4g}", S::tokbench},
      {key::hfu, "HFU", "fraction of peak", "{:.4f}", S::tokbench, true, true},
      {key::mfu_peak_tflop_per_s, "MFU peak", "TFLOP/s", "{:.4g}", S::tokbench},
      {key::mfu_peak_chip, "MFU peak chip", "", "", S::tokbench},
      {key::mfu_peak_source, "MFU peak source", "", "", S::tokbench},
      {key::mfu_peak_is_estimate, "MFU peak is an estimate", "", "", S::tokbench},
      {key::mfu_precision, "MFU precision", "", "", S::tokbench},
      {key::flops_convention, "FLOPs convention", "", "", S::tokbench},
      {key::warmup_iters, "Warm-up iterations", "", "", S::tokbench},
      {key::max_iters, "Iterations", "", "", S::tokbench},
      {key::measured_iters, "Measured iterations", "", "", S::tokbench},
      {key::measured_window_s, "Measured window", "s", "{:.3f}", S::tokbench},
      {key::iter_time_ms, "Iter time", "ms", "{:.2f}", S::tokbench},
      {key::loss_first, "Loss first", "", "{:.4f}", S::tokbench},
      {key::loss_last, "Loss last", "", "{:.4f}", S::tokbench},
      {key::parameters, "Parameters (whole model)", "", "", S::tokbench},
      {key::n_layer, "Layers", "", "", S::tokbench},
      {key::memory_allocated_peak_gb, "Memory allocated peak", "GB", "{:.3f}", S::tokbench},
      {key::memory_reserved_peak_gb, "Memory reserved peak", "GB", "{:.3f}", S::tokbench},
      {key::peak_rss_gb, "Process peak RSS", "GB", "{:.3f}", S::tokbench, true, false, true},  // CPU runs
      // The breakdown of the reported peak's rank (train/memory_breakdown.hpp; docs/run.md).
      {key::memory_parameters_gb, "Memory: parameters", "GB", "{:.3f}", S::tokbench},
      {key::memory_gradients_gb, "Memory: gradients", "GB", "{:.3f}", S::tokbench},
      {key::memory_optimizer_state_gb, "Memory: optimizer state", "GB", "{:.3f}", S::tokbench},
      {key::memory_activations_gb, "Memory: activations", "GB", "{:.3f}", S::tokbench},
      {key::memory_comm_buffers_gb, "Memory: communication buffers", "GB", "{:.3f}", S::tokbench},
      {key::memory_allocator_reserve_gb, "Memory: allocator reserve", "GB", "{:.3f}", S::tokbench},
      {key::memory_estimate_gb, "Memory estimate", "GB", "{:.2f}", S::tokbench},
      {key::harness_overhead_percent, "Harness overhead", "% of the window", "{:.3f}", S::tokbench},
      {key::world_size, "World size", "ranks", "", S::tokbench},
      // FSDP only: zero2, zero3, hybrid_zero2, ...; and the units: none, block, layer.
      {key::sharding_mode, "Sharding mode", "", "", S::tokbench, true, false, true},
      {key::bucketing, "Bucketing", "", "", S::tokbench, true, false, true},
      {key::ranks, "Rank", "", "{:.3f}", S::tokbench},
      {key::device, "Device", "", "", S::tokbench},
      {key::device_name, "Device name", "", "", S::tokbench},
      {key::dtype, key::dtype, "", "", S::tokbench},
      {key::tf32, "TF32 matmuls", "", "", S::tokbench},
      {key::zero_grad, "Zero grad", "", "", S::tokbench},
      // How the run was made.
      {key::iterations, "Iterations (each)", "", "", S::context, false},
      {key::config, "Config", "", "", S::context, false},
      {key::environment, "Environment", "", "", S::context, false},
      // Forward, backward and optimizer seconds per unit (embedding, each block, head), from
      // a pass after the window (train/unit_timings.hpp); null when none was run.
      {key::unit_timings, "Unit timings", "", "", S::context, false},
      // A fixed GEMM timed before the warm-up and after the window of a one-rank CPU run
      // (train/reference_gemm.hpp): the machine's speed at the run's moment, which predict
      // compares with the comm document's; {"ran": false, "why"} elsewhere.
      {key::reference_probe, "Reference probe", "", "", S::context, false},
      // Where one rank's iteration time goes, by category, from a profiled pass after the window
      // (account/time_account.hpp, docs/time-account.md); null when none was run. The report
      // prints it as a waterfall from the peak down to the MFU.
      {key::time_account, "Time account", "", "", S::context, false},
      // `tokbench predict`'s records only: the cluster, the assumptions, the time breakdown and
      // the measured run the prediction started from (docs/predict.md).
      {key::prediction, "Prediction", "", "", S::context, false},
      // Added by sweeps and the history store.
      {key::sweep_config_id, "config", "", "", S::sweep, false},
      {key::sweep_options, "sweep options", "", "", S::sweep, false},
      {key::sweep_id, "sweep", "", "", S::sweep, false},
      {key::slurm_job_id, "Slurm job", "", "", S::sweep, false},  // sweeps run with --launcher slurm
  };
  // Every column holds numbers but these.
  const std::vector<std::pair<std::string_view, Kind>> kinds = {
      {key::model_name, Kind::text},         {key::distributed_mode, Kind::text}, {key::compiler, Kind::text},
      {key::status, Kind::text},             {key::message, Kind::text},          {key::executor, Kind::text},
      {key::thunder_front_end, Kind::text},  {key::thunder_executors, Kind::text},
      {key::attention_kernel, Kind::text},   {key::cuda_graphs, Kind::text},      {key::cuda_graphs_note, Kind::text},
      {key::kernels, Kind::structured},      {key::mfu_peak_chip, Kind::text},    {key::mfu_peak_source, Kind::text},
      {key::mfu_peak_is_estimate, Kind::flag}, {key::mfu_precision, Kind::text},  {key::flops_convention, Kind::text},
      {key::sharding_mode, Kind::text},      {key::bucketing, Kind::text},        {key::ranks, Kind::structured},
      {key::device, Kind::text},             {key::device_name, Kind::text},      {key::dtype, Kind::text},
      {key::tf32, Kind::flag},               {key::checkpoint_activations, Kind::flag},               {key::zero_grad, Kind::text},        {key::iterations, Kind::structured},
      {key::config, Kind::structured},       {key::environment, Kind::structured}, {key::sweep_config_id, Kind::text},
      {key::sweep_options, Kind::structured}, {key::unit_timings, Kind::structured}, {key::time_account, Kind::structured},
      {key::reference_probe, Kind::structured},
      {key::prediction, Kind::structured},
  };
  for (const auto& [key, kind] : kinds) {
    auto it = std::find_if(columns.begin(), columns.end(), [&](const Column& c) { return c.key == key; });
    if (it == columns.end()) throw std::logic_error("column kind for unknown key " + std::string(key));
    it->kind = kind;
  }
  return columns;
}

template <typename Json>
std::string number_text(const std::string& format, const Json& value) {
  if (value.is_number_integer()) return std::to_string(value.template get<std::int64_t>());
  if (value.is_number_unsigned()) return std::to_string(value.template get<std::uint64_t>());
  if (format.empty()) return fmt::format("{}", value.template get<double>());
  return fmt::format(fmt::runtime(format), value.template get<double>());
}

}  // namespace

const std::vector<Column>& result_columns() {
  static const std::vector<Column> columns = make_columns();
  return columns;
}

const std::vector<Column>& tabular_columns() {
  static const std::vector<Column> columns = [] {
    const std::vector<std::string> identity = {key::sweep_config_id, key::model_name, key::num_gpus, key::seq_len,
                                               key::micro_bs, key::global_bs, key::ga, key::distributed_mode,
                                               key::sharding_size, key::compiler, key::executor, key::status, key::message};
    std::vector<Column> ordered;
    for (const auto& key : identity) ordered.push_back(*find_column(key));
    for (const auto& c : result_columns())
      if (std::find(identity.begin(), identity.end(), c.key) == identity.end()) ordered.push_back(c);
    return ordered;
  }();
  return columns;
}

const Column* find_column(std::string_view key) {
  const auto& columns = result_columns();
  auto it = std::find_if(columns.begin(), columns.end(), [&](const Column& c) { return c.key == key; });
  return it == columns.end() ? nullptr : &*it;
}

bool is_numeric_column(std::string_view key) {
  const Column* column = find_column(key);
  return column != nullptr && column->kind == Kind::number;
}

template <typename Json>
std::string column_text(const Column& column, const Json& value) {
  if (value.is_null()) return "N/A";
  if (value.is_string()) return value.template get<std::string>();
  if (value.is_boolean()) return value.template get<bool>() ? "yes" : "no";
  if (value.is_number() && column.percent) return fmt::format("{:.2f}%", value.template get<double>() * 100);
  if (value.is_number()) return number_text(column.format, value);
  if (value.is_object()) {
    std::string text;
    for (const auto& [key, item] : value.items()) {
      if (!text.empty()) text += ", ";
      text += key + " " + (item.is_number() ? number_text(column.format, item) : column_text(column, item));
    }
    return text;
  }
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

template std::string column_text(const Column&, const nlohmann::json&);
template std::string column_text(const Column&, const nlohmann::ordered_json&);

nlohmann::ordered_json in_column_order(const nlohmann::ordered_json& record) {
  for (const auto& [key, value] : record.items())
    if (!find_column(key))
      throw std::logic_error("result key '" + key + "' has no column in results::result_columns()");
  nlohmann::ordered_json ordered = nlohmann::ordered_json::object();
  for (const auto& column : result_columns())
    if (auto it = record.find(column.key); it != record.end()) ordered[column.key] = *it;
  return ordered;
}

}  // namespace tokbench::results
