// The output section's option table (output.hpp).
#include "config/output.hpp"

#include <fmt/format.h>

#include "config/numbers.hpp"
#include "config/row_record_keys.hpp"
#include "config/run_options.hpp"

namespace tokbench::config {

const std::vector<Field>& output_fields() {
  static const std::vector<Field> fields{
      {.names = "--peak-tflops,--peak_tflops",
       .member = &OutputSection::peak_tflops,
       .help = "per-device peak TFLOP/s for MFU (default: datasheet table / CPU estimate)",
       .group = "Output",
       .valid = fmt::format("a number of TFLOP/s in (0, {:.0f}]", limits::kMaxPeakTflops),
       .bounds = {.min = 0,
                  .max = limits::kMaxPeakTflops,
                  .min_open = true,
                  .refusal = fmt::format("is not valid; valid: a per-device peak in (0, {:.0f}] TFLOP/s",
                                         limits::kMaxPeakTflops)},
       .record = {"peak_tflops", 11}},
      {.names = "--flops-convention,--flops_convention",
       .member = &OutputSection::flops_convention,
       .help = "model FLOP count: matmul | causal | palm (docs/PERFORMANCE.md)",
       .group = "Output",
       .choices = [] { return std::vector<std::string>{"matmul", "causal", "palm"}; },
       .record = {record_key::flops_convention, 12}},
      {.names = "--json-path,--json_path",
       .member = &OutputSection::json_path,
       .help = "write the JSON result here (atomically; also on failure)",
       .group = "Output"},
      {.names = "--return-metrics-as-json,--return_metrics_as_json",
       .member = &OutputSection::return_metrics_as_json,
       .help = "emit the JSON result; without --json-path it goes to stdout (report to stderr)",
       .group = "Output"},
      {.names = "--log-every,--log_every",
       .member = &OutputSection::log_every,
       .help = "plain progress line every N iterations (0: live line on a terminal)",
       .group = "Output",
       .valid = fmt::format("a whole number 0..{}", limits::kMaxLogEvery),
       .bounds = {.min = 0,
                  .max = limits::kMaxLogEvery,
                  .refusal = fmt::format("is not valid; valid: 0..{} (0: a live line on a terminal)", limits::kMaxLogEvery)}},
      {.names = "--quiet,-q",
       .member = &OutputSection::quiet,
       .help = "no progress lines and no config echo",
       .group = "Output"},
  };
  return fields;
}

}  // namespace tokbench::config
