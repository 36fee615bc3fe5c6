// `tokbench info`'s work (info_report.hpp).
#include "run/info_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iterator>
#include <stdexcept>
#include <vector>

#include "config/numbers.hpp"
#include "model/catalog.hpp"
#include "model/config_json.hpp"
#include "model/counting.hpp"
#include "model/memory_estimate.hpp"
#include "results/record_keys.hpp"
#include "run/info_keys.hpp"
#include "model/module_keys.hpp"

namespace tokbench::run {
namespace {

namespace limits = config::limits;

constexpr model::FlopConvention kConventions[] = {model::FlopConvention::matmul, model::FlopConvention::causal,
                                                  model::FlopConvention::palm};

void require_positive(const char* option, const std::optional<int64_t>& value) {
  if (value && *value <= 0)
    throw std::invalid_argument(fmt::format("{} {} is not valid; valid: a positive integer", option, *value));
}

// Every check on the options, before any counting.
model::Config resolve_model(const InfoOptions& options) {
  require_positive("--seq-len", options.seq_len);
  require_positive("--micro-batch-size", options.micro_batch_size);
  require_positive("--n-layers", options.n_layers);
  // Before the config is built: its per-layer lists have n_layer entries.
  if (options.n_layers && *options.n_layers > limits::kMaxLayers)
    throw std::invalid_argument(fmt::format("--n-layers {} is not valid; valid: 1..{}", *options.n_layers,
                                            limits::kMaxLayers));
  if (options.model.empty() == options.model_config.empty())
    throw std::invalid_argument(
        "info needs exactly one of MODEL or --model-config FILE; valid MODEL names: see `tokbench models`");
  model::Config config = options.model_config.empty() ? model::config_by_name(options.model)
                                                      : model::load_model_config(options.model_config);
  return model::with_overrides(std::move(config), {options.n_layers, options.seq_len});
}

double decimal_gigabytes(int64_t bytes) { return static_cast<double>(bytes) / 1e9; }

// Every count `info` prints, computed before anything is printed: a count that overflows
// int64 is a usage error naming the options (exit 2), never half a table and exit 1.
struct InfoCounts {
  model::ParamCounts params;
  std::vector<model::FlopCounts> flops;          // per kConventions
  std::vector<int64_t> recompute;                // per kConventions: checkpointing's extra FLOPs (0 without)
  std::vector<model::MemoryEstimate> memory;     // per model::kTrainPrecisions
};

InfoCounts count_all(const model::Config& config, int64_t B, int64_t T, bool checkpoint_activations) {
  InfoCounts out;
  try {
    out.params = model::count_params(config);
    for (auto convention : kConventions) {
      out.flops.push_back(model::count_flops(config, B, T, convention));
      const int64_t recompute = checkpoint_activations ? model::count_recompute_flops(config, B, T, convention) : 0;
      int64_t hardware = 0;
      if (__builtin_add_overflow(out.flops.back().total(), recompute, &hardware))
        throw std::overflow_error("hardware FLOPs overflow int64");
      out.recompute.push_back(recompute);
    }
    for (auto precision : model::kTrainPrecisions)
      out.memory.push_back(model::estimate_training_memory(config, B, T, precision, checkpoint_activations));
  } catch (const std::overflow_error& e) {
    throw std::invalid_argument(fmt::format("--micro-batch-size {} x --seq-len {} x --n-layers {}: {}; valid: smaller "
                                            "values", B, T, config.n_layer, e.what()));
  }
  return out;
}

}  // namespace

void write_model_info(const InfoOptions& options, std::ostream& out) {
  const model::Config config = resolve_model(options);
  const int64_t B = options.micro_batch_size, T = config.block_size;
  const InfoCounts counts = count_all(config, B, T, options.checkpoint_activations);
  const model::ParamCounts& params = counts.params;

  if (options.json) {
    namespace key = info_key;
    namespace record_key = results::key;  // the run record's keys that mean the same
    nlohmann::json doc = {{key::model, config.name},
                          {key::hf, config.hf},
                          {key::seq_len, T},
                          {key::micro_batch_size, B},
                          {record_key::n_layer, config.n_layer},
                          {key::params, params.total},
                          {key::params_embedding, params.embedding},
                          {key::params_lm_head, params.lm_head},
                          {key::params_final_norm, params.final_norm},
                          {key::params_per_block, params.per_block.front()},
                          {record_key::checkpoint_activations, options.checkpoint_activations},
                          {key::flops_default_convention, "matmul"}};
    for (std::size_t i = 0; i < std::size(kConventions); ++i) {
      const auto convention = kConventions[i];
      const model::FlopCounts& flops = counts.flops[i];
      // model_flops: what MFU divides; hardware_flops: what the device executes (with
      // --checkpoint-activations the recomputed forward too), what HFU divides.
      doc[key::flops][std::string(model::to_string(convention))] = {
          {key::flops_forward, flops.forward},
          {key::flops_backward, flops.backward},
          {key::flops_total, flops.total()},
          {record_key::model_flops, flops.total()},
          {key::flops_recompute, counts.recompute[i]},
          {record_key::hardware_flops, flops.total() + counts.recompute[i]}};
    }
    for (const model::MemoryEstimate& m : counts.memory) {
      const auto precision = m.precision;
      doc[key::memory_bytes][std::string(model::to_string(precision))] = {{key::weights, m.weights_bytes},
                                                                          {key::gradients, m.gradients_bytes},
                                                                          {key::optimizer, m.optimizer_bytes},
                                                                          {key::activations, m.activations_bytes},
                                                                          {key::total, m.total_bytes()}};
    }
    doc[key::config] = model::config_to_json(config);
    out << doc.dump(1) << "\n";
    return;
  }

  out << fmt::format("# tokbench info: {}{}\n", config.name, config.hf.empty() ? "" : " (" + config.hf + ")");
  out << fmt::format("# one micro-batch: {} sequence(s) × {} tokens, {} layers, one device\n", B, T,
                     config.n_layer);
  out << "#\n# parameters (litgpt's count, lm_head untied)\n";
  const auto param_line = [](const char* what, int64_t count, const std::string& note) {
    return fmt::format("  {:<12} {:>18}  {:>10.4f} B{}\n", what, count, static_cast<double>(count) / 1e9, note);
  };
  out << param_line(info_key::total, params.total, "");
  out << param_line("embedding", params.embedding, "  (wte)");
  out << param_line(model::module_key::lm_head, params.lm_head, "");
  out << param_line("final norm", params.final_norm, "");
  out << param_line("per block", params.per_block.front(), fmt::format("  (x {} layers)", config.n_layer));
  out << "#\n# FLOPs per micro-batch (matmul: PyTorch FlopCounterMode over litgpt, the default;\n"
         "# causal: attention halved; palm: 6N + 12·L·H·Q·T per token, N = non-embedding params)\n";
  const bool ac = options.checkpoint_activations;
  if (ac)
    out << "# with --checkpoint-activations: recompute = the blocks' forward run again in backward; hardware =\n"
           "# total + recompute (what HFU divides); total stays the model FLOPs (what MFU divides)\n";
  out << fmt::format("# {:<10} {:>22} {:>22} {:>22}{}\n", "convention", "forward", "backward", info_key::total,
                     ac ? fmt::format(" {:>22} {:>22}", "recompute", "hardware") : "");
  for (std::size_t i = 0; i < std::size(kConventions); ++i) {
    const auto convention = kConventions[i];
    const model::FlopCounts& flops = counts.flops[i];
    out << fmt::format("  {:<10} {:>22} {:>22} {:>22}{}\n", model::to_string(convention), flops.forward,
                       flops.backward, flops.total(),
                       ac ? fmt::format(" {:>22} {:>22}", counts.recompute[i], flops.total() + counts.recompute[i])
                          : "");
  }

  out << fmt::format("#\n# training memory estimate, GB (10^9 bytes); AdamW; activations saved for backward\n"
                     "# with fused attention, {} (see src/model/memory_estimate.cpp for omissions)\n",
                     ac ? "each block's input kept and one block recomputed at a time" : "no checkpointing");
  // Its columns are the JSON's memory_bytes parts, headed by their keys.
  out << fmt::format("# {:<10} {:>10} {:>10} {:>10} {:>12} {:>10}\n", "precision", info_key::weights,
                     info_key::gradients, info_key::optimizer, info_key::activations, info_key::total);
  for (const model::MemoryEstimate& m : counts.memory) {
    const auto precision = m.precision;
    out << fmt::format("  {:<10} {:>10.3f} {:>10.3f} {:>10.3f} {:>12.3f} {:>10.3f}\n", model::to_string(precision),
                       decimal_gigabytes(m.weights_bytes), decimal_gigabytes(m.gradients_bytes),
                       decimal_gigabytes(m.optimizer_bytes), decimal_gigabytes(m.activations_bytes),
                       decimal_gigabytes(m.total_bytes()));
  }
}

}  // namespace tokbench::run
