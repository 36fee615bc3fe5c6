// The cross-entropy of a chunk of logit rows and its gradient, in place, as one CUDA kernel:
// the fused executor's chunked lm_head + loss (train/fused_ops.cpp) calls it on each chunk's
// logits on a CUDA device. litgpt's path (and the whole-chunk ATen composition it replaces)
// streams the chunk through memory about eight times — a cast to fp32, logsumexp, gather, exp,
// scatter, two products, a cast back — where this reads each row twice and writes it once, in
// its own storage type: one pass for the row's maximum and its sum of exponentials together
// (an online softmax), one that writes the gradient. The math is the CPU row kernel's
// (train/cross_entropy_rows.hpp), in fp32:
//   z = c·tanh(x / c) under soft-capping (Gemma-2), else z = x
//   loss = logsumexp(z) − z[target]
//   x ← (softmax(z) − onehot(target)) · scale · dz/dx,  dz/dx = 1 − (z / c)²
// scale is read from device memory (the caller's 1 / counted targets, never read back to the
// host, so a CUDA graph can hold the launch). Ignored rows (target −1) get loss 0 and a zero
// gradient; a target outside [−1, V) gets a NaN loss (the run's NaN check stops it) and a zero
// gradient. Plain pointers and a stream passed as void*; returns "" or the CUDA error's text.
#pragma once

#include <cstdint>
#include <string>

#include "cuda/row_type.hpp"

namespace tokbench::cuda {

// logits: (rows, vocab) contiguous in `type`, overwritten with the gradient; targets: (rows)
// int64; losses: (rows) fp32, written; scale: one fp32 in device memory; softcap 0: none.
std::string cross_entropy_rows_in_place(RowType type, void* logits, const int64_t* targets, float* losses,
                                        const float* scale, int64_t rows, int64_t vocab, float softcap,
                                        void* stream);

}  // namespace tokbench::cuda
