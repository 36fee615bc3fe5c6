// Precision modes of a training run and what each asks of the device. bf16-true keeps the
// parameters (and AdamW state) in bf16, as the reference benchmark's model.to(bfloat16);
// bf16-mixed keeps fp32 parameters and runs the forward under autocast to bf16 (Lightning's
// "bf16-mixed"); fp32 is plain fp32 ("32-true").
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>
#include <string_view>

namespace tokbench::train {

enum class DtypeMode { fp32, bf16_true, bf16_mixed };

// Canonical name: "fp32", "bf16-true" or "bf16-mixed".
const char* to_string(DtypeMode mode);

// Accepts the canonical names and the reference-style aliases "32-true", "32", "bf16"
// (= bf16-true, the reference's model.to(bfloat16)) and "bf16-true"/"bf16-mixed" in any case.
// Throws std::invalid_argument naming the option `--dtype`, the value and the valid names.
DtypeMode parse_dtype(std::string_view name);

// The dtype of parameters (and so of optimizer state) in a mode.
c10::ScalarType param_dtype(DtypeMode mode);

// Whether `device` can run `mode`; when not, *why (if given) says why in one sentence.
// bf16 on the CPU is supported (slow without AVX512-BF16/AMX, but correct); CUDA bf16 needs
// compute capability >= 8.0.
bool dtype_supported(DtypeMode mode, const c10::Device& device, std::string* why = nullptr);

}  // namespace tokbench::train
