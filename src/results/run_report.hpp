// The printed report of one run, read from its result record alone (result_columns.hpp): first
// the reference benchmark's lines in its order, labels and fixed two decimals, so its readers
// find their numbers (docs/reference-benchmark.md, "The printed report"); then every tokbench
// column the record holds, "Label: value unit", in table order. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

namespace tokbench::results {

void write_run_report(const nlohmann::ordered_json& record, std::ostream& out);

}  // namespace tokbench::results
