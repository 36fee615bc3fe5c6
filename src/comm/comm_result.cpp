// The document and table of a benchmark of collectives (comm_result.hpp).
#include "comm/comm_result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "distributed/dist_settings.hpp"
#include "results/comm_document_keys.hpp"

namespace tokbench::comm {

namespace ck = results::comm_document_key;

std::optional<double> gloo_busy_fraction(const std::vector<MeasuredPoint>& points) {
  double cpu = 0, wall = 0;
  for (const auto& p : points)
    if (p.wall_seconds > 0 && p.cpu_seconds >= 0) {
      cpu += p.cpu_seconds;
      wall += p.wall_seconds;
    }
  if (!(wall > 0)) return std::nullopt;
  return cpu / wall;
}

nlohmann::ordered_json comm_document(const CommPlan& plan, const std::vector<MeasuredPoint>& points,
                                     int threads_per_rank, const nlohmann::ordered_json& environment) {
  std::vector<const MeasuredPoint*> sorted;
  for (const auto& p : points) sorted.push_back(&p);
  std::stable_sort(sorted.begin(), sorted.end(), [](const MeasuredPoint* a, const MeasuredPoint* b) {
    const std::string an = to_string(a->collective), bn = to_string(b->collective);
    return an != bn ? an < bn : a->size.size_bytes < b->size.size_bytes;
  });
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const MeasuredPoint* p : sorted) {
    const IterationSummary time = summarize(p->seconds);
    const double algbw = algorithm_bandwidth_GBps(p->size.size_bytes, time.mean_seconds);
    results.push_back({{ck::collective, to_string(p->collective)},
                       {ck::size_bytes, p->size.size_bytes},
                       {ck::count, p->size.count},
                       {ck::time_us, time.mean_seconds * 1e6},
                       {ck::min_time_us, time.min_seconds * 1e6},
                       {ck::max_time_us, time.max_seconds * 1e6},
                       {ck::algbw_GBps, algbw},
                       {ck::busbw_GBps, algbw * bus_bandwidth_factor(p->collective, plan.world_size)},
                       {ck::correct, p->correct}});
    if (p->wall_seconds > 0) results.back()[ck::cpu_busy] = p->cpu_seconds / p->wall_seconds;
  }
  // Read by tokbench predict's CPU contention model (docs/predict.md, "CPU ranks share cores").
  const std::optional<double> busy = gloo_busy_fraction(points);
  nlohmann::ordered_json gloo_busy = nullptr;
  if (busy)
    gloo_busy = {{ck::fraction, *busy},
                 {ck::ranks_per_node, plan.nproc_per_node},
                 {ck::method, "each rank's process CPU time (every thread) over the wall time of its timed calls, "
                              "summed over the ranks and every result: the cores one rank's collective keeps busy"}};
  return {{ck::schema, kCommSchema},
          {ck::schema_version, kCommSchemaVersion},
          {ck::backend, distributed::to_string(plan.backend)},
          {ck::device, plan.cuda ? "cuda" : "cpu"},
          {ck::world_size, plan.world_size},
          {ck::nnodes, plan.nnodes},
          {ck::nproc_per_node, plan.nproc_per_node},
          {ck::threads_per_rank, threads_per_rank},
          {ck::dtype, plan.dtype},
          {ck::iters, plan.iters},
          {ck::warmup_iters, plan.warmup_iters},
          {ck::environment, environment},
          {ck::gloo_cpu_busy, std::move(gloo_busy)},
          {ck::results, std::move(results)}};
}

results::FlatTable comm_table(const nlohmann::ordered_json& document) {
  using results::Column;
  using results::Kind;
  auto column = [](const char* key, const char* format, Kind kind) {
    Column c;
    c.key = c.label = key;  // the unit is in the key: time_us, algbw_GBps
    c.format = format;
    c.kind = kind;
    return c;
  };
  results::FlatTable table;
  table.columns = {column(ck::collective, "", Kind::text),       column(ck::size_bytes, "{:.0f}", Kind::number),
                   column(ck::count, "{:.0f}", Kind::number),      column(ck::dtype, "", Kind::text),
                   column(ck::time_us, "{:.2f}", Kind::number),    column(ck::min_time_us, "{:.2f}", Kind::number),
                   column(ck::max_time_us, "{:.2f}", Kind::number), column(ck::algbw_GBps, "{:.3f}", Kind::number),
                   column(ck::busbw_GBps, "{:.3f}", Kind::number), column(ck::correct, "", Kind::flag)};
  const auto value = [&document](const char* key) {
    return document.contains(key) ? document.at(key).dump() : std::string("?");
  };
  table.title = fmt::format("COLLECTIVES: {} over {} ranks ({} node(s) x {}), {}, {} iterations after {} warm-up",
                            document.value(ck::backend, "?"), value(ck::world_size), value(ck::nnodes),
                            value(ck::nproc_per_node), document.value(ck::device, "?"), value(ck::iters),
                            value(ck::warmup_iters));
  // The dtype column is the document's (every row shares it), shown on each row so that a
  // table read alone (CSV, a spreadsheet) keeps it.
  table.document = document;
  table.rows_key = ck::results;
  return table;
}

}  // namespace tokbench::comm
