// The document and table of a benchmark of collectives (comm_result.hpp).
#include "comm/comm_result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "distributed/dist_settings.hpp"

namespace tokbench::comm {

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
    results.push_back({{"collective", to_string(p->collective)},
                       {"size_bytes", p->size.size_bytes},
                       {"count", p->size.count},
                       {"time_us", time.mean_seconds * 1e6},
                       {"min_time_us", time.min_seconds * 1e6},
                       {"max_time_us", time.max_seconds * 1e6},
                       {"algbw_GBps", algbw},
                       {"busbw_GBps", algbw * bus_bandwidth_factor(p->collective, plan.world_size)},
                       {"correct", p->correct}});
    if (p->wall_seconds > 0) results.back()["cpu_busy"] = p->cpu_seconds / p->wall_seconds;
  }
  // Read by tokbench predict's CPU contention model (docs/predict.md, "CPU ranks share cores").
  const std::optional<double> busy = gloo_busy_fraction(points);
  nlohmann::ordered_json gloo_busy = nullptr;
  if (busy)
    gloo_busy = {{"fraction", *busy},
                 {"ranks_per_node", plan.nproc_per_node},
                 {"method", "each rank's process CPU time (every thread) over the wall time of its timed calls, "
                            "summed over the ranks and every result: the cores one rank's collective keeps busy"}};
  return {{"schema", kCommSchema},
          {"schema_version", kCommSchemaVersion},
          {"backend", distributed::to_string(plan.backend)},
          {"device", plan.cuda ? "cuda" : "cpu"},
          {"world_size", plan.world_size},
          {"nnodes", plan.nnodes},
          {"nproc_per_node", plan.nproc_per_node},
          {"threads_per_rank", threads_per_rank},
          {"dtype", plan.dtype},
          {"iters", plan.iters},
          {"warmup_iters", plan.warmup_iters},
          {"environment", environment},
          {"gloo_cpu_busy", std::move(gloo_busy)},
          {"results", std::move(results)}};
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
  table.columns = {column("collective", "", Kind::text),       column("size_bytes", "{:.0f}", Kind::number),
                   column("count", "{:.0f}", Kind::number),      column("dtype", "", Kind::text),
                   column("time_us", "{:.2f}", Kind::number),    column("min_time_us", "{:.2f}", Kind::number),
                   column("max_time_us", "{:.2f}", Kind::number), column("algbw_GBps", "{:.3f}", Kind::number),
                   column("busbw_GBps", "{:.3f}", Kind::number), column("correct", "", Kind::flag)};
  const auto value = [&document](const char* key) {
    return document.contains(key) ? document.at(key).dump() : std::string("?");
  };
  table.title = fmt::format("COLLECTIVES: {} over {} ranks ({} node(s) x {}), {}, {} iterations after {} warm-up",
                            document.value("backend", "?"), value("world_size"), value("nnodes"),
                            value("nproc_per_node"), document.value("device", "?"), value("iters"),
                            value("warmup_iters"));
  // The dtype column is the document's (every row shares it), shown on each row so that a
  // table read alone (CSV, a spreadsheet) keeps it.
  table.document = document;
  table.rows_key = "results";
  return table;
}

}  // namespace tokbench::comm
