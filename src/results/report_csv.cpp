// The `csv` format: one row per run, RFC 4180 (CRLF line ends; a field holding a comma, quote,
// CR or LF is quoted, its quotes doubled). The header is every key any run has (present_keys);
// a run without a key leaves its field empty, as does null; nested values (iterations, ranks,
// config, environment, iter_time_ms) are compact JSON in one field. A text field a spreadsheet
// would evaluate (looks_like_formula) is prefixed with ', as OWASP's CSV-injection advice and
// spreadsheets themselves do.
#include "results/reporters.hpp"

namespace tokbench::results::detail {
namespace {

std::string field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

void write_csv(const std::vector<nlohmann::json>& runs, std::ostream& out) {
  const std::vector<std::string> keys = present_keys(runs);
  auto row = [&](auto&& text_of) {
    for (size_t i = 0; i < keys.size(); ++i) out << (i ? "," : "") << field(text_of(keys[i]));
    out << "\r\n";
  };
  row([](const std::string& key) { return key; });
  for (const auto& run : runs)
    row([&](const std::string& key) {
      if (!run.is_object()) return std::string();
      auto it = run.find(key);
      if (it == run.end()) return std::string();
      const std::string text = scalar_text(*it);
      return it->is_string() && looks_like_formula(text) ? "'" + text : text;
    });
}

// A flat table: its columns' keys as the header, each row's values round-trip exact (numbers
// unformatted, as in the runs' CSV), a value it has not an empty field.
void write_flat_csv(const FlatTable& table, std::ostream& out) {
  for (size_t i = 0; i < table.columns.size(); ++i) out << (i ? "," : "") << field(table.columns[i].key);
  out << "\r\n";
  for (const auto& row : table.rows()) {
    for (size_t i = 0; i < table.columns.size(); ++i) {
      const nlohmann::ordered_json* value = table.value(row, table.columns[i].key);
      std::string text;
      if (value != nullptr) {
        text = value->is_string() ? value->get<std::string>() : value->is_null() ? "" : value->dump();
        if (value->is_string() && looks_like_formula(text)) text = "'" + text;
      }
      out << (i ? "," : "") << field(text);
    }
    out << "\r\n";
  }
}

class CsvReporter final : public Reporter {
 public:
  explicit CsvReporter(const ReportTarget& target) : out_(target.out) {}
  void report_runs(const std::vector<nlohmann::json>& runs) override { write_csv(runs, out_); }
  void report_flat_table(const FlatTable& table) override { write_flat_csv(table, out_); }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Reporter> make_csv_reporter(const ReportTarget& target) { return std::make_unique<CsvReporter>(target); }

}  // namespace tokbench::results::detail
