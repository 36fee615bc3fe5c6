// The training section's option table (training.hpp).
#include "config/training.hpp"

#include <fmt/format.h>

#include <limits>

#include "config/numbers.hpp"
#include "config/row_record_keys.hpp"
#include "config/run_options.hpp"
#include "parallel/strategy.hpp"

namespace tokbench::config {

const std::vector<Field>& training_fields() {
  static const std::vector<Field> fields{
      {.names = "--dynamic",
       .member = &TrainingSection::dynamic,
       .help = "variable-length sequences, as the reference: each sequence's length drawn in [10, T] (the same on "
               "every executor for a seed) and padded to T; tokens/s, the model's FLOPs and MFU count the real "
               "tokens, positions_per_sec the padded positions (=True/False)",
       .group = "Training",
       .record = {config_key::dynamic, 25},
       .shapes = {.record_key = config_key::dynamic, .in_config = true, .place = 26}},
      {.names = "--seed",
       .member = &TrainingSection::seed,
       .help = "seed of the initial weights and of the data",
       .group = "Training",
       .valid = fmt::format("a whole number 0..{}", std::numeric_limits<uint64_t>::max()),
       .record = {"seed", 4}},
      {.names = "--lr",
       .member = &TrainingSection::lr,
       .help = "AdamW learning rate",
       .group = "Training",
       .valid = "a positive finite number",
       .bounds = {.min = 0, .min_open = true, .refusal = "must be a positive number"},
       .record = {"lr", 5}},
      {.names = "--zero-grad,--zero_grad",
       .member = &TrainingSection::zero_grad,
       .help = "after each step: none (free gradients, as the reference: set_to_none=True) | inplace "
               "(zero them, keep their memory)",
       .group = "Training",
       .choices = [] { return std::vector<std::string>{"none", "inplace"}; },
       .record = {record_key::zero_grad, 9},
       .shapes = {.record_key = record_key::zero_grad, .place = 18}},
      {.names = "--weight-decay,--weight_decay",
       .member = &TrainingSection::weight_decay,
       .help = "AdamW weight decay",
       .group = "Training",
       .valid = "a finite number >= 0",
       .bounds = {.min = 0, .refusal = "must be a finite number >= 0"},
       .record = {config_key::weight_decay, 6},
       .shapes = {.label = "decay", .record_key = config_key::weight_decay, .in_config = true, .place = 19,
                  .reading = Reading::nonzero}},
      {.names = "--beta1",
       .member = &TrainingSection::beta1,
       .help = "AdamW beta1",
       .group = "Training",
       .valid = "a number in [0, 1)",
       .bounds = {.min = 0, .max = 1, .max_open = true, .refusal = "must be in [0, 1)"},
       .record = {"beta1", 7}},
      {.names = "--beta2",
       .member = &TrainingSection::beta2,
       .help = "AdamW beta2",
       .group = "Training",
       .valid = "a number in [0, 1)",
       .bounds = {.min = 0, .max = 1, .max_open = true, .refusal = "must be in [0, 1)"},
       .record = {"beta2", 8}},
      {.names = "--adam-eps,--adam_eps",
       .member = &TrainingSection::eps,
       .help = "AdamW epsilon, added to the root of the second moment (torch.optim.AdamW's eps)",
       .group = "Training",
       .valid = "a positive finite number",
       .bounds = {.min = 0, .min_open = true, .refusal = "must be a positive number"},
       .record = {"adam_eps", 46}},
      {.names = "--grad-clip-norm,--grad_clip_norm",
       .member = &TrainingSection::grad_clip_norm,
       .help = "clip the gradients' global L2 norm to this before each AdamW step, as "
               "torch.nn.utils.clip_grad_norm_ (default: no clipping; one device or ddp)",
       .group = "Training",
       .valid = "a positive finite number",
       .bounds = {.min = 0, .min_open = true, .refusal = "must be a positive number"},
       .record = {config_key::grad_clip_norm, 44},
       .shapes = {.record_key = config_key::grad_clip_norm, .in_config = true, .place = 31},
       // A sharded step holds a part of each gradient: its global norm needs an all-reduce no step does.
       .refuse_with = [](const RunOptions& o) -> std::string {
         if (!o.grad_clip_norm || !parallel::is_sharded(parallel::parse_dist_mode(o.distributed_mode))) return "";
         return fmt::format("--grad-clip-norm {} cannot run with --distributed-mode {} (its gradients are sharded); "
                            "valid: --distributed-mode none or ddp",
                            *o.grad_clip_norm, o.distributed_mode);
       }},
      {.names = "--cuda-graphs,--cuda_graphs",
       .member = &TrainingSection::cuda_graphs,
       .help = "capture the whole iteration (every micro-batch's forward and backward, the optimizer) once as a "
               "CUDA graph and replay it: auto (on for --compile fused on one CUDA device, else off with the "
               "reason in the record) | on (refused where capture is not possible) | off",
       .group = "Training",
       .choices = [] { return std::vector<std::string>{"auto", "on", "off"}; },
       .record = {record_key::cuda_graphs, 45},
       .shapes = {.record_key = record_key::cuda_graphs, .place = 32, .absent = "off"}},
  };
  return fields;
}

}  // namespace tokbench::config
