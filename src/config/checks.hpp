// The checks of single options, from their rows: a word option's choices and a number's
// bounds (config/field.hpp). run/resolve.cpp calls check_fields first; what needs two options,
// the machine or the executor and mode registries stays there.
#pragma once

#include "config/run_options.hpp"

namespace tokbench::config {

// Refuses (usage::refuse: one line, exit 2) the first option, in --help's order, whose value is
// not one of its row's choices, lies outside its row's bounds or is refused by its row's
// refuse_with (a check that reads other options).
void check_fields(const RunOptions& options);

}  // namespace tokbench::config
