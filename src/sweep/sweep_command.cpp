// `tokbench sweep` from its parsed options to its exit code (sweep_command.hpp): the matrix
// expanded and every configuration checked as `tokbench run` would check it, then run (here or
// as Slurm jobs), stored, tabulated, and the exit code chosen from what finished.
#include "sweep/sweep_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include "config/run_options.hpp"
#include "distributed/node_launch.hpp"
#include "results/record_keys.hpp"
#include "results/record_status.hpp"
#include "results/result_store.hpp"
#include "results/tables.hpp"
#include "machine/machine_info.hpp"
#include "run/precheck.hpp"
#include "sweep/folder_lock.hpp"
#include "sweep/matrix.hpp"
#include "sweep/option_rows.hpp"
#include "sweep/slurm_jobs.hpp"
#include "sweep/sweep_runner.hpp"
#include "train/run_status.hpp"
#if defined(TOKBENCH_HAVE_PREDICT)
#include "results/table_explanations.hpp"
#include "sweep/sweep_predictions.hpp"
#endif

namespace tokbench::sweep {
namespace {

// Who holds a sweep folder, for the line a second sweep into it is refused with.
std::string lock_description(const std::vector<std::string>& command) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char started[32] = {};
  std::strftime(started, sizeof started, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  std::string words;
  for (const auto& w : command) words += (words.empty() ? "" : " ") + w;
  if (words.size() > 300) words = words.substr(0, 300) + "...";
  for (char& c : words)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';  // one line
  return fmt::format("pid {} on {}, started {}: {}", ::getpid(), host, started, words);
}

}  // namespace

int run_sweep_command(const SweepCommandOptions& o, const std::vector<std::string>& run_options,
                      bool slurm_options_given) {
  const SweepChoices choices = check_sweep_choices(o, slurm_options_given);
  const Launcher launcher = choices.launcher;
  const results::ReporterPlugin& format = *choices.format;
  const std::vector<Matrix> matrices = sweep_matrices(
      o.matrix_file, run_options, [](const std::string& option) { return config::option_type(option, "sweep"); });
  const auto matrix_configs = expand_all(matrices);
  if (matrix_configs.empty()) throw std::invalid_argument("sweep: the matrix is empty");
  check_explain_column(o.explain_against, matrix_configs);
  // With --predict, the rows gain the one-rank runs their predictions start from, and under
  // --predict-only the multi-rank rows are predicted instead of run.
  if (o.predict.empty() && (!o.comm.empty() || o.predict_only))
    throw std::invalid_argument(fmt::format("{} applies with --predict CLUSTER only", o.comm.empty() ? "--predict-only" : "--comm"));
#if defined(TOKBENCH_HAVE_PREDICT)
  std::optional<SweepCluster> cluster;
  PredictedSweep predicted_sweep;
  if (!o.predict.empty()) {
    cluster = load_sweep_cluster(o.predict, o.comm);
    predicted_sweep = plan_predicted_sweep(matrix_configs, o.predict_only);
  }
  const std::vector<Configuration>& rows = cluster ? predicted_sweep.rows : matrix_configs;
  const std::vector<Configuration>& configs = cluster ? predicted_sweep.to_run : matrix_configs;
#else
  if (!o.predict.empty())
    throw std::invalid_argument("--predict: this tokbench was built without toml++, and so without predictions "
                                "(apt-get install libtomlplusplus-dev, then build again)");
  const std::vector<Configuration>& rows = matrix_configs;
  const std::vector<Configuration>& configs = matrix_configs;
#endif
  // A Slurm job asks for GPUs only when its device says cuda: with auto it would get none and
  // train on the node's CPU without a word, so the device must be named.
  if (launcher == Launcher::slurm)
    for (const auto& c : configs)
      if (const std::string device = device_of(c, "auto"); device == "auto")
        throw std::invalid_argument(fmt::format(
            "--launcher slurm needs the device named, and configuration '{}' has --device auto (its job would ask "
            "Slurm for no GPU and could train on a node's CPU); valid: --device cuda | cpu",
            c.describe()));
  // Every configuration checked as `tokbench run` checks its options, before anything runs:
  // locally against this machine, under Slurm against a node as srun will lay the ranks out.
  std::map<std::string, std::string> refusals;  // configuration id -> the run's one-line refusal
  {
    const machine::MachineInfo here = launcher == Launcher::local ? machine::probe_machine() : machine::MachineInfo{};
#if defined(TOKBENCH_HAVE_PREDICT)
    // A prediction scales measured compute to more ranks; it does not turn one device kind's
    // compute into another's, so a cluster of another kind than the rows' is refused now.
    if (cluster)
      for (const auto& c : rows) {
        std::string device = device_of(c, "auto");
        if (device == "auto") device = launcher == Launcher::local && here.cuda_devices.empty() ? "cpu" : "cuda";
        const std::string kind = device.rfind("cuda", 0) == 0 ? "cuda" : "cpu";
        if (kind != cluster->device())
          throw std::invalid_argument(fmt::format(
              "--predict {}: its ranks compute on {}, and configuration '{}' runs on {}; a prediction scales measured "
              "compute, it does not model another device; valid: a {} cluster (a FILE.toml, or measured with --comm)",
              o.predict, cluster->device(), c.describe(), kind, kind));
      }
#endif
    for (const auto& c : configs) {
      const std::string refusal =
          launcher == Launcher::local
              ? run::precheck_run_here(c.run_arguments(), here)
              : run::precheck_run_options(slurm_run_arguments(c),
                                            {slurm_nodes(c), slurm_tasks_per_node(c)});
      if (!refusal.empty()) refusals[c.id] = refusal;
    }
  }
  // A matrix of which nothing can run is a mistake in the matrix, refused before anything is
  // written (after --dry-run's listing, which shows each configuration's reason).
  const auto refuse_when_none_can_run = [&] {
    if (configs.empty() || refusals.size() < configs.size()) return;
    const auto first = refusals.find(configs.front().id);
    throw std::invalid_argument(fmt::format(
        "sweep: none of the {} configuration(s) can run: `tokbench run` refuses every one (the first, {}: {}); "
        "--dry-run lists each one's reason", configs.size(), configs.front().describe(), first->second));
  };
  if (o.dry_run) {
    std::set<std::string> runs_here;
    for (const auto& c : configs) runs_here.insert(c.id);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto refused = refusals.find(rows[i].id);
      const char* what = runs_here.count(rows[i].id) == 0 ? "predict" : refused == refusals.end() ? "runnable" : "invalid";
      std::cout << fmt::format("{:>4}  {}  {:<8} {}{}\n", i + 1, rows[i].id, what, rows[i].describe(),
                               refused == refusals.end() ? "" : "\n        " + refused->second);
    }
    std::cout << fmt::format("# {} configuration(s): {} runnable, {} invalid (each would be a row with status invalid)",
                             configs.size(), configs.size() - refusals.size(), refusals.size());
#if defined(TOKBENCH_HAVE_PREDICT)
    if (cluster)
      std::cout << fmt::format("; {} predicted on {} ({} one-rank row(s) added to predict from, {} row(s) predicted "
                               "only)",
                               predicted_sweep.source_of.size() + predicted_sweep.unpredictable.size(), o.predict,
                               predicted_sweep.added_sources.size(), rows.size() - configs.size());
#endif
    std::cout << "\n" << std::flush;
    refuse_when_none_can_run();
    return train::kExitOk;
  }
  refuse_when_none_can_run();
  const auto own = distributed::own_command_line();
  // One sweep per --out, held until this command ends (sweep/folder_lock.hpp).
  const SweepFolderLock folder_lock(o.out_dir, lock_description(own));
  // The store is opened before any run: a file that is no tokbench store is refused now (exit 2),
  // and a store that cannot be opened stops the sweep before it measures what it could not keep.
  const std::filesystem::path store_path =
      o.store.empty() ? results::default_store_path(o.out_dir) : std::filesystem::path(o.store);
  std::unique_ptr<results::ResultStore> store;
  if (o.store != "none") {
    try {
      store = std::make_unique<results::ResultStore>(store_path);
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::exception& e) {
      std::cerr << fmt::format("tokbench sweep: error: the result store cannot be opened, nothing was run: {}\n",
                               e.what());
      return results::kExitRecordNotWritten;
    }
  }
  SweepOptions options;
  options.tokbench = own.empty() ? "tokbench" : own.front();
  options.out_dir = o.out_dir;
  options.run_timeout_seconds = o.timeout_s;
  options.launcher = launcher;
  options.slurm.sbatch_arguments = o.slurm_args;
  options.slurm.max_jobs = o.slurm_max_jobs;
  options.precheck = [&refusals](const Configuration& c) {
    const auto refused = refusals.find(c.id);
    return refused == refusals.end() ? std::string() : refused->second;
  };
  std::cerr << fmt::format("tokbench sweep: {} configurations ({} invalid, rows without a run) into {}/ (per-run "
                           "timeout {} s{})\n", configs.size(), refusals.size(), o.out_dir, o.timeout_s,
                           launcher == Launcher::slurm
                               ? fmt::format(", as Slurm jobs, at most {} at once", o.slurm_max_jobs)
                               : "");
  const SweepResult result = run_sweep(configs, options);
  if (!result.harness_failure.empty()) {
    // Tokbench itself failed (its output, a run it could not start): stop here, with the finished
    // runs' rows in OUT/runs (the store and the tables are written by the sweep that completes them).
    std::cerr << fmt::format("tokbench sweep: error: stopped by a failure of tokbench itself, not of a "
                             "configuration: {}; the {} finished configuration(s) are kept in {}/runs; fix the cause "
                             "(free the space) and run the same command again to run the rest\n",
                             result.harness_failure, result.runs.size(), o.out_dir);
    return results::kExitRecordNotWritten;
  }
#if defined(TOKBENCH_HAVE_PREDICT)
  const std::vector<nlohmann::json> runs =
      cluster ? join_predictions(predicted_sweep, result.runs, *cluster, stderr) : result.runs;
#else
  const std::vector<nlohmann::json>& runs = result.runs;
#endif

  nlohmann::json context;
  context["matrices"] = nlohmann::json::array();
  for (const auto& matrix : matrices) {
    nlohmann::json axes = nlohmann::json::array();
    for (const auto& axis : matrix.axes) axes.push_back({{"option", axis.option}, {"values", axis.values}});
    context["matrices"].push_back(axes);
  }
  context["configurations"] = rows.size();
  if (!o.predict.empty())
    context["predict"] = {{"cluster", o.predict}, {"comm", o.comm}, {"predict_only", o.predict_only}};
  context["out_dir"] = o.out_dir;
  context["executed"] = result.executed;
  context["reused"] = result.reused;
  context["complete"] = !result.interrupted;
  context["launcher"] = o.launcher;
  if (!o.explain_against.empty()) context[results::kExplainAgainstKey] = o.explain_against;
  // The store or the tables' file that cannot be written (the disk full): the runs are kept in
  // OUT/runs either way, and the same command stores and prints them without running anything.
  std::string output_failure;
  if (store) {
    try {
      const int64_t id = store->save_sweep(o.out_dir, context, runs);
      std::cerr << fmt::format("tokbench sweep: stored as sweep {} in {}\n", id, store_path.string());
    } catch (const std::exception& e) {
      output_failure = e.what();
    }
  }
  results::TableOptions tables;
  tables.only_varying_columns = o.only_varying;
  try {
    if (!o.output.empty() && format.file == results::FileUse::never) {
      std::ofstream file(o.output);
      results::write_report(format, context, runs, tables, file, o.output);
      file.close();
      if (!file) throw std::runtime_error(fmt::format("cannot write the tables to {}", o.output));
    } else {
      results::write_report(format, context, runs, tables, std::cout, o.output);  // xlsx, html: atomic files
    }
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    if (output_failure.empty()) output_failure = e.what();
  }
  if (result.interrupted) {
    std::cerr << "tokbench sweep: interrupted; run the same command again to resume\n";
    return train::exit_code(train::RunStatus::interrupted);
  }
  if (!output_failure.empty()) {
    std::cerr << fmt::format("tokbench sweep: error: tokbench could not write its own output: {}; every run is kept "
                             "in {}/runs: run the same command again to store it\n", output_failure, o.out_dir);
    return results::kExitRecordNotWritten;
  }
  // Every configuration ended without a measurement (invalid, error, oom, ...): the tables say
  // why, row by row, and the exit code says the sweep measured nothing.
  const auto finished_ok = std::count_if(result.runs.begin(), result.runs.end(), [](const nlohmann::json& run) {
    return run.value(results::key::status, "") == results::kStatusOk;
  });
  if (finished_ok == 0 && !result.runs.empty()) {
    std::map<std::string, int> by_status;
    for (const auto& run : result.runs) ++by_status[run.value(results::key::status, "?")];
    std::string counts;
    for (const auto& [status, n] : by_status) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, status);
    std::cerr << fmt::format("tokbench sweep: error: no configuration finished ok ({}); the rows say why\n", counts);
    return train::kExitError;
  }
  return train::kExitOk;
}

}  // namespace tokbench::sweep
