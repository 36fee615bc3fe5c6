// The sweep's tables: the per-run columns, and the pivot of runs into one row per configuration
// and one column per executor, as the reference's runner (test_benchmark_litgpt.py) builds them.
#include "results/tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "results/record_status.hpp"
#include "results/record_keys.hpp"

namespace tokbench::results {
namespace {

using nlohmann::json;

// The reference's index, in its order (its `index_list`).
const std::vector<std::string> kIndexColumns = {key::model_name, key::num_gpus,  key::seq_len,          key::micro_bs,
                                                key::global_bs,  key::ga,        key::distributed_mode, key::sharding_size};
// Keys that join the index only when runs would otherwise collide in one cell (see the header).
const std::vector<std::string> kTieBreakColumns = {key::n_layer, key::dtype, key::device, key::flops_convention};

struct TableDef {
  const char* title;
  const char* key;
  double scale;  // MFU is a fraction in the JSON and a percentage in its table
  const char* format;
};
const TableDef kTables[] = {
    {"AVERAGE ITERATION TIME (ms)", key::average_iter_time, 1.0, "{:.2f}"},
    {"THROUGHPUT (tokens/s)", key::tokens_per_sec, 1.0, "{:.1f}"},
    {"NORMALIZED THROUGHPUT (tokens/s/GPU)", key::tokens_per_sec_per_device, 1.0, "{:.1f}"},
    {"MEMORY ALLOCATED (GB)", key::memory_used_gb, 1.0, "{:.3f}"},
    {"TFLOP/s PER DEVICE", key::model_tflop_per_s_per_device, 1.0, "{:.3f}"},
    {"MFU (%)", key::mfu, 100.0, "{:.2f}"},
    {"STATUS", key::status, 1.0, ""},
};

const json kNull = nullptr;

// A run's value for a column: its own key, else the sweep option of that name (the options a
// sweep ran it with, which tell apart runs the result keys do not).
const json& value_of(const json& run, const std::string& key) {
  if (!run.is_object()) return kNull;
  auto it = run.find(key);
  if (it != run.end()) return *it;
  auto options = run.find(key::sweep_options);
  if (options != run.end() && options->is_object()) {
    auto option = options->find(key);
    if (option != options->end()) return *option;
  }
  return kNull;
}

// A run without `status` is a reference-style result (which has none): it finished.
std::string status_of(const json& run) {
  const json& s = value_of(run, key::status);
  return s.is_string() ? s.get<std::string>() : std::string("ok");
}

std::string executor_of(const json& run) {
  const json& c = value_of(run, key::compiler);
  if (c.is_string()) return c.get<std::string>();
  return c.is_null() ? std::string("none") : c.dump();
}

// How an index value reads in every format: null is "none" (the reference's fillna("none")).
std::string index_text(const json& v) {
  if (v.is_null()) return "none";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  return v.dump();
}

// The value a finished run puts in a table. Reference results lack tokens_per_sec_per_device;
// the reference computed it as tokens_per_sec / "Num GPUS", and so does this.
json metric_of(const json& run, const TableDef& def) {
  json v = value_of(run, def.key);
  if (v.is_null() && std::string_view(def.key) == key::tokens_per_sec_per_device) {
    const json& t = value_of(run, key::tokens_per_sec);
    const json& w = value_of(run, key::num_gpus);
    if (t.is_number() && w.is_number() && w.get<double>() > 0) v = t.get<double>() / w.get<double>();
  }
  if (v.is_number() && def.scale != 1.0) v = v.get<double>() * def.scale;
  return v;
}

std::string key_of(const json& run, const std::vector<std::string>& columns) {
  json k = json::array();
  for (const auto& c : columns) k.push_back(value_of(run, c));
  return k.dump();
}

// The index columns: the reference's eight, plus the tie-breakers that tell apart runs which
// would otherwise share a cell.
std::vector<std::string> index_columns_for(const std::vector<json>& runs) {
  std::vector<std::string> columns = kIndexColumns;
  std::map<std::string, std::vector<const json*>> cells;
  for (const auto& run : runs) cells[key_of(run, columns) + executor_of(run)].push_back(&run);
  std::vector<std::string> candidates = kTieBreakColumns;
  // Then the sweep options that set the colliding runs apart (e.g. a CPU memory cap).
  for (const auto& [key, group] : cells)
    for (const json* r : group) {
      auto options = r->find(key::sweep_options);
      if (group.size() < 2 || options == r->end() || !options->is_object()) continue;
      for (const auto& [option, value] : options->items())
        if (std::find(candidates.begin(), candidates.end(), option) == candidates.end()) candidates.push_back(option);
    }
  for (const auto& extra : candidates) {
    bool differs = false;
    for (const auto& [key, group] : cells)
      for (const json* r : group) differs = differs || value_of(*r, extra) != value_of(*group.front(), extra);
    if (differs) columns.push_back(extra);
  }
  return columns;
}

}  // namespace

std::vector<PivotTable> build_tables(const std::vector<json>& runs, const TableOptions& options) {
  const std::vector<std::string> columns = index_columns_for(runs);

  // Rows and executors in order of first appearance; each cell's first run wins.
  std::vector<std::string> executors;
  std::vector<std::vector<json>> row_values;
  std::vector<std::vector<const json*>> row_runs;  // [row][executor]
  std::map<std::string, size_t> row_of;
  for (const auto& run : runs) {
    const std::string executor = executor_of(run);
    auto e = std::find(executors.begin(), executors.end(), executor);
    const size_t ei = e - executors.begin();
    if (e == executors.end()) {
      executors.push_back(executor);
      for (auto& r : row_runs) r.push_back(nullptr);
    }
    auto [it, inserted] = row_of.emplace(key_of(run, columns), row_values.size());
    if (inserted) {
      std::vector<json> values;
      for (const auto& c : columns) values.push_back(value_of(run, c));
      row_values.push_back(std::move(values));
      row_runs.emplace_back(executors.size(), nullptr);
    }
    if (!row_runs[it->second][ei]) row_runs[it->second][ei] = &run;
  }

  // Columns kept: all, or those that vary.
  std::vector<size_t> kept;
  for (size_t c = 0; c < columns.size(); ++c) {
    bool varies = false;
    for (const auto& values : row_values) varies = varies || values[c] != row_values.front()[c];
    if (!options.only_varying_columns || varies) kept.push_back(c);
  }
  if (kept.empty()) kept.push_back(0);  // model_name names the lone configuration

  std::vector<PivotTable> tables;
  for (const TableDef& def : kTables) {
    PivotTable t;
    t.title = def.title;
    t.metric_key = def.key;
    t.format = def.format;
    t.executors = executors;
    for (size_t c : kept) t.index_columns.push_back(columns[c]);
    for (size_t r = 0; r < row_values.size(); ++r) {
      PivotTable::Row row;
      for (size_t c : kept) {
        row.index_values.push_back(row_values[r][c]);
        row.index.push_back(index_text(row_values[r][c]));
      }
      row.runs = row_runs[r];
      for (const json* run : row_runs[r]) {
        if (!run) {
          row.cells.emplace_back(std::nullopt);
        } else if (const std::string status = status_of(*run); !results::holds_figures(status) || t.metric_key == key::status) {
          row.cells.emplace_back(json(status));  // a failed run shows why, never a number
        } else {
          row.cells.emplace_back(metric_of(*run, def));
        }
      }
      t.rows.push_back(std::move(row));
    }
    tables.push_back(std::move(t));
  }
  return tables;
}

}  // namespace tokbench::results
