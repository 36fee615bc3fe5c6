// The GPT module: one LibTorch module for every litgpt architecture, its variants chosen by
// Config fields (litgpt/model.py). Parameter names equal litgpt's state-dict keys
// ("transformer.h.0.attn.qkv.weight", "lm_head.weight", ...). Parameters are created directly
// with the requested TensorOptions, so a model built on the meta device allocates nothing.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/config.hpp"
#include "model/gate_activation.hpp"

namespace tokbench::model {

class GPTImpl : public torch::nn::Module {
 public:
  // How the constructor allocates parameters. `allocated`: torch::empty, uninitialised until
  // reset_parameters() or load_state(). `deferred`: each parameter has its device, dtype and
  // shape but no storage, for a wrapper that places the data itself (FSDP keeps only its
  // rank's shard, filled from visit_initial_values); nothing may read a deferred parameter
  // before that, and reset_parameters refuses such a model. Buffers are always allocated.
  enum class ParameterStorage { allocated, deferred };

  // config must be finalized; options carry the device and dtype of parameters and buffers.
  GPTImpl(const Config& config, const torch::TensorOptions& options,
          ParameterStorage storage = ParameterStorage::allocated);

  // idx: (B, T) int64 token ids, T <= config.block_size -> logits (B, T, padded_vocab_size).
  torch::Tensor forward(const torch::Tensor& idx);

  // idx: (B, T) -> the final norm's output (B, T, n_embd), the lm_head's input: forward
  // without the head, for an executor that computes head and loss together (chunked).
  torch::Tensor forward_hidden(const torch::Tensor& idx);

  // Such an executor passes the head's output here (the logits, or the loss computed with
  // them), so the forward hooks see the root's forward end as they do in forward (FSDP
  // ZeRO-3 frees the root's parameters there and gathers them again before backward).
  // Returns the tensor to use in its place.
  torch::Tensor after_head(torch::Tensor head_output);

  // How every linear layer (attention, MLP, MoE router and experts, lm_head) computes
  // x·Wᵀ + b, for an executor with its own GEMM kernels; bias is undefined where the layer
  // has none. Empty (the default): at::linear, exactly the eager computation.
  // `graph_only`, when given, is the function's form whose output has its autograd graph but
  // no values (the GEMM skipped), for the output projection a checkpoint's recomputation does
  // not need the value of (gpt_checkpoint.hpp); without it that projection runs `function`.
  using LinearFunction =
      std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias)>;
  void set_linear_function(LinearFunction function, LinearFunction graph_only = {});

  // Activation checkpointing per transformer block (gpt_checkpoint.hpp): forward keeps only each
  // block's input, backward recomputes the block. Off by default.
  void set_activation_checkpointing(bool on);
  bool activation_checkpointing() const;

  // How every RMSNorm (not LayerNorm) computes x_f32 · rsqrt(mean(x_f32²) + eps) · w_f32 cast
  // back to x's dtype, w = 1 + weight under unit_offset (Gemma); x: (..., C), weight: (C).
  // Empty (the default): litgpt's op composition, exactly the eager computation.
  using NormFunction = std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& weight,
                                                   bool unit_offset, double eps)>;
  void set_norm_function(NormFunction function);

  // How an RMSNorm that reads a residual add computes the add and itself together, given the
  // branch a and the residual x of one shape and dtype -> (a + x, norm(a + x)), the sum in that
  // dtype rounded as ATen's add rounds it and the norm as NormFunction's, of the rounded sum.
  // Two adds qualify: norm_2 of a sequential block (LLaMA, Qwen, Mistral, Gemma:
  // `x = a + x; h = norm_2(x)`), and a block's closing add (`mlp + x`; in a parallel-residual
  // block `mlp + (attn + x)`) with the norm that reads its output, the next block's norm_1 or
  // ln_f, where the forward runs without hooks and without activation checkpointing (the
  // block then computes the next norm and hands it over; with hooks, FSDP gathers and the unit
  // timings need the next block's norm inside that block). Empty (the default): `a + x`, then
  // the norm (through NormFunction when set), exactly the eager computation.
  using AddNormFunction = std::function<std::pair<torch::Tensor, torch::Tensor>(
      const torch::Tensor& a, const torch::Tensor& x, const torch::Tensor& weight, bool unit_offset, double eps)>;
  void set_add_norm_function(AddNormFunction function);

  // The same for every LayerNorm (with weight and bias, or OLMo's without: then undefined):
  // OLMo's norm_2, and the closing adds of GPT-NeoX/pythia, phi-2 and falcon blocks with the
  // next norm_1 or ln_f, as said above. The norm as torch::layer_norm's, of the rounded sum.
  // Empty (the default): `a + x`, then the norm, exactly the eager computation.
  using AddLayerNormFunction = std::function<std::pair<torch::Tensor, torch::Tensor>(
      const torch::Tensor& a, const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
      double eps)>;
  void set_add_layer_norm_function(AddLayerNormFunction function);

  // How every LayerNorm with a weight and a bias computes (x − mean) · rsqrt(var + eps) · w + b
  // over the last dimension (statistics in fp32, the result in x's dtype, as torch::layer_norm);
  // x: (..., C), weight and bias: (C). OLMo's LayerNorm without parameters keeps
  // torch::layer_norm. Empty (the default): torch::layer_norm, exactly the eager computation.
  using LayerNormFunction = std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& weight,
                                                        const torch::Tensor& bias, double eps)>;
  void set_layer_norm_function(LayerNormFunction function);

  // How every gated MLP (LLaMAMLP, GemmaMLP, an MoE's experts) computes act(gate) · up from its
  // two projections (act: silu, or gelu per gelu_approximate); the plain GELU of GptNeoxMLP
  // has no gating and keeps torch::gelu. Empty (the default): ATen's activation and mul,
  // exactly the eager computation.
  using GateFunction =
      std::function<torch::Tensor(const torch::Tensor& gate, const torch::Tensor& up, GateActivation activation)>;
  void set_gate_function(GateFunction function);

  // How every attention layer rotates q and k: x (B, H, T, head_size), cos and sin
  // (1, T, rope_n_elem) -> x with its first rope_n_elem channels rotated as litgpt's
  // apply_rope does and the rest passed through. Empty (the default): litgpt's operators.
  using RopeFunction =
      std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin)>;
  void set_rope_function(RopeFunction function);

  // Which operators the layers issue where litgpt's own are slower than the same math in
  // fewer. `litgpt` (the default, the eager executor): litgpt's, operator for operator
  // (docs/eager-parity.md): a sliding-window layer's additive float mask written row by row on
  // every forward, an MoE's torch.where per expert (a host sync each on a GPU). `fast` (the
  // fused executor): a window that covers all T positions is plain causal attention (SDPA's
  // flash and efficient kernels stay usable), a shorter one a mask from two aranges; an MoE
  // groups its tokens by expert with one stable sort and one host sync. Equal results within
  // the floating-point tolerance of a different summation order (the fused step's tests).
  enum class Operators { litgpt, fast };
  void set_operators(Operators operators);

  // Deterministic random initialisation for a seed (normal(0, 0.02) weights, zero biases,
  // norms at one), independent of the device. A no-op on the meta device.
  void reset_parameters(uint64_t seed);

  // The values reset_parameters(seed) writes, in order, without writing them: for parameter
  // `index` (named_parameters order), the CPU fp32 values of its flattened elements
  // [offset, offset + values.numel()), in pieces of at most 64 MB. Every weight's values are
  // drawn whoever keeps them, so a caller keeping a slice gets exactly the whole model's.
  using InitVisitor = std::function<void(std::size_t index, int64_t offset, const torch::Tensor& values)>;
  void visit_initial_values(uint64_t seed, const InitVisitor& visit) const;
  bool parameters_deferred() const;

  const Config& config() const;

  // The parts parallelism wraps (torchtitan's parallelize_* over model.layers): each
  // transformer block, in order, and the root modules outside them (embedding, final norm,
  // head). FSDP shards per block and per root; activation checkpointing can wrap the same.
  std::vector<std::shared_ptr<torch::nn::Module>> blocks() const;
  std::vector<std::shared_ptr<torch::nn::Module>> root_modules() const;

  // The attention kernels the layers' first forward used, distinct, in layer order, joined by
  // ", " (e.g. "flash_attention"; "" before any forward): what the record's attention_kernel says.
  std::string attention_kernels() const;

  // Called by forward around the root and around each block, so a wrapper can gather a
  // unit's sharded parameters just before use and free them after (FSDP's pre/post-forward
  // hooks; LibTorch modules have none of their own). Null (the default): no calls. One set is
  // installed at a time; a second client wraps the installed one and forwards every call to it
  // (the per-unit timing pass, train/unit_timing_hooks.hpp, wraps FSDP's).
  class ForwardHooks {
   public:
    virtual ~ForwardHooks() = default;
    virtual void before_root() {}
    // The embedding's output (scaled where the config scales it), the first block's input.
    // May return a different tensor (e.g. one with a backward hook registered on it).
    virtual torch::Tensor after_embedding(torch::Tensor x) { return x; }
    virtual void before_block(int64_t layer) {}
    // May return a different tensor (e.g. one with a backward hook registered on it).
    virtual torch::Tensor after_block(int64_t layer, torch::Tensor output) { return output; }
    virtual torch::Tensor after_root(torch::Tensor logits) { return logits; }
  };
  void set_forward_hooks(std::shared_ptr<ForwardHooks> hooks);
  // The installed hooks (null when none), for a client that wraps them.
  std::shared_ptr<ForwardHooks> forward_hooks() const;

  // Copies tensors into the parameters by litgpt state-dict name (e.g. weights saved from
  // litgpt). Every parameter must be present with its exact shape; extra names are errors.
  void load_state(const std::map<std::string, torch::Tensor>& tensors);

 private:
  struct State;
  std::shared_ptr<State> state_;
};
TORCH_MODULE(GPT);

}  // namespace tokbench::model
