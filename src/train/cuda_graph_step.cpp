// The CUDA graph step (cuda_graph_step.hpp). Every device call names the step's device; the
// warm-up, the capture and the replays run on one side stream taken from the device's pool under
// a stream guard, and the device's current stream (where the loop's token batches are copied and
// where whoever runs after the step works) is joined to it by events both ways, so nothing
// relies on which stream or device is current when the loop calls in.
#include "train/cuda_graph_step.hpp"

#include <ATen/core/CachingHostAllocator.h>
#include <ATen/cuda/CUDAGraph.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "train/cuda_support.hpp"

namespace tokbench::train {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

class CudaGraphStep final : public TrainStep {
 public:
  CudaGraphStep(std::unique_ptr<TrainStep> inner, const c10::Device& device, const CudaGraphStepOptions& options)
      : inner_(std::move(inner)), device_index_(device.index()), options_(options),
        side_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())) {}

  at::Tensor forward_backward(const TokenBatch& batch, int64_t micro, int64_t grad_accum) override {
    require_graph_kept();
    if (eager_now()) {
      // The batch was copied to the device on the current stream: the side stream waits for it,
      // and the current stream waits for the side stream before the batch's memory, freed
      // there, can be reused.
      join(side_, current());
      at::Tensor loss;
      {
        c10::cuda::CUDAStreamGuard on_side(side_);
        loss = inner_->forward_backward(batch, micro, grad_accum);
      }
      join(current(), side_);
      return loss;
    }
    // Capture or replay: the tokens go into the static buffers the graph reads, on the current
    // stream (ordered after the batch's own copy); the replay waits for them (optimizer_step).
    c10::cuda::CUDAGuard on_device(device_index_);
    if (static_x_.empty()) allocate_static_inputs(batch, grad_accum);
    TORCH_CHECK(grad_accum == static_cast<int64_t>(static_x_.size()) && micro >= 0 && micro < grad_accum,
                "cuda graph step: captured for ", static_x_.size(), " micro-batches, called with micro-batch ", micro,
                " of ", grad_accum);
    const auto m = static_cast<std::size_t>(micro);
    TORCH_CHECK(batch.x.sizes() == static_x_[m].sizes() && batch.y.sizes() == static_y_[m].sizes() &&
                    batch.x.scalar_type() == static_x_[m].scalar_type(),
                "cuda graph step: a batch of shape ", batch.x.sizes(), " does not fit the captured ",
                static_x_[m].sizes(), " (a captured step needs one shape)");
    static_x_[m].copy_(batch.x, /*non_blocking=*/true);
    static_y_[m].copy_(batch.y, /*non_blocking=*/true);
    static_real_tokens_[m] = batch.real_tokens;
    return static_loss_;  // read by nobody before the replay has run and the device is synchronised
  }

  at::Tensor optimizer_step(const at::Tensor& loss) override {
    require_graph_kept();
    if (eager_now()) {
      at::Tensor reported;
      join(side_, current());  // whatever the caller queued since forward_backward comes first
      {
        c10::cuda::CUDAStreamGuard on_side(side_);
        reported = inner_->optimizer_step(loss);
      }
      join(current(), side_);
      ++steps_;
      ++eager_iterations_;
      return reported;
    }
    if (!graph_) {
      if (!capture()) return eager_iteration_from_static_inputs();  // auto's fallback
    }
    join(side_, current());  // the static inputs were filled on the current stream
    {
      c10::cuda::CUDAStreamGuard on_side(side_);
      graph_->replay();
    }
    join(current(), side_);  // the loss and the parameters are read after it
    ++steps_;
    return static_loss_;
  }

  double take_exposed_comm_seconds() override { return inner_->take_exposed_comm_seconds(); }
  int64_t resident_state_bytes() const override { return inner_->resident_state_bytes(); }
  int64_t optimizer_state_bytes() const override { return inner_->optimizer_state_bytes(); }
  // The device counters: the graph increments them on every replay.
  int64_t optimizer_state_step() const override { return inner_->optimizer_state_step(); }
  // Counted here: the inner step's host count sees the capture (which computes nothing) and not
  // the replays.
  int64_t optimizer_steps_taken() const override { return steps_; }
  bool fused_adamw() const override { return inner_->fused_adamw(); }
  void release_after_failure() override { inner_->release_after_failure(); }
  std::vector<at::Tensor> full_parameters() override { return inner_->full_parameters(); }
  std::string kernel_note() const override { return inner_->kernel_note(); }
  MemoryBreakdown memory_parts() const override { return inner_->memory_parts(); }
  // Fires in the eager warm-up iterations (which measure the activations) and in the capture;
  // a replay runs no host code.
  void set_forward_end_callback(std::function<void()> callback) override {
    inner_->set_forward_end_callback(std::move(callback));
  }
  const parallel::Layout* comm_layout() const override { return inner_->comm_layout(); }
  model::GPT model() const override { return inner_->model(); }
  // The passes after the window (unit timings, the time account, a profile) run the inner step
  // eagerly, with activations of their own: the graph, its private pool (a whole iteration's
  // activations) and its static inputs are given back first, so those passes do not need the
  // memory of two iterations (a run that fits the device once would run out in them). The
  // wrapper is not stepped again.
  TrainStep& eager() override {
    release_graph();
    return inner_->eager();
  }
  std::string graph_fallback() const override { return fallback_; }

 private:
  bool eager_now() const { return eager_iterations_ < options_.eager_warmups || !fallback_.empty(); }

  c10::cuda::CUDAStream current() const { return c10::cuda::getCurrentCUDAStream(device_index_); }

  void require_graph_kept() const {
    TORCH_CHECK(!released_, "cuda graph step: stepped after eager() gave its graph back (the passes after the "
                            "window step the inner step alone)");
  }

  // Once the last replay is done: the graph (whose destruction gives its private pool back), the
  // tensors of the pool this step holds, the static inputs, and the cached blocks freed by them.
  // Parameters' gradients a capture made stay valid: a live tensor keeps its block until it is
  // freed. Idempotent.
  void release_graph() {
    if (released_) return;
    released_ = true;
    c10::cuda::CUDAGuard on_device(device_index_);
    c10::cuda::device_synchronize();
    static_loss_ = at::Tensor();
    graph_.reset();
    static_x_.clear();
    static_y_.clear();
    cuda_support::empty_cache();
  }

  // `waiter` runs nothing more until what `producer` has queued so far is done.
  void join(const c10::cuda::CUDAStream& waiter, const c10::cuda::CUDAStream& producer) {
    if (waiter == producer) return;
    c10::cuda::CUDAEvent event;  // created on the producer's device at record; timing disabled
    event.record(producer);
    event.block(waiter);
  }

  // Outside the graph's pool, before the capture: the graph reads them at fixed addresses.
  void allocate_static_inputs(const TokenBatch& batch, int64_t grad_accum) {
    for (int64_t m = 0; m < grad_accum; ++m) {
      static_x_.push_back(at::empty_like(batch.x));
      static_y_.push_back(at::empty_like(batch.y));
    }
    static_real_tokens_.assign(static_cast<std::size_t>(grad_accum), 0);
  }

  TokenBatch static_batch(std::size_t m) const { return TokenBatch{static_x_[m], static_y_[m], static_real_tokens_[m]}; }

  // Captures one whole iteration from the static inputs: true when the graph is ready. A failed
  // capture is abandoned (its pool released, the gradients it would have made dropped); with
  // fall_back it returns false and the step goes on eagerly, else it throws.
  bool capture() {
    TORCH_CHECK(inner_->fused_adamw(),
                "cuda graph step: the optimizer is not ATen's fused AdamW, whose step counters live on the device");
    {
      // As torch.cuda.graph does: the warm-up's work finished, its cached blocks returned, so
      // the capture's pool does not sit beside a second copy of an iteration's memory.
      c10::cuda::CUDAGuard on_device(device_index_);
      c10::cuda::device_synchronize();
      cuda_support::empty_cache();
    }
    join(side_, current());
    graph_ = std::make_unique<at::cuda::CUDAGraph>();
    pool_ = at::cuda::graph_pool_handle();  // a private pool of this graph's alone, its id known here
    try {
      c10::cuda::CUDAStreamGuard on_side(side_);
      graph_->capture_begin(pool_);
      at::Tensor loss;
      for (std::size_t m = 0; m < static_x_.size(); ++m)
        loss = inner_->forward_backward(static_batch(m), static_cast<int64_t>(m), static_cast<int64_t>(static_x_.size()));
      static_loss_ = inner_->optimizer_step(loss);  // a tensor of the pool, kept: the graph's output
      graph_->capture_end();                        // also instantiates the graph
    } catch (const c10::OutOfMemoryError&) {
      abandon_capture();
      throw;  // the run's outcome, not a reason to fall back
    } catch (const std::exception& e) {
      const std::string what = first_line(e.what());
      abandon_capture();
      if (!options_.fall_back)
        throw std::runtime_error("--cuda-graphs on: the capture failed: " + what +
                                 " (valid: --cuda-graphs auto, which falls back to eager, or off)");
      fallback_ = "off (auto): the capture failed at iteration " + std::to_string(eager_iterations_) + ": " + what +
                  "; the run went on eagerly";
      return false;
    }
    return true;
  }

  // Leaves no trace of a failed capture, whichever step of capture_begin / capture_end failed:
  // the stream's capture ended, its allocations no longer routed into the pool, the tensors of
  // the pool dropped, the pool given back once (by the graph where its capture ended, else here).
  void abandon_capture() {
    c10::cuda::CUDAGuard on_device(device_index_);
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(side_.stream(), &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
      cudaGraph_t partial = nullptr;
      // Ends the capture even where it was invalidated (and then reports that error).
      (void)cudaStreamEndCapture(side_.stream(), &partial);
      if (partial != nullptr) (void)cudaGraphDestroy(partial);
    }
    (void)cudaGetLastError();  // the capture's error is not the next call's
    try {
      // capture_begin routes the side stream's allocations into the pool and capture_end stops
      // that; where capture_end did not get so far, it is stopped here (else this refuses: done).
      c10::cuda::CUDACachingAllocator::endAllocateToPool(device_index_, pool_);
    } catch (const c10::Error&) {
    }
    // The same for pinned host memory, which capture_begin routes into a host pool of the same
    // id (a LibTorch that does not refuses both calls). Left routed, every later pinned allocation
    // of the run would ask the dead capture's filter. Where the routing was still on, capture_end
    // never got so far, nor did the graph's release of its host pool: its reference is given
    // back here.
    try {
      at::HostAllocator* host = at::getHostAllocator(at::kCUDA);
      host->end_allocate_to_pool(pool_);
      host->release_pool(pool_);
    } catch (const std::exception&) {  // c10::Error: not routed; std::out_of_range: no such pool
    }
    static_loss_ = at::Tensor();
    inner_->release_after_failure();  // gradients the capture made point into its pool
    graph_.reset();  // gives the pool back where its capture had ended
    try {
      if (c10::cuda::CUDACachingAllocator::getPoolUseCount(device_index_, pool_) > 0)
        c10::cuda::CUDACachingAllocator::releasePool(device_index_, pool_);
    } catch (const c10::Error&) {  // no such pool: capture_begin failed before making it
    }
  }

  // The capture iteration after a failed capture: what it would have replayed, eagerly.
  at::Tensor eager_iteration_from_static_inputs() {
    join(side_, current());
    at::Tensor reported;
    {
      c10::cuda::CUDAStreamGuard on_side(side_);
      at::Tensor loss;
      for (std::size_t m = 0; m < static_x_.size(); ++m)
        loss = inner_->forward_backward(static_batch(m), static_cast<int64_t>(m), static_cast<int64_t>(static_x_.size()));
      reported = inner_->optimizer_step(loss);
    }
    join(current(), side_);
    ++steps_;
    return reported;
  }

  std::unique_ptr<TrainStep> inner_;
  c10::DeviceIndex device_index_;
  CudaGraphStepOptions options_;
  c10::cuda::CUDAStream side_;  // the warm-up's, the capture's and the replays' stream
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
  c10::MempoolId_t pool_{0, 0};  // the graph's private memory pool
  std::vector<at::Tensor> static_x_, static_y_;  // one per micro-batch, read by the graph
  std::vector<int64_t> static_real_tokens_;
  at::Tensor static_loss_;  // the last micro-batch's loss, written by every replay
  int64_t eager_iterations_ = 0;
  int64_t steps_ = 0;
  std::string fallback_;  // why the capture was abandoned; "" while it stands
  bool released_ = false;  // eager() gave the graph back: the wrapper steps no more
};

}  // namespace

bool cuda_graphs_built() { return true; }

std::unique_ptr<TrainStep> make_cuda_graph_step(std::unique_ptr<TrainStep> inner, const c10::Device& device,
                                                const CudaGraphStepOptions& options) {
  if (!device.is_cuda() || !device.has_index())
    throw std::invalid_argument("cuda graph step: device " + device.str() + " is not an indexed CUDA device");
  if (!inner->fused_adamw())
    throw std::invalid_argument("cuda graph step: the optimizer is not ATen's fused AdamW");
  if (options.eager_warmups < 1)
    throw std::invalid_argument("cuda graph step: eager_warmups must be >= 1 (the optimizer's state is made there)");
  return std::make_unique<CudaGraphStep>(std::move(inner), device, options);
}

}  // namespace tokbench::train
