// The compatibility section's option table (compatibility.hpp).
#include "config/compatibility.hpp"

#include "config/numbers.hpp"
#include "config/run_options.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::config {

const std::vector<Field>& compatibility_fields() {
  static const std::vector<Field> fields{
      {.names = "--fp8-shard-intermediate-activation,--fp8_shard_intermediate_activation",
       .member = &CompatibilitySection::fp8_shard_intermediate_activation,
       .help = "the reference's switch, which its script never reads: accepted, with a warning, for its command lines",
       .group = "Compatibility",
       .record = {"fp8_shard_intermediate_activation", 36}},
      {.names = "--profiler-start,--profiler_start",
       .member = &CompatibilitySection::profiler_start,
       .help = "the reference's nsys window start (an iteration); no effect, as --nsys-enabled True is refused",
       .group = "Compatibility",
       .valid = "a whole number"},
      {.names = "--profiler-stop,--profiler_stop",
       .member = &CompatibilitySection::profiler_stop,
       .help = "the reference's nsys window end (an iteration); no effect, as --nsys-enabled True is refused",
       .group = "Compatibility",
       .valid = "a whole number"},
      {.names = "--use-hf,--use_hf",
       .member = &CompatibilitySection::use_hf,
       .help = "the reference's Hugging Face transformers models: True is refused (tokbench trains litgpt's)",
       .group = "Compatibility",
       .record = {"use_hf", 37}},
      {.names = "--nsys-enabled,--nsys_enabled",
       .member = &CompatibilitySection::nsys_enabled,
       .help = "the reference's Nsight switch; True is refused (profile with nsys around tokbench)",
       .group = "Compatibility"},
  };
  return fields;
}

void check_compatibility(const CompatibilitySection& o) {
  if (o.use_hf)
    usage::refuse("--use-hf: tokbench trains litgpt's models (the reference's experimental Hugging Face transformers "
                  "path is not supported); valid: --use-hf False");
  if (o.nsys_enabled)
    usage::refuse("--nsys-enabled True is not supported: run `nsys profile tokbench run ...` instead; valid: False");
}

}  // namespace tokbench::config
