// `tokbench explain BASE.json RUN.json [--format text|json]`: where RUN's iteration time differs
// from BASE's, category by category of their time accounts, summing to the difference of their
// iteration times (results/record_explanation.hpp; docs/time-account.md).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "account/explanation.hpp"
#include "cli/command.hpp"
#include "results/record_keys.hpp"
#include "results/read_result.hpp"
#include "results/record_explanation.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::cli {
namespace {

struct ExplainOptions {
  std::string base, run;
  std::string format = "text";
};

int run_explain(const ExplainOptions& o) {
  usage::require_choice("--format", o.format, {"text", "json"});
  const nlohmann::json base = results::read_run_result(o.base);
  const nlohmann::json run = results::read_run_result(o.run);
  const account::Explanation e = results::explain_records(base, run, o.base, o.run);
  if (o.format == "json") {
    std::cout << account::to_json(e).dump(2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("# tokbench explain: {} against {} ({}, {} layers, T={}, B={}, {}, {} rank(s))\n",
                           e.run_name, e.base_name, run.value(results::key::model_name, std::string("?")),
                           run.value(results::key::n_layer, 0), run.value(results::key::seq_len, 0), run.value(results::key::micro_bs, 0),
                           run.value(results::key::dtype, std::string("?")), run.value(results::key::world_size, 1));
  account::write_explanation(e, std::cout);
  return kExitOk;
}

const RegisterCommand kExplain{
    {"explain", "Explain where one run's iteration time differs from another's, category by category",
     [](CLI::App& sub) -> std::function<int()> {
       auto o = std::make_shared<ExplainOptions>();
       sub.add_option("BASE", o->base, "run JSON explained against (e.g. python-eager's)")->required();
       sub.add_option("RUN", o->run, "run JSON explained (e.g. fused's), of the same configuration")->required();
       sub.add_option("--format", o->format, "text or json")->capture_default_str();
       sub.footer("Both runs need a time account (tokbench run --time-account-iters N) and one configuration: the "
                  "same model, layers, shape, precision, ranks and device.\nExit codes: 0 explained, 2 usage (a "
                  "record without an account, two configurations, a file that is no record a run writes).");
       return [o] { return run_explain(*o); };
     }}};

}  // namespace
}  // namespace tokbench::cli
