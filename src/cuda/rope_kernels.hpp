// Rotary position embeddings (litgpt's apply_rope, "rotate half" over the first n channels of
// each head, the rest passed through) as one CUDA kernel each way, for the fused executor on a
// CUDA device (train/rope_rotation.cpp calls it for q and for k). Eager builds the rotated
// head from about nine kernels (two slices' copies, neg, cat, two products, add, the cast and
// the cat that puts the pass-through channels back), each writing a tensor of its own; here
// one pass reads the head once (strided, straight from the qkv projection's output) and
// writes the rotated head. Backward is the same pass with the transposed rotation. Math in
// fp32 whatever the storage type. A stream passed as void* (a cudaStream_t), so no caller
// needs CUDA's headers; each launch returns "" or the CUDA error's text.
#pragma once

#include <cstdint>
#include <string>

#include "cuda/row_type.hpp"

namespace tokbench::cuda {

// The (B, H, T, D) heads a launch reads: element (b, h, t, d) at b·stride_b + h·stride_h +
// t·stride_t + d (the last dimension contiguous).
struct RopeShape {
  int64_t batch, heads, time, head_size;
  int64_t stride_b, stride_h, stride_t;
  int64_t rotated;  // n: the channels rotated, even, 0 < n ≤ head_size
};

// x: the heads as `shape` says, in `type`; cos, sin: (T, n) contiguous in `type`; y: (B, H, T,
// D) contiguous in `type`, written (it may not overlap x). inverse false:
//   y[j]       = x[j]·cos[j]           − x[j + n/2]·sin[j]            (j < n/2)
//   y[j + n/2] = x[j + n/2]·cos[j + n/2] + x[j]·sin[j + n/2]
//   y[d]       = x[d]                                                  (d ≥ n)
// inverse true: the transpose of that map (backward: x the gradient of y, y the gradient of x):
//   y[j]       = x[j]·cos[j]           + x[j + n/2]·sin[j + n/2]
//   y[j + n/2] = x[j + n/2]·cos[j + n/2] − x[j]·sin[j]
std::string rope_rotate(RowType type, const RopeShape& shape, const void* x, const void* cos, const void* sin,
                        void* y, bool inverse, void* stream);

}  // namespace tokbench::cuda
