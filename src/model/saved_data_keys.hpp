// The keys under which tokbench's custom autograd Functions keep what their backward needs in
// ctx->saved_data (sizes, dtypes, a kernel choice, fused_ops' gradients made in the forward):
// each Function writes and reads its own, model's (gpt_checkpoint.cpp) and train's (fused_ops.cpp,
// the row kernels' norms, the gated activation) alike; here, below both, each key spelled once.
#pragma once

namespace tokbench::model::saved_data_key {

inline constexpr char x_sizes[] = "x_sizes";
inline constexpr char has_bias[] = "has_bias";
inline constexpr char weight_dtype[] = "weight_dtype";
inline constexpr char bias_dtype[] = "bias_dtype";
inline constexpr char kernels[] = "kernels";
inline constexpr char activation[] = "activation";
inline constexpr char grad_hidden[] = "grad_hidden";
inline constexpr char grad_weight[] = "grad_weight";
inline constexpr char grad_bias[] = "grad_bias";

}  // namespace tokbench::model::saved_data_key
