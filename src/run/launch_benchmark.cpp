// The built-in launcher's side of `tokbench run` (launch_benchmark.hpp).
#include "run/launch_benchmark.hpp"

#include <iostream>
#include <utility>

#include "machine/environment.hpp"
#include "run/launch_outcome.hpp"
#include "run/metrics.hpp"
#include "run/resolve.hpp"
#include "run/result_json.hpp"
#include "distributed/launcher.hpp"
#include "distributed/node_launch.hpp"
#include "results/record_status.hpp"

namespace tokbench::run {

int launch_benchmark(const RunPlan& plan, const std::vector<std::string>& rank_argv) {
  const auto& o = plan.options;
  const distributed::LaunchResult result = distributed::launch_ranks(distributed::node_launch(o, rank_argv, plan.dist.timeout_seconds));
  if (result.exit_code == 0) return train::kExitOk;

  // Rank 0 (on the first node) reported the job's ending itself: its JSON stands.
  if (o.node_rank == 0 && !result.ranks.empty()) {
    const distributed::RankExit& lead = result.ranks.front();
    if (lead_record_stands(lead)) {
      std::cerr << "tokbench launcher: " << result.failure << "\n";
      return lead.exit_code;
    }
    if (lead.signal == 0 && lead.exit_code == 0) {  // rank 0 finished; a peer failed afterwards
      std::cerr << "tokbench launcher: " << result.failure << "\n";
      return exit_code(Outcome::rank_failed);
    }
  }
  // Rank 0 could not report: the launcher writes the labelled result.
  MeasuredRun run;
  run.outcome = launcher_outcome(result);
  run.message = result.failure;
  const machine::Environment environment = machine::capture_environment();
  // Every local rank is listed, with what its exit said: rank 0 may have been SIGKILLed
  // before it could write the per-rank lines itself.
  for (const LaunchedRankEnding& ending : launched_rank_endings(result)) {
    RankSummary rank;
    rank.rank = ending.rank;
    rank.status = to_string(ending.status);
    rank.message = ending.message;
    rank.host = environment.host;
    rank.reported = false;
    run.ranks.push_back(std::move(rank));
  }
  MetricInputs inputs = metric_inputs(plan);
  inputs.peak_flops_per_s.reset();
  const BenchMetrics metrics = compute_metrics(inputs, run);
  int code = exit_code(run.outcome);
  if (o.node_rank == 0 && !plan.json_path.empty()) {
    try {
      write_json_atomically(plan.json_path, build_result_json(plan, run, metrics, environment));
    } catch (const std::exception& e) {
      std::cerr << "tokbench: error: " << e.what() << "\n";
      code = results::kExitRecordNotWritten;  // as publish_result: the record is lost, not the run's status
    }
  }
  std::cerr << "tokbench: run ended with status " << to_string(run.outcome) << ": " << run.message << "\n";
  return code;
}

}  // namespace tokbench::run
