// Compatibility section: the reference benchmark's switches that tokbench accepts so that its
// command lines run unchanged, and answers (a warning, or a refusal of True) in
// run/resolve.cpp. Nothing below `run` reads them.
#pragma once

#include <cstdint>
#include <vector>

#include "config/field.hpp"

namespace tokbench::config {

struct CompatibilitySection {
  // The reference declares this and reads nothing of it: resolve.cpp warns.
  bool fp8_shard_intermediate_activation = false;
  // The reference's nsys window (iterations); nothing without --nsys-enabled, which is refused.
  int64_t profiler_start = 15;
  int64_t profiler_stop = 15;
  bool use_hf = false;  // the reference's Hugging Face models instead of litgpt's: True is refused
  bool nsys_enabled = false;
};

const std::vector<Field>& compatibility_fields();
// The reference's switches tokbench refuses (--use-hf True, --nsys-enabled True): one line,
// exit 2 (usage::refuse). Run after the rows' checks (config::check_fields).
void check_compatibility(const CompatibilitySection& compatibility);

}  // namespace tokbench::config
