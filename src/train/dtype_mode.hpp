// What a training precision (model::TrainPrecision, model/train_precision.hpp) asks of LibTorch
// and the device: the parameter dtype, and whether a device can run it. bf16-true keeps the
// parameters (and AdamW state) in bf16, as the reference benchmark's model.to(bfloat16);
// bf16-mixed keeps fp32 parameters and runs the forward under autocast to bf16.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

#include "model/train_precision.hpp"

namespace tokbench::train {

// The dtype of parameters (and so of optimizer state) in a precision.
c10::ScalarType param_dtype(model::TrainPrecision precision);

// Whether `device` can run `precision`; when not, *why (if given) says why in one sentence.
// bf16 on the CPU is supported (slow without AVX512-BF16/AMX, but correct); CUDA bf16 needs
// compute capability >= 8.0.
bool dtype_supported(model::TrainPrecision precision, const c10::Device& device, std::string* why = nullptr);

}  // namespace tokbench::train
