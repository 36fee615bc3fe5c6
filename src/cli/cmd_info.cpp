// `tokbench info MODEL [--seq-len T] [--micro-batch-size B] [--n-layers L] [--model-config FILE]
// [--json]`: what one micro-batch of a model costs before anything runs: parameters (total,
// embedding, per block), FLOPs (forward, backward, total) under every convention, and the
// training-memory estimate per precision. Bad options throw std::invalid_argument (exit 2)
// before any counting. JSON: {"model", "hf", "seq_len", "micro_batch_size", "n_layer",
// "params", "params_embedding", "params_lm_head", "params_final_norm", "params_per_block",
// "flops": {CONVENTION: {"flops_forward", "flops_backward", "flops_total"}},
// "flops_default_convention": "matmul", "memory_bytes": {PRECISION: {...}}, "config": {...}}.
#include <fmt/format.h>

#include <memory>

#include "cli/command.hpp"
#include "run/info_report.hpp"
#include "run/run_options.hpp"

namespace tokbench::cli {
namespace {

const RegisterCommand kInfo{
    {"info", "Parameters, FLOPs per micro-batch and a training-memory estimate for one model",
     [](CLI::App& sub) -> std::any {
       auto options = std::make_shared<run::InfoOptions>();
       sub.add_option("model", options->model, "litgpt name, Hugging Face id or bare Hugging Face name");
       // Numeric values are checked as `run` checks them (run::whole_number): one line, exit 2.
       sub.add_option("--seq-len", options->seq_len, "Sequence length T (replaces block_size; default: block_size)")
           ->transform(run::whole_number<int64_t>("a positive whole number"));
       sub.add_option("--micro-batch-size", options->micro_batch_size, "Sequences per micro-batch B")
           ->capture_default_str()
           ->transform(run::whole_number<int64_t>("a positive whole number"));
       sub.add_option("--n-layers", options->n_layers, "Override n_layer (per-layer patterns are repeated)")
           ->transform(run::whole_number<int64_t>(fmt::format("a whole number 1..{}", run::limits::kMaxLayers)));
       sub.add_option("--model-config", options->model_config, "A TOML or JSON file of litgpt Config fields");
       sub.add_flag("--checkpoint-activations,--checkpoint_activations", options->checkpoint_activations,
                    "Count the recomputed forward of activation checkpointing (hardware FLOPs) and its memory");
       sub.add_flag("--json", options->json, "Print one JSON object instead of tables");
       return options;
     }}};

}  // namespace
}  // namespace tokbench::cli
