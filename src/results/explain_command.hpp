// `tokbench explain BASE RUN`'s work, below the command line: read the two records (a run's JSON,
// or a prediction's document of one run), explain RUN against BASE (record_explanation.hpp) and
// write the explanation as text (a header line naming both, then the categories) or as JSON.
// cli registers the command (cli/cmd_explain.cpp).
#pragma once

#include <ostream>
#include <string>

namespace tokbench::results {

// `tokbench explain`'s command line.
struct ExplainOptions {
  std::string base;  // BASE: the record RUN is explained against
  std::string run;   // RUN
  std::string format = "text";
};

// The explanation's formats, `--format`'s choices.
inline constexpr const char* kExplainFormats[] = {"text", "json"};

// Throws std::invalid_argument (a usage error: one line, exit 2) before writing anything: a format
// not in kExplainFormats, a file that is no record, or two records explain_records refuses.
void write_explanation_of(const std::string& base_path, const std::string& run_path, const std::string& format,
                          std::ostream& out);

}  // namespace tokbench::results
