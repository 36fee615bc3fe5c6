// Training-memory estimate (memory_estimate.hpp).
//
// Bytes per parameter:            weights  gradients  AdamW (exp_avg + exp_avg_sq)
//   fp32                               4          4        8
//   bf16-true                          2          2        4   (optimizer state follows the parameter dtype)
//   bf16-mixed                         4          4        8
//
// Activations: the tensors eager autograd saves for backward, counted per token (B·T tokens),
// all alive at the end of the forward pass (with activation checkpointing: each block's input,
// plus one block's activations while backward recomputes it), attention on a fused
// SDPA kernel (flash / memory-efficient: no T×T matrices). Per block, in elements per token
// (C = n_embd, H = n_head, G = n_query_groups, Q = head_size, I = MLP width, E/k = experts):
//   norm_1 input and output                                         2·C    (if norm_1)
//   q/k norms (inputs)                                              H·Q + G·Q (if norm_qk)
//   SDPA: q, k, v (k, v repeated to H heads), output, logsumexp      4·H·Q + H
//   proj input (the re-laid-out attention output)                   H·Q
//   post-attention norm input                                       C      (if set)
//   norm_2 input and output                                         2·C    (unless shared_attention_norm)
//   MLP  GptNeoxMLP: fc output, gelu output                         2·I
//        LLaMA/Gemma: fc_1 output, fc_2 output, act output, product  4·I
//        LLaMAMoE: router logits E, top-k probabilities k, and per routed token the gathered
//                  input, the expert's 4·I_e and its weighted output  E + k + k·(2·C + 4·I_e)
//   post-MLP norm input                                             C      (if set)
// Plus per token outside the blocks: ln_f input and output (2·C), the logits (V_pad) and
// the loss's log-softmax output (V_pad; fp32 under bf16-mixed, as autocast runs the loss in
// fp32). Activation bytes per element: 4 (fp32), 2 (bf16-true, bf16-mixed).
//
// Left out: the math-attention T×T score and probability matrices (2·H·T² per sequence and
// layer, when SDPA falls back to the math backend, e.g. with logit soft-capping), litgpt's
// explicit sliding-window T×T masks, the RoPE cos/sin cache, norm statistics (one float per
// token and norm), autocast's bf16 copies of Linear weights under bf16-mixed, the transient
// peak inside backward (activation gradients alive alongside saved tensors), optimizer
// temporaries, DDP/FSDP buffers, the CUDA context, cuBLAS workspaces and allocator
// fragmentation. Expect a measured peak above this figure.
#include "model/memory_estimate.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "model/checked_int.hpp"
#include "model/counting.hpp"

namespace tokbench::model {
namespace {

struct BytesPerParam {
  int64_t weights, gradients, optimizer, activation;
};
BytesPerParam bytes_for(TrainPrecision precision) {
  switch (precision) {
    case TrainPrecision::fp32: return {4, 4, 8, 4};
    case TrainPrecision::bf16_true: return {2, 2, 4, 2};
    case TrainPrecision::bf16_mixed: return {4, 4, 8, 2};
  }
  throw std::logic_error("unknown TrainPrecision");
}

}  // namespace

int64_t block_activation_elements_per_token(const Config& c) {
  const CheckedInt k(c);
  const int64_t C = c.n_embd, H = c.n_head, G = c.groups(), Q = c.hs();
  int64_t e = k.add(k.mul(5, H, Q), H);  // SDPA q, k, v, output + logsumexp; proj input
  if (c.norm_1) e = k.add(e, 2 * C);
  if (c.norm_qk) e = k.add(e, k.mul(H + G, Q));
  if (c.post_attention_norm) e = k.add(e, C);
  if (c.norm_2 && !c.shared_attention_norm) e = k.add(e, 2 * C);
  if (c.post_mlp_norm) e = k.add(e, C);
  if (c.mlp_class_name == "GptNeoxMLP") {
    e = k.add(e, k.mul(2, c.mlp_hidden()));
  } else if (c.mlp_class_name == "LLaMAMoE") {
    const int64_t per_routed = k.add(k.mul(2, C), k.mul(4, c.expert_hidden()));
    e = k.add(e, c.n_expert, c.n_expert_per_token, k.mul(c.n_expert_per_token, per_routed));
  } else {
    e = k.add(e, k.mul(4, c.mlp_hidden()));
  }
  return e;
}

MemoryEstimate estimate_training_memory(const Config& config, int64_t micro_batch, int64_t seq_len,
                                        TrainPrecision precision, bool checkpoint_activations) {
  if (micro_batch <= 0)
    throw std::invalid_argument(fmt::format("micro_batch {} must be a positive integer", micro_batch));
  if (seq_len <= 0) throw std::invalid_argument(fmt::format("seq_len {} must be a positive integer", seq_len));
  const CheckedInt k(config);
  const BytesPerParam bytes = bytes_for(precision);
  const int64_t params = count_params(config).total;
  MemoryEstimate m;
  m.precision = precision;
  m.weights_bytes = k.mul(params, bytes.weights);
  m.gradients_bytes = k.mul(params, bytes.gradients);
  m.optimizer_bytes = k.mul(params, bytes.optimizer);

  const int64_t tokens = k.mul(micro_batch, seq_len);
  const int64_t blocks = checkpoint_activations
                             ? k.add(k.mul(config.n_layer, config.n_embd), block_activation_elements_per_token(config))
                             : k.mul(config.n_layer, block_activation_elements_per_token(config));
  const int64_t head = k.add(k.mul(2, config.n_embd), config.vocab());  // ln_f in/out, logits
  const int64_t per_token_bytes =
      k.add(k.mul(k.add(blocks, head), bytes.activation),
            k.mul(config.vocab(), precision == TrainPrecision::bf16_mixed ? 4 : bytes.activation));  // log-softmax
  m.activations_bytes = k.mul(tokens, per_token_bytes);
  k.add(m.weights_bytes, m.gradients_bytes, m.optimizer_bytes, m.activations_bytes);  // total must fit
  return m;
}

}  // namespace tokbench::model
