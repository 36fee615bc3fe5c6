// The precision of a training run, one enum for every layer: the model's memory estimate,
// the train loop (parameter dtype, autocast) and the bench's --dtype. One set of names and
// one parser; what a precision needs from LibTorch or a device lives in train/dtype_mode.hpp.
#pragma once

#include <string_view>

namespace tokbench::model {

// fp32: everything fp32 (Lightning's "32-true"). bf16-true: parameters, gradients, AdamW state
// and activations in bf16 (the reference benchmark's model.to(bfloat16)). bf16-mixed: fp32
// parameters, gradients and AdamW state, bf16 activations under autocast (Lightning's
// "bf16-mixed"; the loss's log-softmax in fp32).
enum class TrainPrecision { fp32, bf16_true, bf16_mixed };
inline constexpr TrainPrecision kTrainPrecisions[] = {TrainPrecision::fp32, TrainPrecision::bf16_true,
                                                      TrainPrecision::bf16_mixed};

// Canonical name: "fp32", "bf16-true" or "bf16-mixed".
constexpr std::string_view to_string(TrainPrecision precision) {
  switch (precision) {
    case TrainPrecision::fp32: return "fp32";
    case TrainPrecision::bf16_true: return "bf16-true";
    case TrainPrecision::bf16_mixed: return "bf16-mixed";
  }
  return "?";
}

// Accepts the canonical names and the reference-style aliases "32-true", "32", "float32"
// (= fp32) and "bf16", "bfloat16" (= bf16-true), in any case and with '_' for '-'.
// Throws std::invalid_argument naming the option `--dtype`, the value and the valid names.
TrainPrecision train_precision_from_string(std::string_view name);

}  // namespace tokbench::model
