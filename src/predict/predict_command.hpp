// `tokbench predict`'s work, below the command line: read the measured runs --from names (a run's
// record, a sweep's JSON, or a stored sweep), the cluster (--cluster, --comm) and an earlier
// prediction's probes (--probes-from), check everything before writing anything, predict each run
// (prediction.hpp) and write the report in --format to stdout or --output. cli registers the
// command (cli/cmd_predict.cpp). The AdamW cost probe runs LibTorch, which this layer does not
// link, so the caller passes it in.
#pragma once

#include <cstdint>
#include <functional>

#include "predict/optimizer_model.hpp"
#include "predict/predict_options.hpp"

namespace tokbench::predict {

// The optimizer's per-tensor and per-element costs on this machine at `threads` intra-op threads.
using MeasureOptimizerCost = std::function<OptimizerCostRates(int64_t threads)>;

// Throws std::invalid_argument (a usage error: one line, exit 2) before any output on a bad input.
void run_predict_command(const PredictCommandOptions& options, const MeasureOptimizerCost& measure_optimizer_cost);

}  // namespace tokbench::predict
