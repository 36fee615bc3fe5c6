// Reading the measured run (measured_run.hpp).
#include "predict/measured_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <cmath>
#include <stdexcept>

#include "config/device.hpp"
#include "config/row_record_keys.hpp"
#include "machine/environment_keys.hpp"
#include "parallel/unit_clock_keys.hpp"
#include "parallel/strategy.hpp"
#include "results/record_blocks.hpp"
#include "results/record_keys.hpp"
#include "results/record_status.hpp"
#include "usage/usage_error.hpp"
#include "results/report_keys.hpp"

namespace tokbench::predict {

// The record's config block's keys (the option rows').
namespace config_key = config::config_key;

namespace {

using results::Block;
using results::Field;

[[noreturn]] void refuse(const std::string& source, const std::string& what) {
  throw std::invalid_argument(fmt::format("--from '{}': {}", source, what));
}

// Within a block of the record (unit_timings, config, environment, ranks): its keys are the
// block's own, not the record's.
std::optional<double> number_at(const Block& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>())) return std::nullopt;
  return it->get<double>();
}

int64_t whole_at(const Block& j, const char* key, const std::string& source, int64_t fallback, bool required) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) refuse(source, fmt::format("the record has no '{}' (a whole number)", key));
    return fallback;
  }
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    refuse(source, fmt::format("its '{}' is {}, not a whole number", key, it->dump()));
  return it->get<int64_t>();
}

std::string text_at(const Block& j, const char* key, const std::string& fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// A figure of the record (its type checked when it was read): a finite number, or nullopt.
std::optional<double> figure(const Field<double>& f) {
  return f.value() && std::isfinite(*f.value()) ? f.value() : std::nullopt;
}

// A count of the record: absent or null is `fallback` (refused when `required`); a negative
// count, or text where a sweep's row echoes what it was given, is no count a run records.
int64_t count(const Field<results::Given>& f, const char* key, const std::string& source, int64_t fallback,
              bool required) {
  if (!f.value()) {
    if (required) refuse(source, fmt::format("the record has no '{}' (a whole number)", key));
    return fallback;
  }
  const auto* whole = std::get_if<int64_t>(&*f.value());
  if (!whole || *whole < 0)
    refuse(source, fmt::format("its '{}' is {}, not a whole number", key,
                               whole ? Block(*whole).dump() : Block(std::get<std::string>(*f.value())).dump()));
  return *whole;
}
int64_t count(const Field<int64_t>& f, const char* key, const std::string& source, int64_t fallback, bool required) {
  return count(f.value() ? Field<results::Given>(results::Given(*f.value())) : Field<results::Given>(), key, source,
               fallback, required);
}

UnitKind kind_of(const std::string& kind, const std::string& source, std::size_t index) {
  if (kind == "embedding") return UnitKind::embedding;
  if (kind == "block") return UnitKind::block;
  if (kind == "head") return UnitKind::head;
  refuse(source, fmt::format("unit_timings.units[{}].kind '{}' is not valid; valid: embedding, block, head", index, kind));
}

// The units at the measured window's level (input_spread.hpp, unit_timings_level): the pass's
// few iterations give the split between units, the window's median how long they take.
void level_unit_timings(std::optional<int64_t> pass_iterations, const Block& iterations, MeasuredRun& run) {
  std::string no_spread;
  run.unit_timings_level =
      unit_timings_level(iteration_spread(iterations, no_spread), run.iteration_seconds, pass_iterations.value_or(0));
  const double k = run.unit_timings_level.scale;
  if (!run.unit_timings_level.rescaled) return;
  for (auto& u : run.units) {
    u.forward_seconds *= k;
    u.backward_seconds *= k;
    u.optimizer_seconds *= k;
  }
  run.optimizer_seconds *= k;
}

// The model's parameters in registration order (unit_timings.parameter_shapes), each with its
// timed unit, for the target's layout.
void read_parameter_shapes(const results::UnitTimingsBlock& t, const std::string& source, MeasuredRun& run) {
  const int64_t element_bytes = run.bytes_per_parameter();
  run.parameter_shapes_recorded = t.parameter_shapes && !t.parameter_shapes->empty();
  if (!run.parameter_shapes_recorded) {
    const int64_t head = static_cast<int64_t>(run.units.size()) - 1;
    run.parameter_shapes.push_back({run.units[head].shape.name, run.units[head].shape.parameters, element_bytes, head});
    for (int64_t u = 0; u < head; ++u)
      run.parameter_shapes.push_back({run.units[u].shape.name, run.units[u].shape.parameters, element_bytes, u});
    return;
  }
  const std::vector<results::ParameterShapeEntry>& shapes = *t.parameter_shapes;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const results::ParameterShapeEntry& p = shapes[i];
    const std::string unit = p.unit.value_or("?");
    const auto timed = std::find_if(run.units.begin(), run.units.end(), [&](const UnitTiming& u) { return u.shape.name == unit; });
    if (timed == run.units.end() || !p.elements || *p.elements <= 0)
      refuse(source, fmt::format("unit_timings.parameter_shapes[{}] needs a unit of unit_timings.units and elements (> 0)", i));
    run.parameter_shapes.push_back({p.name.value_or(fmt::format("parameter.{}", i)), *p.elements, element_bytes,
                                    static_cast<int64_t>(timed - run.units.begin())});
  }
}

// The per-unit timings (at the window's level), then the model's parameters in registration order
// (unit_timings.parameter_shapes), each with its timed unit, for the target's layout. A record
// of an older tokbench has no parameter shapes: each timed unit then stands as one parameter,
// in the model's registration order of them (the head's lm_head is registered first, then the
// embedding and the blocks).
void read_unit_timings(const Block& timings, const Block& iterations, const std::string& source, MeasuredRun& run) {
  if (!timings.is_object()) refuse(source, "its unit_timings is not an object");
  results::UnitTimingsBlock t;
  try {
    t = results::unit_timings_from_json(timings);
  } catch (const std::invalid_argument& e) {
    refuse(source, e.what());
  }
  run.clock = t.clock.value_or(parallel::unit_clock_key::host);
  const int64_t micro = t.micro_batches_per_iteration.value_or(run.grad_accum);
  if (micro != run.grad_accum)
    refuse(source, fmt::format("unit_timings.micro_batches_per_iteration {} disagrees with its GA {}", micro, run.grad_accum));
  run.iteration_seconds = t.iteration_seconds.value_or(0.0);
  run.exposed_comm_seconds = t.exposed_comm_seconds.value_or(0.0);
  if (!t.units || t.units->size() < 3)
    refuse(source, "unit_timings.units must list the embedding, at least one block and the head");
  const std::vector<results::UnitEntry>& units = *t.units;
  double optimizer_sum = 0;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const results::UnitEntry& u = units[i];
    if (!u.object) refuse(source, fmt::format("unit_timings.units[{}] is not an object", i));
    UnitTiming timing;
    timing.shape.name = u.name.value_or(fmt::format("unit.{}", i));
    timing.shape.kind = kind_of(u.kind.value_or("?"), source, i);
    if (!u.parameters || *u.parameters <= 0)
      refuse(source, fmt::format("unit_timings.units[{}] ('{}') needs its parameter count (> 0)", i, timing.shape.name));
    timing.shape.parameters = *u.parameters;
    const auto forward = u.forward_seconds, backward = u.backward_seconds;
    if (!forward || !backward || *forward < 0 || *backward < 0)
      refuse(source, fmt::format("unit_timings.units[{}] ('{}') needs forward_seconds and backward_seconds (>= 0)", i,
                                 timing.shape.name));
    timing.forward_seconds = *forward;
    timing.backward_seconds = *backward;
    timing.optimizer_seconds = std::max(0.0, u.optimizer_seconds.value_or(0.0));
    optimizer_sum += timing.optimizer_seconds;
    run.units.push_back(timing);
  }
  if (run.units.front().shape.kind != UnitKind::embedding || run.units.back().shape.kind != UnitKind::head)
    refuse(source, "unit_timings.units must be the embedding, then the blocks, then the head");
  for (std::size_t i = 1; i + 1 < run.units.size(); ++i)
    if (run.units[i].shape.kind != UnitKind::block)
      refuse(source, fmt::format("unit_timings.units[{}] is a {}, where the blocks are", i, units[i].kind.value_or("?")));
  // The step's own optimizer time when recorded (it includes what no unit owns), else the units'.
  run.optimizer_seconds = t.optimizer_seconds.value_or(optimizer_sum);
  level_unit_timings(t.iterations, iterations, run);
  read_parameter_shapes(t, source, run);
}

}  // namespace

int64_t MeasuredRun::shard_size() const {
  if (distributed_mode != parallel::DistMode::fsdp) return 1;
  return sharding_size.value_or(world_size);
}

MeasuredRun read_measured_run(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) refuse(source, "not a run record (a JSON object)");
  results::RunRecord record;
  try {
    record = results::record_from_json(json);
  } catch (const std::invalid_argument& e) {
    refuse(source, e.what());
  }
  return read_measured_run(std::move(record), source);
}

MeasuredRun read_measured_run(results::RunRecord record, const std::string& source) {
  const std::string status = record.status.value_or("");
  if (status == results::kStatusPredicted)
    refuse(source, "it is a prediction; predict from a measured run (tokbench run --json-path)");
  if (status != results::kStatusOk)
    refuse(source, fmt::format("its run did not finish (status '{}'); predict from a run whose status is ok", status));
  MeasuredRun run;
  run.source = source;
  run.model_name = record.model_name.value_or("?");
  run.dtype = record.dtype.value_or("fp32");
  run.device = record.device.value_or("cpu");
  run.device_name = record.device_name.value_or("");
  run.executor = record.executor.value_or(record.compiler.value_or(config::kDefaultExecutor));
  run.parameters = count(record.parameters, results::key::parameters, source, 0, true);
  run.n_layer = count(record.n_layer, results::key::n_layer, source, 0, false);
  run.seq_len = count(record.seq_len, results::key::seq_len, source, 0, true);
  run.micro_batch = count(record.micro_bs, results::key::micro_bs, source, 1, true);
  run.grad_accum = std::max<int64_t>(1, count(record.ga, results::key::ga, source, 1, true));
  run.world_size = std::max<int64_t>(1, count(record.world_size, results::key::world_size, source, 1, false));
  run.average_iter_time_ms = figure(record.average_iter_time).value_or(0.0);
  if (!record.unit_timings.value())
    refuse(source, "it has no unit_timings; rerun it with a tokbench that records unit timings (tokbench run records "
                   "them for every run)");
  const Block& timings = *record.unit_timings.value();
  const Block config = record.config.value_or(Block::object());
  // A --dynamic run's tokens are fewer than its positions, and how many depends on the lengths
  // drawn; a prediction counts G·T tokens per iteration, so it starts from fixed lengths only.
  if (config.value(config_key::dynamic, Block(false)) == Block(true))
    refuse(source, "it is a --dynamic run (random sequence lengths); predict from a run of fixed lengths");
  const std::string mode_word =
      text_at(config, config_key::distributed_mode,
              parallel::to_string(run.world_size > 1 ? parallel::DistMode::ddp : parallel::DistMode::none));
  const parallel::ModeEntry* mode = parallel::find_mode(mode_word);
  if (mode == nullptr)
    refuse(source, fmt::format("its config.distributed_mode '{}' is not a parallel mode; valid: {}",
                               usage::printable(mode_word), fmt::join(parallel::mode_words(), ", ")));
  run.distributed_mode = mode->mode;
  run.shard_mode = text_at(config, config_key::shard_mode, parallel::default_shard_word());
  run.bucketing_mode = text_at(config, config_key::bucketing_mode, "none");
  if (config.contains(config_key::sharding_size) && config[config_key::sharding_size].is_number_integer())
    run.sharding_size = config[config_key::sharding_size].get<int64_t>();
  run.ddp_bucket_size_mb = number_at(config, config_key::ddp_bucket_size_mb).value_or(parallel::kDefaultDdpBucketMb);
  const results::ResolvedConfig resolved = results::resolved_from_json(config);
  if (resolved.fsdp_min_unit_params.value())
    run.fsdp_min_unit_params = *resolved.fsdp_min_unit_params.value();
  else if (const auto given = number_at(config, config_key::fsdp_bucket_params);
           given && *given >= 1 && std::floor(*given) == *given)
    run.fsdp_min_unit_params = static_cast<int64_t>(*given);
  run.ddp_overlap = config.value(config_key::ddp_overlap, Block(true)) != Block(false);
  run.skip_data_sync = resolved.skip_data_sync.value_or(true);
  run.num_threads = whole_at(config, config_key::num_threads, source, 0, false);
  const Block environment = record.environment.value_or(Block::object());
  for (const char* key : {machine::environment_key::cpu_cores, machine::environment_key::old_cores})
    if (environment.is_object() && environment.contains(key) && environment[key].is_number_integer() &&
        environment[key].get<int64_t>() > 0) {
      run.cpu_cores = environment[key].get<int64_t>();
      break;
    }
  // The ranks that shared the reporting rank's machine.
  const std::vector<results::RankEntry> ranks = results::ranks_from_json(record.ranks.value_or(Block::array()));
  if (!ranks.empty() && ranks[0].host) {
    int64_t same = 0;
    for (const auto& r : ranks)
      if (r.host == ranks[0].host) ++same;
    run.local_ranks = std::max<int64_t>(1, same);
  } else {
    run.local_ranks = run.world_size;
  }
  run.memory.peak_GB = figure(record.memory_allocated_peak_gb);
  if (!run.memory.peak_GB) run.memory.peak_GB = figure(record.memory_used_gb);
  run.memory.reserved_GB = figure(record.memory_reserved_peak_gb);
  run.memory.parameters_GB = figure(record.memory_parameters_gb);
  run.memory.gradients_GB = figure(record.memory_gradients_gb);
  run.memory.optimizer_state_GB = figure(record.memory_optimizer_state_gb);
  run.memory.activations_GB = figure(record.memory_activations_gb);
  run.memory.comm_buffers_GB = figure(record.memory_comm_buffers_gb);
  read_unit_timings(timings, record.iterations.value_or(Block()), source, run);
  run.record = std::move(record);
  return run;
}

MeasuredRun at_reference_level(const MeasuredRun& measured, const CommMeasurements* comm, ComputeLevel chosen) {
  MeasuredRun run = measured;
  const auto& probe = run.record.reference_probe.value();
  run.reference_level = reference_level(results::reference_probe_from_json(probe ? *probe : Block()), comm, chosen);
  if (!run.reference_level.applied) return run;
  const double k = run.reference_level.scale;
  for (auto& u : run.units) {
    u.forward_seconds *= k;
    u.backward_seconds *= k;
    u.optimizer_seconds *= k;
  }
  run.optimizer_seconds *= k;
  return run;
}

std::vector<std::pair<nlohmann::json, std::string>> records_of_document(const nlohmann::json& doc,
                                                                  const std::string& source) {
  std::vector<std::pair<nlohmann::json, std::string>> out;
  const nlohmann::json* list = nullptr;
  if (doc.is_array()) list = &doc;
  else if (doc.is_object() && doc.contains(results::report_key::runs) && doc[results::report_key::runs].is_array() && !doc.contains(results::key::schema_version))
    list = &doc[results::report_key::runs];
  if (!list) {
    out.emplace_back(doc, source);
    return out;
  }
  const std::string prefix = doc.is_array() ? "" : results::report_key::runs;
  for (std::size_t i = 0; i < list->size(); ++i) out.emplace_back((*list)[i], fmt::format("{} {}[{}]", source, prefix, i));
  return out;
}

}  // namespace tokbench::predict
