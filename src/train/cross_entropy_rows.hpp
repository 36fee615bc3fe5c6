// The cross-entropy of a chunk of logit rows and its gradient in one pass per row, on the
// CPU: per row, a max pass, a pass that writes exp(z − max) and sums it, and a scale pass,
// all while the row (V floats) stays in the core's cache, instead of one whole-chunk ATen op
// per step (amax, sub, exp, sum, mul) that each stream the chunk through memory. Statistics
// are fp32 (sums in double) for bf16 logits too. Nothing is read back from a device.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace tokbench::train {

// logits: (R, V) contiguous fp32 or bf16 on the CPU, the lm_head's output before any
// soft-capping; targets: (R) int64, -1 = ignored. With z = softcap·tanh(logits / softcap)
// (or z = logits without softcap), returns the per-row losses (R) fp32:
// logsumexp(z) − z[target], 0 on ignored rows; and overwrites logits with the gradient of
// grad_scale · Σ losses: (softmax(z) − onehot(target)) · grad_scale · dz/dlogits, zero on
// ignored rows.
at::Tensor cross_entropy_rows_in_place(const at::Tensor& logits, const at::Tensor& targets,
                                       std::optional<double> softcap, double grad_scale);

// The vector ISA whose row kernel runs: "DEFAULT", "AVX2" or "AVX512", ATen's choice for
// this machine (at::get_cpu_capability, which honours ATEN_CPU_CAPABILITY).
const char* cross_entropy_rows_isa();

}  // namespace tokbench::train
