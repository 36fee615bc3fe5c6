// The column table. Meanings: docs/run.md ("The JSON result") and docs/PERFORMANCE.md ("The
// contract"); the reference's keys keep its spelling ("Num GPUS") so its readers find them.
#include "results/result_columns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tokbench::results {
namespace {

using S = Section;

std::vector<Column> make_columns() {
  std::vector<Column> columns{
      // The reference benchmark's keys, in its order.
      {"average_iter_time", "Average iter time", "ms", "{:.2f}", S::reference},
      {"model_flops", "Model FLOPs per micro-batch", "FLOPs", "", S::reference},
      {"model_flop_per_sec", "Model FLOP/s total", "FLOP/s", "{:.4g}", S::reference},
      {"tokens_per_sec", "Tokens/s", "tokens/s", "{:.1f}", S::reference},
      {"memory_used_GB", "Memory used", "GB", "{:.3f}", S::reference},
      {"model_name", "model_name", "", "", S::reference},
      {"Num GPUS", "Num GPUS", "", "", S::reference},
      {"Seq Len", "Seq Len", "tokens", "", S::reference},
      {"Micro BS", "Micro BS", "sequences", "", S::reference},
      {"Global BS", "Global BS", "sequences", "", S::reference},
      {"GA", "GA", "", "", S::reference},
      {"Distributed Mode", "Distributed Mode", "", "", S::reference},
      {"Sharding Size", "Sharding Size", "", "", S::reference},
      {"compiler", "Compiler", "", "", S::reference},
      // tokbench's own.
      {"schema_version", "Schema version", "", "", S::tokbench, false},
      {"status", "Status", "", "", S::tokbench},
      {"message", "Message", "", "", S::tokbench},
      {"executor", "Executor", "", "", S::tokbench},
      // python-thunder only: how thunder took the model (jit, dynamo) and the executors it was
      // given, highest priority first, as the Python step reported them.
      {"thunder_front_end", "thunder front end", "", "", S::tokbench, true, false, true},
      {"thunder_executors", "thunder executors", "", "", S::tokbench, true, false, true},
      // The fused executor's GEMM choice per role and shape class (null for other executors).
      {"kernels", "Kernels", "", "", S::tokbench, true, false, true},
      // The attention kernel PyTorch's dispatcher chose (flash_attention, cudnn_attention, ...;
      // --use-sdpa sets the reference's priority); null where the executor cannot say (thunder).
      {"attention_kernel", "Attention kernel", "", "", S::tokbench, true, false, true},
      {"tokens_per_sec_per_device", "Tokens/s per device", "tokens/s", "{:.1f}", S::tokbench},
      // --dynamic: the padded positions processed per second (tokens_per_sec counts real tokens).
      {"positions_per_sec", "Positions/s (padded)", "positions/s", "{:.1f}", S::tokbench, true, false, true},
      {"model_flops_per_iter_per_device", "Model FLOPs per iteration per device", "FLOPs", "", S::tokbench},
      {"model_flops_per_iter_total", "Model FLOPs per iteration total", "FLOPs", "", S::tokbench},
      {"model_TFLOP_per_s_per_device", "TFLOP/s per device", "TFLOP/s", "{:.4g}", S::tokbench},
      {"model_TFLOP_per_s_total", "TFLOP/s total", "TFLOP/s", "{:.4g}", S::tokbench},
      {"mfu", "MFU", "fraction of peak", "{:.4f}", S::tokbench, true, true},
      // With activation checkpointing the device also runs every block's forward again: the
      // FLOPs executed (hardware FLOPs) exceed the model's, and HFU divides those.
      {"checkpoint_activations", "Activation checkpointing", "", "", S::tokbench},
      {"hardware_flops", "Hardware FLOPs per micro-batch", "FLOPs", "", S::tokbench},
      {"hardware_TFLOP_per_s_per_device", "Hardware TFLOP/s per device", "TFLOP/s", "{:.4g}", S::tokbench},
      {"hfu", "HFU", "fraction of peak", "{:.4f}", S::tokbench, true, true},
      {"mfu_peak_TFLOP_per_s", "MFU peak", "TFLOP/s", "{:.4g}", S::tokbench},
      {"mfu_peak_chip", "MFU peak chip", "", "", S::tokbench},
      {"mfu_peak_source", "MFU peak source", "", "", S::tokbench},
      {"mfu_peak_is_estimate", "MFU peak is an estimate", "", "", S::tokbench},
      {"mfu_precision", "MFU precision", "", "", S::tokbench},
      {"flops_convention", "FLOPs convention", "", "", S::tokbench},
      {"warmup_iters", "Warm-up iterations", "", "", S::tokbench},
      {"max_iters", "Iterations", "", "", S::tokbench},
      {"measured_iters", "Measured iterations", "", "", S::tokbench},
      {"measured_window_s", "Measured window", "s", "{:.3f}", S::tokbench},
      {"iter_time_ms", "Iter time", "ms", "{:.2f}", S::tokbench},
      {"loss_first", "Loss first", "", "{:.4f}", S::tokbench},
      {"loss_last", "Loss last", "", "{:.4f}", S::tokbench},
      {"parameters", "Parameters (whole model)", "", "", S::tokbench},
      {"n_layer", "Layers", "", "", S::tokbench},
      {"memory_allocated_peak_GB", "Memory allocated peak", "GB", "{:.3f}", S::tokbench},
      {"memory_reserved_peak_GB", "Memory reserved peak", "GB", "{:.3f}", S::tokbench},
      {"peak_rss_GB", "Process peak RSS", "GB", "{:.3f}", S::tokbench, true, false, true},  // CPU runs
      // The breakdown of the reported peak's rank (train/memory_breakdown.hpp; docs/run.md).
      {"memory_parameters_GB", "Memory: parameters", "GB", "{:.3f}", S::tokbench},
      {"memory_gradients_GB", "Memory: gradients", "GB", "{:.3f}", S::tokbench},
      {"memory_optimizer_state_GB", "Memory: optimizer state", "GB", "{:.3f}", S::tokbench},
      {"memory_activations_GB", "Memory: activations", "GB", "{:.3f}", S::tokbench},
      {"memory_comm_buffers_GB", "Memory: communication buffers", "GB", "{:.3f}", S::tokbench},
      {"memory_allocator_reserve_GB", "Memory: allocator reserve", "GB", "{:.3f}", S::tokbench},
      {"memory_estimate_GB", "Memory estimate", "GB", "{:.2f}", S::tokbench},
      {"harness_overhead_percent", "Harness overhead", "% of the window", "{:.3f}", S::tokbench},
      {"world_size", "World size", "ranks", "", S::tokbench},
      // FSDP only: zero2, zero3, hybrid_zero2, ...; and the units: none, block, layer.
      {"sharding_mode", "Sharding mode", "", "", S::tokbench, true, false, true},
      {"bucketing", "Bucketing", "", "", S::tokbench, true, false, true},
      {"ranks", "Rank", "", "{:.3f}", S::tokbench},
      {"device", "Device", "", "", S::tokbench},
      {"device_name", "Device name", "", "", S::tokbench},
      {"dtype", "dtype", "", "", S::tokbench},
      {"tf32", "TF32 matmuls", "", "", S::tokbench},
      {"zero_grad", "Zero grad", "", "", S::tokbench},
      // How the run was made.
      {"iterations", "Iterations (each)", "", "", S::context, false},
      {"config", "Config", "", "", S::context, false},
      {"environment", "Environment", "", "", S::context, false},
      // Forward, backward and optimizer seconds per unit (embedding, each block, head), from
      // a pass after the window (train/unit_timings.hpp); null when none was run.
      {"unit_timings", "Unit timings", "", "", S::context, false},
      // Where one rank's iteration time goes, by category, from a profiled pass after the window
      // (account/time_account.hpp, docs/time-account.md); null when none was run. The report
      // prints it as a waterfall from the peak down to the MFU.
      {"time_account", "Time account", "", "", S::context, false},
      // `tokbench predict`'s records only: the cluster, the assumptions, the time breakdown and
      // the measured run the prediction started from (docs/predict.md).
      {"prediction", "Prediction", "", "", S::context, false},
      // Added by sweeps and the history store.
      {"sweep_config_id", "config", "", "", S::sweep, false},
      {"sweep_options", "sweep options", "", "", S::sweep, false},
      {"sweep_id", "sweep", "", "", S::sweep, false},
      {"slurm_job_id", "Slurm job", "", "", S::sweep, false},  // sweeps run with --launcher slurm
  };
  // Every column holds numbers but these.
  const std::vector<std::pair<std::string_view, Kind>> kinds = {
      {"model_name", Kind::text},         {"Distributed Mode", Kind::text}, {"compiler", Kind::text},
      {"status", Kind::text},             {"message", Kind::text},          {"executor", Kind::text},
      {"thunder_front_end", Kind::text},  {"thunder_executors", Kind::text},
      {"attention_kernel", Kind::text},
      {"kernels", Kind::structured},      {"mfu_peak_chip", Kind::text},    {"mfu_peak_source", Kind::text},
      {"mfu_peak_is_estimate", Kind::flag}, {"mfu_precision", Kind::text},  {"flops_convention", Kind::text},
      {"sharding_mode", Kind::text},      {"bucketing", Kind::text},        {"ranks", Kind::structured},
      {"device", Kind::text},             {"device_name", Kind::text},      {"dtype", Kind::text},
      {"tf32", Kind::flag},               {"checkpoint_activations", Kind::flag},               {"zero_grad", Kind::text},        {"iterations", Kind::structured},
      {"config", Kind::structured},       {"environment", Kind::structured}, {"sweep_config_id", Kind::text},
      {"sweep_options", Kind::structured}, {"unit_timings", Kind::structured}, {"time_account", Kind::structured},
      {"prediction", Kind::structured},
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
    const std::vector<std::string> identity = {"sweep_config_id", "model_name", "Num GPUS", "Seq Len",
                                               "Micro BS", "Global BS", "GA", "Distributed Mode",
                                               "Sharding Size", "compiler", "executor", "status", "message"};
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
