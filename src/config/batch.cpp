// The batch section's option table (batch.hpp).
#include "config/batch.hpp"

#include <fmt/format.h>

#include "config/numbers.hpp"
#include "config/row_record_keys.hpp"
#include "config/run_options.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::config {

const std::vector<Field>& batch_fields() {
  static const std::vector<Field> fields{
      {.names = "--micro-batch-size,--micro_batch_size",
       .member = &BatchSection::micro_batch_size,
       .help = "sequences per micro-batch per device (B)",
       .group = "Batch",
       .predict_help = "only the measured run's (compute per micro-batch is measured, not modelled)",
       .valid = "a positive whole number",
       .bounds = {.positive = true},
       .shapes = {.label = "B", .record_key = record_key::micro_bs, .place = 3}},
      {.names = "--global-batch-size,--global_batch_size",
       .member = &BatchSection::global_batch_size,
       .help = "sequences per optimizer step over all devices (G = B x GA x W; default B x W)",
       .group = "Batch",
       .predict_help = "sequences per iteration, all ranks (default: the measured GA kept: micro x GA x ranks)",
       .valid = "a positive multiple of --micro-batch-size x world size",
       .bounds = {.positive = true},  // the multiple: run/resolve.cpp, which knows the world size
       .shapes = {.label = "G", .record_key = record_key::global_bs, .place = 4}},
      {.names = "--max-iters,--max_iters",
       .member = &BatchSection::max_iters,
       .help = "iterations in total, warm-up included",
       .group = "Batch",
       .valid = fmt::format("a whole number 1..{}", limits::kMaxIters),
       .bounds = {.positive = true,
                  .max = limits::kMaxIters,
                  .refusal = fmt::format("is not valid; valid: 1..{} (every iteration's time is kept and written "
                                         "to the JSON)", limits::kMaxIters)}},
      {.names = "--warmup-iters,--warmup_iters",
       .member = &BatchSection::warmup_iters,
       .help = "iterations run first and left out of every metric",
       .group = "Batch",
       .valid = "a whole number from 0 to --max-iters - 1",
       .bounds = {.min = 0, .refusal = "must be >= 0"}},  // below --max-iters: run/resolve.cpp
  };
  return fields;
}

void check_batch(const BatchSection& o) {
  if (o.warmup_iters >= o.max_iters)
    usage::refuse(fmt::format("--warmup-iters {} must be fewer than --max-iters {}; valid: 0..{}", o.warmup_iters,
                              o.max_iters, o.max_iters - 1));
}

const std::vector<DerivedValue>& batch_derived_values() {
  static const std::vector<DerivedValue> values{
      {.shapes = {.record_key = record_key::ga, .place = 5}},
  };
  return values;
}

}  // namespace tokbench::config
