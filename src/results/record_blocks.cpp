// The nested blocks' writers and readers (record_blocks.hpp): each key of a block spelled once.
#include "results/record_blocks.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <utility>

#include "config/resolved_keys.hpp"
#include "results/record_keys.hpp"

namespace tokbench::results {
namespace {

// The keys of the blocks no other file names.
namespace k {
// iter_time_ms
constexpr char mean[] = "mean", median[] = "median", p10[] = "p10", p90[] = "p90", min[] = "min", max[] = "max",
               stddev[] = "stddev", cv[] = "cv";
// ranks[] (the record's own keys where a rank's figure is the record's, key::*)
constexpr char rank[] = "rank", host[] = "host", exposed_comm_ms_per_iter[] = "exposed_comm_ms_per_iter";
// unit_timings
constexpr char iterations[] = "iterations", clock[] = "clock", micro_batches_per_iteration[] = "micro_batches_per_iteration",
               iteration_seconds[] = "iteration_seconds", exposed_comm_seconds[] = "exposed_comm_seconds",
               optimizer_seconds[] = "optimizer_seconds", units[] = "units", communication[] = "communication",
               parameter_shapes[] = "parameter_shapes";
// unit_timings.units[] and .parameter_shapes[]
constexpr char name[] = "name", kind[] = "kind", parameters[] = "parameters", forward_seconds[] = "forward_seconds",
               backward_seconds[] = "backward_seconds", unit[] = "unit", elements[] = "elements";
// reference_probe
constexpr char ran[] = "ran", why[] = "why", what[] = "what", gemm_size[] = "gemm_size", threads[] = "threads",
               when[] = "when", before_ms[] = "before_ms", after_ms[] = "after_ms", within_ms[] = "within_ms",
               repeats[] = "repeats",
               median_ms[] = "median_ms", q1_ms[] = "q1_ms", q3_ms[] = "q3_ms", relative_iqr[] = "relative_iqr",
               seconds[] = "seconds";
// config's resolved values: config::resolved_key's (the option rows name those places too), and
constexpr char warnings[] = "warnings";
}  // namespace k
namespace rk = tokbench::config::resolved_key;

template <typename T>
Block or_null(const std::optional<T>& v) {
  return v ? Block(*v) : Block(nullptr);
}

template <typename Json>
std::optional<std::int64_t> whole_at(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->template get<std::int64_t>();
}
// Finite numbers only where `finite` (the timings); any number otherwise (a record's ms).
template <typename Json>
std::optional<double> number_at(const Json& j, const char* key, bool finite = false) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->template get<double>();
  if (finite && !std::isfinite(v)) return std::nullopt;
  return v;
}
template <typename Json>
std::optional<std::string> text_at(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->template get<std::string>();
}
template <typename Json>
std::optional<bool> bool_at(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) return std::nullopt;
  return it->template get<bool>();
}

template <typename Json>
std::vector<IterationEntry> read_iterations(const Json& iterations) {
  std::vector<IterationEntry> out;
  if (!iterations.is_array()) return out;
  for (const auto& it : iterations) {
    if (!it.is_object()) continue;
    IterationEntry e;
    e.index = whole_at(it, block_key::index);
    e.warmup = bool_at(it, block_key::warmup).value_or(false);
    e.time_ms = number_at(it, block_key::time_ms);
    e.loss = number_at(it, block_key::loss);
    e.real_tokens = whole_at(it, block_key::real_tokens);
    out.push_back(e);
  }
  return out;
}

template <typename T>
void put(Block& config, const char* key, const Field<T>& field) {
  if (!field.present()) return;
  config[key] = field.value() ? Block(*field.value()) : Block(nullptr);
}

}  // namespace

Block to_json(const std::vector<IterationEntry>& iterations) {
  Block out = Block::array();
  for (const auto& e : iterations) {
    Block entry = {{block_key::index, or_null(e.index)},
                   {block_key::warmup, e.warmup},
                   {block_key::time_ms, or_null(e.time_ms)},
                   {block_key::loss, or_null(e.loss)}};
    if (e.real_tokens) entry[block_key::real_tokens] = *e.real_tokens;
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<IterationEntry> iterations_from_json(const Block& iterations) { return read_iterations(iterations); }
std::vector<IterationEntry> iterations_from_json(const nlohmann::json& iterations) { return read_iterations(iterations); }

std::vector<double> measured_times_ms(const std::vector<IterationEntry>& iterations) {
  std::vector<double> times;
  for (const auto& e : iterations)
    if (!e.warmup && e.time_ms) times.push_back(*e.time_ms);
  return times;
}

Block to_json(const IterTimeStatsBlock& s) {
  return Block{{k::mean, s.mean}, {k::median, s.median}, {k::p10, s.p10},       {k::p90, s.p90},
               {k::min, s.min},   {k::max, s.max},       {k::stddev, s.stddev}, {k::cv, s.cv}};
}

void put_memory_breakdown(RunRecord& record, const MemoryBreakdownGB& b) {
  record.memory_parameters_gb = b.parameters;
  record.memory_gradients_gb = b.gradients;
  record.memory_optimizer_state_gb = b.optimizer_state;
  record.memory_activations_gb = b.activations;
  record.memory_comm_buffers_gb = b.comm_buffers;
  record.memory_allocator_reserve_gb = b.allocator_reserve;
}

Block to_json(const std::vector<RankEntry>& ranks) {
  Block out = Block::array();
  for (const auto& r : ranks) {
    Block rank = {{k::rank, or_null(r.rank)},
                  {key::status, or_null(r.status)},
                  {key::message, or_null(r.message)},
                  {k::host, or_null(r.host)},
                  {key::measured_iters, or_null(r.measured_iters)},
                  {key::average_iter_time, or_null(r.average_iter_time)},
                  {k::exposed_comm_ms_per_iter, or_null(r.exposed_comm_ms_per_iter)},
                  {key::memory_allocated_peak_gb, or_null(r.memory_allocated_peak_gb)},
                  {key::memory_reserved_peak_gb, or_null(r.memory_reserved_peak_gb)},
                  {key::peak_rss_gb, or_null(r.peak_rss_gb)},
                  {key::kernels, or_null(r.kernels)},
                  {key::memory_parameters_gb, or_null(r.memory.parameters)},
                  {key::memory_gradients_gb, or_null(r.memory.gradients)},
                  {key::memory_optimizer_state_gb, or_null(r.memory.optimizer_state)},
                  {key::memory_activations_gb, or_null(r.memory.activations)},
                  {key::memory_comm_buffers_gb, or_null(r.memory.comm_buffers)},
                  {key::memory_allocator_reserve_gb, or_null(r.memory.allocator_reserve)},
                  {key::time_account, r.time_account}};
    out.push_back(std::move(rank));
  }
  return out;
}

std::vector<RankEntry> ranks_from_json(const Block& ranks) {
  std::vector<RankEntry> out;
  if (!ranks.is_array()) return out;
  for (const auto& j : ranks) {
    RankEntry r;
    if (j.is_object()) {
      r.rank = whole_at(j, k::rank);
      r.status = text_at(j, key::status);
      r.message = text_at(j, key::message);
      r.host = text_at(j, k::host);
      r.measured_iters = whole_at(j, key::measured_iters);
      r.average_iter_time = number_at(j, key::average_iter_time);
      r.exposed_comm_ms_per_iter = number_at(j, k::exposed_comm_ms_per_iter);
      r.memory_allocated_peak_gb = number_at(j, key::memory_allocated_peak_gb);
      r.memory_reserved_peak_gb = number_at(j, key::memory_reserved_peak_gb);
      r.peak_rss_gb = number_at(j, key::peak_rss_gb);
      r.kernels = text_at(j, key::kernels);
      r.memory.parameters = number_at(j, key::memory_parameters_gb);
      r.memory.gradients = number_at(j, key::memory_gradients_gb);
      r.memory.optimizer_state = number_at(j, key::memory_optimizer_state_gb);
      r.memory.activations = number_at(j, key::memory_activations_gb);
      r.memory.comm_buffers = number_at(j, key::memory_comm_buffers_gb);
      r.memory.allocator_reserve = number_at(j, key::memory_allocator_reserve_gb);
      r.time_account = j.value(key::time_account, Block());
    }
    out.push_back(std::move(r));
  }
  return out;
}

Block to_json(const UnitTimingsBlock& t) {
  Block units = Block::array();
  if (t.units)
    for (const auto& u : *t.units)
      units.push_back({{k::name, or_null(u.name)},
                       {k::kind, or_null(u.kind)},
                       {k::parameters, or_null(u.parameters)},
                       {k::forward_seconds, or_null(u.forward_seconds)},
                       {k::backward_seconds, or_null(u.backward_seconds)},
                       {k::optimizer_seconds, or_null(u.optimizer_seconds)}});
  Block shapes = Block::array();
  if (t.parameter_shapes)
    for (const auto& p : *t.parameter_shapes)
      shapes.push_back({{k::name, or_null(p.name)}, {k::unit, or_null(p.unit)}, {k::elements, or_null(p.elements)}});
  return {{k::iterations, or_null(t.iterations)},
          {k::clock, or_null(t.clock)},
          {k::micro_batches_per_iteration, or_null(t.micro_batches_per_iteration)},
          {k::iteration_seconds, or_null(t.iteration_seconds)},
          {k::exposed_comm_seconds, or_null(t.exposed_comm_seconds)},
          {k::optimizer_seconds, or_null(t.optimizer_seconds)},
          {k::units, units},
          {k::communication, t.communication},
          {k::parameter_shapes, shapes}};
}

UnitTimingsBlock unit_timings_from_json(const Block& t) {
  UnitTimingsBlock out;
  if (!t.is_object()) return out;
  out.iterations = whole_at(t, k::iterations);
  out.clock = text_at(t, k::clock);
  if (const auto it = t.find(k::micro_batches_per_iteration); it != t.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
      throw std::invalid_argument(fmt::format("its '{}' is {}, not a whole number", k::micro_batches_per_iteration, it->dump()));
    out.micro_batches_per_iteration = it->get<std::int64_t>();
  }
  out.iteration_seconds = number_at(t, k::iteration_seconds, true);
  out.exposed_comm_seconds = number_at(t, k::exposed_comm_seconds, true);
  out.optimizer_seconds = number_at(t, k::optimizer_seconds, true);
  if (const auto units = t.find(k::units); units != t.end() && units->is_array()) {
    out.units.emplace();
    for (const auto& u : *units) {
      UnitEntry e;
      e.object = u.is_object();
      if (e.object) {
        e.name = text_at(u, k::name);
        e.kind = text_at(u, k::kind);
        e.parameters = whole_at(u, k::parameters);
        e.forward_seconds = number_at(u, k::forward_seconds, true);
        e.backward_seconds = number_at(u, k::backward_seconds, true);
        e.optimizer_seconds = number_at(u, k::optimizer_seconds, true);
      }
      out.units->push_back(std::move(e));
    }
  }
  out.communication = t.value(k::communication, Block());
  if (const auto shapes = t.find(k::parameter_shapes); shapes != t.end() && shapes->is_array()) {
    out.parameter_shapes.emplace();
    for (const auto& p : *shapes) {
      ParameterShapeEntry e;
      e.object = p.is_object();
      if (e.object) {
        e.name = text_at(p, k::name);
        e.unit = text_at(p, k::unit);
        e.elements = whole_at(p, k::elements);
      }
      out.parameter_shapes->push_back(std::move(e));
    }
  }
  return out;
}

Block to_json(const ReferenceProbeBlock& p) {
  if (!p.ran) return {{k::ran, false}, {k::why, p.why.value_or("")}};
  return {{k::ran, true},
          {k::what, or_null(p.what)},
          {k::gemm_size, or_null(p.gemm_size)},
          {k::threads, or_null(p.threads)},
          {k::when, or_null(p.when)},
          {k::before_ms, p.before_ms},
          {k::after_ms, p.after_ms},
          {k::within_ms, p.within_ms},
          {k::repeats, or_null(p.repeats)},
          {k::median_ms, or_null(p.median_ms)},
          {k::q1_ms, or_null(p.q1_ms)},
          {k::q3_ms, or_null(p.q3_ms)},
          {k::relative_iqr, or_null(p.relative_iqr)},
          {k::seconds, or_null(p.seconds)}};
}

ReferenceProbeBlock reference_probe_from_json(const Block& probe) {
  ReferenceProbeBlock p;
  if (!probe.is_object()) return p;
  p.ran = bool_at(probe, k::ran).value_or(false);
  p.why = text_at(probe, k::why);
  p.what = text_at(probe, k::what);
  p.when = text_at(probe, k::when);
  p.gemm_size = whole_at(probe, k::gemm_size);
  p.threads = whole_at(probe, k::threads);
  p.repeats = whole_at(probe, k::repeats);
  for (const auto& [list, key] : {std::pair{&p.before_ms, k::before_ms}, std::pair{&p.after_ms, k::after_ms},
                                   std::pair{&p.within_ms, k::within_ms}})
    if (const auto it = probe.find(key); it != probe.end() && it->is_array())
      for (const auto& ms : *it)
        if (ms.is_number()) list->push_back(ms.get<double>());
  p.median_ms = number_at(probe, k::median_ms);
  p.q1_ms = number_at(probe, k::q1_ms);
  p.q3_ms = number_at(probe, k::q3_ms);
  p.relative_iqr = number_at(probe, k::relative_iqr);
  p.seconds = number_at(probe, k::seconds);
  return p;
}

void put_resolved(Block& config, const ResolvedConfig& r) {
  put(config, rk::fsdp_min_unit_params, r.fsdp_min_unit_params);
  put(config, rk::skip_data_sync, r.skip_data_sync);
  put(config, rk::dist_backend, r.dist_backend);
  put(config, rk::dist_launcher, r.dist_launcher);
  put(config, rk::cpu_allocator, r.cpu_allocator);
  put(config, k::warnings, r.warnings);
}

ResolvedConfig resolved_from_json(const Block& config) {
  ResolvedConfig r;
  if (!config.is_object()) return r;
  if (const auto v = whole_at(config, rk::fsdp_min_unit_params)) r.fsdp_min_unit_params = *v;
  if (const auto v = bool_at(config, rk::skip_data_sync)) r.skip_data_sync = *v;
  if (const auto v = text_at(config, rk::dist_backend)) r.dist_backend = *v;
  if (const auto v = text_at(config, rk::dist_launcher)) r.dist_launcher = *v;
  if (const auto v = text_at(config, rk::cpu_allocator)) r.cpu_allocator = *v;
  return r;
}

}  // namespace tokbench::results
