// `tokbench predict --from RUN.json --cluster PRESET|FILE.toml|measured [run options]`: a
// measured run's per-unit timings scaled to another cluster, rank count or strategy by
// simulating tokbench's own DDP/FSDP schedule (src/predict, docs/predict.md). The prediction is
// a run record (status "predicted"), written in the sweep's formats.
#include <memory>

#include "cli/command.hpp"
#include "predict/predict_command.hpp"
#include "predict/predict_options.hpp"
#include "train/optimizer_probe.hpp"

namespace tokbench::cli {
namespace {

// The AdamW cost probe predict asks for: tokbench's own AdamW, timed here (it runs LibTorch).
predict::OptimizerCostRates measure_optimizer_cost(int64_t threads) {
  const train::OptimizerCost cost = train::measure_optimizer_cost(threads);
  return predict::OptimizerCostRates{cost.per_tensor_seconds, cost.per_element_seconds, cost.method};
}

const RegisterCommand kPredict{
    {"predict", "Predict a run's iteration time, throughput and memory on another cluster, rank count or strategy",
     [](CLI::App& sub) -> std::function<int()> {
       auto o = std::make_shared<predict::PredictCommandOptions>();
       predict::add_predict_options(sub, *o);
       return [o] {
         predict::run_predict_command(*o, measure_optimizer_cost);
         return kExitOk;
       };
     }}};

}  // namespace
}  // namespace tokbench::cli
