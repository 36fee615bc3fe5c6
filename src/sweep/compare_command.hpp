// `tokbench compare BASE NEW`'s work, below the command line: each side's runs read (a run JSON
// file, a sweep folder's runs/, or a stored sweep id), paired and compared (compare.hpp says how),
// and one line per configuration written with its verdict. cli registers the command
// (cli/cmd_compare.cpp) and turns a regression into exit 1.
#pragma once

#include <ostream>
#include <string>

namespace tokbench::sweep {

struct CompareOptions {
  std::string base, next;
  std::string threshold = "5%";
  std::string store = "tokbench-sweep/tokbench-results.sqlite";
};

// Whether a configuration got slower beyond the threshold with 95% confidence. Throws
// std::invalid_argument (a usage error: one line, exit 2) before writing anything on a bad side
// or threshold.
bool write_comparison(const CompareOptions& options, std::ostream& out);

}  // namespace tokbench::sweep
