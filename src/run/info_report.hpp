// `tokbench info`'s work, below the command line: what one micro-batch of a model costs before
// anything runs: parameters (total, embedding, per block), FLOPs (forward, backward, total) under
// every convention, and the training-memory estimate per precision, as tables or one JSON object
// (its keys: cli/cmd_info.cpp's header). cli registers the command (cli/cmd_info.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace tokbench::run {

struct InfoOptions {
  std::string model;                    // litgpt name, HF id or bare HF name
  std::optional<int64_t> seq_len;       // default: the config's block_size
  int64_t micro_batch_size = 1;
  std::optional<int64_t> n_layers;      // default: the config's n_layer
  std::string model_config;             // a TOML/JSON file instead of a catalog name
  bool checkpoint_activations = false;  // hardware FLOPs and memory with per-block recomputation
  bool json = false;
};

// Throws std::invalid_argument (a usage error: one line, exit 2) before printing anything: a
// count that is not positive, too many layers, neither or both of a model and a config file, an
// unknown model, counts that overflow.
void write_model_info(const InfoOptions& options, std::ostream& out);

}  // namespace tokbench::run
