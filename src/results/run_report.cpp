// The run report over the column table. Only the reference's block has its own presentation
// (its labels, scales and two decimals); everything after "# --- tokbench ---" is generic.
#include "results/run_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <string>

#include "account/time_account_json.hpp"
#include "account/waterfall.hpp"
#include "results/result_columns.hpp"
#include "results/record_keys.hpp"

namespace tokbench::results {
namespace {

using nlohmann::ordered_json;

// One line of the reference's report: its label, the record key, and how it printed the value.
struct ReferenceLine {
  const char* label;  // nullptr: the key itself (the reference printed Micro BS, Global BS, ... under their keys)
  const char* key;
  const char* heading() const { return label != nullptr ? label : key; }
  double scale;        // applied to numbers
  const char* format;  // fmt spec for numbers; "" prints the value as it is
  const char* suffix;  // after the number
  bool fsdp_only = false;
};

// benchmark_litgpt.py's order. "Number of parameters" is billions with two decimals, "TFLOP/s"
// the total over devices; the FSDP lines appear only for FSDP runs.
const ReferenceLine kReferenceLines[] = {
    {"Model name", key::model_name, 1, "", ""},
    {"Seq Length", key::seq_len, 1, "", ""},
    {nullptr, key::micro_bs, 1, "", ""},
    {nullptr, key::global_bs, 1, "", ""},
    {"Number of Layers", key::n_layer, 1, "", ""},
    {"Number of parameters", key::parameters, 1e-9, "{:.2f}", "B"},
    {nullptr, key::distributed_mode, 1, "", ""},
    {"Sharding Mode", key::sharding_mode, 1, "", "", true},
    {nullptr, key::sharding_size, 1, "", "", true},
    {"Bucketing", key::bucketing, 1, "", "", true},
    {"Compiler", key::compiler, 1, "", ""},
    {"Average iter time", key::average_iter_time, 1, "{:.2f}", " ms"},
    {"Memory used", key::memory_used_gb, 1, "{:.2f}", " GB"},
    {"Tokens/s", key::tokens_per_sec, 1, "{:.2f}", ""},
    {"Tokens/s/GPU", key::tokens_per_sec_per_device, 1, "{:.2f}", ""},
    {"TFLOP/s", key::model_flop_per_sec, 1e-12, "{:.2f}", ""},
};

const ordered_json kNull = nullptr;

const ordered_json& lookup(const ordered_json& record, const std::string& key) {
  auto it = record.find(key);
  return it == record.end() ? kNull : *it;
}

std::string reference_text(const ReferenceLine& line, const ordered_json& value) {
  if (value.is_null()) return line.key == std::string(key::sharding_size) ? "None" : "N/A";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number() && *line.format)
    return fmt::format(fmt::runtime(line.format), value.get<double>() * line.scale) + line.suffix;
  return value.dump() + line.suffix;
}

void write_line(std::ostream& out, const Column& column, const ordered_json& value) {
  const std::string text = column_text(column, value);
  if (value.is_object()) {  // "Iter time (ms): mean 1.00, median ..."
    fmt::print(out, "{}{}: {}\n", column.label, column.unit.empty() ? "" : " (" + column.unit + ")", text);
    return;
  }
  const bool show_unit = !column.unit.empty() && text != "N/A" && !column.percent;
  fmt::print(out, "{}: {}{}\n", column.label, text, show_unit ? " " + column.unit : "");
}

}  // namespace

void write_run_report(const ordered_json& record, std::ostream& out) {
  const bool fsdp = !lookup(record, key::sharding_mode).is_null();
  for (const auto& line : kReferenceLines) {
    if (line.fsdp_only && !fsdp) continue;
    fmt::print(out, "{}: {}\n", line.heading(), reference_text(line, lookup(record, line.key)));
  }
  fmt::print(out, "# --- tokbench ---\n");
  for (const auto& column : result_columns()) {
    if (column.section != Section::tokbench || !column.in_report) continue;
    auto it = record.find(column.key);
    if (it == record.end()) continue;
    if (column.key == key::message && it->is_string() && it->get<std::string>().empty()) continue;
    if (column.hide_null && it->is_null()) continue;
    if (it->is_array()) {
      // One line per element (each rank of a multi-rank run).
      // A rank's time account is summed up after the waterfall, not spelled out here.
      for (auto item : *it) {
        if (item.is_object()) item.erase(key::time_account);
        fmt::print(out, "{}: {}\n", column.label, column_text(column, item));
      }
      continue;
    }
    write_line(out, column, *it);
    if (column.key == key::mfu && it->is_number() && lookup(record, key::mfu_peak_is_estimate) == ordered_json(true))
      fmt::print(out, "  (MFU is of an estimated peak, which this machine may exceed; `tokbench env --calibrate` "
                      "measures it in a few seconds, and later runs use the measurement)\n");
  }
  // The time account, as a waterfall from the peak down to the MFU (docs/time-account.md).
  if (const auto& account = lookup(record, key::time_account); account.is_object()) {
    try {
      account::write_waterfall(account::time_account_from_json(account), out);
    } catch (const std::invalid_argument& e) {  // a record written by another version
      fmt::print(out, "Time account: not shown ({})\n", e.what());
    }
    // Many ranks: each rank's exposed communication, from its own account.
    if (const auto& ranks = lookup(record, key::ranks); ranks.is_array()) {
      for (const auto& r : ranks) {
        const auto a = r.is_object() ? r.find(key::time_account) : r.end();
        if (a == r.end() || !a->is_object()) continue;
        try {
          const account::TimeAccount rank_account = account::time_account_from_json(*a);
          const account::CategoryTime& comm = rank_account[account::Category::exposed_comm];
          fmt::print(out, "  (rank {}: exposed communication {:.3f} ms, {:.2f}% of its {:.3f} ms iteration)\n",
                     rank_account.rank.value_or(-1), comm.seconds * 1e3, comm.share * 100,
                     rank_account.iteration_seconds * 1e3);
        } catch (const std::invalid_argument&) {  // another version's record: no line for this rank
        }
      }
    }
  }
}

}  // namespace tokbench::results
