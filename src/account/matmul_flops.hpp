// FLOPs of one matrix-product operator from the input shapes the profiler recorded: 2·m·n·k per
// product (a multiply and an add), as PyTorch's FlopCounterMode and tokbench's `matmul`
// convention count them (model/counting.hpp). SDPA kernels count their two products over the
// full L×S score square (what the convention counts, whatever the mask skips), and their
// backward twice the forward. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "account/category.hpp"

namespace tokbench::account {

using Shapes = std::vector<std::vector<int64_t>>;  // one entry per input; {} for a non-tensor

struct MatmulFlops {
  Category category = Category::gemm;  // gemm, or attention for an SDPA kernel
  int64_t flops = 0;
};

// Whether `name` is an operator whose FLOPs are counted (a GEMM or an SDPA kernel). Composites
// (aten::linear, aten::matmul, aten::scaled_dot_product_attention) are not: the kernels they
// call are counted instead, so no product is counted twice.
bool counts_matmul_flops(std::string_view name);

// The FLOPs of a counted operator from its input shapes; nullopt when the shapes are missing or
// do not fit the operator's signature.
std::optional<MatmulFlops> matmul_flops(std::string_view name, const Shapes& shapes);

}  // namespace tokbench::account
