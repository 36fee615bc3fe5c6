// Reading the measured run (measured_run.hpp).
#include "predict/measured_run.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <cmath>
#include <stdexcept>

#include "results/record_keys.hpp"
#include "results/record_status.hpp"

namespace tokbench::predict {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& source, const std::string& what) {
  throw std::invalid_argument(fmt::format("--from '{}': {}", source, what));
}

std::optional<double> number_at(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>())) return std::nullopt;
  return it->get<double>();
}

int64_t whole_at(const json& j, const char* key, const std::string& source, int64_t fallback, bool required) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) refuse(source, fmt::format("the record has no '{}' (a whole number)", key));
    return fallback;
  }
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    refuse(source, fmt::format("its '{}' is {}, not a whole number", key, it->dump()));
  return it->get<int64_t>();
}

std::string text_at(const json& j, const char* key, const std::string& fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

UnitKind kind_of(const std::string& kind, const std::string& source, std::size_t index) {
  if (kind == "embedding") return UnitKind::embedding;
  if (kind == "block") return UnitKind::block;
  if (kind == "head") return UnitKind::head;
  refuse(source, fmt::format("unit_timings.units[{}].kind '{}' is not valid; valid: embedding, block, head", index, kind));
}

void read_unit_timings(const json& t, const std::string& source, MeasuredRun& run) {
  if (!t.is_object()) refuse(source, "its unit_timings is not an object");
  run.clock = text_at(t, "clock", "host");
  const int64_t micro = whole_at(t, "micro_batches_per_iteration", source, run.grad_accum, false);
  if (micro != run.grad_accum)
    refuse(source, fmt::format("unit_timings.micro_batches_per_iteration {} disagrees with its GA {}", micro, run.grad_accum));
  run.iteration_seconds = number_at(t, "iteration_seconds").value_or(0.0);
  run.exposed_comm_seconds = number_at(t, "exposed_comm_seconds").value_or(0.0);
  const json units = t.value("units", json());
  if (!units.is_array() || units.size() < 3)
    refuse(source, "unit_timings.units must list the embedding, at least one block and the head");
  double optimizer_sum = 0;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const json& u = units[i];
    if (!u.is_object()) refuse(source, fmt::format("unit_timings.units[{}] is not an object", i));
    UnitTiming timing;
    timing.shape.name = text_at(u, "name", fmt::format("unit.{}", i));
    timing.shape.kind = kind_of(text_at(u, "kind", "?"), source, i);
    const auto parameters = u.find("parameters");
    if (parameters == u.end() || !parameters->is_number_integer() || parameters->get<int64_t>() <= 0)
      refuse(source, fmt::format("unit_timings.units[{}] ('{}') needs its parameter count (> 0)", i, timing.shape.name));
    timing.shape.parameters = parameters->get<int64_t>();
    const auto forward = number_at(u, "forward_seconds"), backward = number_at(u, "backward_seconds");
    if (!forward || !backward || *forward < 0 || *backward < 0)
      refuse(source, fmt::format("unit_timings.units[{}] ('{}') needs forward_seconds and backward_seconds (>= 0)", i,
                                 timing.shape.name));
    timing.forward_seconds = *forward;
    timing.backward_seconds = *backward;
    timing.optimizer_seconds = std::max(0.0, number_at(u, "optimizer_seconds").value_or(0.0));
    optimizer_sum += timing.optimizer_seconds;
    run.units.push_back(timing);
  }
  if (run.units.front().shape.kind != UnitKind::embedding || run.units.back().shape.kind != UnitKind::head)
    refuse(source, "unit_timings.units must be the embedding, then the blocks, then the head");
  for (std::size_t i = 1; i + 1 < run.units.size(); ++i)
    if (run.units[i].shape.kind != UnitKind::block)
      refuse(source, fmt::format("unit_timings.units[{}] is a {}, where the blocks are", i, text_at(units[i], "kind", "?")));
  // The step's own optimizer time when recorded (it includes what no unit owns), else the units'.
  run.optimizer_seconds = number_at(t, "optimizer_seconds").value_or(optimizer_sum);
}

// The model's parameters in registration order (unit_timings.parameter_shapes), each with its
// timed unit, for the target's layout. A record of an older tokbench has none: each timed unit
// then stands as one parameter, in the model's registration order of them (the head's lm_head
// is registered first, then the embedding and the blocks).
void read_parameter_shapes(const json& t, const std::string& source, MeasuredRun& run) {
  const int64_t element_bytes = run.bytes_per_parameter();
  const json shapes = t.value("parameter_shapes", json());
  run.parameter_shapes_recorded = shapes.is_array() && !shapes.empty();
  if (!run.parameter_shapes_recorded) {
    const int64_t head = static_cast<int64_t>(run.units.size()) - 1;
    run.parameter_shapes.push_back({run.units[head].shape.name, run.units[head].shape.parameters, element_bytes, head});
    for (int64_t u = 0; u < head; ++u)
      run.parameter_shapes.push_back({run.units[u].shape.name, run.units[u].shape.parameters, element_bytes, u});
    return;
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const json& p = shapes[i];
    const std::string unit = p.is_object() ? text_at(p, "unit", "?") : "?";
    const auto timed = std::find_if(run.units.begin(), run.units.end(), [&](const UnitTiming& u) { return u.shape.name == unit; });
    const auto elements = p.is_object() ? p.find("elements") : p.end();
    if (timed == run.units.end() || elements == p.end() || !elements->is_number_integer() || elements->get<int64_t>() <= 0)
      refuse(source, fmt::format("unit_timings.parameter_shapes[{}] needs a unit of unit_timings.units and elements (> 0)", i));
    run.parameter_shapes.push_back({text_at(p, "name", fmt::format("parameter.{}", i)), elements->get<int64_t>(),
                                    element_bytes, static_cast<int64_t>(timed - run.units.begin())});
  }
}

}  // namespace

int64_t MeasuredRun::shard_size() const {
  if (distributed_mode != "fsdp") return 1;
  return sharding_size.value_or(world_size);
}

MeasuredRun read_measured_run(const json& record, const std::string& source) {
  if (!record.is_object()) refuse(source, "not a run record (a JSON object)");
  const std::string status = text_at(record, results::key::status, "");
  if (status == results::kStatusPredicted)
    refuse(source, "it is a prediction; predict from a measured run (tokbench run --json-path)");
  if (status != results::kStatusOk)
    refuse(source, fmt::format("its run did not finish (status '{}'); predict from a run whose status is ok", status));
  MeasuredRun run;
  run.source = source;
  run.record = record;
  const auto timings = record.find(results::key::unit_timings);
  run.model_name = text_at(record, results::key::model_name, "?");
  run.dtype = text_at(record, results::key::dtype, "fp32");
  run.device = text_at(record, results::key::device, "cpu");
  run.device_name = text_at(record, results::key::device_name, "");
  run.executor = text_at(record, results::key::executor, text_at(record, results::key::compiler, "eager"));
  run.parameters = whole_at(record, results::key::parameters, source, 0, true);
  run.n_layer = whole_at(record, results::key::n_layer, source, 0, false);
  run.seq_len = whole_at(record, results::key::seq_len, source, 0, true);
  run.micro_batch = whole_at(record, results::key::micro_bs, source, 1, true);
  run.grad_accum = std::max<int64_t>(1, whole_at(record, results::key::ga, source, 1, true));
  run.world_size = std::max<int64_t>(1, whole_at(record, results::key::world_size, source, 1, false));
  run.average_iter_time_ms = number_at(record, results::key::average_iter_time).value_or(0.0);
  if (timings == record.end() || timings->is_null())
    refuse(source, "it has no unit_timings; rerun it with a tokbench that records unit timings (tokbench run records "
                   "them for every run)");
  const json config = record.value(results::key::config, json::object());
  // A --dynamic run's tokens are fewer than its positions, and how many depends on the lengths
  // drawn; a prediction counts G·T tokens per iteration, so it starts from fixed lengths only.
  if (config.value("dynamic", json(false)) == json(true))
    refuse(source, "it is a --dynamic run (random sequence lengths); predict from a run of fixed lengths");
  run.distributed_mode = text_at(config, "distributed_mode", run.world_size > 1 ? "ddp" : "none");
  run.shard_mode = text_at(config, "shard_mode", "zero2");
  run.bucketing_mode = text_at(config, "bucketing_mode", "none");
  if (config.contains("sharding_size") && config["sharding_size"].is_number_integer())
    run.sharding_size = config["sharding_size"].get<int64_t>();
  run.ddp_bucket_size_mb = number_at(config, "ddp_bucket_size_mb").value_or(25.0);
  if (config.contains("fsdp_min_unit_params") && config["fsdp_min_unit_params"].is_number_integer())
    run.fsdp_min_unit_params = config["fsdp_min_unit_params"].get<int64_t>();
  else if (const auto given = number_at(config, "fsdp_bucket_params"); given && *given >= 1 && std::floor(*given) == *given)
    run.fsdp_min_unit_params = static_cast<int64_t>(*given);
  run.ddp_overlap = config.value("ddp_overlap", json(true)) != json(false);
  run.skip_data_sync = config.value("skip_data_sync", json(true)) != json(false);
  run.num_threads = whole_at(config, "num_threads", source, 0, false);
  const json environment = record.value(results::key::environment, json::object());
  for (const char* key : {"cpu_cores", "cores"})
    if (environment.is_object() && environment.contains(key) && environment[key].is_number_integer() &&
        environment[key].get<int64_t>() > 0) {
      run.cpu_cores = environment[key].get<int64_t>();
      break;
    }
  // The ranks that shared the reporting rank's machine.
  const json ranks = record.value(results::key::ranks, json::array());
  if (ranks.is_array() && !ranks.empty() && ranks[0].is_object() && ranks[0].contains("host")) {
    int64_t same = 0;
    for (const auto& r : ranks)
      if (r.is_object() && r.value("host", json()) == ranks[0]["host"]) ++same;
    run.local_ranks = std::max<int64_t>(1, same);
  } else {
    run.local_ranks = run.world_size;
  }
  run.memory.peak_GB = number_at(record, results::key::memory_allocated_peak_gb);
  if (!run.memory.peak_GB) run.memory.peak_GB = number_at(record, results::key::memory_used_gb);
  run.memory.reserved_GB = number_at(record, results::key::memory_reserved_peak_gb);
  run.memory.parameters_GB = number_at(record, results::key::memory_parameters_gb);
  run.memory.gradients_GB = number_at(record, results::key::memory_gradients_gb);
  run.memory.optimizer_state_GB = number_at(record, results::key::memory_optimizer_state_gb);
  run.memory.activations_GB = number_at(record, results::key::memory_activations_gb);
  run.memory.comm_buffers_GB = number_at(record, results::key::memory_comm_buffers_gb);
  read_unit_timings(*timings, source, run);
  read_parameter_shapes(*timings, source, run);
  return run;
}

std::vector<std::pair<json, std::string>> records_of_document(const json& doc, const std::string& source) {
  std::vector<std::pair<json, std::string>> out;
  const json* list = nullptr;
  if (doc.is_array()) list = &doc;
  else if (doc.is_object() && doc.contains("runs") && doc["runs"].is_array() && !doc.contains(results::key::schema_version))
    list = &doc["runs"];
  if (!list) {
    out.emplace_back(doc, source);
    return out;
  }
  const std::string prefix = doc.is_array() ? "" : "runs";
  for (std::size_t i = 0; i < list->size(); ++i) out.emplace_back((*list)[i], fmt::format("{} {}[{}]", source, prefix, i));
  return out;
}

}  // namespace tokbench::predict
