// write_report: builds the tables and hands them to the reporter of the format; files are
// written atomically (results/atomic_file.hpp), so a reader never sees half a report. Also the
// cell rules every reporter shares.
#include "sweep/reporters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "results/atomic_file.hpp"

namespace tokbench::sweep {
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

bool is_failure(const Cell& cell) { return cell && cell->is_string() && cell->get<std::string>() != "ok"; }

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

}  // namespace detail


#ifndef TOKBENCH_SWEEP_HAVE_XLSX
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

const ReporterPlugin& format_from_string(const std::string& name) {
  std::string valid;
  for (const auto& plugin : reporter_plugins()) {
    const bool named = plugin.name == name ||
                       std::find(plugin.aliases.begin(), plugin.aliases.end(), name) != plugin.aliases.end();
    if (named && !plugin.available()) plugin.make(ReportTarget{std::cerr, {}, {}});  // throws why
    if (named) return plugin;
    if (!plugin.available()) continue;
    valid += (valid.empty() ? "" : ", ") + plugin.name;
    for (const auto& alias : plugin.aliases) valid += " (" + alias + ")";
  }
  throw std::invalid_argument(fmt::format("unknown output format '{}'; valid: {}", name, valid));
}

void write_report(const ReporterPlugin& format, const nlohmann::json& context, const std::vector<nlohmann::json>& runs,
                  const TableOptions& options, std::ostream& out, const std::filesystem::path& path) {
  auto run_reporter = [&](std::ostream& text_out, const std::filesystem::path& file) {
    std::unique_ptr<Reporter> reporter = format.make(ReportTarget{text_out, file, options});
    reporter->report_context(context);
    reporter->report_runs(runs);
    reporter->finalize();
  };
  if (format.file == FileUse::never || (format.file == FileUse::optional && path.empty())) {
    run_reporter(out, {});
    return;
  }
  if (path.empty()) throw std::invalid_argument("output format " + format.name + " needs a file path");
  if (format.file == FileUse::required) {
    const std::filesystem::path temporary = results::temporary_beside(path);
    try {
      run_reporter(out, temporary);  // the reporter writes the file itself
    } catch (...) {
      std::filesystem::remove(temporary);
      throw;
    }
    results::commit_temporary(temporary, path);
  } else {
    std::ostringstream text;
    run_reporter(text, {});
    results::write_file_atomically(path, text.str());
  }
}

}  // namespace tokbench::sweep
