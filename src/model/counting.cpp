// Closed-form parameter and FLOP counts of a finalized Config (docs/litgpt-architecture.md,
// "Parameter count" and "FLOPs per micro-batch").
// All arithmetic is checked int64: a count that would overflow throws std::overflow_error
// naming the config, never wraps. No LibTorch here: this is counted, not traced.
//
// FLOPs per micro-batch of B sequences of T tokens, one device, whole model:
//   matmul  forward = 2·B·T·W + 4·B·T²·L·H·Q           backward = 2 × forward
//           W = Σ over Linear layers a token passes through of in·out, lm_head included;
//           MoE layers count the router (C·E) and the top-k experts (k·3·C·I_e) per token.
//           The attention term is q·kᵀ plus p·v over the full T×T square at n_head heads
//           (GQA's repeated k/v included), as PyTorch's FlopCounterMode sees the math SDPA.
//           Backward is exactly 2×: every Linear computes grad-weight and grad-input (the first
//           block's input requires grad because the embedding is a parameter).
//   causal  the same with the attention term halved (only the lower triangle is needed).
//   palm    PaLM appendix B: 6·N + 12·L·H·Q·T per token, N = active non-embedding parameters
//           (everything except wte, lm_head included, MoE counting k of E experts);
//           forward = one third, backward = two thirds.
//   Not counted by any convention: norms, activations, softmax, RoPE, residual adds, the loss,
//   the optimizer step (elementwise work, O(B·T·C) per layer, not matmuls).
#include "model/counting.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "model/checked_int.hpp"

namespace tokbench::model {
namespace {

using Checked = CheckedInt;

// Parameters of one norm of width `size`.
int64_t norm_params(const Config& c, int64_t size) {
  if (c.norm_class_name == "RMSNorm") return size;
  if (c.layernorm_without_params()) return 0;  // litgpt: LayerNorm(elementwise_affine=False) for OLMo
  return 2 * size;
}

// Shapes of the linear layers of one block; everything else is derived from these.
struct BlockShape {
  int64_t C, H, G, Q;  // n_embd, n_head, n_query_groups, head_size
  int64_t qkv_out;     // (H + 2G)·Q
  int64_t proj_in;     // H·Q
};
BlockShape shape_of(const Config& c) {
  return {c.n_embd, c.n_head, c.groups(), c.hs(), (c.n_head + 2 * c.groups()) * c.hs(), c.n_head * c.hs()};
}

bool is_moe(const Config& c) { return c.mlp_class_name == "LLaMAMoE"; }

// Σ in·out of the gated MLP (fc_1, fc_2: C→I, proj: I→C) and its parameters with biases.
int64_t gated_mlp_weights(const Checked& k, int64_t C, int64_t I) { return k.mul(3, C, I); }
int64_t gated_mlp_params(const Checked& k, const Config& c, int64_t I) {
  return k.add(gated_mlp_weights(k, c.n_embd, I), c.bias ? k.add(k.mul(2, I), c.n_embd) : 0);
}

// Σ in·out over the block's Linear layers; `active_only` counts k of E experts (per token).
int64_t block_linear_weights(const Checked& k, const Config& c, bool active_only) {
  const BlockShape s = shape_of(c);
  int64_t w = k.add(k.mul(s.C, s.qkv_out), k.mul(s.proj_in, s.C));
  if (c.mlp_class_name == "GptNeoxMLP") return k.add(w, k.mul(2, s.C, c.mlp_hidden()));
  if (!is_moe(c)) return k.add(w, gated_mlp_weights(k, s.C, c.mlp_hidden()));
  const int64_t experts = active_only ? c.n_expert_per_token : c.n_expert;
  return k.add(w, k.mul(s.C, c.n_expert), k.mul(experts, gated_mlp_weights(k, s.C, c.expert_hidden())));
}

int64_t block_params(const Checked& k, const Config& c) {
  const BlockShape s = shape_of(c);
  const int64_t b = c.bias ? 1 : 0;
  const int64_t qkv_bias = (c.bias || c.attn_bias) ? s.qkv_out : 0;
  int64_t attn = k.add(k.mul(s.C, s.qkv_out), qkv_bias, k.mul(s.proj_in, s.C), k.mul(b, s.C));
  if (c.norm_qk) {
    attn = c.norm_qk_type == "olmo2"
               ? k.add(attn, norm_params(c, s.H * s.Q), norm_params(c, s.G * s.Q))
               : k.add(attn, k.mul(2, norm_params(c, s.Q)));
  }
  int64_t mlp = 0;
  if (c.mlp_class_name == "GptNeoxMLP") {
    mlp = k.add(k.mul(2, s.C, c.mlp_hidden()), k.mul(b, k.add(c.mlp_hidden(), s.C)));
  } else if (!is_moe(c)) {
    mlp = gated_mlp_params(k, c, c.mlp_hidden());
  } else {  // router (no bias) + E experts
    mlp = k.add(k.mul(s.C, c.n_expert), k.mul(c.n_expert, gated_mlp_params(k, c, c.expert_hidden())));
  }
  const int64_t norm = norm_params(c, s.C);
  int64_t block = k.add(attn, mlp);
  if (c.norm_1) block = k.add(block, norm);
  if (c.post_attention_norm) block = k.add(block, norm);
  if (c.norm_2 && !c.shared_attention_norm) block = k.add(block, norm);
  if (c.post_mlp_norm) block = k.add(block, norm);
  return block;
}

void require_finalized(const Config& c) {
  if (!c.head_size || !c.n_query_groups || !c.padded_vocab_size || !c.intermediate_size)
    throw std::logic_error(fmt::format("counting needs a finalized config; '{}' is not", c.name));
}

}  // namespace

ParamCounts count_params(const Config& config) {
  require_finalized(config);
  const Checked k(config);
  const int64_t C = config.n_embd, V = config.vocab();
  ParamCounts counts;
  counts.embedding = k.mul(V, C);
  counts.lm_head = k.add(k.mul(C, V), config.lm_head_bias ? V : 0);
  counts.final_norm = norm_params(config, C);
  // Every layer has the same shape today (no first_k_dense_replace), but the vector keeps
  // room for configs whose layers differ.
  const int64_t block = block_params(k, config);
  counts.per_block.assign(static_cast<std::size_t>(config.n_layer), block);
  counts.total = k.add(counts.embedding, counts.lm_head, counts.final_norm, k.mul(config.n_layer, block));
  counts.linear_weights =
      k.add(k.mul(config.n_layer, block_linear_weights(k, config, false)), k.mul(C, V));
  return counts;
}

std::string_view to_string(FlopConvention convention) {
  switch (convention) {
    case FlopConvention::matmul: return "matmul";
    case FlopConvention::causal: return "causal";
    case FlopConvention::palm: return "palm";
  }
  return "?";
}

FlopConvention flop_convention_from_string(std::string_view name) {
  for (auto convention : {FlopConvention::matmul, FlopConvention::causal, FlopConvention::palm})
    if (name == to_string(convention)) return convention;
  throw std::invalid_argument(fmt::format("flops convention '{}' is not valid; valid: matmul, causal, palm", name));
}

FlopCounts count_flops(const Config& config, int64_t micro_batch, int64_t seq_len, FlopConvention convention) {
  require_finalized(config);
  if (micro_batch <= 0)
    throw std::invalid_argument(fmt::format("micro_batch {} must be a positive integer", micro_batch));
  if (seq_len <= 0) throw std::invalid_argument(fmt::format("seq_len {} must be a positive integer", seq_len));
  const Checked k(config);
  const int64_t B = micro_batch, T = seq_len, L = config.n_layer;
  const int64_t tokens = k.mul(B, T);
  // q·kᵀ and p·v, each 2·T·T·Q per head: 4·B·T²·L·H·Q over the full square.
  const int64_t attention_full = k.mul(4, tokens, T, L, config.n_head, config.hs());

  FlopCounts flops;
  if (convention == FlopConvention::palm) {
    const ParamCounts params = count_params(config);
    int64_t active = k.sub(params.total, params.embedding);
    if (is_moe(config)) {  // only k of the E experts run per token
      const int64_t idle = k.mul(L, config.n_expert - config.n_expert_per_token,
                                 gated_mlp_params(k, config, config.expert_hidden()));
      active = k.sub(active, idle);
    }
    // per token: forward 2·N + 4·L·H·Q·T, backward twice that (6N + 12LHQT in all).
    flops.forward = k.add(k.mul(2, tokens, active), attention_full);
  } else {
    const int64_t W = k.add(k.mul(L, block_linear_weights(k, config, true)), k.mul(config.n_embd, config.vocab()));
    const int64_t attention = convention == FlopConvention::causal ? attention_full / 2 : attention_full;
    flops.forward = k.add(k.mul(2, tokens, W), attention);
  }
  flops.backward = k.mul(2, flops.forward);
  k.add(flops.forward, flops.backward);  // total() must fit as well
  return flops;
}

bool recompute_skips_mlp_projection(const Config& config) { return !config.post_mlp_norm && !is_moe(config); }

int64_t count_recompute_flops(const Config& config, int64_t micro_batch, int64_t seq_len, FlopConvention convention) {
  const FlopCounts flops = count_flops(config, micro_batch, seq_len, convention);  // checks the arguments
  const Checked k(config);
  const int64_t tokens = k.mul(micro_batch, seq_len);
  const ParamCounts params = count_params(config);
  // The forward outside the blocks: the head's GEMM (matmul, causal), or under palm every
  // parameter outside the blocks but the embedding (a lookup): head and final norm.
  const int64_t outside = convention == FlopConvention::palm ? k.add(params.lm_head, params.final_norm)
                                                             : k.mul(config.n_embd, config.vocab());
  int64_t recompute = k.sub(flops.forward, k.mul(2, tokens, outside));
  if (recompute_skips_mlp_projection(config)) {
    int64_t projection = k.mul(config.mlp_hidden(), config.n_embd);
    if (convention == FlopConvention::palm && config.bias) projection = k.add(projection, config.n_embd);
    recompute = k.sub(recompute, k.mul(2, tokens, config.n_layer, projection));
  }
  return recompute;
}

}  // namespace tokbench::model
