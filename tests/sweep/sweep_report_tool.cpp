// sweep_report_tool RUNS.json FORMAT OUTPUT [--only-varying]
// Writes a sweep report from run documents, without running anything: the test scripts' way
// into write_report. RUNS.json holds an array of runs or {"context": ..., "runs": [...]};
// OUTPUT "-" is standard output (not for xlsx). Exit 2: a usage error (unknown or unavailable
// format), one line on stderr; 1: anything else.
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include "results/tables.hpp"

int main(int argc, char** argv) {
  using tokbench::results::FileUse;
  if (argc < 4 || argc > 5 || (argc == 5 && std::string(argv[4]) != "--only-varying")) {
    std::cerr << "usage: sweep_report_tool RUNS.json FORMAT OUTPUT [--only-varying]\n";
    return 2;
  }
  const tokbench::results::ReporterPlugin* format = nullptr;
  try {
    format = &tokbench::results::format_from_string(argv[2]);
  } catch (const std::invalid_argument& e) {
    std::cerr << "sweep_report_tool: " << e.what() << '\n';
    return 2;
  }
  try {
    std::ifstream in(argv[1]);
    if (!in) throw std::runtime_error(std::string("cannot read ") + argv[1]);
    const nlohmann::json doc = nlohmann::json::parse(in);
    const nlohmann::json context = doc.is_object() ? doc.value("context", nlohmann::json()) : nlohmann::json();
    const nlohmann::json& runs_json = doc.is_object() ? doc.at("runs") : doc;
    const std::vector<nlohmann::json> runs(runs_json.begin(), runs_json.end());
    tokbench::results::TableOptions options;
    options.only_varying_columns = argc == 5;

    const std::string output = argv[3];
    const bool to_stdout = output == "-";
    if (format->file == FileUse::required || (format->file == FileUse::optional && !to_stdout)) {
      tokbench::results::write_report(*format, context, runs, options, std::cout, output);
    } else if (to_stdout) {
      tokbench::results::write_report(*format, context, runs, options, std::cout, {});
    } else {
      std::ofstream out(output, std::ios::binary);
      if (!out) throw std::runtime_error("cannot write " + output);
      tokbench::results::write_report(*format, context, runs, options, out, {});
      if (!out.flush()) throw std::runtime_error("cannot write " + output);
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "sweep_report_tool: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "sweep_report_tool: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
