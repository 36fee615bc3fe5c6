// `tokbench compare BASE NEW [--threshold 5%]`: a regression gate. Each side is a run JSON
// file, a sweep folder (its runs/), or a stored sweep id. Exit 1 when a configuration is
// slower beyond the threshold with 95% confidence (sweep/compare.hpp says how).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "results/record_keys.hpp"
#include "results/read_result.hpp"
#include "sweep/compare.hpp"
#include "results/result_store.hpp"

namespace tokbench::cli {
namespace {

struct CompareOptions {
  std::string base, next;
  std::string threshold = "5%";
  std::string store = "tokbench-sweep/tokbench-results.sqlite";
};

// One side's runs, each with where it came from: the file it was read from, or for a stored
// sweep its configuration id (else its row), so that two runs of one configuration are named.
struct Side {
  std::vector<nlohmann::json> runs;
  std::vector<std::string> sources;
};

Side load_side(const std::string& side, const std::string& store_path, const char* name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto read = [name](const fs::path& p) {
    try {
      return results::read_run_result(p);
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
    const fs::path runs = fs::is_directory(fs::path(side) / "runs", ec) ? fs::path(side) / "runs" : fs::path(side);
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
    out.runs = store->runs(std::stoll(side), "");
    if (out.runs.empty()) throw std::invalid_argument(fmt::format("{} '{}': no stored sweep with that id", name, side));
    for (std::size_t i = 0; i < out.runs.size(); ++i) {
      const auto& run = out.runs[i];
      const auto id = run.find(results::key::sweep_config_id);
      out.sources.push_back(id != run.end() && id->is_string()
                                ? fmt::format("sweep {} config {}", side, id->get<std::string>())
                                : fmt::format("sweep {} row {}", side, i + 1));
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

int run_compare(const CompareOptions& o) {
  const double threshold = parse_threshold(o.threshold);
  const auto base = load_side(o.base, o.store, "BASE");
  const auto next = load_side(o.next, o.store, "NEW");
  const auto results = sweep::compare_runs(base.runs, next.runs, threshold, base.sources, next.sources);
  bool regressed = false;
  std::cout << fmt::format("# tokbench compare: NEW / BASE mean iteration time with its 95% interval (Student's t, "
                           "effective sample sizes); threshold {:.1f}%\n",
                           threshold * 100);
  std::cout << fmt::format("# {:<10}  {:>12}  {:>12}  {:>8}  {:>17}  {:>11}  {:>5}  {}\n", "verdict", "BASE tok/s",
                           "NEW tok/s", "ratio", "95% interval", "n_eff B/N", "df", "configuration");
  for (const auto& c : results) {
    regressed = regressed || c.verdict == sweep::Verdict::slower;
    const std::string interval =
        c.ratio_low ? fmt::format("[{:.3f}, {:.3f}]", *c.ratio_low, *c.ratio_high) : std::string("N/A");
    const std::string n_eff =
        c.base_n_eff ? fmt::format("{:.0f}/{:.0f}", *c.base_n_eff, *c.new_n_eff) : std::string("N/A");
    std::cout << fmt::format("  {:<10}  {:>12}  {:>12}  {:>8}  {:>17}  {:>11}  {:>5}  {}{}\n", sweep::to_string(c.verdict),
                             optional_number(c.base_tokens_per_s, "{:.1f}"), optional_number(c.new_tokens_per_s, "{:.1f}"),
                             optional_number(c.time_ratio, "{:.3f}"), interval, n_eff,
                             optional_number(c.degrees_of_freedom, "{:.0f}"), c.configuration,
                             c.note.empty() ? "" : "  (" + c.note + ")");
  }
  return regressed ? kExitError : kExitOk;
}

const RegisterCommand kCompare{
    {"compare", "Compare two runs or sweeps; exit 1 when a configuration got slower beyond the threshold",
     [](CLI::App& sub) -> std::function<int()> {
       auto o = std::make_shared<CompareOptions>();
       sub.add_option("BASE", o->base, "run JSON, sweep folder, or stored sweep id")->required();
       sub.add_option("NEW", o->next, "run JSON, sweep folder, or stored sweep id")->required();
       sub.add_option("--threshold", o->threshold, "slowdown that fails the gate (5% or 0.05)")->capture_default_str();
       sub.add_option("--store", o->store, "result store for sweep ids")->capture_default_str();
       sub.footer("Exit codes: 0 no regression, 1 a configuration slower beyond the threshold, 2 usage.");
       return [o] { return run_compare(*o); };
     }}};

}  // namespace
}  // namespace tokbench::cli
