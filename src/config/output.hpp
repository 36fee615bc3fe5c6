// Output section: what a run reports and where — the peak and FLOP convention behind MFU, the
// JSON result, progress lines. Read by run/resolve.cpp and the run layer's report and result
// writers (run/report.hpp, run/publish_result.hpp) with the throughput layer's MFU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/field.hpp"

namespace tokbench::config {

struct OutputSection {
  std::optional<double> peak_tflops;
  std::string flops_convention = "matmul";
  std::string json_path;
  bool return_metrics_as_json = false;
  int64_t log_every = 0;  // 0: a live line on a terminal, every iteration otherwise
  bool quiet = false;
};

const std::vector<Field>& output_fields();

}  // namespace tokbench::config
