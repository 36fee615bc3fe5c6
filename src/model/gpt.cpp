// The GPT module and its parts (litgpt/model.py: GPT, Block, CausalSelfAttention, the MLPs,
// RMSNorm). Parts are tiny modules that create their parameters directly with the requested
// TensorOptions (never a torch::nn::Linear built on the CPU and moved), so a meta-device model
// allocates nothing; registration order and names reproduce litgpt's state-dict keys and order.
// Forward ops follow litgpt's op order so fp32 CPU results agree with it to rounding.
#include "model/gpt.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/SDPBackend.h>
#include <ATen/record_function.h>
#include <ATen/ops/_fused_sdp_choice.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "account/range_names.hpp"
#include "model/counting.hpp"
#include "model/gpt_checkpoint.hpp"
#include "model/gpt_rope.hpp"
#include "model/module_keys.hpp"
#include "model/python_numbers.hpp"

namespace tokbench::model {
namespace {

// Set by the GPT constructor for its own duration (the modules below create their parameters
// through new_parameter, and their constructors have no room for the choice).
thread_local bool t_defer_storage = false;

torch::Tensor new_parameter(torch::IntArrayRef shape, const torch::TensorOptions& options) {
  if (!t_defer_storage) return torch::empty(shape, options.requires_grad(false));
  // The shape on the device with no bytes behind it: a wrapper places the data later.
  torch::Tensor t = torch::empty({0}, options.requires_grad(false));
  t.unsafeGetTensorImpl()->set_sizes_contiguous(shape);
  return t;
}

struct DeferStorage {
  explicit DeferStorage(bool on) : previous(t_defer_storage) { t_defer_storage = on; }
  ~DeferStorage() { t_defer_storage = previous; }
  bool previous;
};

// nn.Linear's parameters and F.linear: weight (out, in), optional bias (out).
class Linear : public torch::nn::Module {
 public:
  Linear(int64_t in, int64_t out, bool with_bias, const torch::TensorOptions& options) {
    weight_ = register_parameter(module_key::weight, new_parameter({out, in}, options));
    if (with_bias) bias_ = register_parameter(module_key::bias, new_parameter({out}, options));
  }
  // x: (..., in) -> (..., out). value_needed false: only the output's graph is used
  // (gpt_checkpoint.hpp), so the GEMM is skipped where the linear function has a graph-only form.
  torch::Tensor forward(const torch::Tensor& x, bool value_needed = true) {
    if (!value_needed && !function_) return linear_graph_only(x, weight_, bias_);
    if (!value_needed && graph_only_) return graph_only_(x, weight_, bias_);
    if (function_) return function_(x, weight_, bias_);
    return at::linear(x, weight_, bias_.defined() ? std::optional<torch::Tensor>(bias_) : std::nullopt);
  }

  void set_function(GPTImpl::LinearFunction function, GPTImpl::LinearFunction graph_only) {
    function_ = std::move(function);
    graph_only_ = std::move(graph_only);
  }

 private:
  torch::Tensor weight_, bias_;
  GPTImpl::LinearFunction function_;    // empty: at::linear
  GPTImpl::LinearFunction graph_only_;  // function_'s graph-only form; empty: run function_
};

// nn.Embedding: weight (V, C).
class Embedding : public torch::nn::Module {
 public:
  Embedding(int64_t vocab, int64_t dim, const torch::TensorOptions& options) {
    weight_ = register_parameter(module_key::weight, new_parameter({vocab, dim}, options));
  }
  // idx: (B, T) int64 -> (B, T, C)
  torch::Tensor forward(const torch::Tensor& idx) { return torch::embedding(weight_, idx); }

 private:
  torch::Tensor weight_;
};

// One module for every normalisation litgpt uses, chosen once at construction so forward
// stays a straight line: identity (norm_1/norm_2 = false), LayerNorm (parameter-free for
// OLMo names), RMSNorm (with Gemma's 1 + weight).
class Norm : public torch::nn::Module {
 public:
  enum class Kind { identity, layer_norm, layer_norm_no_affine, rms_norm, rms_norm_unit_offset };

  static Kind kind_for(const Config& c, bool enabled) {
    if (!enabled) return Kind::identity;
    if (c.norm_class_name == "RMSNorm")
      return c.rmsnorm_unit_offset() ? Kind::rms_norm_unit_offset : Kind::rms_norm;
    TORCH_CHECK(c.norm_class_name == "LayerNorm", "norm_class_name must be LayerNorm or RMSNorm, got '",
                c.norm_class_name, "'");
    return c.layernorm_without_params() ? Kind::layer_norm_no_affine : Kind::layer_norm;
  }

  Norm(const Config& c, int64_t size, const torch::TensorOptions& options, bool enabled = true)
      : kind_(kind_for(c, enabled)), size_(size), eps_(c.norm_eps) {
    if (kind_ == Kind::identity || kind_ == Kind::layer_norm_no_affine) return;
    weight_ = register_parameter(module_key::weight, new_parameter({size}, options));
    if (kind_ == Kind::layer_norm) bias_ = register_parameter(module_key::bias, new_parameter({size}, options));
  }

  // x: (..., size) -> same shape and dtype
  torch::Tensor forward(const torch::Tensor& x) {
    if (handed_input_.defined()) {  // handed over by the block before (hand_over): taken once
      auto input = std::move(handed_input_);
      auto output = std::move(handed_output_);
      if (input.is_same(x)) return output;
    }
    if (kind_ == Kind::identity) return x;
    // Named for the time account: litgpt's RMSNorm is a composition of elementwise operators.
    RECORD_USER_SCOPE(account::ranges::kNorm);
    switch (kind_) {
      case Kind::identity:
        return x;
      case Kind::layer_norm:
        if (layer_norm_function_) return layer_norm_function_(x, weight_, bias_, eps_);
        return torch::layer_norm(x, {size_}, weight_, bias_, eps_);
      case Kind::layer_norm_no_affine:
        return torch::layer_norm(x, {size_}, {}, {}, eps_);
      case Kind::rms_norm:
      case Kind::rms_norm_unit_offset: {
        if (function_) return function_(x, weight_, kind_ == Kind::rms_norm_unit_offset, eps_);
        // litgpt RMSNorm: statistics and scaling in fp32, result cast back.
        // Python's numbers as Python passes them (python_numbers.hpp): `+ eps`, `1 + weight`.
        auto xf = x.to(torch::kFloat);
        auto mean_square = (xf * xf).mean(-1, /*keepdim=*/true);
        auto normed = xf * torch::rsqrt(mean_square + python_number(eps_));
        auto w = kind_ == Kind::rms_norm_unit_offset ? weight_.add(python_number(int64_t{1})) : weight_;
        return (normed * w.to(torch::kFloat)).to(x.scalar_type());
      }
    }
    TORCH_INTERNAL_ASSERT(false, "unreachable");
  }

  // Whether forward_after_add(a, x) runs as one fused function: one is set for this kind, and a
  // and x agree in shape, dtype and device.
  bool fuses_add(const torch::Tensor& a, const torch::Tensor& x) const {
    if (a.sizes() != x.sizes() || a.scalar_type() != x.scalar_type() || a.device() != x.device()) return false;
    switch (kind_) {
      case Kind::rms_norm:
      case Kind::rms_norm_unit_offset:
        return static_cast<bool>(add_norm_function_);
      case Kind::layer_norm:
      case Kind::layer_norm_no_affine:
        return static_cast<bool>(add_layer_norm_function_);
      case Kind::identity:
        return false;
    }
    return false;
  }

  // x_new = a + x and this norm of it (GPTImpl::AddNormFunction, AddLayerNormFunction): through
  // the kind's add-norm function where fuses_add; else litgpt's `a + x` and forward, operator
  // for operator.
  std::pair<torch::Tensor, torch::Tensor> forward_after_add(const torch::Tensor& a, const torch::Tensor& x) {
    if (fuses_add(a, x)) {
      RECORD_USER_SCOPE(account::ranges::kNorm);
      if (kind_ == Kind::layer_norm || kind_ == Kind::layer_norm_no_affine)
        return add_layer_norm_function_(a, x, weight_, bias_, eps_);  // undefined without parameters
      return add_norm_function_(a, x, weight_, kind_ == Kind::rms_norm_unit_offset, eps_);
    }
    auto sum = a + x;
    auto normed = forward(sum);
    return {std::move(sum), std::move(normed)};
  }

  // The block before computed this norm of `input` with the add that made it (forward_after_add):
  // the next forward returns `output` if it is called on `input` itself, else computes as usual;
  // either way the pair is dropped then, so it never outlives one forward.
  void hand_over(torch::Tensor input, torch::Tensor output) {
    handed_input_ = std::move(input);
    handed_output_ = std::move(output);
  }

  // Used by the RMSNorm kinds only.
  void set_function(GPTImpl::NormFunction function) { function_ = std::move(function); }
  // Used by the RMSNorm kinds only, in forward_after_add.
  void set_add_norm_function(GPTImpl::AddNormFunction function) { add_norm_function_ = std::move(function); }
  // Used by Kind::layer_norm only (weight and bias).
  void set_layer_norm_function(GPTImpl::LayerNormFunction function) { layer_norm_function_ = std::move(function); }
  // Used by both LayerNorm kinds, in forward_after_add.
  void set_add_layer_norm_function(GPTImpl::AddLayerNormFunction function) {
    add_layer_norm_function_ = std::move(function);
  }

 private:
  Kind kind_;
  int64_t size_;
  double eps_;
  torch::Tensor weight_, bias_;
  GPTImpl::NormFunction function_;  // empty: litgpt's op composition
  GPTImpl::AddNormFunction add_norm_function_;  // empty: `a + x`, then forward
  GPTImpl::LayerNormFunction layer_norm_function_;  // empty: torch::layer_norm
  GPTImpl::AddLayerNormFunction add_layer_norm_function_;  // empty: `a + x`, then forward
  torch::Tensor handed_input_, handed_output_;  // hand_over's pair; undefined when none
};

// Causal self-attention with fused [Q | K | V] projection (litgpt HEAD layout), GQA/MQA by
// repeating K and V to n_head, q/k norms, partial rotary, sliding windows and soft-capping.
// Operator for operator litgpt's CausalSelfAttention in training (docs/eager-parity.md),
// Python's indexing included (x[..., :n] through at::indexing, which skips a full slice as
// Python's does).
class Attention : public torch::nn::Module {
 public:
  Attention(const Config& c, int64_t layer, const torch::TensorOptions& options)
      : n_head_(c.n_head), n_groups_(c.groups()), head_size_(c.hs()), rope_n_elem_(c.rope_n_elem),
        olmo2_qk_norm_(c.norm_qk && c.norm_qk_type == "olmo2"),
        default_qk_norm_(c.norm_qk && c.norm_qk_type != "olmo2"),
        sliding_(c.sliding_window_size.has_value() && layer < (int64_t)c.sliding_window_indices.size() &&
                 c.sliding_window_indices[layer] == 1),
        window_(c.sliding_window_size.value_or(0)),
        scale_(1.0 / std::sqrt(c.attention_scores_scalar.value_or(static_cast<double>(c.hs())))),
        softcap_(c.attention_logit_softcapping) {
    const int64_t C = c.n_embd;
    qkv_ = register_module(module_key::qkv, std::make_shared<Linear>(
                                      C, (n_head_ + 2 * n_groups_) * head_size_, c.bias || c.attn_bias, options));
    proj_ = register_module(module_key::proj, std::make_shared<Linear>(n_head_ * head_size_, C, c.bias, options));
    if (c.norm_qk) {
      norm_q_ = register_module(module_key::norm_q, std::make_shared<Norm>(c, olmo2_qk_norm_ ? n_head_ * head_size_ : head_size_, options));
      norm_k_ = register_module(module_key::norm_k, std::make_shared<Norm>(c, olmo2_qk_norm_ ? n_groups_ * head_size_ : head_size_, options));
    }
  }

  // x: (B, T, C); cos, sin: (1, T, rope_n_elem) -> (B, T, C)
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
    using namespace torch::indexing;
    const int64_t B = x.size(0), T = x.size(1);
    auto parts = qkv_->forward(x).split_with_sizes(
        {n_head_ * head_size_, n_groups_ * head_size_, n_groups_ * head_size_}, -1);
    auto q = parts[0], k = parts[1], v = parts[2];  // (B, T, nh·hs), (B, T, ng·hs) ×2
    if (olmo2_qk_norm_) {  // over the full q / k width, before the head split
      q = norm_q_->forward(q);
      k = norm_k_->forward(k);
    }
    q = q.view({B, T, n_head_, head_size_});    // (B, T, nh, hs)
    k = k.view({B, T, n_groups_, head_size_});  // (B, T, ng, hs)
    v = v.view({B, T, n_groups_, head_size_});
    q = q.transpose(1, 2);  // (B, nh, T, hs)
    k = k.transpose(1, 2);  // (B, ng, T, hs)
    v = v.transpose(1, 2);
    if (default_qk_norm_) {  // per head, weights shared across heads
      q = norm_q_->forward(q);
      k = norm_k_->forward(k);
    }
    // Rotate the first rope_n_elem channels, pass the rest through.
    if (rope_function_) {
      q = rope_function_(q, cos, sin);
      k = rope_function_(k, cos, sin);
    } else {
      auto q_roped = apply_rope(q.index({Ellipsis, Slice(None, rope_n_elem_)}), cos, sin);
      auto k_roped = apply_rope(k.index({Ellipsis, Slice(None, rope_n_elem_)}), cos, sin);
      q = torch::cat({q_roped, q.index({Ellipsis, Slice(rope_n_elem_, None)})}, -1);
      k = torch::cat({k_roped, k.index({Ellipsis, Slice(rope_n_elem_, None)})}, -1);
    }
    if (n_groups_ != n_head_) {  // query head j uses kv group j / (nh / ng)
      k = k.repeat_interleave(n_head_ / n_groups_, 1);  // (B, nh, T, hs)
      v = v.repeat_interleave(n_head_ / n_groups_, 1);
    }
    torch::Tensor mask;  // undefined: causal
    if (sliding_) mask = litgpt_operators_ ? sliding_window_mask(q, T) : short_window_mask(q, T);
    auto y = attend(q, k, v, mask);  // (B, T, nh, hs)
    y = y.reshape({B, T, n_head_ * head_size_});
    return proj_->forward(y);
  }

 public:
  // GPTImpl::Operators (gpt.hpp): false, the fused executor's fewer operators for the same math.
  void set_litgpt_operators(bool on) { litgpt_operators_ = on; }
  void set_rope_function(GPTImpl::RopeFunction function) { rope_function_ = std::move(function); }

 private:
  // The fused executor's mask of a sliding-window layer, the same attention as litgpt's in
  // fewer operators: none (plain causal attention, so SDPA's flash and efficient kernels stay
  // usable) when the window covers all T positions, else an additive (T, T) mask, 0 where key j
  // is in query i's window (i - window < j <= i) and -inf elsewhere, from two aranges.
  torch::Tensor short_window_mask(const torch::Tensor& q, int64_t T) const {
    if (window_ >= T) return {};
    auto i = torch::arange(T, q.options().dtype(torch::kLong)).unsqueeze(1);  // (T, 1) query
    auto j = torch::arange(T, q.options().dtype(torch::kLong)).unsqueeze(0);  // (1, T) key
    auto inside = (j <= i).bitwise_and(j > i - window_);                       // (T, T)
    return torch::zeros({T, T}, q.options()).masked_fill(inside.logical_not(), -std::numeric_limits<double>::infinity());
  }

  // litgpt's mask of a sliding-window layer in training, whatever T against the window: an
  // additive (1, 1, T, T) float mask, 0 inside each query's window and -inf elsewhere, written
  // row by row. litgpt first builds the causal mask it then replaces; it is built here too,
  // as the reference spends it.
  torch::Tensor sliding_window_mask(const torch::Tensor& q, int64_t T) const {
    using namespace torch::indexing;
    const double inf = std::numeric_limits<double>::infinity();
    const auto options = python_factory_options(q);
    auto causal = torch::ones({T, T}, options).triu(1);
    causal.masked_fill_(causal.to(torch::kBool), -inf);
    causal = causal.view({1, 1, T, T});
    auto window = torch::full({T, T}, -inf, options);
    for (int64_t i = 0; i < T; ++i) {
      const int64_t start = std::max<int64_t>(0, i - window_ + 1);
      window.index_put_({i, Slice(start, i + 1)}, python_setitem_value(0.0, window));
    }
    return window.view({1, 1, T, T});
  }

  // q, k, v: (B, nh, T, hs); mask: (1, 1, T, T) additive, or undefined -> (B, T, nh, hs)
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       torch::Tensor mask) {
    // Named for the time account: the explicit path's mask and softmax are attention's.
    RECORD_USER_SCOPE(account::ranges::kAttention);
    if (softcap_) {
      // tanh soft-capping of the scores cannot go through SDPA: explicit math, as litgpt.
      if (kernel_.empty()) kernel_ = "explicit (soft-capping)";
      auto scores = torch::matmul(q, k.mT()) * python_number(scale_);  // (B, nh, T, T)
      scores = torch::tanh(scores / python_number(*softcap_)) * python_number(*softcap_);
      if (!mask.defined()) {
        const int64_t T = q.size(2);
        mask = torch::ones({T, T}, python_factory_options(q)).triu(1);
        mask.masked_fill_(mask.to(torch::kBool), lowest(q.scalar_type()));
      }
      scores = scores + mask;
      scores = torch::softmax(scores, -1, torch::kFloat).to(q.scalar_type());
      return torch::matmul(scores, v).transpose(1, 2);
    }
    const bool causal = !mask.defined();
    const std::optional<torch::Tensor> attn_mask = causal ? std::nullopt : std::optional<torch::Tensor>(mask);
    // The dispatcher's own choice for this call (what scaled_dot_product_attention asks it),
    // once per layer: the record names the kernel that ran, whatever priority was set.
    if (kernel_.empty())
      kernel_ = sdp_backend_name(at::_fused_sdp_choice(q, k, v, attn_mask, 0.0, causal, scale_));
    return torch::scaled_dot_product_attention(q, k, v, attn_mask, 0.0, causal, scale_).transpose(1, 2);
  }

 public:
  // The attention kernel of this layer's first forward ("" before it): one of PyTorch's SDPA
  // backends by its SDPBackend name, or "explicit (soft-capping)".
  const std::string& kernel() const { return kernel_; }

 private:
  static std::string sdp_backend_name(int64_t backend) {
    switch (static_cast<at::SDPBackend>(backend)) {
      case at::SDPBackend::math: return "math";
      case at::SDPBackend::flash_attention: return "flash_attention";
      case at::SDPBackend::efficient_attention: return "efficient_attention";
      case at::SDPBackend::cudnn_attention: return "cudnn_attention";
      case at::SDPBackend::overrideable: return "overrideable";
      default: return "none";  // SDPBackend::error: no kernel can run this call
    }
  }

  std::string kernel_;

  // torch.finfo(dtype).min, litgpt's causal fill value on the soft-capping path.
  static double lowest(torch::ScalarType dtype) {
    double value = 0;
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "lowest", [&] {
      value = static_cast<double>(std::numeric_limits<scalar_t>::lowest());
    });
    return value;
  }

  int64_t n_head_, n_groups_, head_size_, rope_n_elem_;
  bool olmo2_qk_norm_, default_qk_norm_, sliding_;
  int64_t window_;  // sliding_window_size
  bool litgpt_operators_ = true;
  GPTImpl::RopeFunction rope_function_;  // empty: litgpt's operators
  double scale_;
  std::optional<double> softcap_;
  std::shared_ptr<Linear> qkv_, proj_;
  std::shared_ptr<Norm> norm_q_, norm_k_;
};

// GptNeoxMLP (fc, proj; gelu), LLaMAMLP (fc_1, fc_2, proj; silu gate), GemmaMLP (gelu gate).
class MLP : public torch::nn::Module {
 public:
  MLP(const Config& c, const std::string& kind, int64_t hidden, const torch::TensorOptions& options)
      : neox_(kind == "GptNeoxMLP"), gemma_(kind == "GemmaMLP"), approximate_(c.gelu_approximate),
        activation_(!gemma_ ? GateActivation::silu
                            : approximate_ == "tanh" ? GateActivation::gelu_tanh : GateActivation::gelu) {
    const int64_t C = c.n_embd;
    if (neox_) {
      fc_ = register_module(module_key::fc, std::make_shared<Linear>(C, hidden, c.bias, options));
    } else {
      fc_ = register_module(module_key::fc_1, std::make_shared<Linear>(C, hidden, c.bias, options));
      up_ = register_module(module_key::fc_2, std::make_shared<Linear>(C, hidden, c.bias, options));
    }
    proj_ = register_module(module_key::proj, std::make_shared<Linear>(hidden, C, c.bias, options));
  }

  // x: (..., C) -> (..., C); output_value_needed false: the output projection's graph only.
  torch::Tensor forward(const torch::Tensor& x, bool output_value_needed = true) {
    if (neox_) return proj_->forward(torch::gelu(fc_->forward(x), approximate_), output_value_needed);
    auto gate = fc_->forward(x);
    auto up = up_->forward(x);
    if (gate_function_) return proj_->forward(gate_function_(gate, up, activation_), output_value_needed);
    auto hidden = gemma_ ? torch::gelu(gate, approximate_) : torch::silu(gate);
    return proj_->forward(hidden * up, output_value_needed);
  }

  // Used by the gated kinds only.
  void set_gate_function(GPTImpl::GateFunction function) { gate_function_ = std::move(function); }

 private:
  bool neox_, gemma_;
  std::string approximate_;
  GateActivation activation_;            // of the gated kinds
  GPTImpl::GateFunction gate_function_;  // empty: ATen's activation and mul
  std::shared_ptr<Linear> fc_, up_, proj_;
};

// LLaMAMoE: a router picks top-k experts per token; their outputs are weighted by a softmax
// over the k router logits (fp32, cast back). Operator for operator litgpt's (docs/eager-parity.md):
// a (N, k, E) one-hot of the choices, and per expert a torch.where over it (a host sync each on
// a GPU), a gather of its tokens and an index_put_ of their weighted outputs. Experts without
// tokens still run on an empty batch, so every parameter gets a (zero) gradient, which keeps
// DDP's bucket layout static.
class MoE : public torch::nn::Module {
 public:
  MoE(const Config& c, const torch::TensorOptions& options)
      : n_expert_(c.n_expert), top_k_(c.n_expert_per_token) {
    TORCH_CHECK(n_expert_ > 0 && top_k_ > 0 && top_k_ <= n_expert_, "LLaMAMoE needs 0 < n_expert_per_token (",
                top_k_, ") <= n_expert (", n_expert_, ")");
    gate_ = register_module(module_key::gate, std::make_shared<Linear>(c.n_embd, n_expert_, false, options));
    experts_ = register_module(module_key::experts, torch::nn::ModuleList());
    for (int64_t e = 0; e < n_expert_; ++e) {
      auto expert = std::make_shared<MLP>(c, "LLaMAMLP", c.expert_hidden(), options);
      experts_->push_back(expert);
      expert_ptrs_.push_back(expert);
    }
  }

  // GPTImpl::Operators (gpt.hpp): false, the fused executor's grouping by one sort.
  void set_litgpt_operators(bool on) { litgpt_operators_ = on; }

  // x: (B, T, C) -> (B, T, C)
  torch::Tensor forward(const torch::Tensor& input) {
    if (!litgpt_operators_) return forward_sorted(input);
    using namespace torch::indexing;
    const int64_t B = input.size(0), T = input.size(1), C = input.size(2);
    auto residual = input.clone();  // litgpt keeps it for shared experts, which no catalog model has
    (void)residual;
    auto x = input.view({-1, C});                                        // (N, C)
    auto [probs, indices] = torch::topk(gate_->forward(x), top_k_);      // (N, k) ×2
    probs = probs.softmax(1, torch::kFloat).to(x.scalar_type());
    auto chosen = indices.unsqueeze(-1);                                 // Python's left operand first
    auto masks = chosen == torch::arange(n_expert_, torch::TensorOptions().device(x.device()).pinned_memory(false));
    masks = masks.permute({2, 0, 1});                                    // (E, N, k)
    auto y = torch::zeros_like(x, torch::TensorOptions().pinned_memory(false));  // (N, C)
    auto per_expert = masks.unbind(0);  // Python's iteration over a tensor
    for (int64_t e = 0; e < n_expert_; ++e) {
      auto where = torch::where(per_expert[static_cast<std::size_t>(e)]);
      const auto& token_idx = where[0];
      const auto& expert_idx = where[1];
      // y[token_idx] += probs[token_idx, expert_idx, None] * expert(x[token_idx]), in Python's
      // order: the target's read, the right side left to right, the in-place add, the store.
      auto target = y.index({token_idx});
      auto weight = probs.index({token_idx, expert_idx, None});
      auto out = expert_ptrs_[static_cast<std::size_t>(e)]->forward(x.index({token_idx}));
      target += weight * out;
      y.index_put_({token_idx}, target);
    }
    return y.view({B, T, C});
  }

 private:
  // The same routing and sums in fewer operators and one host sync (the counts) instead of one
  // per expert: the (token, choice) slots grouped by expert with one stable sort, so each
  // expert's tokens stay in ascending order and the experts add in litgpt's order (expert 0
  // first); an expert without tokens still runs on an empty batch, as in litgpt.
  torch::Tensor forward_sorted(const torch::Tensor& input) {
    const int64_t C = input.size(-1);
    auto flat = input.reshape({-1, C});                                   // (N, C)
    auto [logits, chosen] = torch::topk(gate_->forward(flat), top_k_);   // (N, k) ×2
    auto probs = logits.softmax(1, torch::kFloat).to(flat.scalar_type());
    auto expert_of_slot = chosen.reshape({-1});                          // (N·k)
    auto order = torch::argsort(expert_of_slot, /*stable=*/true);       // slots grouped by expert
    auto token_of = torch::div(order, top_k_, "floor");                  // (N·k)
    auto weight_of = probs.reshape({-1}).index_select(0, order);         // (N·k)
    auto counts = torch::bincount(expert_of_slot, {}, n_expert_).to(torch::kCPU);
    const int64_t* count = counts.data_ptr<int64_t>();
    auto y = torch::zeros_like(flat);
    int64_t start = 0;
    for (int64_t e = 0; e < n_expert_; ++e) {
      auto tokens = token_of.slice(0, start, start + count[e]);          // (n_e,)
      auto p = weight_of.slice(0, start, start + count[e]).unsqueeze(1); // (n_e, 1)
      y.index_add_(0, tokens, p * expert_ptrs_[static_cast<std::size_t>(e)]->forward(flat.index_select(0, tokens)));
      start += count[e];
    }
    return y.view(input.sizes());
  }

  bool litgpt_operators_ = true;
  int64_t n_expert_, top_k_;
  std::shared_ptr<Linear> gate_;
  torch::nn::ModuleList experts_;
  std::vector<std::shared_ptr<MLP>> expert_ptrs_;
};

// One transformer block (litgpt Block): parallel or sequential residual, shared attention
// norm, optional post-attention / post-MLP norms (identity modules when absent).
class Block : public torch::nn::Module {
 public:
  Block(const Config& c, int64_t layer, const torch::TensorOptions& options)
      : parallel_(c.parallel_residual),
        shared_norm_(c.shared_attention_norm),
        skippable_tail_(recompute_skips_mlp_projection(c)) {
    TORCH_CHECK(c.parallel_residual || !c.shared_attention_norm,
                "shared_attention_norm requires parallel_residual (as in litgpt)");
    norm_1_ = register_module(module_key::norm_1, std::make_shared<Norm>(c, c.n_embd, options, c.norm_1));
    attn_ = register_module(module_key::attn, std::make_shared<Attention>(c, layer, options));
    post_attention_norm_ = register_module(
        module_key::post_attention_norm, std::make_shared<Norm>(c, c.n_embd, options, c.post_attention_norm));
    // litgpt: norm_2 is Identity when disabled, absent (None) when the attention norm is shared.
    if (!c.norm_2 || !c.shared_attention_norm)
      norm_2_ = register_module(module_key::norm_2, std::make_shared<Norm>(c, c.n_embd, options, c.norm_2));
    if (c.mlp_class_name == "LLaMAMoE") {
      moe_ = register_module(module_key::mlp, std::make_shared<MoE>(c, options));
    } else {
      TORCH_CHECK(c.mlp_class_name == "GptNeoxMLP" || c.mlp_class_name == "LLaMAMLP" ||
                      c.mlp_class_name == "GemmaMLP",
                  "unknown mlp_class_name '", c.mlp_class_name, "'");
      mlp_ = register_module(module_key::mlp, std::make_shared<MLP>(c, c.mlp_class_name, c.mlp_hidden(), options));
    }
    post_mlp_norm_ =
        register_module(module_key::post_mlp_norm, std::make_shared<Norm>(c, c.n_embd, options, c.post_mlp_norm));
  }

  const Attention& attention() const { return *attn_; }
  Norm& first_norm() const { return *norm_1_; }

  // x: (B, T, C) -> (B, T, C). tail_value_needed false (a checkpoint's recomputation): the
  // output's value is not read, so a block ending `mlp.proj(h) + x` builds the projection's
  // graph without its GEMM; a post-MLP norm or an MoE's weighting reads it, so there it runs.
  // next_norm: the norm that reads the output (the next block's norm_1, or ln_f), or null; where
  // it fuses the closing add (Norm::fuses_add), it computes the add and itself here and is
  // handed its output; else the closing add is litgpt's.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& cos, const torch::Tensor& sin,
                        bool tail_value_needed = true, Norm* next_norm = nullptr) {
    auto x_normed = norm_1_->forward(x);
    auto a = post_attention_norm_->forward(attn_->forward(x_normed, cos, sin));
    if (parallel_) {
      if (!shared_norm_) x_normed = norm_2_->forward(x);
      x = a + x;
    } else {
      std::tie(x, x_normed) = norm_2_->forward_after_add(a, x);  // x = a + x; x_normed = norm_2(x)
    }
    auto m = moe_ ? moe_->forward(x_normed) : mlp_->forward(x_normed, tail_value_needed || !skippable_tail_);
    auto branch = post_mlp_norm_->forward(m);
    if (next_norm != nullptr && next_norm->fuses_add(branch, x)) {
      auto [sum, normed] = next_norm->forward_after_add(branch, x);
      next_norm->hand_over(sum, std::move(normed));
      return sum;
    }
    return branch + x;
  }

 private:
  bool parallel_, shared_norm_;
  bool skippable_tail_;  // nothing after the MLP's projection reads its output
  std::shared_ptr<Norm> norm_1_, post_attention_norm_, norm_2_, post_mlp_norm_;
  std::shared_ptr<Attention> attn_;
  std::shared_ptr<MLP> mlp_;
  std::shared_ptr<MoE> moe_;
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

struct GPTImpl::State {
  Config config;
  std::shared_ptr<Linear> lm_head;
  std::shared_ptr<Embedding> wte;
  std::vector<std::shared_ptr<Block>> blocks;
  std::shared_ptr<Norm> ln_f;
  torch::Tensor cos, sin;  // (block_size, rope_n_elem[, 2]) buffers, model dtype
  std::shared_ptr<GPTImpl::ForwardHooks> hooks;  // null: forward runs straight through
  bool deferred = false;  // built with ParameterStorage::deferred
  bool checkpoint_blocks = false;  // activation checkpointing per block
};

GPTImpl::GPTImpl(const Config& config, const torch::TensorOptions& options, ParameterStorage storage)
    : state_(std::make_shared<State>()) {
  const DeferStorage defer(storage == ParameterStorage::deferred);
  auto& s = *state_;
  s.config = config;
  s.deferred = storage == ParameterStorage::deferred;
  const Config& c = s.config;
  TORCH_CHECK(c.padded_vocab_size && c.head_size && c.n_query_groups && c.intermediate_size,
              "GPT needs a finalized Config (call Config::finalize())");
  // Registration order = litgpt's module order, so parameters() iterates like litgpt's.
  s.lm_head = register_module(module_key::lm_head, std::make_shared<Linear>(c.n_embd, c.vocab(), c.lm_head_bias, options));
  auto transformer = register_module(module_key::transformer, std::make_shared<torch::nn::Module>());
  s.wte = transformer->register_module(module_key::wte, std::make_shared<Embedding>(c.vocab(), c.n_embd, options));
  auto h = transformer->register_module(module_key::h, torch::nn::ModuleList());
  s.blocks.reserve(c.n_layer);
  for (int64_t i = 0; i < c.n_layer; ++i) {
    auto block = std::make_shared<Block>(c, i, options);
    h->push_back(block);
    s.blocks.push_back(block);
  }
  s.ln_f = transformer->register_module(module_key::ln_f, std::make_shared<Norm>(c, c.n_embd, options));
  // Non-persistent in litgpt; buffers here so module.to(device/dtype) moves and casts them.
  auto rope = build_rope_cache(c, c.block_size, options.device());
  s.cos = register_buffer("cos", rope.cos.to(options.dtype()));
  s.sin = register_buffer("sin", rope.sin.to(options.dtype()));
}

torch::Tensor GPTImpl::forward(const torch::Tensor& idx) {
  const auto& s = *state_;
  auto logits = s.lm_head->forward(forward_hidden(idx));  // (B, T, V_pad)
  if (s.config.final_logit_softcapping)
    logits = torch::tanh(logits / python_number(*s.config.final_logit_softcapping)) *
             python_number(*s.config.final_logit_softcapping);
  return after_head(std::move(logits));
}

torch::Tensor GPTImpl::forward_hidden(const torch::Tensor& idx) {
  const auto& s = *state_;
  const Config& c = s.config;
  TORCH_CHECK(idx.dim() == 2, "GPT expects token ids of shape (B, T), got ", idx.sizes());
  const int64_t T = idx.size(1);
  TORCH_CHECK(T <= c.block_size, "cannot forward a sequence of length ", T, ": block_size is ", c.block_size);
  // litgpt's self.cos[:T].unsqueeze(0), its slice through Python's indexing.
  using namespace torch::indexing;
  auto cos = s.cos.index({Slice(None, T)}).unsqueeze(0);  // (1, T, n[, 2])
  auto sin = s.sin.index({Slice(None, T)}).unsqueeze(0);

  ForwardHooks* hooks = s.hooks.get();
  if (hooks) hooks->before_root();
  auto x = s.wte->forward(idx);  // (B, T, C)
  if (c.scale_embeddings)        // torch.tensor(n_embd ** 0.5, dtype=x.dtype): a CPU scalar in x's dtype
    x = x * python_tensor(std::sqrt(static_cast<double>(c.n_embd)), x.scalar_type());
  if (hooks) x = hooks->after_embedding(std::move(x));
  for (int64_t layer = 0; layer < c.n_layer; ++layer) {
    if (hooks) hooks->before_block(layer);
    // Gemma-3: per-layer global (0) or local (1) rope base.
    const int64_t which = c.rope_indices.empty() ? -1 : c.rope_indices[layer];
    // The norm that reads this block's output may fuse its closing add (Block::forward); not
    // under hooks (FSDP gathers the next block's parameters in before_block; unit timings
    // attribute its norm to it) nor checkpointing (a recomputation would hand over again).
    Norm* next_norm = hooks != nullptr || s.checkpoint_blocks ? nullptr
                      : layer + 1 < c.n_layer                  ? &s.blocks[layer + 1]->first_norm()
                                                               : s.ln_f.get();
    BlockForward run = [block = s.blocks[layer], cos = which < 0 ? cos : cos.index({Ellipsis, which}),
                        sin = which < 0 ? sin : sin.index({Ellipsis, which}),
                        next_norm](const torch::Tensor& input, bool tail_value_needed) {
      return block->forward(input, cos, sin, tail_value_needed, next_norm);
    };
    x = s.checkpoint_blocks ? checkpoint_block(x, std::move(run)) : run(x, /*tail_value_needed=*/true);
    if (hooks) x = hooks->after_block(layer, std::move(x));
  }
  return s.ln_f->forward(x);  // (B, T, C)
}

torch::Tensor GPTImpl::after_head(torch::Tensor head_output) {
  const auto& s = *state_;
  return s.hooks ? s.hooks->after_root(std::move(head_output)) : head_output;
}

void GPTImpl::visit_initial_values(uint64_t seed, const InitVisitor& visit) const {
  constexpr int64_t kInitChunk = int64_t{1} << 24;  // 64 MB of fp32 on the host at a time
  // Values are drawn on the CPU in a fixed order so every device gets the same weights.
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  torch::NoGradGuard no_grad;
  std::size_t index = 0;
  for (const auto& item : named_parameters()) {
    const auto& p = item.value();
    const bool bias = ends_with(item.key(), module_key::bias);
    for (int64_t start = 0; start < p.numel(); start += kInitChunk) {
      const int64_t n = std::min(kInitChunk, p.numel() - start);
      torch::Tensor values;
      if (bias) {
        values = torch::zeros({n}, torch::kFloat);
      } else if (p.dim() == 1) {  // norm weights: ones, as litgpt (Gemma's 1 + w then scales by 2)
        values = torch::ones({n}, torch::kFloat);
      } else {  // Linear and Embedding weights
        values = torch::empty({n}, torch::kFloat).normal_(0.0, 0.02, generator);
      }
      visit(index, start, values);
    }
    ++index;
  }
}

void GPTImpl::reset_parameters(uint64_t seed) {
  auto params = parameters();
  if (params.empty() || params.front().device().is_meta()) return;
  TORCH_CHECK(!state_->deferred, "reset_parameters: this model's parameters are deferred (no storage); "
              "a wrapper fills them from visit_initial_values");
  torch::NoGradGuard no_grad;
  visit_initial_values(seed, [&](std::size_t index, int64_t offset, const torch::Tensor& values) {
    params[index].view({-1}).slice(0, offset, offset + values.numel()).copy_(values);
  });
}

bool GPTImpl::parameters_deferred() const { return state_->deferred; }

const Config& GPTImpl::config() const { return state_->config; }

std::vector<std::shared_ptr<torch::nn::Module>> GPTImpl::blocks() const {
  return {state_->blocks.begin(), state_->blocks.end()};
}

std::string GPTImpl::attention_kernels() const {
  std::vector<std::string> names;
  for (const auto& block : state_->blocks) {
    const std::string& name = block->attention().kernel();
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

std::vector<std::shared_ptr<torch::nn::Module>> GPTImpl::root_modules() const {
  return {state_->wte, state_->ln_f, state_->lm_head};
}

void GPTImpl::set_linear_function(LinearFunction function, LinearFunction graph_only) {
  for (const auto& module : modules(/*include_self=*/false))
    if (auto* linear = dynamic_cast<Linear*>(module.get())) linear->set_function(function, graph_only);
}

void GPTImpl::set_activation_checkpointing(bool on) { state_->checkpoint_blocks = on; }
bool GPTImpl::activation_checkpointing() const { return state_->checkpoint_blocks; }

void GPTImpl::set_norm_function(NormFunction function) {
  for (const auto& module : modules(/*include_self=*/false))
    if (auto* norm = dynamic_cast<Norm*>(module.get())) norm->set_function(function);
}

void GPTImpl::set_add_norm_function(AddNormFunction function) {
  for (const auto& module : modules(/*include_self=*/false))
    if (auto* norm = dynamic_cast<Norm*>(module.get())) norm->set_add_norm_function(function);
}

void GPTImpl::set_add_layer_norm_function(AddLayerNormFunction function) {
  for (const auto& module : modules(/*include_self=*/false))
    if (auto* norm = dynamic_cast<Norm*>(module.get())) norm->set_add_layer_norm_function(function);
}

void GPTImpl::set_layer_norm_function(LayerNormFunction function) {
  for (const auto& module : modules(/*include_self=*/false))
    if (auto* norm = dynamic_cast<Norm*>(module.get())) norm->set_layer_norm_function(function);
}

void GPTImpl::set_gate_function(GateFunction function) {
  for (const auto& module : modules(/*include_self=*/false))
    if (auto* mlp = dynamic_cast<MLP*>(module.get())) mlp->set_gate_function(function);
}

void GPTImpl::set_rope_function(RopeFunction function) {
  for (const auto& module : modules(/*include_self=*/false))
    if (auto* attention = dynamic_cast<Attention*>(module.get())) attention->set_rope_function(function);
}

void GPTImpl::set_operators(Operators operators) {
  const bool litgpt = operators == Operators::litgpt;
  for (const auto& module : modules(/*include_self=*/false)) {
    if (auto* attention = dynamic_cast<Attention*>(module.get())) attention->set_litgpt_operators(litgpt);
    if (auto* moe = dynamic_cast<MoE*>(module.get())) moe->set_litgpt_operators(litgpt);
  }
}

void GPTImpl::set_forward_hooks(std::shared_ptr<ForwardHooks> hooks) { state_->hooks = std::move(hooks); }
std::shared_ptr<GPTImpl::ForwardHooks> GPTImpl::forward_hooks() const { return state_->hooks; }

void GPTImpl::load_state(const std::map<std::string, torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  std::set<std::string> used;
  for (auto& item : named_parameters()) {
    auto found = tensors.find(item.key());
    TORCH_CHECK(found != tensors.end(), "load_state: missing parameter '", item.key(), "'");
    TORCH_CHECK(found->second.sizes() == item.value().sizes(), "load_state: '", item.key(), "' has shape ",
                found->second.sizes(), ", the model expects ", item.value().sizes());
    item.value().copy_(found->second);
    used.insert(item.key());
  }
  for (const auto& [name, tensor] : tensors)
    TORCH_CHECK(used.count(name), "load_state: '", name, "' is not a parameter of this model");
}

}  // namespace tokbench::model
