// The fused single-device step (train_step.hpp): the eager step's computation with every
// linear layer routed through fused_linear (GEMM kernels measured fastest on this machine)
// and the lm_head + loss computed in row chunks (fused_ops.hpp), so the B×T×V logits are
// never materialised; on the CPU each chunk's loss and gradient take one pass per row
// (cross_entropy_rows.hpp). The optimizer and everything around the forward/backward are the
// eager step's.
#include <torch/torch.h>

#include <fmt/format.h>

#include <memory>
#include <set>
#include <utility>

#include "train/cross_entropy_rows.hpp"
#include "train/dtype_mode.hpp"
#include "train/fused_ops.hpp"
#include "train/gemm_kernels.hpp"
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

class FusedStep final : public TrainStep {
 public:
  FusedStep(model::GPT model, const c10::Device& device, const FusedStepOptions& options)
      : model_(std::move(model)), options_(options),
        optimizer_((model_->to(device, param_dtype(options.dtype)), model_->parameters()), options.adamw, device) {
    TORCH_CHECK(options.dtype != model::TrainPrecision::bf16_mixed,
                "dtype bf16-mixed is not supported by the fused executor; valid: fp32, bf16-true");
    model_->train();
    const auto& c = model_->config();
    chunk_.chunk_rows = options.chunk_rows > 0 ? options.chunk_rows : default_chunk_rows(c.vocab());
    chunk_.softcap = c.final_logit_softcapping;
    for (const auto& item : model_->named_parameters()) {
      if (item.key() == "lm_head.weight") head_weight_ = item.value();
      if (item.key() == "lm_head.bias") head_bias_ = item.value();
    }
    TORCH_CHECK(head_weight_.defined(), "fused step: the model has no lm_head.weight");
    const int64_t rows = std::max<int64_t>(1, options.rows_per_micro_batch);
    GemmCalibrationOptions calibration;
    calibration.use_cache = options.use_gemm_cache;
    if (options.only_kernel) {
      choices_ = std::make_shared<GemmChoices>();
      choices_->everywhere = options.only_kernel;
    } else {
      choices_ = std::make_shared<GemmChoices>(
          calibrate_gemm_choices(linear_shapes(model_, rows, std::min(rows, chunk_.chunk_rows)),
                                 param_dtype(options.dtype), device, calibration));
    }
    // The lambda holds the choices, so they live as long as the model's layers use them.
    model_->set_linear_function(
        [choices = choices_](const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
          return fused_linear(x, weight, bias, *choices);
        });
  }

  ~FusedStep() override { model_->set_linear_function({}); }  // the model may outlive the step

  at::Tensor forward_backward(const TokenBatch& batch, int64_t /*micro*/, int64_t grad_accum) override {
    auto hidden = model_->forward_hidden(batch.x);  // (B, T, C)
    auto loss = chunked_linear_cross_entropy(hidden.reshape({-1, hidden.size(-1)}), head_weight_, head_bias_,
                                             batch.y.reshape({-1}), *choices_, chunk_);
    (loss / static_cast<double>(grad_accum)).backward();
    return loss.detach();
  }

  at::Tensor optimizer_step(const at::Tensor& loss) override {
    optimizer_.step();
    optimizer_.zero_grad(options_.zero_grad);
    return loss;
  }

  int64_t resident_state_bytes() const override { return module_tensor_bytes(*model_) + optimizer_.state_bytes(); }
  int64_t optimizer_state_bytes() const override { return optimizer_.state_bytes(); }
  int64_t optimizer_state_step() const override { return optimizer_.state_step(); }
  int64_t optimizer_steps_taken() const override { return optimizer_.steps_taken(); }
  bool fused_adamw() const override { return optimizer_.fused(); }

  void release_after_failure() override { drop_gradients(*model_); }
  std::vector<at::Tensor> full_parameters() override { return clone_parameters(*model_); }

  std::string kernel_note() const override {
    const std::string gemms = choices_->summary();
    const std::string loss = head_weight_.is_cpu() ? fmt::format("one-pass {} row kernel", cross_entropy_rows_isa())
                                                   : std::string("aten ops");
    return fmt::format("GEMMs: {}; lm_head+loss in chunks of {} rows, loss and logit gradient by {}",
                       gemms.empty() ? "aten" : gemms, chunk_.chunk_rows, loss);
  }

 private:
  model::GPT model_;
  FusedStepOptions options_;
  AdamW optimizer_;
  ChunkedCrossEntropyOptions chunk_;
  torch::Tensor head_weight_, head_bias_;
  std::shared_ptr<GemmChoices> choices_;
};

}  // namespace

std::unique_ptr<TrainStep> make_fused_step(model::GPT model, const c10::Device& device,
                                           const FusedStepOptions& options) {
  return std::make_unique<FusedStep>(std::move(model), device, options);
}

}  // namespace tokbench::train
