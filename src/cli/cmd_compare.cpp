// `tokbench compare BASE NEW [--threshold 5%]`: a regression gate. Each side is a run JSON
// file, a sweep folder (its runs/), or a stored sweep id. Exit 1 when a configuration is
// slower beyond the threshold with 95% confidence (sweep/compare.hpp says how).
#include <memory>

#include "cli/command.hpp"
#include "sweep/compare_command.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kCompare{
    {"compare", "Compare two runs or sweeps; exit 1 when a configuration got slower beyond the threshold",
     [](CLI::App& sub) -> std::any {
       auto o = std::make_shared<sweep::CompareOptions>();
       sub.add_option("BASE", o->base, "run JSON, sweep folder, or stored sweep id")->required();
       sub.add_option("NEW", o->next, "run JSON, sweep folder, or stored sweep id")->required();
       sub.add_option("--threshold", o->threshold, "slowdown that fails the gate (5% or 0.05)")->capture_default_str();
       sub.add_option("--store", o->store, "result store for sweep ids")->capture_default_str();
       sub.footer("Exit codes: 0 no regression, 1 a configuration slower beyond the threshold, 2 usage.");
       return o;
     }}};

}  // namespace
}  // namespace tokbench::cli
