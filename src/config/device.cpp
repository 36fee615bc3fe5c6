// The device section's option table (device.hpp).
#include "config/device.hpp"

#include <fmt/format.h>

#include "config/numbers.hpp"
#include "config/resolved_keys.hpp"
#include "config/row_record_keys.hpp"
#include "config/run_options.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::config {

const std::vector<Field>& device_fields() {
  static const std::vector<Field> fields{
      {.names = "--device",
       .member = &DeviceSection::device,
       .help = "auto | cpu | cuda | cuda:N (auto: cuda:0 when present)",
       .group = "Device",
       .record = {record_key::device, 27},
       .shapes = {.record_key = record_key::device, .place = 14, .reading = Reading::device_kind}},
      {.names = "--dtype",
       .member = &DeviceSection::dtype,
       .help = "auto | fp32 | bf16-true | bf16-mixed (auto: bf16-true on CUDA, fp32 on CPU)",
       .group = "Device",
       // model::TrainPrecision's canonical names (model sits beside config, with LibTorch, so the
       // words are listed here; tests/run/test_run_options.cpp fails when the two lists differ).
       // Its parser's aliases (bf16, float32, ...) are not part of this command line.
       .choices = [] { return std::vector<std::string>{"auto", "fp32", "bf16-true", "bf16-mixed"}; },
       .record = {record_key::dtype, 28},
       .shapes = {.record_key = record_key::dtype, .place = 12}},
      {.names = "--tf32,!--no-tf32",
       .member = &DeviceSection::tf32,
       .help = "allow TF32 matmuls for fp32 on CUDA (=True/False)",
       .group = "Device",
       .record = {record_key::tf32, 26},
       .shapes = {.record_key = record_key::tf32, .place = 13}},
      // The executors' names and help lines are the executor table's (run/executor_registry.cpp):
      // the run layer's registration replaces this line with executor_help().
      {.names = "--compile,--executor",
       .member = &DeviceSection::compile,
       .help = "executor: who computes the training step (tokbench run --help lists them)",
       .group = "Device",
       .shapes = {.label = record_key::executor, .record_key = record_key::compiler, .place = 8}},
      // No heading of its own: --help lists it under CLI11's default one, as it always has.
      {.names = "--checkpoint-activations,--checkpoint_activations",
       .member = &DeviceSection::checkpoint_activations,
       .help = "recompute each block's forward in backward instead of keeping its activations (less memory, "
               "more FLOPs: HFU counts them, MFU does not)",
       .group = nullptr,
       .shapes = {.label = "checkpoint", .record_key = record_key::checkpoint_activations, .place = 10, .absent = "no"}},
      {.names = "--num-threads,--num_threads",
       .member = &DeviceSection::num_threads,
       .help = "CPU threads for LibTorch (0: LibTorch's default)",
       .group = "Device",
       .predict_help = "CPU: intra-op threads per rank (0: every core)",
       .valid = fmt::format("a whole number 0..{} (0: LibTorch's default)", limits::kMaxThreads),
       .bounds = {.min = 0,
                  .max = limits::kMaxThreads,
                  .refusal = fmt::format("is not valid; valid: 0..{} (0: LibTorch's default)", limits::kMaxThreads)},
       .record = {config_key::num_threads, 30},
       .shapes = {.label = "threads", .record_key = config_key::num_threads, .in_config = true, .place = 15}},
      {.names = "--use-sdpa,--use_sdpa",
       .member = &DeviceSection::use_sdpa,
       .help = "attention kernels in the reference's priority: cuDNN, flash, efficient, math, each where the "
               "device has it (PyTorch's own order puts cuDNN last); tokbench's executors, python-eager and "
               "python-inductor (thunder picks its own, as in the reference) (=True/False)",
       .group = "Device",
       .record = {"use_sdpa", 33}},
      {.names = "--low-precision-mode,--low_precision_mode",
       .member = &DeviceSection::low_precision_mode,
       .help = "fp8 training through TransformerEngine: none | fp8-default-te | fp8-default-te-wo_layernorm "
               "(its layers and fp8 autocast on python-eager/python-inductor, its executor with thunder); GPUs of "
               "compute capability 8.9+ only",
       .group = "Device",
       .choices = [] { return std::vector<std::string>{"none", "fp8-default-te", "fp8-default-te-wo_layernorm"}; },
       .record = {"low_precision_mode", 38}},
      {.names = "--use-torchao-fp8-linear,--use_torchao_fp8_linear",
       .member = &DeviceSection::use_torchao_fp8_linear,
       .help = "fp8 training through torchao: every Linear but lm_head a float8 linear with dynamic scaling "
               "(python-eager/python-inductor, one rank or fsdp2; GPUs of compute capability 8.9+) (=True/False)",
       .group = "Device",
       .record = {"use_torchao_fp8_linear", 39}},
      {.names = "--use-torchao-fp8-allgather,--use_torchao_fp8_allgather",
       .member = &DeviceSection::use_torchao_fp8_allgather,
       .help = "with --use-torchao-fp8-linear and fsdp2: all-gather the weights in fp8 (=True/False)",
       .group = "Device",
       .record = {"use_torchao_fp8_allgather", 40}},
      {.names = "--use-torchao-fp8-precompute-scale-for-fsdp,--use_torchao_fp8_precompute_scale_for_fsdp",
       .member = &DeviceSection::use_torchao_fp8_precompute_scale_for_fsdp,
       .help = "with the fp8 all-gather: one all-reduce of every weight's scale after the optimizer step "
               "(=True/False)",
       .group = "Device",
       .record = {"use_torchao_fp8_precompute_scale_for_fsdp", 41}},
      {.names = "--cpu-allocator,--cpu_allocator",
       .member = &DeviceSection::cpu_allocator,
       .help = "CPU tensor memory: caching (blocks kept across iterations, jemalloc arena; tokbench's "
               "executors' default) | system (LibTorch's allocator; the Python executors' only one)",
       .group = "Device",
       .choices = [] { return std::vector<std::string>{"caching", "system"}; },
       .empty_is_default = true,
       .record = {resolved_key::cpu_allocator, 31},
       .shapes = {.record_key = resolved_key::cpu_allocator, .in_config = true,
                  .place = 27}},
  };
  return fields;
}

void check_device(const DeviceSection& o) {
  const bool te = o.low_precision_mode != "none";
  const bool torchao = o.use_torchao_fp8_linear;
  if (!torchao && (o.use_torchao_fp8_allgather || o.use_torchao_fp8_precompute_scale_for_fsdp))
    usage::refuse("--use-torchao-fp8-allgather and --use-torchao-fp8-precompute-scale-for-fsdp refine torchao's "
                  "float8 linears; valid: with --use-torchao-fp8-linear");
  if (te && torchao)
    usage::refuse(fmt::format("--low-precision-mode {} and --use-torchao-fp8-linear are two fp8 recipes; valid: one "
                              "of them", o.low_precision_mode));
}

}  // namespace tokbench::config
