// write_report: builds the tables and hands them to the reporter of the format; files are
// written atomically (files/atomic_file.hpp), so a reader never sees half a report. Also the
// cell rules every reporter shares.
#include "results/reporters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "files/atomic_file.hpp"
#include "usage/usage_error.hpp"
#include "results/record_status.hpp"

namespace tokbench::results {
namespace detail {

std::string format_number(const std::string& spec, double value) {
  if (spec.empty()) return fmt::format("{}", value);
  return fmt::format(fmt::runtime(spec), value);
}

std::string cell_text(const PivotTable& table, const Cell& cell) {
  if (!cell) return "";
  if (cell->is_null()) return "N/A";
  if (cell->is_string()) return cell->get<std::string>();
  if (cell->is_number()) return format_number(table.format, cell->get<double>());
  return cell->dump();
}

// A prediction's status is not a failure: its figures are modelled, not missing.
bool is_failure(const Cell& cell) { return cell && cell->is_string() && !results::holds_figures(cell->get<std::string>()); }

std::string scalar_text(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  // Numbers round-trip exactly; objects and arrays as compact JSON (bad UTF-8 replaced).
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool looks_like_formula(const std::string& text) {
  return !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos;
}

std::vector<std::string> present_keys(const std::vector<nlohmann::json>& runs) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const auto& column : results::tabular_columns())
    for (const auto& run : runs)
      if (run.is_object() && run.contains(column.key) && seen.insert(column.key).second) {
        keys.push_back(column.key);
        break;
      }
  for (const auto& run : runs)
    if (run.is_object())
      for (const auto& [key, value] : run.items())
        if (seen.insert(key).second) keys.push_back(key);
  return keys;
}

std::vector<Column> scalar_columns(const std::vector<nlohmann::json>& runs) {
  std::vector<Column> columns;
  for (const auto& column : results::tabular_columns()) {
    bool present = false, scalar = true;
    for (const auto& run : runs) {
      if (!run.is_object()) continue;
      auto it = run.find(column.key);
      if (it == run.end()) continue;
      present = true;
      scalar = scalar && !it->is_object() && !it->is_array();
    }
    if (present && scalar) columns.push_back(column);
  }
  return columns;
}

std::string flat_header(const Column& column) {
  return column.unit.empty() ? column.label : column.label + " (" + column.unit + ")";
}

std::string flat_cell_text(const FlatTable& table, const Column& column, const nlohmann::ordered_json& row) {
  const nlohmann::ordered_json* value = table.value(row, column.key);
  return value == nullptr ? std::string() : results::column_text(column, *value);
}

std::string explained_column(const nlohmann::json& context) {
  const auto it = context.is_object() ? context.find(kExplainAgainstKey) : context.end();
  return context.is_object() && it != context.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<RowExplanation> context_explanations(const nlohmann::json& context, const PivotTable& table) {
  const std::string column = explained_column(context);
  return column.empty() ? std::vector<RowExplanation>{} : explain_against(table, column);
}

std::string explanation_line(const RowExplanation& row) {
  if (row.explanation) return row.configuration + ": " + account::explanation_sentence(*row.explanation);
  return row.configuration + " · " + row.executor + ": not explained: " + row.unavailable;
}

}  // namespace detail


#ifndef TOKBENCH_HAVE_XLSX
bool xlsx_available() { return false; }
namespace detail {
std::unique_ptr<Reporter> make_xlsx_reporter(const ReportTarget&) {
  throw std::invalid_argument(
      "output format xlsx is not available: tokbench was built without libxlsxwriter "
      "(apt-get install libxlsxwriter-dev, then reconfigure)");
}
}  // namespace detail
#else
bool xlsx_available() { return true; }
#endif

namespace {
bool always() { return true; }
}  // namespace

const std::vector<ReporterPlugin>& reporter_plugins() {
  static const std::vector<ReporterPlugin> plugins = {
      {"print", {}, FileUse::never, always, detail::make_print_reporter},
      {"csv", {}, FileUse::never, always, detail::make_csv_reporter},
      {"json", {}, FileUse::never, always, detail::make_json_reporter},
      {"markdown", {"md"}, FileUse::never, always, detail::make_markdown_reporter},
      {"xlsx", {}, FileUse::required, xlsx_available, detail::make_xlsx_reporter},
      {"html", {}, FileUse::optional, always, detail::make_html_reporter},
  };
  return plugins;
}

const ReporterPlugin& format_from_string(const std::string& name, std::string_view option) {
  std::vector<std::string> valid;  // the formats this build writes, each name then its aliases
  for (const auto& plugin : reporter_plugins()) {
    const bool named = plugin.name == name ||
                       std::find(plugin.aliases.begin(), plugin.aliases.end(), name) != plugin.aliases.end();
    if (named && !plugin.available()) plugin.make(ReportTarget{std::cerr, {}, {}});  // throws why
    if (named) return plugin;
    if (!plugin.available()) continue;
    valid.push_back(plugin.name);
    valid.insert(valid.end(), plugin.aliases.begin(), plugin.aliases.end());
  }
  usage::require_choice(option, name, valid);  // refuses: `name` is none of them
  throw std::logic_error("format_from_string: require_choice accepted an unknown format");
}

namespace {

// Where a format's report goes: text formats to `out` (html too without a path), a file format
// to a temporary file it writes itself, renamed over `path`; html with a path through memory,
// then written atomically. `report` runs the reporter against the target it is given.
void write_to_target(const ReporterPlugin& format, const TableOptions& options, std::ostream& out,
                     const std::filesystem::path& path, const std::function<void(Reporter&)>& report) {
  auto run_reporter = [&](std::ostream& text_out, const std::filesystem::path& file) {
    std::unique_ptr<Reporter> reporter = format.make(ReportTarget{text_out, file, options});
    report(*reporter);
  };
  if (format.file == FileUse::never || (format.file == FileUse::optional && path.empty())) {
    run_reporter(out, {});
    return;
  }
  if (path.empty()) throw std::invalid_argument("output format " + format.name + " needs a file path");
  if (format.file == FileUse::required) {
    const std::filesystem::path temporary = files::temporary_beside(path);
    try {
      run_reporter(out, temporary);  // the reporter writes the file itself
    } catch (...) {
      std::filesystem::remove(temporary);
      throw;
    }
    files::commit_temporary(temporary, path);
  } else {
    std::ostringstream text;
    run_reporter(text, {});
    files::write_file_atomically(path, text.str());
  }
}

}  // namespace

void write_report(const ReporterPlugin& format, const nlohmann::json& context, const std::vector<nlohmann::json>& runs,
                  const TableOptions& options, std::ostream& out, const std::filesystem::path& path) {
  write_to_target(format, options, out, path, [&](Reporter& reporter) {
    reporter.report_context(context);
    reporter.report_runs(runs);
    reporter.finalize();
  });
}

void write_flat_report(const ReporterPlugin& format, const FlatTable& table, std::ostream& out,
                       const std::filesystem::path& path) {
  const auto report = [&](Reporter& reporter) { reporter.report_flat_table(table); };
  if (format.file == FileUse::never && !path.empty()) {  // a text format into a file: whole or not at all
    std::ostringstream text;
    write_to_target(format, {}, text, {}, report);
    files::write_file_atomically(path, text.str());
    return;
  }
  write_to_target(format, {}, out, path, report);
}

const nlohmann::ordered_json& FlatTable::rows() const {
  static const nlohmann::ordered_json kNone = nlohmann::ordered_json::array();
  const auto it = document.is_object() ? document.find(rows_key) : document.end();
  return it != document.end() && it->is_array() ? *it : kNone;
}

const nlohmann::ordered_json* FlatTable::value(const nlohmann::ordered_json& row, const std::string& key) const {
  if (row.is_object())
    if (const auto it = row.find(key); it != row.end()) return &*it;
  if (key != rows_key && document.is_object())
    if (const auto it = document.find(key); it != document.end() && !it->is_structured()) return &*it;
  return nullptr;
}

nlohmann::ordered_json FlatTable::context() const {
  nlohmann::ordered_json context = document.is_object() ? document : nlohmann::ordered_json::object();
  context.erase(rows_key);
  return context;
}

}  // namespace tokbench::results
