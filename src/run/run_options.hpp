// The options of `tokbench run` as the run layer names them: they are declared, section by
// section, in the configuration layer (config/run_options.hpp, docs/options.md); this header
// keeps the run layer's names for them (run::RunOptions, run::limits, add_bench_options).
#pragma once

#include "config/run_options.hpp"
#include "run/executor_registry.hpp"

namespace tokbench::run {

using config::finite_number;
using config::options_json;
using config::RunOptions;
using config::whole_number;
namespace limits = config::limits;

// Registers every option of `tokbench run` on `app` (config::register_fields), with --compile's
// help from the executor table, which lives in this layer.
inline void add_bench_options(CLI::App& app, RunOptions& options) {
  config::register_fields(app, options);
  app.get_option("--compile")->description(executor_help());
}

}  // namespace tokbench::run
