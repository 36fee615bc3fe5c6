// Runs a sweep: each configuration as its own `tokbench run` process (which starts its own
// ranks with --nproc-per-node), under a per-run timeout, so an OOM, a NaN, a crash or a hang
// is one labelled row and the sweep goes on. Results live in OUT/runs/<config id>.json,
// written atomically by the run (or by the sweep for rows that never produced one), so a
// sweep killed at any moment and started again with the same arguments reruns nothing that
// finished and loses nothing that did.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <vector>

#include "sweep/matrix.hpp"

namespace tokbench::sweep {

struct SweepOptions {
  std::filesystem::path tokbench;      // the program each run executes (`tokbench run ...`)
  std::filesystem::path out_dir;       // runs/, logs/, sweep.json
  double run_timeout_seconds = 3600;   // per configuration, then SIGTERM, then SIGKILL
  std::FILE* progress = stderr;        // progress lines; null: none
};

struct SweepResult {
  std::vector<nlohmann::json> runs;  // one per configuration, in matrix order
  int executed = 0;                  // configurations run now
  int reused = 0;                    // finished earlier (resumed)
  bool interrupted = false;          // SIGINT/SIGTERM: the sweep stopped; run it again to resume
};

SweepResult run_sweep(const std::vector<Configuration>& configs, const SweepOptions& options);

// The result file of a configuration, and whether it holds a finished row (any status).
std::filesystem::path result_path(const std::filesystem::path& out_dir, const Configuration& config);
bool has_result(const std::filesystem::path& path);

// A row for a configuration that produced no result of its own (refused as invalid, timed
// out, crashed): the index columns the tables need, read from its options.
nlohmann::json synthesized_row(const Configuration& config, const std::string& status, const std::string& message);

}  // namespace tokbench::sweep
