// The `csv` format: one row per run, RFC 4180 (CRLF line ends; a field holding a comma, quote,
// CR or LF is quoted, its quotes doubled). The header is every key any run has (present_keys);
// a run without a key leaves its field empty, as does null; nested values (iterations, ranks,
// config, environment, iter_time_ms) are compact JSON in one field. A text field a spreadsheet
// would evaluate (looks_like_formula) is prefixed with ', as OWASP's CSV-injection advice and
// spreadsheets themselves do.
#include "sweep/reporters.hpp"

namespace tokbench::sweep::detail {
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

class CsvReporter final : public Reporter {
 public:
  explicit CsvReporter(const ReportTarget& target) : out_(target.out) {}
  void report_runs(const std::vector<nlohmann::json>& runs) override { write_csv(runs, out_); }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Reporter> make_csv_reporter(const ReportTarget& target) { return std::make_unique<CsvReporter>(target); }

}  // namespace tokbench::sweep::detail
