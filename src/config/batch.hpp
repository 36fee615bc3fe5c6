// Batch section: the batch shape and the iteration counts. Read by run/resolve.cpp into the
// train layer's loop options (train/train_loop.hpp), which owns what they mean: B sequences per
// micro-batch, G per optimizer step, the warm-up left out of every metric.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "config/field.hpp"

namespace tokbench::config {

struct BatchSection {
  int64_t micro_batch_size = 1;
  std::optional<int64_t> global_batch_size;  // unset: micro_batch_size × world size
  int64_t max_iters = 45;
  int64_t warmup_iters = 25;
};

const std::vector<Field>& batch_fields();
// The section's check of two of its options (--warmup-iters below --max-iters): one line, exit 2
// (usage::refuse). Run after the rows' checks (config::check_fields).
void check_batch(const BatchSection& batch);
// Gradient accumulation (G / (B·W)), which the record keeps and compare keys on.
const std::vector<DerivedValue>& batch_derived_values();

}  // namespace tokbench::config
