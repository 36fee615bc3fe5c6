// `tokbench history`: the result store's sweeps (and stored `tokbench comm` benchmarks, one line
// each), or the sweeps' runs as tables in any format. The store is opened read-only; what is
// not a readable store is refused in one line (exit 2).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <utility>

#include "cli/command.hpp"
#include "results/result_store.hpp"
#include "results/tables.hpp"

namespace tokbench::cli {
namespace {

struct HistoryOptions {
  std::string store = "tokbench-sweep/tokbench-results.sqlite";
  int64_t sweep = 0;  // 0: list the sweeps (or every run with --filter/--format)
  std::string filter;
  std::string format;
  std::string output;
};

int run_history(const HistoryOptions& o) {
  if (o.sweep < 0) throw std::invalid_argument(fmt::format("--sweep {} is not valid; valid: a sweep id >= 1", o.sweep));
  const auto opened = results::ResultStore::open_for_reading(o.store);  // refuses what is not a store
  const results::ResultStore& store = *opened;
  if (o.sweep == 0 && o.filter.empty() && o.format.empty()) {
    // Row by row as SQLite steps: a store of many sweeps is listed without holding them, and no
    // run's result document is read (the counts come from the index).
    std::cout << fmt::format("# {:>4}  {:<20}  {:>5}  {}\n", "id", "created", "runs", "out_dir");
    store.for_each_sweep([](const results::StoredSweep& s) {
      std::cout << fmt::format("  {:>4}  {:<20}  {:>5}  {}\n", s.id, s.created, s.runs, s.out_dir);
    });
    // Benchmarks of collectives (`tokbench comm --store`), after the sweeps, only when there are
    // any: one line each; their rows are in the store's comm_results table (docs/comm.md).
    bool first = true;
    store.for_each_comm_run([&first](const results::StoredCommRun& c) {
      if (std::exchange(first, false))
        std::cout << fmt::format("# comm {:>4}  {:<20}  {:>5}  {:<7} {:<6} {:>5}  {:<8} {}\n", "id", "created", "rows",
                                 "backend", "device", "ranks", "dtype", "host");
      std::cout << fmt::format("       {:>4}  {:<20}  {:>5}  {:<7} {:<6} {:>5}  {:<8} {}\n", c.id, c.created, c.results,
                               c.backend, c.device, c.world_size, c.dtype, c.host);
    });
    return kExitOk;
  }
  const auto runs = store.runs(o.sweep, o.filter);
  const results::ReporterPlugin& format = results::format_from_string(o.format.empty() ? "print" : o.format);
  if (format.file != results::FileUse::never && o.output.empty())
    throw std::invalid_argument("--format xlsx and html write a file: name it with --output FILE");
  nlohmann::json context{{"store", o.store}, {"sweep", o.sweep}, {"filter", o.filter}, {"runs", runs.size()}};
  results::write_report(format, context, runs, {}, std::cout, o.output);
  return kExitOk;
}

const RegisterCommand kHistory{
    {"history", "List stored sweeps, or tabulate stored runs",
     [](CLI::App& sub) -> std::function<int()> {
       auto o = std::make_shared<HistoryOptions>();
       sub.add_option("--store", o->store, "SQLite result store")->capture_default_str();
       sub.add_option("--sweep", o->sweep, "one sweep's runs (ids: `tokbench history`)");
       sub.add_option("--filter", o->filter, "runs whose model, executor, mode, status or device contains this");
       sub.add_option("--format", o->format, "print | csv | json | markdown | xlsx | html");
       sub.add_option("--output", o->output, "file for xlsx and html");
       return [o] { return run_history(*o); };
     }}};

}  // namespace
}  // namespace tokbench::cli
