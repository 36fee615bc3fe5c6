// Device section: where and how the step computes — the device, the dtype and TF32, the
// executor (--compile), activation checkpointing, CPU threads, the attention kernels, the fp8
// recipes and the CPU allocator. Read by run/resolve.cpp and run/compiler_choice.cpp, which
// turn them into the model and train layers' settings; the Python step reads the switches
// (use_sdpa, the fp8 ones) from the record's `config` block.
#pragma once

#include <string>
#include <vector>

#include "config/field.hpp"

namespace tokbench::config {

// tokbench's own LibTorch step: --compile's default, what a record without a compiler ran with
// (the sweep, predict), and that executor's name in the registry (run/executor_registry.cpp).
inline constexpr char kDefaultExecutor[] = "eager";

struct DeviceSection {
  std::string device = "auto";  // auto | cpu | cuda | cuda:N
  std::string dtype = "auto";   // auto | fp32 | bf16-true | bf16-mixed
  bool tf32 = true;             // the reference sets allow_tf32=True
  std::string compile = kDefaultExecutor;
  // Recompute each transformer block's forward in backward instead of keeping its activations
  // (model/gpt_checkpoint.hpp; the reference's --checkpoint_activations).
  bool checkpoint_activations = false;
  int num_threads = 0;          // 0: LibTorch's default
  // Attention kernels in the reference's --use_sdpa priority (cuDNN, flash, efficient, math).
  bool use_sdpa = false;
  // fp8 training, the reference's recipes (resolve.cpp, resolve_low_precision): TransformerEngine's
  // (none | fp8-default-te | fp8-default-te-wo_layernorm) or torchao's float8 linears.
  std::string low_precision_mode = "none";
  bool use_torchao_fp8_linear = false;
  bool use_torchao_fp8_allgather = false;
  bool use_torchao_fp8_precompute_scale_for_fsdp = false;
  // CPU tensor memory: caching (blocks kept across iterations in a jemalloc arena,
  // train/caching_cpu_allocator.hpp) | system (LibTorch's own CPU allocator, freed at once).
  // Empty: the executor's own (RunPlan::cpu_allocator).
  std::string cpu_allocator;
};

const std::vector<Field>& device_fields();
// The section's checks of its options together (torchao's refinements need its float8 linears;
// one fp8 recipe at a time): one line, exit 2 (usage::refuse). Run after the rows' checks
// (config::check_fields); what needs the device or the executor is resolve.cpp's.
void check_device(const DeviceSection& device);

}  // namespace tokbench::config
