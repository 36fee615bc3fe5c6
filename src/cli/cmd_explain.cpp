// `tokbench explain BASE.json RUN.json [--format text|json]`: where RUN's iteration time differs
// from BASE's, category by category of their time accounts, summing to the difference of their
// iteration times (results/record_explanation.hpp; docs/time-account.md).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <variant>

#include "account/explanation.hpp"
#include "cli/command.hpp"
#include "results/read_result.hpp"
#include "results/record_keys.hpp"
#include "results/record_explanation.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::cli {
namespace {

struct ExplainOptions {
  std::string base, run;
  std::string format = "text";
};

// A count of the header line: 0 where the record has none (an explained run always has).
std::string count(const results::Field<results::Given>& f) {
  if (!f.value()) return "0";
  return std::visit([](const auto& v) { return fmt::format("{}", v); }, *f.value());
}

// The record at `path`. A document of exactly one run (what `tokbench predict --format json`
// writes for one measured run: {"context": ..., "runs": [record]}) is read as that run, so a
// prediction is explained as predict wrote it; anything else is read, and refused, as every
// reader of a record reads it.
results::RunRecord record_at(const std::string& path) {
  nlohmann::json doc;
  try {
    doc = results::parse_record_document(results::read_record_file(path));
  } catch (const std::invalid_argument&) {
    return results::read_result(path).record;  // its own refusal, naming the file
  }
  const auto runs = doc.is_object() && !doc.contains(results::key::schema_version) ? doc.find("runs") : doc.end();
  if (runs == doc.end() || !runs->is_array() || runs->size() != 1) return results::read_result(path).record;
  try {
    return results::check_run_record(runs->front());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: its one run is not a record: {}", usage::printable(path), e.what()));
  }
}

int run_explain(const ExplainOptions& o) {
  usage::require_choice("--format", o.format, {"text", "json"});
  const results::RunRecord base = record_at(o.base);
  const results::RunRecord run = record_at(o.run);
  const account::Explanation e = results::explain_records(base, run, o.base, o.run);
  if (o.format == "json") {
    std::cout << account::to_json(e).dump(2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("# tokbench explain: {} against {} ({}, {} layers, T={}, B={}, {}, {} rank(s))\n",
                           e.run_name, e.base_name, run.model_name.value_or("?"), run.n_layer.value_or(0),
                           count(run.seq_len), count(run.micro_bs), run.dtype.value_or("?"), run.world_size.value_or(1));
  account::write_explanation(e, std::cout);
  return kExitOk;
}

const RegisterCommand kExplain{
    {"explain", "Explain where one run's iteration time differs from another's, category by category",
     [](CLI::App& sub) -> std::function<int()> {
       auto o = std::make_shared<ExplainOptions>();
       sub.add_option("BASE", o->base, "run JSON explained against (e.g. python-eager's; a prediction: tokbench "
                                       "predict's JSON of one run)")->required();
       sub.add_option("RUN", o->run, "run JSON explained (e.g. fused's), of the same configuration")->required();
       sub.add_option("--format", o->format, "text or json")->capture_default_str();
       sub.footer("Both runs need a time account (tokbench run --time-account-iters N) and one configuration: the "
                  "same model, layers, shape, precision, ranks and device.\nExit codes: 0 explained, 2 usage (a "
                  "record without an account, two configurations, a file that is no record a run writes).");
       return [o] { return run_explain(*o); };
     }}};

}  // namespace
}  // namespace tokbench::cli
