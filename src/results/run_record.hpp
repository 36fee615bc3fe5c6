// The run record as a type: what `tokbench run`, `tokbench predict` and a sweep's row for a
// configuration that never ran (invalid, error, timeout) build, and the one place that turns it
// into the JSON result (to_json) and back (record_from_json). Each member is one key of the
// column table (result_columns.hpp), in the table's order; a member may be absent (the record
// has no such key: a sweep's row holds 19), null (a figure the run could not give) or a value of
// its type. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "results/record_keys.hpp"

namespace tokbench::results {

// A FLOP count: a whole number where it was counted (tokbench run), a real one where it was
// derived from a record read back (tokbench predict). The JSON keeps which: 1000 or 1000.0.
using Number = std::variant<std::int64_t, double>;
// A count, or the text a sweep was given for it where that text is no count (its invalid row
// echoes the configuration's value as given).
using Given = std::variant<std::int64_t, std::string>;
// A structured block (config, ranks, the per-iteration records, the time account, ...), kept in
// the order its writer gave it.
using Block = nlohmann::ordered_json;

// One key's value: absent, null, or a value.
template <typename T>
class Field {
 public:
  Field() = default;                        // absent
  Field(std::nullptr_t) : present_(true) {} // null
  Field(std::optional<T> value) : present_(true), value_(std::move(value)) {}
  template <typename U, typename = std::enable_if_t<!std::is_same_v<std::decay_t<U>, std::nullptr_t> &&
                                                    !std::is_same_v<std::decay_t<U>, Field> &&
                                                    !std::is_same_v<std::decay_t<U>, std::optional<T>> &&
                                                    std::is_constructible_v<T, U&&>>>
  Field(U&& value) : present_(true), value_(T(std::forward<U>(value))) {}

  bool present() const { return present_; }
  bool is_null() const { return present_ && !value_; }
  const std::optional<T>& value() const { return value_; }
  template <typename U>
  T value_or(U&& fallback) const { return value_.value_or(std::forward<U>(fallback)); }

 private:
  bool present_ = false;
  std::optional<T> value_;
};

struct RunRecord {
  Field<double> average_iter_time;
  Field<Number> model_flops;
  Field<double> model_flop_per_sec;
  Field<double> tokens_per_sec;
  Field<double> memory_used_gb;
  Field<std::string> model_name;
  Field<std::int64_t> num_gpus;
  Field<Given> seq_len;
  Field<Given> micro_bs;
  Field<Given> global_bs;
  Field<std::int64_t> ga;
  Field<std::string> distributed_mode;
  Field<Given> sharding_size;
  Field<std::string> compiler;
  Field<std::int64_t> schema_version;
  Field<std::string> status;
  Field<std::string> message;
  Field<std::string> executor;
  Field<std::string> thunder_front_end;
  Field<std::string> thunder_executors;
  Field<Block> kernels;
  Field<std::string> attention_kernel;
  Field<std::string> cuda_graphs;
  Field<std::string> cuda_graphs_note;
  Field<double> tokens_per_sec_per_device;
  Field<double> positions_per_sec;
  Field<Number> model_flops_per_iter_per_device;
  Field<Number> model_flops_per_iter_total;
  Field<double> model_tflop_per_s_per_device;
  Field<double> model_tflop_per_s_total;
  Field<double> mfu;
  Field<bool> checkpoint_activations;
  Field<Number> hardware_flops;
  Field<double> hardware_tflop_per_s_per_device;
  Field<double> hfu;
  Field<double> mfu_peak_tflop_per_s;
  Field<std::string> mfu_peak_chip;
  Field<std::string> mfu_peak_source;
  Field<bool> mfu_peak_is_estimate;
  Field<std::string> mfu_precision;
  Field<std::string> flops_convention;
  Field<std::int64_t> warmup_iters;
  Field<std::int64_t> max_iters;
  Field<std::int64_t> measured_iters;
  Field<double> measured_window_s;
  Field<Block> iter_time_ms;
  Field<double> loss_first;
  Field<double> loss_last;
  Field<std::int64_t> parameters;
  Field<std::int64_t> n_layer;
  Field<double> memory_allocated_peak_gb;
  Field<double> memory_reserved_peak_gb;
  Field<double> peak_rss_gb;
  Field<double> memory_parameters_gb;
  Field<double> memory_gradients_gb;
  Field<double> memory_optimizer_state_gb;
  Field<double> memory_activations_gb;
  Field<double> memory_comm_buffers_gb;
  Field<double> memory_allocator_reserve_gb;
  Field<double> memory_estimate_gb;
  Field<double> harness_overhead_percent;
  Field<std::int64_t> world_size;
  Field<std::string> sharding_mode;
  Field<std::string> bucketing;
  Field<Block> ranks;
  Field<std::string> device;
  Field<std::string> device_name;
  Field<std::string> dtype;
  Field<bool> tf32;
  Field<std::string> zero_grad;
  Field<Block> iterations;
  Field<Block> config;
  Field<Block> environment;
  Field<Block> unit_timings;
  Field<Block> time_account;
  Field<Block> prediction;
  Field<std::string> sweep_config_id;
  Field<Block> sweep_options;
  Field<std::int64_t> sweep_id;
  Field<std::int64_t> slurm_job_id;
  // Keys of a record read back that the column table does not know (a newer tokbench's, another
  // tool's annotations), as they were, so that reading a record never fails on a key added later.
  // No reader interprets them and to_json does not write them: a writer fills members only.
  Block extra = Block::object();
};

// Calls f(key, field) for each member of `record`, in the column table's order: the one list
// that ties a member to its key (to_json, record_from_json and the tests walk it).
template <typename Record, typename F>
void for_each_field(Record& r, F&& f) {
  static_assert(std::is_same_v<std::remove_const_t<Record>, RunRecord>);
  f(key::average_iter_time, r.average_iter_time);
  f(key::model_flops, r.model_flops);
  f(key::model_flop_per_sec, r.model_flop_per_sec);
  f(key::tokens_per_sec, r.tokens_per_sec);
  f(key::memory_used_gb, r.memory_used_gb);
  f(key::model_name, r.model_name);
  f(key::num_gpus, r.num_gpus);
  f(key::seq_len, r.seq_len);
  f(key::micro_bs, r.micro_bs);
  f(key::global_bs, r.global_bs);
  f(key::ga, r.ga);
  f(key::distributed_mode, r.distributed_mode);
  f(key::sharding_size, r.sharding_size);
  f(key::compiler, r.compiler);
  f(key::schema_version, r.schema_version);
  f(key::status, r.status);
  f(key::message, r.message);
  f(key::executor, r.executor);
  f(key::thunder_front_end, r.thunder_front_end);
  f(key::thunder_executors, r.thunder_executors);
  f(key::kernels, r.kernels);
  f(key::attention_kernel, r.attention_kernel);
  f(key::cuda_graphs, r.cuda_graphs);
  f(key::cuda_graphs_note, r.cuda_graphs_note);
  f(key::tokens_per_sec_per_device, r.tokens_per_sec_per_device);
  f(key::positions_per_sec, r.positions_per_sec);
  f(key::model_flops_per_iter_per_device, r.model_flops_per_iter_per_device);
  f(key::model_flops_per_iter_total, r.model_flops_per_iter_total);
  f(key::model_tflop_per_s_per_device, r.model_tflop_per_s_per_device);
  f(key::model_tflop_per_s_total, r.model_tflop_per_s_total);
  f(key::mfu, r.mfu);
  f(key::checkpoint_activations, r.checkpoint_activations);
  f(key::hardware_flops, r.hardware_flops);
  f(key::hardware_tflop_per_s_per_device, r.hardware_tflop_per_s_per_device);
  f(key::hfu, r.hfu);
  f(key::mfu_peak_tflop_per_s, r.mfu_peak_tflop_per_s);
  f(key::mfu_peak_chip, r.mfu_peak_chip);
  f(key::mfu_peak_source, r.mfu_peak_source);
  f(key::mfu_peak_is_estimate, r.mfu_peak_is_estimate);
  f(key::mfu_precision, r.mfu_precision);
  f(key::flops_convention, r.flops_convention);
  f(key::warmup_iters, r.warmup_iters);
  f(key::max_iters, r.max_iters);
  f(key::measured_iters, r.measured_iters);
  f(key::measured_window_s, r.measured_window_s);
  f(key::iter_time_ms, r.iter_time_ms);
  f(key::loss_first, r.loss_first);
  f(key::loss_last, r.loss_last);
  f(key::parameters, r.parameters);
  f(key::n_layer, r.n_layer);
  f(key::memory_allocated_peak_gb, r.memory_allocated_peak_gb);
  f(key::memory_reserved_peak_gb, r.memory_reserved_peak_gb);
  f(key::peak_rss_gb, r.peak_rss_gb);
  f(key::memory_parameters_gb, r.memory_parameters_gb);
  f(key::memory_gradients_gb, r.memory_gradients_gb);
  f(key::memory_optimizer_state_gb, r.memory_optimizer_state_gb);
  f(key::memory_activations_gb, r.memory_activations_gb);
  f(key::memory_comm_buffers_gb, r.memory_comm_buffers_gb);
  f(key::memory_allocator_reserve_gb, r.memory_allocator_reserve_gb);
  f(key::memory_estimate_gb, r.memory_estimate_gb);
  f(key::harness_overhead_percent, r.harness_overhead_percent);
  f(key::world_size, r.world_size);
  f(key::sharding_mode, r.sharding_mode);
  f(key::bucketing, r.bucketing);
  f(key::ranks, r.ranks);
  f(key::device, r.device);
  f(key::device_name, r.device_name);
  f(key::dtype, r.dtype);
  f(key::tf32, r.tf32);
  f(key::zero_grad, r.zero_grad);
  f(key::iterations, r.iterations);
  f(key::config, r.config);
  f(key::environment, r.environment);
  f(key::unit_timings, r.unit_timings);
  f(key::time_account, r.time_account);
  f(key::prediction, r.prediction);
  f(key::sweep_config_id, r.sweep_config_id);
  f(key::sweep_options, r.sweep_options);
  f(key::sweep_id, r.sweep_id);
  f(key::slurm_job_id, r.slurm_job_id);}

// The JSON result of `record`: its present members, in the column table's order (through
// in_column_order, so a key without a column is a std::logic_error). Numbers keep their type.
nlohmann::ordered_json to_json(const RunRecord& record);

// `json` (an object) as a record: each key of the column table read into its member, each other
// key kept in `extra`. Throws std::invalid_argument with one line naming the key that holds a
// value of the wrong type ("its key 'GA' holds a string; a run record has a whole number or null
// there"). It reads every schema tokbench has written (1 to kSchemaVersion): a key keeps its
// type across schemas, and a newer schema only adds keys.
RunRecord record_from_json(const nlohmann::ordered_json& json);
RunRecord record_from_json(const nlohmann::json& json);

// The member of `record` whose key is `key`, as JSON (null when it is null); nullopt when the
// record has no such member present (absent, or `key` is none of the table's). For code that
// walks keys from a table of its own (compare's key fields, from the option table) rather than
// naming a member.
std::optional<nlohmann::json> member_json(const RunRecord& record, std::string_view key);

// One key of a record read back (an object), as the member of type T reads it: absent, null or
// a value; std::invalid_argument as record_from_json's when it holds another type. For readers
// that take a few keys of a record they did not build (predict's measured run, compare).
// T: std::int64_t, double, bool, std::string, Number, Given or Block.
template <typename T>
Field<T> field_from_json(const nlohmann::json& json, const char* key);

}  // namespace tokbench::results
