// The `xlsx` format (libxlsxwriter): one worksheet per table, named after it, then a "runs"
// sheet with the per-run columns. Numbers are number cells (shown in the table's precision,
// stored exactly), a failed run's status is a red string, the header row and the index columns
// are frozen so they stay in view.
#include <xlsxwriter.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "results/reporters.hpp"
#include "results/record_status.hpp"
#include "results/record_keys.hpp"
#include "results/report_keys.hpp"

namespace tokbench::results::detail {
namespace {

using nlohmann::json;

constexpr size_t kMaxCellChars = 32767;  // Excel's limit for one cell's text

// Excel refuses a sheet name over 31 characters or with any of []:*?/\ — and the titles have
// slashes: "/" reads " per "; the one title still too long has its own name.
std::string sheet_name(const PivotTable& t, std::set<std::string>& used) {
  std::string name;
  if (t.metric_key == key::tokens_per_sec_per_device) {
    name = "NORMALIZED THROUGHPUT (per GPU)";
  } else {
    for (char c : t.title) {
      if (c == '/')
        name += " per ";
      else if (std::string_view("[]:*?\\").find(c) != std::string_view::npos)
        name += '_';
      else
        name += c;
    }
  }
  if (name.size() > 31) name.resize(31);  // ASCII titles: bytes are characters
  for (int n = 2; !used.insert(name).second; ++n) {
    const std::string suffix = fmt::format("~{}", n);
    name = name.substr(0, 31 - suffix.size()) + suffix;
  }
  return name;
}

// Text Excel can store: valid UTF-8, no control characters but tab and line breaks, at most
// 32767 characters.
std::string cell_string(const std::string& text) {
  std::string s = json(text).dump(-1, ' ', false, json::error_handler_t::replace);
  s = json::parse(s).get<std::string>();
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') c = ' ';
  if (s.size() > kMaxCellChars) {
    size_t cut = kMaxCellChars - 3;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // whole characters
    s = s.substr(0, cut) + "...";
  }
  return s;
}

// "{:.2f}" -> "#,##0.00"; anything else Excel's General.
std::string excel_number_format(const std::string& spec) {
  if (spec.size() >= 6 && spec.rfind("{:.", 0) == 0 && spec.substr(spec.size() - 2) == "f}") {
    const int decimals = std::stoi(spec.substr(3, spec.size() - 5));
    return decimals > 0 ? "#,##0." + std::string(decimals, '0') : "#,##0";
  }
  return "General";
}

class Workbook {
 public:
  explicit Workbook(const std::filesystem::path& path) : path_(path) {
    lxw_workbook_options options{};
    book_ = workbook_new_opt(path.c_str(), &options);
    if (!book_) throw std::runtime_error(fmt::format("cannot create {}", path.string()));
    header_ = workbook_add_format(book_);
    format_set_bold(header_);
    format_set_bottom(header_, LXW_BORDER_THIN);
    format_set_bg_color(header_, 0xEEF1F5);
    failed_ = workbook_add_format(book_);
    format_set_font_color(failed_, 0xC0392B);
    format_set_bold(failed_);
    format_set_align(failed_, LXW_ALIGN_RIGHT);
    muted_ = workbook_add_format(book_);
    format_set_font_color(muted_, 0x7F8C8D);
    format_set_italic(muted_);
    format_set_align(muted_, LXW_ALIGN_RIGHT);
  }
  Workbook(const Workbook&) = delete;
  Workbook& operator=(const Workbook&) = delete;
  ~Workbook() {
    if (book_) {  // an exception on the way: close (frees it), and leave no partial file
      workbook_close(book_);
      std::error_code ec;
      std::filesystem::remove(path_, ec);
    }
  }

  lxw_worksheet* sheet(const std::string& name) {
    lxw_worksheet* s = workbook_add_worksheet(book_, name.c_str());
    if (!s) throw std::runtime_error(fmt::format("xlsx: cannot add a sheet named '{}'", name));
    return s;
  }
  lxw_format* number_format(const std::string& spec) {
    const std::string excel = excel_number_format(spec);
    auto it = numbers_.find(excel);
    if (it != numbers_.end()) return it->second;
    lxw_format* f = workbook_add_format(book_);
    format_set_num_format(f, excel.c_str());
    return numbers_[excel] = f;
  }
  void close() {
    lxw_workbook* book = book_;
    book_ = nullptr;
    const lxw_error err = workbook_close(book);
    if (err != LXW_NO_ERROR)
      throw std::runtime_error(fmt::format("cannot write {}: {}", path_.string(), lxw_strerror(err)));
  }

  lxw_format* header_ = nullptr;
  lxw_format* failed_ = nullptr;
  lxw_format* muted_ = nullptr;

 private:
  std::filesystem::path path_;
  lxw_workbook* book_ = nullptr;
  std::map<std::string, lxw_format*> numbers_;
};

void check(lxw_error err, const char* what) {
  if (err != LXW_NO_ERROR) throw std::runtime_error(fmt::format("xlsx: cannot write {}: {}", what, lxw_strerror(err)));
}

// Column widths in characters, from what each column shows (capped: a long message wraps the
// sheet less usefully than it truncates the view).
struct Widths {
  std::vector<size_t> chars;
  void see(size_t col, const std::string& text) {
    if (chars.size() <= col) chars.resize(col + 1, 0);
    chars[col] = std::max(chars[col], std::min<size_t>(text.size(), 60));
  }
  void apply(lxw_worksheet* s) const {
    for (size_t c = 0; c < chars.size(); ++c) worksheet_set_column(s, c, c, double(chars[c]) + 2.5, nullptr);
  }
};

void write_table(Workbook& book, const PivotTable& t, const std::string& name) {
  lxw_worksheet* s = book.sheet(name);
  Widths widths;
  lxw_col_t col = 0;
  for (const auto& c : t.index_columns) {
    check(worksheet_write_string(s, 0, col, cell_string(c).c_str(), book.header_), "a header");
    widths.see(col++, c);
  }
  for (const auto& e : t.executors) {
    check(worksheet_write_string(s, 0, col, cell_string(e).c_str(), book.header_), "a header");
    widths.see(col++, e);
  }
  lxw_format* number = book.number_format(t.format);
  lxw_row_t r = 1;
  for (const auto& row : t.rows) {
    col = 0;
    for (size_t i = 0; i < row.index_values.size(); ++i, ++col) {
      const json& v = row.index_values[i];
      if (v.is_number())
        check(worksheet_write_number(s, r, col, v.get<double>(), nullptr), "an index value");
      else
        check(worksheet_write_string(s, r, col, cell_string(row.index[i]).c_str(), nullptr), "an index value");
      widths.see(col, row.index[i]);
    }
    for (const auto& cell : row.cells) {
      if (cell && cell->is_number()) {
        check(worksheet_write_number(s, r, col, cell->get<double>(), number), "a number");
      } else if (cell) {  // status text, or N/A for a finished run without the value
        lxw_format* f = is_failure(cell) ? book.failed_ : cell->is_null() ? book.muted_ : nullptr;
        check(worksheet_write_string(s, r, col, cell_string(cell_text(t, cell)).c_str(), f), "a status");
      }
      widths.see(col++, cell_text(t, cell));
    }
    ++r;
  }
  widths.apply(s);
  worksheet_freeze_panes(s, 1, static_cast<lxw_col_t>(t.index_columns.size()));
}

void write_runs(Workbook& book, const std::vector<json>& runs) {
  lxw_worksheet* s = book.sheet(report_key::runs);
  const std::vector<Column> columns = scalar_columns(runs);
  Widths widths;
  for (size_t c = 0; c < columns.size(); ++c) {
    check(worksheet_write_string(s, 0, c, cell_string(columns[c].key).c_str(), book.header_), "a header");
    widths.see(c, columns[c].key);
  }
  lxw_row_t r = 1;
  for (const auto& run : runs) {
    for (size_t c = 0; c < columns.size(); ++c) {
      const auto it = run.is_object() ? run.find(columns[c].key) : run.end();
      if (!run.is_object() || it == run.end() || it->is_null()) continue;
      if (it->is_number()) {
        check(worksheet_write_number(s, r, c, it->get<double>(), book.number_format(columns[c].format)), "a number");
        widths.see(c, format_number(columns[c].format, it->get<double>()));
      } else if (it->is_boolean()) {
        check(worksheet_write_boolean(s, r, c, it->get<bool>(), nullptr), "a boolean");
        widths.see(c, "FALSE");
      } else {
        const std::string text = scalar_text(*it);
        const bool failed = columns[c].key == key::status && !results::holds_figures(text);
        check(worksheet_write_string(s, r, c, cell_string(text).c_str(), failed ? book.failed_ : nullptr), "a value");
        widths.see(c, text);
      }
    }
    ++r;
  }
  widths.apply(s);
  worksheet_freeze_panes(s, 1, 0);
  if (!columns.empty()) worksheet_autofilter(s, 0, 0, runs.size(), columns.size() - 1);
}

// A flat table: its rows on a sheet named after the rows' key, the header (the columns' keys, as
// in CSV) frozen and filtered, numbers as number cells in the column's format, flags as
// booleans; then a "context" sheet with the document's scalar values, one per row.
void write_flat_table(Workbook& book, const FlatTable& t) {
  std::string name;
  for (char c : t.rows_key) name += std::string_view("[]:*?/\\").find(c) == std::string_view::npos ? c : '_';
  if (name.empty() || name == report_key::context) name = "rows";
  name.resize(std::min<size_t>(name.size(), 31));
  lxw_worksheet* s = book.sheet(name);
  Widths widths;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    check(worksheet_write_string(s, 0, c, cell_string(t.columns[c].key).c_str(), book.header_), "a header");
    widths.see(c, t.columns[c].key);
  }
  lxw_row_t r = 1;
  for (const auto& row : t.rows()) {
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const nlohmann::ordered_json* it = t.value(row, t.columns[c].key);
      if (it == nullptr || it->is_null()) continue;
      if (it->is_number())
        check(worksheet_write_number(s, r, c, it->get<double>(), book.number_format(t.columns[c].format)), "a number");
      else if (it->is_boolean())
        check(worksheet_write_boolean(s, r, c, it->get<bool>(), nullptr), "a boolean");
      else
        check(worksheet_write_string(s, r, c, cell_string(flat_cell_text(t, t.columns[c], row)).c_str(), nullptr),
              "a value");
      widths.see(c, flat_cell_text(t, t.columns[c], row));
    }
    ++r;
  }
  widths.apply(s);
  worksheet_freeze_panes(s, 1, 0);
  if (!t.columns.empty()) worksheet_autofilter(s, 0, 0, t.rows().size(), t.columns.size() - 1);

  lxw_worksheet* context = book.sheet(report_key::context);
  Widths context_widths;
  r = 0;
  const nlohmann::ordered_json described = t.context();  // iterated below: a named object, not a temporary
  for (const auto& [key, value] : described.items()) {
    if (value.is_structured()) continue;
    check(worksheet_write_string(context, r, 0, cell_string(key).c_str(), book.header_), "a key");
    if (value.is_number())
      check(worksheet_write_number(context, r, 1, value.get<double>(), nullptr), "a number");
    else
      check(worksheet_write_string(context, r, 1, cell_string(scalar_text(json(value))).c_str(), nullptr), "a value");
    context_widths.see(0, key);
    context_widths.see(1, scalar_text(json(value)));
    ++r;
  }
  context_widths.apply(context);
}

// One sheet per table, then the runs sheet, into ReportTarget::path.
class XlsxReporter final : public Reporter {
 public:
  explicit XlsxReporter(const ReportTarget& target) : path_(target.path), options_(target.tables) {}
  void report_runs(const std::vector<json>& runs) override {
    Workbook book(path_);
    std::set<std::string> used = {report_key::runs};
    for (const auto& t : build_tables(runs, options_)) write_table(book, t, sheet_name(t, used));
    write_runs(book, runs);
    book.close();
  }
  void report_flat_table(const FlatTable& table) override {
    Workbook book(path_);
    write_flat_table(book, table);
    book.close();
  }

 private:
  std::filesystem::path path_;
  TableOptions options_;
};

}  // namespace

std::unique_ptr<Reporter> make_xlsx_reporter(const ReportTarget& target) {
  return std::make_unique<XlsxReporter>(target);
}

}  // namespace tokbench::results::detail
