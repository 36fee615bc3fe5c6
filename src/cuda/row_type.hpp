// The storage type of the rows the CUDA kernels read and write (activations, logits and their
// gradients); statistics, scales and sums are fp32 whatever it is.
#pragma once

namespace tokbench::cuda {

enum class RowType { f32, bf16 };

}  // namespace tokbench::cuda
