// `tokbench predict --from RUN.json --cluster PRESET|FILE.toml|measured [run options]`: a
// measured run's per-unit timings scaled to another cluster, rank count or strategy by
// simulating tokbench's own DDP/FSDP schedule (src/predict, docs/predict.md). The prediction is
// a run record (status "predicted"), written in the sweep's formats.
#include <memory>

#include "cli/command.hpp"
#include "predict/predict_options.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kPredict{
    {"predict", "Predict a run's iteration time, throughput and memory on another cluster, rank count or strategy",
     [](CLI::App& sub) -> std::any {
       auto o = std::make_shared<predict::PredictCommandOptions>();
       predict::add_predict_options(sub, *o);
       // The options alone as soon as the line is read, before the engine starts and before
       // --from is read; run_predict_command checks them again, then the files.
       sub.callback([o] { predict::check_predict_options(*o); });
       return o;
     }}};

}  // namespace
}  // namespace tokbench::cli
