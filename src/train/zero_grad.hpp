// What happens to gradients after each optimizer step. Torch-free, so the plan, the report
// and the JSON can name it.
#pragma once

namespace tokbench::train {

// `none` frees them (PyTorch's zero_grad(set_to_none=True), the reference's step: backward
// allocates them afresh, and the memory peak holds them only while they coexist with the
// activations in backward); `inplace` zeroes them and keeps their memory
// (set_to_none=False: every gradient is also held during the next forward).
enum class ZeroGrad { none, inplace };

inline const char* to_string(ZeroGrad mode) { return mode == ZeroGrad::none ? "none" : "inplace"; }

}  // namespace tokbench::train
