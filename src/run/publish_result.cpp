// publish_result.hpp: report, JSON file, JSON on stdout, status line, in that order (a reader
// of stdout sees the report finished before the JSON).
#include "run/publish_result.hpp"

#include <iostream>

#include "run/rank_gathering.hpp"
#include "run/result_json.hpp"
#include "results/record_status.hpp"
#include "results/run_report.hpp"

namespace tokbench::run {

void note_snapshot_failure(MeasuredRun& run, const std::string& why) {
  run.output_failed = true;
  const std::string line = "--dump-memory-snapshot was asked for and not written (" + why + ")";
  if (run.outcome == Outcome::ok) {
    run.outcome = Outcome::error;
    run.message = "the run finished, but " + line;
  } else {
    run.message += (run.message.empty() ? "" : "; ") + line;
  }
}

int publish_result(const RunPlan& plan, const MeasuredRun& run, const nlohmann::ordered_json& json,
                   std::ostream& report_out) {
  results::write_run_report(json, report_out);
  report_out << std::flush;
  int code = run.output_failed ? results::kExitRecordNotWritten : exit_code(run.outcome);
  if (!plan.json_path.empty()) {
    try {
      write_json_atomically(plan.json_path, json);
    } catch (const std::exception& e) {
      // Whatever the run's status, its record is lost: exit with the code that says so, so a
      // sweep does not take tokbench's own failure for the configuration's result.
      std::cerr << "tokbench: error: " << e.what() << "\n";
      code = results::kExitRecordNotWritten;
    }
  }
  if (plan.json_to_stdout) std::cout << json.dump(4) << "\n" << std::flush;
  if (run.outcome != Outcome::ok)
    std::cerr << "tokbench: run ended with status " << to_string(run.outcome)
              << (run.message.empty() ? "" : ": " + run.message) << "\n";
  return code;
}

void print_after_report(const RunPlan& plan, const MeasuredRun& run, const AfterReportLines& lines,
                        std::ostream& report_out) {
  const auto line = [&](const std::string& text) {
    if (!text.empty()) report_out << text << "\n" << std::flush;
  };
  line(lines.profile);
  if (!lines.profile.empty()) line(plan.profile_ranks_note);
  line(lines.snapshot);
  line(lines.unit_timing);
  for (const std::string& text : time_account_messages(run)) line(text);
}

}  // namespace tokbench::run
