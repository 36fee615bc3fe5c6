// `tokbench compare`'s work (compare_command.hpp).
#include "sweep/compare_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "results/read_result.hpp"
#include "results/result_store.hpp"
#include "sweep/compare.hpp"
#include "sweep/sweep_runner.hpp"

namespace tokbench::sweep {
namespace {

// One side's runs, each with where it came from: the file it was read from, or for a stored
// sweep its configuration id (else its row), so that two runs of one configuration are named.
struct Side {
  std::vector<results::RunRecord> runs;
  std::vector<std::string> sources;
};

Side load_side(const std::string& side, const std::string& store_path, const char* name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto read = [name](const fs::path& p) {
    try {
      return results::read_result(p).record;
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: {}", name, e.what()));
    }
  };
  Side out;
  if (fs::is_regular_file(side, ec)) {
    out.runs.push_back(read(side));
    out.sources.push_back(side);
    return out;
  }
  if (fs::is_directory(side, ec)) {
    const fs::path runs = fs::is_directory(fs::path(side) / kRunsFolder, ec) ? fs::path(side) / kRunsFolder : fs::path(side);
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(runs))
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      out.runs.push_back(read(f));
      out.sources.push_back(f.string());
    }
    if (out.runs.empty()) throw std::invalid_argument(fmt::format("{} '{}' holds no run JSON files", name, side));
    return out;
  }
  if (!side.empty() && side.find_first_not_of("0123456789") == std::string::npos) {
    if (!fs::is_regular_file(store_path, ec))
      throw std::invalid_argument(fmt::format("{} '{}' is a sweep id but --store '{}' does not exist", name, side, store_path));
    const auto store = results::ResultStore::open_for_reading(store_path);
    // The store's rows passed the readers' checks (results::parse_run_record): each reads typed.
    for (const auto& row : store->runs(std::stoll(side), "")) out.runs.push_back(results::record_from_json(row));
    if (out.runs.empty()) throw std::invalid_argument(fmt::format("{} '{}': no stored sweep with that id", name, side));
    for (std::size_t i = 0; i < out.runs.size(); ++i) {
      const auto& id = out.runs[i].sweep_config_id.value();
      out.sources.push_back(id ? fmt::format("sweep {} config {}", side, *id) : fmt::format("sweep {} row {}", side, i + 1));
    }
    return out;
  }
  throw std::invalid_argument(fmt::format("{} '{}' is not valid; valid: a run JSON file, a sweep folder, or a stored "
                                          "sweep id", name, side));
}

double parse_threshold(const std::string& text) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  double value = 0;
  std::size_t used = 0;
  try {
    value = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != t.size() || !(value >= 0) || value > (percent ? 100 : 1))
    throw std::invalid_argument(fmt::format("--threshold '{}' is not valid; valid: a percentage like 5% or a fraction "
                                            "like 0.05", text));
  return percent ? value / 100 : value;
}

std::string optional_number(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : "N/A";
}

}  // namespace

bool write_comparison(const CompareOptions& o, std::ostream& out) {
  const double threshold = parse_threshold(o.threshold);
  const auto base = load_side(o.base, o.store, "BASE");
  const auto next = load_side(o.next, o.store, "NEW");
  const auto results = compare_records(base.runs, next.runs, threshold, base.sources, next.sources);
  bool regressed = false;
  out << fmt::format("# tokbench compare: NEW / BASE mean iteration time with its 95% interval (Student's t, "
                     "effective sample sizes); threshold {:.1f}%\n",
                     threshold * 100);
  out << fmt::format("# {:<10}  {:>12}  {:>12}  {:>8}  {:>17}  {:>11}  {:>5}  {}\n", "verdict", "BASE tok/s", "NEW tok/s",
                     "ratio", "95% interval", "n_eff B/N", "df", "configuration");
  for (const auto& c : results) {
    regressed = regressed || c.verdict == Verdict::slower;
    const std::string interval =
        c.ratio_low ? fmt::format("[{:.3f}, {:.3f}]", *c.ratio_low, *c.ratio_high) : std::string("N/A");
    const std::string n_eff =
        c.base_n_eff ? fmt::format("{:.0f}/{:.0f}", *c.base_n_eff, *c.new_n_eff) : std::string("N/A");
    out << fmt::format("  {:<10}  {:>12}  {:>12}  {:>8}  {:>17}  {:>11}  {:>5}  {}{}\n", to_string(c.verdict),
                       optional_number(c.base_tokens_per_s, "{:.1f}"), optional_number(c.new_tokens_per_s, "{:.1f}"),
                       optional_number(c.time_ratio, "{:.3f}"), interval, n_eff,
                       optional_number(c.degrees_of_freedom, "{:.0f}"), c.configuration,
                       c.note.empty() ? "" : "  (" + c.note + ")");
  }
  return regressed;
}

}  // namespace tokbench::sweep
