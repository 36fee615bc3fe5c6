// The options of `tokbench run`: one struct made of the sections that own them (model, batch,
// device, parallelism, launcher, compatibility, training, data, output, diagnostics; each in
// its own file with its table of fields), and what follows from those tables — the CLI11
// registration, the record's `config` block, the sweep's value types and compare's key fields.
// Member initialisers are the defaults --help prints. Values here are raw user input;
// run/resolve.hpp turns them into a validated RunPlan. How to add an option: docs/options.md.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "config/batch.hpp"
#include "config/compatibility.hpp"
#include "config/data.hpp"
#include "config/device.hpp"
#include "config/diagnostics.hpp"
#include "config/field.hpp"
#include "config/launcher.hpp"
#include "config/model.hpp"
#include "config/numbers.hpp"
#include "config/output.hpp"
#include "config/parallelism.hpp"
#include "config/training.hpp"
#include "usage/value_type.hpp"

namespace tokbench::config {

// Inheritance keeps every option a plain member (o.micro_batch_size), whichever section owns it.
struct RunOptions : ModelSection,
                    BatchSection,
                    DeviceSection,
                    ParallelismSection,
                    LauncherSection,
                    CompatibilitySection,
                    TrainingSection,
                    DataSection,
                    OutputSection,
                    DiagnosticsSection {};

// Every section's fields, in the order they are registered (so --help lists them in it).
const std::vector<const Field*>& all_fields();
// The values the record carries beside the options (derived or filled by the run).
const std::vector<const DerivedValue*>& all_derived_values();

// Registers every field on `app`, bound to `options` (whose current values are the defaults
// shown by --help). A repeated option takes its last value, so a base command line can be
// overridden; booleans are flags that also take "=True/False" (the reference's jsonargparse
// spelling); numbers are checked at parse time (numbers.hpp).
void register_fields(CLI::App& app, RunOptions& options);

// The options as given, keyed by their record keys in the record's order (unset optionals and
// the places the run fills are null): the JSON record's "config" block and the "options" the
// Python step reads. An option that needs no resolution (a switch such as --use-sdpa) is read
// from here by the Python step and from RunPlan::options by tokbench's, nothing copied between.
nlohmann::ordered_json options_json(const RunOptions& options);

// The options with each unset optional that names a field in its row's `defaults_to` set to that
// field's value: what resolve hands down to the layers and the run plan gives the Python step.
// The record's `config` block keeps the options as given (options_json of the options themselves).
RunOptions with_defaults(RunOptions options);

// The value type of the option named `option` (any of its long names, without dashes), for a
// sweep's matrix and command line. An unknown name throws std::invalid_argument with one line
// that starts with `where`.
usage::ValueType option_type(const std::string& option, const std::string& where);

// The fields compare keys runs on, in the key's order: every option and derived value that shapes
// what an iteration does and how.
std::vector<IterationKey> iteration_keys();

}  // namespace tokbench::config
