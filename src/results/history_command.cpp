// `tokbench history`'s work (history_command.hpp).
#include "results/history_command.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "machine/environment_keys.hpp"
#include "results/comm_document_keys.hpp"
#include "results/result_store.hpp"
#include "results/tables.hpp"
#include "results/report_keys.hpp"

namespace tokbench::results {

// The comm lines' headings are the comm document's keys they show (its world size as "ranks").
namespace ck = comm_document_key;

void check_history_options(const HistoryOptions& o) {
  if (o.sweep < 0) throw std::invalid_argument(fmt::format("--sweep {} is not valid; valid: a sweep id >= 1", o.sweep));
  const ReporterPlugin& format = format_from_string(o.format.empty() ? "print" : o.format);
  if (format.file != FileUse::never && o.output.empty())
    throw std::invalid_argument(fmt::format("--format {} writes a file: name it with --output FILE", format.name));
}

void write_history(const HistoryOptions& o, std::ostream& out) {
  check_history_options(o);
  const auto opened = ResultStore::open_for_reading(o.store);  // refuses what is not a store
  const ResultStore& store = *opened;
  if (o.sweep == 0 && o.filter.empty() && o.format.empty()) {
    // Row by row as SQLite steps: a store of many sweeps is listed without holding them, and no
    // run's result document is read (the counts come from the index).
    out << fmt::format("# {:>4}  {:<20}  {:>5}  {}\n", "id", "created", report_key::runs, "out_dir");
    store.for_each_sweep([&out](const StoredSweep& s) {
      out << fmt::format("  {:>4}  {:<20}  {:>5}  {}\n", s.id, s.created, s.runs, s.out_dir);
    });
    // Benchmarks of collectives (`tokbench comm --store`), after the sweeps, only when there are
    // any: one line each; their rows are in the store's comm_results table (docs/comm.md).
    bool first = true;
    store.for_each_comm_run([&first, &out](const StoredCommRun& c) {
      if (std::exchange(first, false))
        out << fmt::format("# comm {:>4}  {:<20}  {:>5}  {:<7} {:<6} {:>5}  {:<8} {}\n", "id", "created", "rows",
                           ck::backend, ck::device, "ranks", ck::dtype, machine::environment_key::host);
      out << fmt::format("       {:>4}  {:<20}  {:>5}  {:<7} {:<6} {:>5}  {:<8} {}\n", c.id, c.created, c.results,
                         c.backend, c.device, c.world_size, c.dtype, c.host);
    });
    return;
  }
  const auto runs = store.runs(o.sweep, o.filter);
  const ReporterPlugin& format = format_from_string(o.format.empty() ? "print" : o.format);
  nlohmann::json context{{"store", o.store}, {"sweep", o.sweep}, {"filter", o.filter}, {report_key::runs, runs.size()}};
  write_report(format, context, runs, {}, out, o.output);
}

}  // namespace tokbench::results
