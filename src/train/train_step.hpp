// The step interface the timed loop drives (train_loop.hpp). The loop owns the metric
// contract: warm-up, the device synchronisation at every iteration's end, the window, the
// per-iteration records and the run's status. A step owns everything between: forward and
// backward of each micro-batch, how gradients are combined across ranks, which tensors the
// optimizer updates and how. The single-device step (below) is one implementation; DDP and
// FSDP (src/distributed) are others. How each micro-batch's loss and gradients are computed (the
// executor: eager, fused) is a LossComputation (loss_computation.hpp) every step takes.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/gpt.hpp"
#include "model/train_precision.hpp"
#include "parallel/layout.hpp"
#include "train/gemm_kernels.hpp"
#include "train/loss_computation.hpp"
#include "train/memory_breakdown.hpp"
#include "train/optimizer.hpp"
#include "train/token_data.hpp"

namespace tokbench::train {

class TrainStep {
 public:
  virtual ~TrainStep() = default;

  // Forward and backward of micro-batch `micro` (0..grad_accum-1) of one iteration; the
  // gradient is scaled by 1/grad_accum. Returns the undivided loss as a device tensor
  // (detached; the loop reads it after its synchronisation, never inside the step).
  virtual at::Tensor forward_backward(const TokenBatch& batch, int64_t micro, int64_t grad_accum) = 0;

  // Ends the iteration: combines gradients (across ranks where there are several), updates
  // the parameters, and releases or zeroes the gradients. `loss` is the last micro-batch's
  // loss; the returned tensor is the loss to report (a distributed step averages it over
  // the ranks, so it equals the loss of one process training the global batch).
  virtual at::Tensor optimizer_step(const at::Tensor& loss) = 0;

  // Seconds of this iteration that the host spent waiting for collectives that were not
  // hidden behind computation (exposed communication); 0 for a single device. Reset by the
  // call.
  virtual double take_exposed_comm_seconds() { return 0; }

  // Bytes this rank holds between iterations for parameters (its shard where sharded),
  // kept gradients and optimizer state: the baseline of the memory counter and what the
  // sharding proofs compare.
  virtual int64_t resident_state_bytes() const = 0;
  virtual int64_t optimizer_state_bytes() const = 0;

  // The optimizer's step count held in its state (a device read) and counted on the host.
  virtual int64_t optimizer_state_step() const = 0;
  virtual int64_t optimizer_steps_taken() const = 0;
  virtual bool fused_adamw() const = 0;

  // After an out-of-memory error: drop gradients and anything else a retry would not need.
  virtual void release_after_failure() = 0;

  // Copies of the whole model's parameters in module order (FSDP's full state dict: a
  // collective where parameters are sharded, so every rank must call it).
  virtual std::vector<at::Tensor> full_parameters() = 0;

  // Which compute kernels the step's computation chose, for the report ("" when it chose
  // none: the eager computation uses LibTorch's defaults).
  virtual std::string kernel_note() const { return {}; }

  // The step's parts of the memory breakdown (memory_breakdown.hpp): parameters, gradients,
  // optimizer state, communication buffers. The loop measures activations and the reserve.
  virtual MemoryBreakdown memory_parts() const = 0;

  // Hands the loop's forward-end callback to the step's computation (LossComputation).
  virtual void set_forward_end_callback(std::function<void()> callback) = 0;

  // The layout of the step's DDP buckets or FSDP units (parallel/layout.hpp), as it built its
  // flat buffers from it: what the run records it sent. Null where nothing is communicated.
  virtual const parallel::Layout* comm_layout() const { return nullptr; }

  // The model the step trains (the per-unit timing pass hooks into its forward,
  // unit_timing_pass.hpp). Where the step shards it, its parameters keep their full shapes.
  virtual model::GPT model() const = 0;

  // The step that runs each operator as it is called: this one, or the step a CUDA graph
  // replays (cuda_graph_step.hpp). The passes after the window (unit timings, time account,
  // profile) use it: their hooks and ranges run only when the operators do.
  virtual TrainStep& eager() { return *this; }

  // Why a capture the run asked for was abandoned ("" when none was, or none was asked for).
  virtual std::string graph_fallback() const { return {}; }
};

struct EagerStepOptions {
  model::TrainPrecision dtype = model::TrainPrecision::fp32;
  AdamWOptions adamw;
  ZeroGrad zero_grad = ZeroGrad::none;  // the reference's step frees gradients
  // How each micro-batch is computed; null: the eager computation in `dtype`.
  std::shared_ptr<LossComputation> computation;
};

// One process, one device: litgpt's training step. Moves `model` to the device and dtype.
std::unique_ptr<TrainStep> make_eager_step(model::GPT model, const c10::Device& device,
                                           const EagerStepOptions& options);

// The fused computation's options plus the optimizer's.
struct FusedStepOptions : FusedComputationOptions {
  AdamWOptions adamw;
  ZeroGrad zero_grad = ZeroGrad::none;
};

// One process, one device: the eager step with the fused computation (loss_computation.hpp).
// Measures the kernels (or reads their cached choice) first.
std::unique_ptr<TrainStep> make_fused_step(model::GPT model, const c10::Device& device,
                                           const FusedStepOptions& options);

// Pieces every step shares, so that DDP and FSDP hold and report state as the eager step does.

// After an out-of-memory error: every parameter's gradient freed.
void drop_gradients(torch::nn::Module& module);
// Detached copies of a module's parameters, in module order (TrainStep::full_parameters).
std::vector<at::Tensor> clone_parameters(const torch::nn::Module& module);

// Bytes of a module's parameters, gradients (where kept) and buffers, each storage once.
int64_t module_tensor_bytes(const torch::nn::Module& module);

// Bytes of a module's parameters, each storage once, and of one gradient per parameter.
int64_t parameter_bytes(const torch::nn::Module& module);
int64_t whole_gradient_bytes(const torch::nn::Module& module);

}  // namespace tokbench::train
