// The options of `tokbench predict`: which measured run, which cluster, how to write the
// prediction, and the target run's shape (TargetOptions: the rows of the config sections it
// models, target_options.hpp), registered on a CLI11 command. The checks are predict()'s (prediction.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "predict/prediction.hpp"
#include "predict/reference_level.hpp"

namespace tokbench::predict {

struct PredictCommandOptions {
  std::string from, cluster, format = "print", output;
  std::vector<std::string> comm;  // --cluster measured: one document per world or group size
  std::string probes_from;        // an earlier prediction whose copy rate and AdamW costs are reused
  std::string compute_level = to_string(ComputeLevel::run);  // parsed by compute_level_from_string
  TargetOptions target;
};

void add_predict_options(CLI::App& sub, PredictCommandOptions& o);

// Refuses (one line, exit 2) the first option wrong on its own, before any file is read: the
// target's (check_target_options), --compute-level, --format, and --output where the format
// writes a file. `tokbench` calls it as soon as the line is read; run_predict_command first.
void check_predict_options(const PredictCommandOptions& o);

}  // namespace tokbench::predict
