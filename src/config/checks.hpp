// The checks of the options before anything resolves: each option from its row (a word option's
// choices, a number's bounds, config/field.hpp), then each section's check of its options
// together, beside the section. run/resolve.cpp calls check_fields first; what needs two
// sections, the machine or the executor and mode registries stays there.
#pragma once

#include "config/run_options.hpp"

namespace tokbench::config {

// Refuses (usage::refuse: one line, exit 2) the first option, in --help's order, whose value is
// not one of its row's choices, lies outside its row's bounds or is refused by its row's
// refuse_with (a check that reads other options); then the first refusal of the sections'
// checks (check_batch, check_device, check_parallelism, check_compatibility, check_diagnostics;
// the launcher's, check_launcher, runs in resolve.cpp beside the launch environment).
void check_fields(const RunOptions& options);

}  // namespace tokbench::config
