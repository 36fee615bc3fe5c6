// Each subcommand's work, one entry per command (command_work.hpp): each hands its options to the
// function of the layer that does the work (docs/architecture.md, "command | its work").
#include "cli/command_work.hpp"

#include <torch/version.h>

#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>

#include "cli/command.hpp"
#include "git_revision.hpp"
#include "model/models_listing.hpp"
#include "run/env_report.hpp"
#include "run/info_report.hpp"
#include "run/run_command.hpp"
#include "run/run_options.hpp"
#if TOKBENCH_HAVE_SWEEP
#include "results/explain_command.hpp"
#include "results/history_command.hpp"
#include "sweep/compare_command.hpp"
#include "sweep/sweep_command.hpp"
#include "sweep/sweep_options.hpp"
#endif
#if TOKBENCH_HAVE_COMM
#include "comm/comm_command.hpp"
#include "comm/comm_options.hpp"
#endif
#if TOKBENCH_HAVE_PREDICT
#include "predict/predict_command.hpp"
#include "predict/predict_options.hpp"
#include "train/optimizer_probe.hpp"
#endif

namespace tokbench::cli {
namespace {

// A command's work over its own options type: the add_options of its cmd_*.cpp returned a
// shared_ptr<Options>.
template <class Options>
CommandWork over(std::function<int(Options&, CLI::App&)> work) {
  return [work](const std::any& options, CLI::App& sub) {
    return work(*std::any_cast<const std::shared_ptr<Options>&>(options), sub);
  };
}

#if TOKBENCH_HAVE_PREDICT
// The AdamW cost probe predict asks for: tokbench's own AdamW, timed here (it runs LibTorch,
// which the torch-free predict layer does not link).
predict::OptimizerCostRates measure_optimizer_cost(int64_t threads) {
  const train::OptimizerCost cost = train::measure_optimizer_cost(threads);
  return predict::OptimizerCostRates{cost.per_tensor_seconds, cost.per_element_seconds, cost.method};
}
#endif

const std::map<std::string, CommandWork>& work_table() {
  static const std::map<std::string, CommandWork> table{
      {"run", over<run::RunOptions>([](run::RunOptions& o, CLI::App&) { return run::run_command(o); })},
      {"info", over<run::InfoOptions>([](run::InfoOptions& o, CLI::App&) {
         run::write_model_info(o, std::cout);
         return kExitOk;
       })},
      {"models", over<model::ModelsOptions>([](model::ModelsOptions& o, CLI::App&) {
         model::write_models(o, std::cout);
         return kExitOk;
       })},
      {"env", over<run::EnvOptions>([](run::EnvOptions& o, CLI::App&) {
         return run::write_env_report(o, std::cout) ? kExitOk : kExitError;
       })},
      {"version", [](const std::any&, CLI::App&) {
         std::cout << "tokbench " << TOKBENCH_VERSION << " (git " << git_revision() << ", LibTorch " << TORCH_VERSION
                   << ")\n";
         return kExitOk;
       }},
#if TOKBENCH_HAVE_COMM
      {"comm", over<comm::CommOptions>([](comm::CommOptions& o, CLI::App&) { return comm::comm_command(o); })},
#endif
#if TOKBENCH_HAVE_SWEEP
      {"sweep", over<sweep::SweepCommandLine>([](sweep::SweepCommandLine& line, CLI::App& sub) {
         return sweep::run_sweep_command(line.options, sub.remaining(), line.handles.slurm_options_given());
       })},
      {"history", over<results::HistoryOptions>([](results::HistoryOptions& o, CLI::App&) {
         results::write_history(o, std::cout);
         return kExitOk;
       })},
      {"compare", over<sweep::CompareOptions>([](sweep::CompareOptions& o, CLI::App&) {
         return sweep::write_comparison(o, std::cout) ? kExitError : kExitOk;
       })},
      {"explain", over<results::ExplainOptions>([](results::ExplainOptions& o, CLI::App&) {
         results::write_explanation_of(o.base, o.run, o.format, std::cout);
         return kExitOk;
       })},
#endif
#if TOKBENCH_HAVE_PREDICT
      {"predict", over<predict::PredictCommandOptions>([](predict::PredictCommandOptions& o, CLI::App&) {
         predict::run_predict_command(o, measure_optimizer_cost);
         return kExitOk;
       })},
#endif
  };
  return table;
}

}  // namespace

const CommandWork& command_work(const std::string& name) {
  const auto& table = work_table();
  const auto found = table.find(name);
  if (found == table.end())
    throw std::logic_error("the command '" + name + "' is registered (cli/cmd_*.cpp) but has no work in "
                           "cli/command_work.cpp");
  return found->second;
}

}  // namespace tokbench::cli
