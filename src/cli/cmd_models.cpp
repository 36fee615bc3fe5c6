// `tokbench models [--filter TEXT] [--json]`: the compiled-in litgpt catalog as a fixed-width
// table ('#' header lines, one row per model) or a JSON array. Parameter counts are litgpt's
// (untied lm_head), computed by the closed-form counter, which a test holds equal to litgpt.
#include <memory>

#include "cli/command.hpp"
#include "model/models_listing.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kModels{
    {"models", "List the litgpt model configs tokbench can build",
     [](CLI::App& sub) -> std::any {
       auto options = std::make_shared<model::ModelsOptions>();
       sub.add_option("--filter", options->filter,
                      "Only models whose name or Hugging Face id contains TEXT (case-insensitive)");
       sub.add_flag("--json", options->json, "Print a JSON array of objects instead of a table");
       return options;
     }}};

}  // namespace
}  // namespace tokbench::cli
