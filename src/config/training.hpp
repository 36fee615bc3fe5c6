// Training section: the optimizer and the step's other training switches — AdamW's settings,
// how gradients are cleared, the seed, variable-length sequences, CUDA graph capture. Read by run/resolve.cpp into
// the train layer's loop options (train/train_loop.hpp, train/adamw.hpp), and by the Python step
// from the run plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/field.hpp"

namespace tokbench::config {

struct TrainingSection {
  bool dynamic = false;  // train/sequence_lengths.hpp
  uint64_t seed = 1337;
  double lr = 5e-4;
  std::string zero_grad = "none";  // none (set_to_none, the reference's) | inplace
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  // AdamW's epsilon, added to the second moment's root (torch.optim.AdamW's eps).
  double eps = 1e-8;
  // The gradients' global L2 norm is clipped to this before each AdamW update (train/optimizer.cpp,
  // the Python step: torch.nn.utils.clip_grad_norm_). Unset: no clipping.
  std::optional<double> grad_clip_norm;
  // auto | on | off: capture the whole step as one CUDA graph (run/cuda_graph_choice.hpp
  // resolves it, train/cuda_graph_step.hpp captures).
  std::string cuda_graphs = "auto";
};

const std::vector<Field>& training_fields();

}  // namespace tokbench::config
