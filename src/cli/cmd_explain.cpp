// `tokbench explain BASE.json RUN.json [--format text|json]`: where RUN's iteration time differs
// from BASE's, category by category of their time accounts, summing to the difference of their
// iteration times (results/explain_command.hpp; docs/time-account.md). This file registers it.
#include <memory>

#include "cli/command.hpp"
#include "results/explain_command.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kExplain{
    {"explain", "Explain where one run's iteration time differs from another's, category by category",
     [](CLI::App& sub) -> std::any {
       auto o = std::make_shared<results::ExplainOptions>();
       sub.add_option("BASE", o->base, "run JSON explained against (e.g. python-eager's; a prediction: tokbench "
                                       "predict's JSON of one run)")->required();
       sub.add_option("RUN", o->run, "run JSON explained (e.g. fused's), of the same configuration")->required();
       sub.add_option("--format", o->format, "text or json")->capture_default_str();
       sub.footer("Both runs need a time account (tokbench run --time-account-iters N) and one configuration: the "
                  "same model, layers, shape, precision, ranks and device.\nExit codes: 0 explained, 2 usage (a "
                  "record without an account, two configurations, a file that is no record a run writes).");
       return o;
     }}};

}  // namespace
}  // namespace tokbench::cli
