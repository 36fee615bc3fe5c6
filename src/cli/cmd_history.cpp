// `tokbench history`: the result store's sweeps (and stored `tokbench comm` benchmarks, one line
// each), or the sweeps' runs as tables in any format. The store is opened read-only; what is
// not a readable store is refused in one line (exit 2).
#include <memory>

#include "cli/command.hpp"
#include "results/history_command.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kHistory{
    {"history", "List stored sweeps, or tabulate stored runs",
     [](CLI::App& sub) -> std::any {
       auto o = std::make_shared<results::HistoryOptions>();
       sub.add_option("--store", o->store, "SQLite result store")->capture_default_str();
       sub.add_option("--sweep", o->sweep, "one sweep's runs (ids: `tokbench history`)");
       sub.add_option("--filter", o->filter, "runs whose model, executor, mode, status or device contains this");
       sub.add_option("--format", o->format, "print | csv | json | markdown | xlsx | html");
       sub.add_option("--output", o->output, "file for xlsx and html");
       // The options alone as soon as the line is read, before the engine starts and before the
       // store is opened; write_history checks them again.
       sub.callback([o] { results::check_history_options(*o); });
       return o;
     }}};

}  // namespace
}  // namespace tokbench::cli
