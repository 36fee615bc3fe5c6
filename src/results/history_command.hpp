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

// Throws std::invalid_argument (a usage error: one line, exit 2) before writing anything: a
// negative sweep id, what is not a readable store, a file format without an output file.
void write_history(const HistoryOptions& options, std::ostream& out);

}  // namespace tokbench::results
