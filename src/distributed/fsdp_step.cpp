// FSDP as a training step, ZeRO-2 and ZeRO-3, over units of the model (the whole model, one
// per transformer block plus the root, one per parameter-owning layer, or PyTorch's size policy).
//
// Each unit's parameters become views of one flat buffer (FSDP's flat parameter), padded to
// a multiple of the shard-group size S (which parameters form a unit, and where each lies in
// its buffer, is parallel::layout_fsdp_units's answer; comm_layout() hands it on). A rank owns
// 1/S of it: a flat shard that the optimizer updates (so its AdamW state is 1/S too), with a
// gradient of the same size.
//  - Backward: just before a unit's first gradient arrives, the unit's .grad fields become
//    views of one zeroed flat gradient (padded), so autograd accumulates straight into the
//    buffer that is reduce-scattered: no per-parameter gradients beside it, no copy (FSDP's
//    flat parameter gets its gradient the same way, through the views of its forward). When
//    the last gradient is in, the views are dropped and the flat gradient is reduce-scattered
//    (asynchronously, overlapping the rest of backward). At most two flat full-size gradients
//    are in flight: issuing a unit's reduce-scatter first completes the one before it, whose
//    flat gradient is then freed and whose reduced part is added to the unit's shard-size sum;
//    the end of each micro-batch's backward completes the last (as FSDP's post-backward
//    callback does). With hybrid sharding the summed shard is all-reduced across the
//    replicas holding the same shard at the optimizer step.
//  - Optimizer step: shards are updated, then all-gathered back into the full buffers
//    (ZeRO-2: parameters stay whole between steps).
//  - ZeRO-3: the full buffers are freed at rest. Before each block's forward the units holding
//    its parameters are all-gathered (the next block's are issued ahead) and freed after it
//    unless the next block needs them too; the embedding's and head's units stay whole through
//    the forward (parallel::zero3_gathers, for any unit layout). They are gathered again
//    before their block's backward (from a hook on its output's gradient) and freed once their
//    gradients are reduced. Autograd keeps the parameter tensors themselves, so freeing and
//    refilling the buffer's storage in place is invisible to it (FSDP's storage resize).
#include <c10/core/CPUAllocator.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <utility>
#include <unordered_map>

#include "account/range_names.hpp"
#include "distributed/collectives.hpp"
#include "distributed/device_binding.hpp"
#include "distributed/exposed_comm.hpp"
#include "distributed/flat_collectives.hpp"
#include "distributed/grad_hooks.hpp"
#include "distributed/parallel_step.hpp"
#include "train/dtype_mode.hpp"
#include "train/parameter_shapes.hpp"
#include "train/profile_trace.hpp"

namespace tokbench::distributed {
namespace {

// A tensor of `sizes` at `offset` elements into `base`'s storage, made without the bounds
// check of a view: the storage may hold no bytes yet (a ZeRO-3 unit's buffer before its first
// gather; the gather fills that storage in place, and every such tensor sees it).
at::Tensor alias_of_storage(const at::Tensor& base, int64_t offset, at::IntArrayRef sizes) {
  at::Tensor t = at::empty({0}, base.options());
  auto* impl = t.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(base.storage());
  impl->set_storage_offset(offset);
  impl->set_sizes_contiguous(sizes);
  return t;
}

struct Unit {
  std::vector<at::Tensor> params;
  std::vector<int64_t> offsets;  // of each parameter in the full buffer
  int64_t numel = 0;             // real elements
  int64_t padded = 0;            // multiple of the shard-group size
  at::Tensor full;               // (padded,) flat buffer the parameters view
  at::Tensor shard;              // (padded / S,) this rank's part: a leaf the optimizer updates
  bool gathered = true;          // full holds the current parameters
  c10::intrusive_ptr<c10d::Work> gather_work;
  at::Tensor flat_grad;          // (padded,) this micro-batch's gradient, while backward fills it
  int64_t grads_ready = 0;
  bool reduced = false;          // this micro-batch's gradients are on their way
  at::Tensor reduced_sum;        // (padded / S,) this rank's reduced parts, summed over micro-batches
};

// Bytes of communication buffers held now and at most: flat gradients from their first
// gradient until their reduction completes, and under ZeRO-3 the gathered units.
struct BufferMeter {
  int64_t now = 0, peak = 0;
  void add(int64_t bytes) { peak = std::max(peak, now += bytes); }
  void remove(int64_t bytes) { now -= bytes; }
};

// A unit's reduce-scatter on its way (its flat full-size gradient lives until it is done).
struct Reduction {
  std::size_t unit = 0;
  PendingReduceScatter pending;
};

class FsdpStep final : public train::TrainStep, public model::GPTImpl::ForwardHooks {
 public:
  FsdpStep(model::GPT model, const c10::Device& device, const ProcessGroups& groups, const FsdpOptions& options)
      : model_(std::move(model)), device_(device), groups_(groups), options_(options),
        computation_(options.computation ? options.computation : train::make_eager_computation(options.dtype)),
        comm_timer_(device) {
    model_->to(device, train::param_dtype(options.dtype));
    model_->train();
    const bool deferred = model_->parameters_deferred();
    if (deferred && !options.init_seed)
      throw std::invalid_argument("FSDP over a model with deferred parameters needs FsdpOptions::init_seed");
    // Deferred: every rank draws the same values from the seed, so no broadcast is needed.
    if (!deferred) broadcast_parameters(*groups_.world, *model_);
    build_units(deferred);
    std::vector<at::Tensor> shards;
    for (auto& u : units_) shards.push_back(u.shard);
    optimizer_ = std::make_unique<train::AdamW>(shards, options.adamw, device);
    if (zero3()) {
      for (auto& u : units_) free_full(u);
    }
    comm_buffers_ = BufferMeter{};  // the build's full buffers were the model, not communication
  }

  ~FsdpStep() override { model_->set_forward_hooks(nullptr); }

  // The model calls these around the root and each block (GPTImpl::ForwardHooks). They
  // gather and free only under ZeRO-3, as parallel::zero3_gathers lays out (timed unit 0 is
  // the embedding, k the block k - 1, L + 1 the head); the model owns a shared_ptr to a
  // forwarding shim.
  void before_root() override {
    if (!zero3()) return;
    ensure_gathered(gathers_.kept);
    if (n_layer_ > 0) start_gathers(gathers_.needs[1]);
  }
  void before_block(int64_t layer) override {
    if (!zero3()) return;
    ensure_gathered(gathers_.needs[layer + 1]);
    if (layer + 1 < n_layer_) start_gathers(gathers_.needs[layer + 2]);
  }
  torch::Tensor after_block(int64_t layer, torch::Tensor output) override {
    if (!zero3()) return output;
    for (const int64_t u : gathers_.free_after_forward[layer + 1]) free_full(units_[u]);
    register_pre_backward(output, layer + 1);
    return output;
  }
  torch::Tensor after_root(torch::Tensor logits) override {
    if (!zero3()) return logits;
    for (const int64_t u : gathers_.kept) free_full(units_[u]);
    register_pre_backward(logits, n_layer_ + 1);
    return logits;
  }

  at::Tensor forward_backward(const train::TokenBatch& batch, int64_t /*micro*/, int64_t grad_accum) override {
    for (auto& u : units_) {
      u.grads_ready = 0;
      u.reduced = false;
    }
    at::Tensor loss = computation_->forward_backward(model_, batch, grad_accum);
    // Units with a parameter backward did not reach are reduced now (the others already are).
    for (std::size_t u = 0; u < units_.size(); ++u)
      if (!units_[u].reduced) reduce_unit(u);
    complete_reductions(0);
    return loss;
  }

  at::Tensor optimizer_step(const at::Tensor& loss) override {
    torch::NoGradGuard no_grad;
    {
      // The last reductions' sums into the shards' gradients and their averaging: the time
      // account's elementwise work, not the optimizer's (its waits stay exposed communication).
      train::TraceRange range(account::ranges::kCommBuffers);
      finish_reductions();
    }
    optimizer_->step();
    optimizer_->zero_grad(options_.zero_grad);
    if (!zero3()) {  // ZeRO-2 keeps whole parameters: refresh them from the updated shards now
      for (auto& u : units_) u.gathered = false;
      for (std::size_t u = 0; u < units_.size(); ++u) start_gather(static_cast<int64_t>(u));
      for (auto& u : units_) wait_gather(u);
    }
    return mean_over_ranks(*groups_.world, loss, groups_.world_size);
  }

  double take_exposed_comm_seconds() override { return comm_timer_.take_seconds(); }
  std::string kernel_note() const override { return computation_->kernel_note(); }

  int64_t resident_state_bytes() const override {
    int64_t bytes = optimizer_->state_bytes();
    for (const auto& u : units_) {
      if (!shard_in_full(u)) bytes += static_cast<int64_t>(u.shard.nbytes());
      if (u.shard.grad().defined()) bytes += static_cast<int64_t>(u.shard.grad().nbytes());
      if (u.full.storage().nbytes() > 0) bytes += static_cast<int64_t>(u.full.storage().nbytes());
    }
    for (const auto& b : model_->buffers()) bytes += static_cast<int64_t>(b.nbytes());
    return bytes;
  }
  int64_t optimizer_state_bytes() const override { return optimizer_->state_bytes(); }
  train::MemoryBreakdown memory_parts() const override {
    train::MemoryBreakdown parts;
    for (const auto& u : units_) {
      const int64_t element = static_cast<int64_t>(u.shard.element_size());
      parts.parameters += (shard_in_full(u) ? 0 : static_cast<int64_t>(u.shard.nbytes())) +
                          (zero3() ? 0 : u.padded * element);
      parts.gradients += static_cast<int64_t>(u.shard.nbytes());
    }
    parts.optimizer_state = optimizer_->state_bytes();
    parts.comm_buffers = comm_buffers_.peak;
    return parts;
  }
  void set_forward_end_callback(std::function<void()> callback) override {
    computation_->set_forward_end_callback(std::move(callback));
  }
  model::GPT model() const override { return model_; }
  const parallel::Layout* comm_layout() const override { return &layout_; }
  int64_t optimizer_state_step() const override { return optimizer_->state_step(); }
  int64_t optimizer_steps_taken() const override { return optimizer_->steps_taken(); }
  bool fused_adamw() const override { return optimizer_->fused(); }
  void release_after_failure() override {
    in_flight_.clear();
    for (auto& u : units_) {
      for (auto& p : u.params) p.mutable_grad().reset();
      u.flat_grad = at::Tensor();
      u.reduced_sum = at::Tensor();
    }
  }

  std::vector<at::Tensor> full_parameters() override {
    torch::NoGradGuard no_grad;
    for (std::size_t u = 0; u < units_.size(); ++u) ensure_gathered(static_cast<int64_t>(u));
    std::vector<at::Tensor> copies = train::clone_parameters(*model_);
    if (zero3()) {
      for (auto& u : units_) free_full(u);
    }
    return copies;
  }

  // Installs the forward hooks; called once the step is owned by a shared_ptr-free holder.
  void attach(std::shared_ptr<model::GPTImpl::ForwardHooks> shim) { model_->set_forward_hooks(std::move(shim)); }

 private:
  bool zero3() const { return options_.shard_mode == ShardMode::zero3; }
  static bool shard_in_full(const Unit& u) { return u.shard.storage().is_alias_of(u.full.storage()); }


  // Builds the units parallel::layout_fsdp_units lays out (the root's unit first under
  // per_block), and under ZeRO-3 when each is gathered (parallel::zero3_gathers). With deferred parameters, the buffers are filled from the seed's initial values
  // instead of copied from the parameters, and ZeRO-3 never allocates a unit's full buffer here.
  void build_units(bool deferred) {
    const auto all = model_->parameters();
    layout_ = parallel::layout_fsdp_units(train::parameter_shapes(model_), options_.units, groups_.shard_size,
                                          options_.min_unit_params);
    n_layer_ = static_cast<int64_t>(model_->blocks().size());
    if (zero3()) gathers_ = parallel::zero3_gathers(layout_);
    std::vector<std::vector<at::Tensor>> groups;
    for (const auto& unit : layout_.units) {
      std::vector<at::Tensor> params;
      for (const int64_t i : unit.parameters) params.push_back(all[i]);
      groups.push_back(std::move(params));
    }
    const int64_t s = groups_.shard_size;
    torch::NoGradGuard no_grad;
    for (std::size_t index = 0; index < groups.size(); ++index) {
      auto& params = groups[index];
      Unit u;
      u.params = params;
      u.offsets = layout_.units[index].offsets;
      u.numel = layout_.units[index].elements;
      u.padded = layout_.units[index].padded_elements;
      const auto options = params.front().options().requires_grad(false);
      const int64_t n = u.padded / s;
      if (deferred && zero3()) {  // the full buffer's shape, no bytes: gathered when first used
        u.full = at::empty({0}, options);
        u.full.unsafeGetTensorImpl()->set_sizes_contiguous({u.padded});
        u.gathered = false;
        u.shard = at::zeros({n}, options);
      } else {
        u.full = at::zeros({u.padded}, options);
      }
      for (std::size_t i = 0; i < params.size(); ++i) {
        // The parameter keeps its identity (autograd, the module) but now views the buffer.
        if (!u.gathered) {
          params[i].set_data(alias_of_storage(u.full, u.offsets[i], params[i].sizes()));
          continue;
        }
        auto view = u.full.narrow(0, u.offsets[i], params[i].numel());
        if (!deferred) view.copy_(params[i].reshape({-1}));
        params[i].set_data(view.view(params[i].sizes()));
      }
      units_.push_back(std::move(u));
    }
    if (deferred) fill_from_seed(*options_.init_seed);
    for (auto& u : units_) {
      const int64_t n = u.padded / s;
      // ZeRO-2 keeps the full buffer, so its shard is that buffer's own slice (the optimizer
      // updates it in place and the gather fills the rest around it, as DeepSpeed's ZeRO-2
      // partitions are views of its flat buffers); ZeRO-3 frees the buffer, so it keeps a copy.
      if (u.gathered && !zero3()) u.shard = alias_of_storage(u.full, groups_.shard_rank * n, {n});
      else if (u.gathered) u.shard = u.full.narrow(0, groups_.shard_rank * n, n).clone();
      u.shard.requires_grad_(true);
    }
    for (std::size_t i = 0; i < units_.size(); ++i)
      for (auto& p : units_[i].params) {
        before_grad_accumulated(p, device_, [this, i] { ensure_flat_grad(units_[i]); });
        on_grad_accumulated(p, device_, [this, i] {
          if (++units_[i].grads_ready == static_cast<int64_t>(units_[i].params.size())) reduce_unit(i);
        });
      }
  }

  // The seed's initial values (GPTImpl::visit_initial_values) into what this rank keeps: the
  // whole flat buffers where they are allocated (ZeRO-2), else only the slice of each
  // parameter's values that falls in this rank's shard.
  void fill_from_seed(uint64_t seed) {
    torch::NoGradGuard no_grad;
    std::unordered_map<const c10::TensorImpl*, std::pair<std::size_t, int64_t>> place;  // unit, offset
    for (std::size_t u = 0; u < units_.size(); ++u)
      for (std::size_t i = 0; i < units_[u].params.size(); ++i)
        place[units_[u].params[i].unsafeGetTensorImpl()] = {u, units_[u].offsets[i]};
    const auto params = model_->parameters();
    model_->visit_initial_values(seed, [&](std::size_t index, int64_t offset, const at::Tensor& values) {
      const auto [unit_index, unit_offset] = place.at(params[index].unsafeGetTensorImpl());
      Unit& u = units_[unit_index];
      const int64_t begin = unit_offset + offset, end = begin + values.numel();  // in the flat buffer
      if (u.gathered) {
        u.full.narrow(0, begin, values.numel()).copy_(values);
        return;
      }
      const int64_t n = u.shard.numel(), shard_begin = groups_.shard_rank * n;
      const int64_t from = std::max(begin, shard_begin), to = std::min(end, shard_begin + n);
      if (from < to) u.shard.narrow(0, from - shard_begin, to - from).copy_(values.narrow(0, from - begin, to - from));
    });
  }

  // ZeRO-3 storage management: the buffer's storage is emptied and refilled in place.
  // A gather still on its way (the embedding's units are gathered ahead for a backward that
  // may never read them) lands first: its writes must not outlive the storage.
  void free_full(Unit& u) {
    if (u.gather_work) wait_gather(u);
    if (!u.gathered) return;
    comm_buffers_.remove(static_cast<int64_t>(u.full.storage().nbytes()));
    u.full.storage().unsafeGetStorageImpl()->reset();
    u.gathered = false;
  }

  void start_gather(int64_t index) {
    Unit& u = units_[index];
    if (u.gathered || u.gather_work) return;
    auto* storage = u.full.storage().unsafeGetStorageImpl();
    const std::size_t bytes = static_cast<std::size_t>(u.padded) * u.full.element_size();
    if (storage->nbytes() != bytes) {
      storage->set_data_ptr_noswap(allocate_on(device_, bytes));
      storage->set_nbytes(bytes);
      if (zero3()) comm_buffers_.add(static_cast<int64_t>(bytes));
    }
    u.gather_work = start_all_gather(*groups_.shard, u.full, u.shard.detach(), groups_.shard_rank);
  }

  void wait_gather(Unit& u) {
    if (u.gather_work) {
      comm_timer_.wait(*u.gather_work);
      u.gather_work.reset();
    }
    u.gathered = true;
  }

  void ensure_gathered(int64_t index) {
    Unit& u = units_[index];
    if (u.gathered) return;
    start_gather(index);
    wait_gather(u);
  }
  // Every unit of a set: all gathers are issued before the first wait, so they queue together.
  void ensure_gathered(const std::vector<int64_t>& indices) {
    start_gathers(indices);
    for (const int64_t u : indices) ensure_gathered(u);
  }
  void start_gathers(const std::vector<int64_t>& indices) {
    for (const int64_t u : indices) start_gather(u);
  }

  // Before backward reaches timed unit `timed` (from a hook on its output's gradient): gather its
  // units again, and issue the gathers of the timed unit backward meets next. A unit already
  // reduced this micro-batch is skipped: its gradients are all in, so nothing before it in
  // backward uses it (a unit always holds parameters of the timed unit needing it, so this
  // is a guard, not a case the layouts make).
  void register_pre_backward(torch::Tensor& output, int64_t timed) {
    if (!output.requires_grad()) return;
    output.register_hook([this, timed](const at::Tensor& grad) {
      const DeviceScope on(device_);  // autograd's thread for this device, on CUDA
      // Backward order: the head (L + 1), then the blocks from L down to 1, then the embedding.
      const int64_t next = timed == n_layer_ + 1 ? n_layer_ : timed - 1;
      std::vector<int64_t> now, ahead;
      for (const int64_t u : gathers_.needs[timed])
        if (!units_[u].reduced) now.push_back(u);
      if (next >= 0)
        for (const int64_t u : gathers_.needs[next])
          if (!units_[u].reduced) ahead.push_back(u);
      ensure_gathered(now);
      start_gathers(ahead);
      return grad;
    });
  }

  // Just before the unit's first gradient of a micro-batch: a zeroed flat gradient, and the
  // parameters' .grad fields as its views, which autograd then accumulates into in place.
  void ensure_flat_grad(Unit& u) {
    if (u.flat_grad.defined()) return;
    torch::NoGradGuard no_grad;
    u.flat_grad = at::zeros({u.padded}, u.shard.options().requires_grad(false));
    comm_buffers_.add(static_cast<int64_t>(u.flat_grad.nbytes()));
    for (std::size_t i = 0; i < u.params.size(); ++i)
      u.params[i].mutable_grad() = u.flat_grad.narrow(0, u.offsets[i], u.params[i].numel()).view(u.params[i].sizes());
  }

  // All of a unit's gradients are in: start the flat gradient's reduce-scatter, and complete
  // the one before it (so at most two flat gradients are in flight).
  void reduce_unit(std::size_t index) {
    torch::NoGradGuard no_grad;
    Unit& u = units_[index];
    ensure_flat_grad(u);  // a unit backward never reached reduces zeros
    at::Tensor flat = std::exchange(u.flat_grad, at::Tensor());
    for (auto& p : u.params) p.mutable_grad().reset();  // the views; the buffer lives on in `flat`
    in_flight_.push_back(Reduction{index, start_reduce_scatter(*groups_.shard, std::move(flat), groups_.shard_rank)});
    u.reduced = true;
    // Backward is done with this unit: every node that used its parameters has run.
    if (zero3()) free_full(u);
    complete_reductions(1);
  }

  // Completes the oldest reductions until at most `keep` are in flight: waits for each, adds
  // its part to its unit's sum and drops it (the flat gradient and the work with it).
  void complete_reductions(std::size_t keep) {
    if (in_flight_.size() <= keep) return;
    torch::NoGradGuard no_grad;
    while (in_flight_.size() > keep) {
      Reduction& r = in_flight_.front();
      comm_timer_.wait(*r.pending.work);
      Unit& u = units_[r.unit];
      u.reduced_sum = u.reduced_sum.defined() ? u.reduced_sum.add_(r.pending.part) : r.pending.owned_part();
      comm_buffers_.remove(static_cast<int64_t>(r.pending.flat.nbytes()));
      in_flight_.pop_front();
    }
  }

  // The summed parts become the shard gradients: all-reduced across replicas (hybrid), and
  // averaged over all ranks.
  void finish_reductions() {
    complete_reductions(0);
    std::vector<c10::intrusive_ptr<c10d::Work>> replica_work;
    for (auto& u : units_) {
      at::Tensor sum = std::exchange(u.reduced_sum, at::Tensor());
      if (!sum.defined()) sum = at::zeros_like(u.shard).detach();
      u.shard.mutable_grad() = sum;
      if (groups_.replicate) {
        std::vector<at::Tensor> one{u.shard.mutable_grad()};
        replica_work.push_back(groups_.replicate->allreduce(one));
      }
      if (zero3()) free_full(u);
    }
    for (auto& w : replica_work) comm_timer_.wait(*w);
    const double scale = 1.0 / static_cast<double>(groups_.world_size);
    for (auto& u : units_) u.shard.mutable_grad().mul_(scale);
  }


  model::GPT model_;
  c10::Device device_;
  ProcessGroups groups_;
  FsdpOptions options_;
  std::shared_ptr<train::LossComputation> computation_;
  ExposedCommTimer comm_timer_;
  parallel::Layout layout_;  // what units_ were built from
  std::vector<Unit> units_;
  std::deque<Reduction> in_flight_;  // in the order issued
  BufferMeter comm_buffers_;
  int64_t n_layer_ = 0;
  parallel::Zero3Gathers gathers_;  // ZeRO-3 only: which units each timed unit gathers
  std::unique_ptr<train::AdamW> optimizer_;
};

// The model holds its hooks by shared_ptr while the step is owned by a unique_ptr: a shim
// forwards to the step, and the step clears the model's hooks when it is destroyed.
struct HookShim final : model::GPTImpl::ForwardHooks {
  explicit HookShim(FsdpStep* s) : step(s) {}
  void before_root() override { step->before_root(); }
  void before_block(int64_t layer) override { step->before_block(layer); }
  torch::Tensor after_block(int64_t layer, torch::Tensor out) override { return step->after_block(layer, out); }
  torch::Tensor after_root(torch::Tensor logits) override { return step->after_root(logits); }
  FsdpStep* step;
};

}  // namespace

std::unique_ptr<train::TrainStep> make_fsdp_step(model::GPT model, const c10::Device& device,
                                                 const ProcessGroups& groups, const FsdpOptions& options) {
  auto step = std::make_unique<FsdpStep>(std::move(model), device, groups, options);
  step->attach(std::make_shared<HookShim>(step.get()));
  return step;
}

}  // namespace tokbench::distributed
