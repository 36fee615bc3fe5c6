// The end of every single-process run, whichever executor measured it: the printed report,
// the JSON file (atomically), the JSON on stdout, and the closing status line. One place, so
// the LibTorch step and the Python step (python_executor.hpp) publish identical records.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "run/metrics.hpp"
#include "run/run_plan.hpp"

namespace tokbench::run {

// Marks `run` as MeasuredRun::output_failed says when the memory snapshot asked for was not
// written (`why`: the writer's line): an ok run becomes error, the message says why.
void note_snapshot_failure(MeasuredRun& run, const std::string& why);

// Returns the run's exit code; results::kExitRecordNotWritten when the JSON file, or a file
// the run was asked for (MeasuredRun::output_failed), could not be written, whatever the run's
// status.
int publish_result(const RunPlan& plan, const MeasuredRun& run, const nlohmann::ordered_json& json,
                   std::ostream& report_out);

// The lines printed after the report, about files the run wrote beside its record (not figures
// of the run, so not in the record); each is empty when the run wrote no such file.
struct AfterReportLines {
  std::string profile;        // where the trace went
  std::string snapshot;       // where the memory snapshot went
  std::string unit_timing;    // where the per-unit timings went
};

// Prints `lines` after the report, in one order for every executor: the trace (and, for a
// multi-rank run, where the other ranks' traces went), the snapshot, the unit timings, then
// why a rank has no time account.
void print_after_report(const RunPlan& plan, const MeasuredRun& run, const AfterReportLines& lines,
                        std::ostream& report_out);

}  // namespace tokbench::run
