// `tokbench history`'s work, below the command line: the result store's sweeps and stored
// `tokbench comm` benchmarks, one line each, or a sweep's runs (all runs, filtered) as tables in
// any of the reporters' formats. The store is opened read-only. cli registers the command
// (cli/cmd_history.cpp).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace tokbench::results {

struct HistoryOptions {
  std::string store = "tokbench-sweep/tokbench-results.sqlite";
  int64_t sweep = 0;  // 0: list the sweeps (or every run with filter/format)
  std::string filter;
  std::string format;
  std::string output;
};

// Throws std::invalid_argument (a usage error: one line, exit 2) for the first option wrong on
// its own, before the store is opened: a negative sweep id, a format that is none of the
// reporters', a file format without an output file. `tokbench` calls it as soon as the line is
// read.
void check_history_options(const HistoryOptions& options);

// Throws std::invalid_argument (a usage error: one line, exit 2) before writing anything: what
// check_history_options refuses, then what is not a readable store.
void write_history(const HistoryOptions& options, std::ostream& out);

}  // namespace tokbench::results
