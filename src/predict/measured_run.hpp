// The measured run a prediction starts from: its result record's options, memory and
// `unit_timings` (per timed unit: forward and backward seconds per micro-batch, optimizer
// seconds per iteration), checked and typed. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parallel/layout.hpp"
#include "parallel/strategy.hpp"
#include "predict/comm_plan.hpp"
#include "predict/input_spread.hpp"
#include "predict/reference_level.hpp"
#include "results/run_record.hpp"

namespace tokbench::predict {

struct UnitTiming {
  UnitShape shape;
  double forward_seconds = 0, backward_seconds = 0;  // per micro-batch
  double optimizer_seconds = 0;                      // per iteration
};

// The memory figures of the record's reported rank (GB, 10^9 bytes); nullopt where not recorded.
struct MeasuredMemory {
  std::optional<double> peak_GB, reserved_GB;
  std::optional<double> parameters_GB, gradients_GB, optimizer_state_GB, activations_GB, comm_buffers_GB;
  bool has_breakdown() const {
    return parameters_GB && gradients_GB && optimizer_state_GB && activations_GB && comm_buffers_GB;
  }
};

struct MeasuredRun {
  std::string source;      // where the record came from (file, store row)
  results::RunRecord record;  // the whole record, typed, for the keys a prediction carries over
  std::string model_name, dtype, device, device_name, executor;
  int64_t parameters = 0, n_layer = 0, seq_len = 0, micro_batch = 0, grad_accum = 1, world_size = 1;
  int64_t local_ranks = 1;  // ranks on the reporting rank's host
  parallel::DistMode distributed_mode = parallel::DistMode::none;
  std::string shard_mode = parallel::default_shard_word(), bucketing_mode = "none";
  std::optional<int64_t> sharding_size;
  // --bucketing-mode size: the threshold the run's units were cut by (config.fsdp_min_unit_params,
  // else the --fsdp-bucket-params it was given); unset: PyTorch's default applies.
  std::optional<int64_t> fsdp_min_unit_params;
  double ddp_bucket_size_mb = parallel::kDefaultDdpBucketMb;
  bool ddp_overlap = true, skip_data_sync = true;
  int64_t num_threads = 0;            // 0: LibTorch's default (every core)
  std::optional<int64_t> cpu_cores;   // the machine's cores, when the record says
  double average_iter_time_ms = 0;
  std::string clock;                  // unit_timings.clock
  std::vector<UnitTiming> units;      // forward order
  // The model's parameters in registration order, timed_unit indexing `units`; one per unit
  // when the record has none (parameter_shapes_recorded false).
  std::vector<parallel::ParameterShape> parameter_shapes;
  bool parameter_shapes_recorded = false;
  double iteration_seconds = 0, exposed_comm_seconds = 0, optimizer_seconds = 0;
  // The level the units were read at (input_spread.hpp): `units` and `optimizer_seconds` are
  // already multiplied by its scale; iteration_seconds stays the pass's own.
  UnitTimingsLevel unit_timings_level;
  // The compute's level (reference_level.hpp), set by at_reference_level: `units` and
  // `optimizer_seconds` multiplied by its scale too, where the comm document's moment applied.
  ReferenceLevel reference_level;
  MeasuredMemory memory;

  bool device_is_cpu() const { return device.rfind("cpu", 0) == 0; }
  int64_t bytes_per_parameter() const { return dtype == "bf16-true" ? 2 : 4; }  // bf16-mixed keeps fp32 parameters
  // The ranks one parameter shard is spread over in the measured run (1 unless FSDP).
  int64_t shard_size() const;
};

// Throws std::invalid_argument with one line naming `source` and the problem: not a run record (a
// key of the wrong type: results::record_from_json's refusal), not a finished run (status not ok,
// or a prediction), no unit_timings (rerun with a tokbench that records them), a unit_timings of
// another shape, or options a run never records.
MeasuredRun read_measured_run(const nlohmann::json& record, const std::string& source);
MeasuredRun read_measured_run(results::RunRecord record, const std::string& source);  // a record already typed

// The run with its compute at the `chosen` level (reference_level.hpp): at comm_document, carried
// to the comm document's moment by its record's `reference_probe` against `comm`'s
// compute_sharing.alone_ms (`comm` nullptr: none); `reference_level` says whether it applied and
// why not.
MeasuredRun at_reference_level(const MeasuredRun& run, const CommMeasurements* comm, ComputeLevel chosen);

// The records a document holds: a run record itself, a sweep's JSON ({"runs": [...]}) or a list
// of records; each with where it came from ("FILE", "FILE runs[2]").
std::vector<std::pair<nlohmann::json, std::string>> records_of_document(const nlohmann::json& doc, const std::string& source);

}  // namespace tokbench::predict
