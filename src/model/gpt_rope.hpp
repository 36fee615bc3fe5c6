// Rotary position embeddings as litgpt builds and applies them (litgpt/model.py build_rope_cache,
// apply_rope): non-interleaved "rotate half" over the first rope_n_elem channels of a head.
// The cache is computed in fp32 with litgpt's exact op sequence so CPU results match it bit
// for bit; the caller casts it to the model dtype as litgpt's model.to(dtype) does.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "model/config.hpp"

namespace tokbench::model {

struct RopeCache {
  at::Tensor cos;  // (seq_len, rope_n_elem), or (seq_len, rope_n_elem, 2) with rope_local_base_freq
  at::Tensor sin;  // same shape; [..., 0] = global base, [..., 1] = local base
};

// Cache for positions [0, seq_len) on `device`, fp32. config must be finalized.
RopeCache build_rope_cache(const Config& config, int64_t seq_len, const at::Device& device);

// x: (B, H, T, n) with n = rope_n_elem; cos, sin: (1, T, n) -> rotated x, same dtype as x.
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace tokbench::model
