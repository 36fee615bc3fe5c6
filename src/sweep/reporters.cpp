// write_report: builds the tables and hands them to the reporter of the format; files are
// written to a temporary name and renamed, so a reader never sees half a report. Also the
// cell rules every reporter shares.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

#include "sweep/reporters.hpp"

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

namespace {

// Writes through `write` to PATH.tmp, then renames it over PATH.
template <typename Write>
void write_file_atomically(const std::filesystem::path& path, Write&& write) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
    write(file);
    file.flush();
    if (!file) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

#ifndef TOKBENCH_SWEEP_HAVE_XLSX
bool xlsx_available() { return false; }
namespace detail {
void write_xlsx(const std::vector<PivotTable>&, const std::vector<nlohmann::json>&, const std::filesystem::path&) {
  throw std::invalid_argument(
      "output format xlsx is not available: tokbench was built without libxlsxwriter "
      "(apt-get install libxlsxwriter-dev, then reconfigure)");
}
}  // namespace detail
#else
bool xlsx_available() { return true; }
#endif

void write_report(Format format, const nlohmann::json& context, const std::vector<nlohmann::json>& runs,
                  const TableOptions& options, std::ostream& out, const std::filesystem::path& path) {
  switch (format) {
    case Format::print: detail::write_print(build_tables(runs, options), out); break;
    case Format::csv: detail::write_csv(runs, out); break;
    case Format::json: detail::write_json(context, runs, out); break;
    case Format::markdown: detail::write_markdown(build_tables(runs, options), out); break;
    case Format::xlsx: {
      if (path.empty()) throw std::invalid_argument("output format xlsx needs a file path");
      std::filesystem::path tmp = path;
      tmp += ".tmp";
      detail::write_xlsx(build_tables(runs, options), runs, tmp);
      std::filesystem::rename(tmp, path);
      break;
    }
    case Format::html:
      // A file when given one; otherwise the page goes to `out` like the text formats.
      if (path.empty())
        detail::write_html(context, runs, options, out);
      else
        write_file_atomically(path, [&](std::ostream& file) { detail::write_html(context, runs, options, file); });
      break;
  }
}

}  // namespace tokbench::sweep
