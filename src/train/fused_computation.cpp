// The fused loss computation (loss_computation.hpp): the eager computation's math with every
// linear layer routed through fused_linear (GEMM kernels measured fastest on this machine)
// and the lm_head + loss computed in row chunks (fused_ops.hpp), so the B×T×V logits are
// never materialised; on the CPU each chunk's loss and gradient take one pass per row
// (cross_entropy_rows.hpp), and so does every RMSNorm (rms_norm_rows.hpp). How gradients are combined and the optimizer applied is the
// step's (the single-device step here, DDP or FSDP in src/distributed).
#include <torch/torch.h>

#include <fmt/format.h>

#include <memory>
#include <set>
#include <utility>

#include "train/cross_entropy_rows.hpp"
#include "train/dtype_mode.hpp"
#include "train/fused_ops.hpp"
#include "train/gated_activation.hpp"
#include "train/gemm_kernels.hpp"
#include "train/add_norm_rows.hpp"
#include "train/layer_norm_rows.hpp"
#include "train/loss_computation.hpp"
#include "train/profile_trace.hpp"
#include "train/rms_norm_rows.hpp"
#include "train/rope_rotation.hpp"
#include "train/train_step.hpp"

namespace tokbench::train {
namespace {

// The GEMM shapes of the model's linear layers at `rows` rows, and the lm_head's at the
// chunk's rows: what the calibration measures.
std::vector<GemmShape> linear_shapes(const model::GPT& model, int64_t rows, int64_t head_rows) {
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  std::vector<GemmShape> shapes;
  for (const auto& item : model->named_parameters()) {
    const auto& name = item.key();
    const auto& p = item.value();
    if (p.dim() != 2 || name == "transformer.wte.weight") continue;  // the embedding is a lookup
    const GemmShape shape{name == "lm_head.weight" ? head_rows : rows, p.size(1), p.size(0)};
    if (seen.emplace(shape.rows, shape.in, shape.out).second) shapes.push_back(shape);
  }
  return shapes;
}

// The lm_head's parameters, looked up when used: a step may have re-pointed them since (FSDP
// turns every parameter into a view of its unit's flat buffer, whose storage ZeRO-3 frees
// and refills).
std::pair<torch::Tensor, torch::Tensor> head_parameters(const model::GPT& model) {
  const auto params = model->named_parameters();
  const auto* weight = params.find("lm_head.weight");
  const auto* bias = params.find("lm_head.bias");
  TORCH_CHECK(weight != nullptr, "fused executor: the model has no lm_head.weight");
  return {*weight, bias != nullptr ? *bias : torch::Tensor()};
}

class FusedComputation final : public LossComputation {
 public:
  FusedComputation(model::GPT model, const c10::Device& device, const FusedComputationOptions& options)
      : model_(std::move(model)) {
    TORCH_CHECK(options.dtype != model::TrainPrecision::bf16_mixed,
                "dtype bf16-mixed is not supported by the fused executor; valid: fp32, bf16-true");
    const auto& c = model_->config();
    chunk_.chunk_rows = options.chunk_rows > 0 ? options.chunk_rows : default_chunk_rows(c.vocab());
    chunk_.softcap = c.final_logit_softcapping;
    head_parameters(model_);  // refuses a model without a head now, not at the first step
    on_cpu_ = device.is_cpu();
    const int64_t rows = std::max<int64_t>(1, options.rows_per_micro_batch);
    GemmCalibrationOptions calibration;
    calibration.use_cache = options.use_gemm_cache;
    if (options.only_kernel) {
      choices_ = std::make_shared<GemmChoices>();
      choices_->everywhere = options.only_kernel;
    } else {
      const auto measure = [&] {
        return calibrate_gemm_choices(linear_shapes(model_, rows, std::min(rows, chunk_.chunk_rows)),
                                      param_dtype(options.dtype), device, calibration);
      };
      choices_ = std::make_shared<GemmChoices>(options.share_choice ? options.share_choice(measure) : measure());
    }
    // The lambda holds the choices, so they live as long as the model's layers use them.
    model_->set_linear_function(
        [choices = choices_](const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
          return fused_linear(x, weight, bias, *choices);
        },
        [choices = choices_](const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
          return fused_linear_graph_only(x, weight, bias, *choices);
        });
    // RMSNorm by its row kernel (the CPU's, or CUDA's, cuda/rms_norm_kernels.cu); on the CPU
    // LLaMAMLP's gate stays on ATen (a SwiGLU kernel was slower than silu + mul in the profile
    // of tiny-llama-1.1b on the CPU, docs/PERFORMANCE.md).
    model_->set_norm_function(&rms_norm_rows);
    // On CUDA LayerNorm, the gated MLP's activation and the rotary embedding each run as one
    // kernel per direction (layer_norm_rows.hpp, gated_activation.hpp, rope_rotation.hpp); the
    // CPU keeps ATen's (its layer_norm is one vectorised pass already; the gate as said above).
    if (device.is_cuda()) {
      model_->set_layer_norm_function(&layer_norm_rows);
      // A residual add and the norm that reads it in one kernel each way (add_norm_rows.hpp): a
      // sequential block's norm_2, and a block's closing add with the next norm_1 or ln_f
      // (pythia's, phi-2's and falcon's parallel-residual blocks included).
      model_->set_add_norm_function(&add_rms_norm_rows);
      model_->set_add_layer_norm_function(&add_layer_norm_rows);
      model_->set_gate_function(&gated_activation);
      model_->set_rope_function(&rope_rotation);
    }
    // The same math in fewer operators where litgpt's are slow (sliding windows, MoE routing).
    model_->set_operators(model::GPTImpl::Operators::fast);
  }

  // The model may outlive the computation (and the step holding it).
  ~FusedComputation() override {
    model_->set_linear_function({});
    model_->set_norm_function({});
    model_->set_layer_norm_function({});
    model_->set_add_norm_function({});
    model_->set_add_layer_norm_function({});
    model_->set_gate_function({});
    model_->set_rope_function({});
    model_->set_operators(model::GPTImpl::Operators::litgpt);
  }

  at::Tensor forward_backward(model::GPT& model, const TokenBatch& batch, int64_t grad_accum) override {
    TORCH_INTERNAL_ASSERT(model.get() == model_.get(), "the fused computation runs the model it was built for");
    at::Tensor loss;
    {
      TraceRange range(account::ranges::kForward);  // named for --profile and the time account
      auto hidden = model->forward_hidden(batch.x);  // (B, T, C)
      const auto [head_weight, head_bias] = head_parameters(model);
      {
        // The head's GEMMs inside it are GEMMs; the rest is the loss's.
        TraceRange loss_range(account::ranges::kLoss);
        loss = chunked_linear_cross_entropy(hidden.reshape({-1, hidden.size(-1)}), head_weight, head_bias,
                                            batch.y.reshape({-1}), *choices_, chunk_);
      }
      loss = model->after_head(std::move(loss));  // the root's forward ends with the head
    }
    forward_ended();
    {
      TraceRange range(account::ranges::kBackward);
      (loss / static_cast<double>(grad_accum)).backward();
    }
    return loss.detach();
  }

  std::string kernel_note() const override {
    const std::string gemms = choices_->summary();
    const std::string loss = on_cpu_ ? fmt::format("one-pass {} row kernel", cross_entropy_rows_isa())
                                     : std::string("the CUDA row kernel (fp32/bf16; aten ops otherwise)");
    const std::string norms = on_cpu_ ? fmt::format("; RMSNorm by {} row kernel", rms_norm_rows_isa())
                                      : std::string("; RMSNorm and LayerNorm (with the residual adds they read), the MLP's gated activation and rope by CUDA kernels");
    return fmt::format("GEMMs: {}; lm_head+loss in chunks of {} rows, loss and logit gradient by {}{}",
                       gemms.empty() ? "aten" : gemms, chunk_.chunk_rows, loss, norms);
  }

 private:
  model::GPT model_;  // the model whose linear layers use this computation's kernels
  ChunkedCrossEntropyOptions chunk_;
  std::shared_ptr<GemmChoices> choices_;
  bool on_cpu_ = false;  // the chunked loss runs its row kernel (RMSNorm has one on both devices)
};

}  // namespace

std::shared_ptr<LossComputation> make_fused_computation(model::GPT model, const c10::Device& device,
                                                        const FusedComputationOptions& options) {
  return std::make_shared<FusedComputation>(std::move(model), device, options);
}

std::unique_ptr<TrainStep> make_fused_step(model::GPT model, const c10::Device& device,
                                           const FusedStepOptions& options) {
  EagerStepOptions step;
  step.dtype = options.dtype;
  step.adamw = options.adamw;
  step.zero_grad = options.zero_grad;
  step.computation = make_fused_computation(model, device, options);
  return make_eager_step(std::move(model), device, step);
}

}  // namespace tokbench::train
