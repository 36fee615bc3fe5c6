// gpt_checkpoint.hpp: the block's recompute node and the graph-only linear.
#include "model/gpt_checkpoint.hpp"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <utility>

#include "model/saved_data_keys.hpp"

namespace tokbench::model {

namespace sdk = saved_data_key;  // the keys of ctx->saved_data
namespace {

using torch::autograd::variable_list;

// The autocast state of one device type, captured in forward and put back around the
// recomputation: backward runs outside the forward's autocast region (and, on CUDA, on
// autograd's own thread), yet must recompute with the same casts.
struct AutocastState {
  at::DeviceType device_type = at::kCPU;
  bool enabled = false;
  at::ScalarType dtype = at::kBFloat16;

  static AutocastState of(at::DeviceType type) {
    return {type, at::autocast::is_autocast_enabled(type), at::autocast::get_autocast_dtype(type)};
  }
};

class AutocastScope {
 public:
  explicit AutocastScope(const AutocastState& state) : previous_(AutocastState::of(state.device_type)) {
    at::autocast::set_autocast_enabled(state.device_type, state.enabled);
    at::autocast::set_autocast_dtype(state.device_type, state.dtype);
    if (state.enabled) at::autocast::increment_nesting();
    nested_ = state.enabled;
  }
  ~AutocastScope() {
    if (nested_ && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(previous_.device_type, previous_.enabled);
    at::autocast::set_autocast_dtype(previous_.device_type, previous_.dtype);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  AutocastState previous_;
  bool nested_ = false;
};

// The backward node of a checkpointed block: recompute, then an inner backward.
class CheckpointedBlockBackward final : public torch::autograd::Node {
 public:
  CheckpointedBlockBackward(at::Tensor input, BlockForward run, AutocastState autocast)
      : input_(std::move(input)), run_(std::move(run)), autocast_(autocast) {}

  std::string name() const override { return "CheckpointedBlockBackward"; }

  variable_list apply(variable_list&& grads) override {
    TORCH_CHECK(input_.defined(), "a checkpointed block was back-propagated twice (its input is released after the first)");
    if (!grads[0].defined()) return {at::Tensor()};
    const at::AutoGradMode grad_mode(true);
    const AutocastScope autocast(autocast_);
    at::Tensor x = input_.detach().requires_grad_(true);
    at::Tensor y = run_(x, /*tail_value_needed=*/false);
    // Every leaf reached gets its gradient accumulated (the block's parameters, through their
    // own hooks) and so does x, whose gradient is this node's.
    torch::autograd::backward({y}, {grads[0]});
    at::Tensor grad_input = x.grad();
    release_variables();
    return {grad_input};
  }

  void release_variables() override { input_ = at::Tensor(); }

 private:
  at::Tensor input_;
  BlockForward run_;
  AutocastState autocast_;
};

// The graph-only linear: forward allocates the output and computes nothing; backward is
// at::linear's (addmm's / mm's) gradients.
class LinearGraphOnly : public torch::autograd::Function<LinearGraphOnly> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const std::optional<at::Tensor>& maybe_bias) {
    const auto x2 = x.reshape({-1, x.size(-1)});  // (M, K)
    ctx->save_for_backward({x2, weight});
    ctx->saved_data[sdk::has_bias] = maybe_bias.has_value();
    ctx->saved_data[sdk::x_sizes] = x.sizes().vec();
    auto sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    return at::empty(sizes, x.options());
  }

  static variable_list backward(torch::autograd::AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const auto& x2 = saved[0];
    const auto& weight = saved[1];
    const auto dy = grad_outputs[0].reshape({-1, weight.size(0)});  // (M, N)
    at::Tensor grad_x, grad_w, grad_b;
    // As AddmmBackward / MmBackward compute them for at::linear's mm(x, Wᵀ): Wᵀ is column-major,
    // so its gradient is taken as (dyᵀ·x)ᵀ in that layout, i.e. W's as dyᵀ·x.
    if (ctx->needs_input_grad(0)) grad_x = dy.mm(weight).view(ctx->saved_data[sdk::x_sizes].toIntVector());
    if (ctx->needs_input_grad(1)) grad_w = dy.t().mm(x2);
    if (ctx->saved_data[sdk::has_bias].toBool() && ctx->needs_input_grad(2)) grad_b = dy.sum(0);
    return {grad_x, grad_w, grad_b};
  }
};

}  // namespace

at::Tensor checkpoint_block(const at::Tensor& x, BlockForward run) {
  if (!at::GradMode::is_enabled() || !x.requires_grad()) return run(x, /*tail_value_needed=*/true);
  const AutocastState autocast = AutocastState::of(x.device().type());
  at::Tensor y;
  {
    const at::NoGradGuard no_grad;
    y = run(x, /*tail_value_needed=*/true);
  }
  auto node = std::shared_ptr<CheckpointedBlockBackward>(new CheckpointedBlockBackward(x.detach(), std::move(run), autocast),
                                                         torch::autograd::deleteNode);
  node->set_next_edges(torch::autograd::collect_next_edges(x));
  torch::autograd::create_gradient_edge(y, std::move(node));
  return y;
}

at::Tensor linear_graph_only(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const at::DeviceType type = x.device().type();
  if (at::autocast::is_autocast_enabled(type)) {
    const at::ScalarType dtype = at::autocast::get_autocast_dtype(type);
    const auto cast = [dtype](const at::Tensor& t) { return t.defined() && t.is_floating_point() ? t.to(dtype) : t; };
    const at::Tensor b = cast(bias);
    return LinearGraphOnly::apply(cast(x), cast(weight), b.defined() ? std::optional<at::Tensor>(b) : std::nullopt);
  }
  return LinearGraphOnly::apply(x, weight, bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt);
}

}  // namespace tokbench::model
