// The distributed steps (train/train_step.hpp implementations) as free functions over a
// built model: DDP (gradients all-reduced in buckets during backward) and FSDP (ZeRO-2 and
// ZeRO-3 over units of the model, optionally hybrid). Each takes its own options struct,
// and with it the loss computation (the executor, train/loss_computation.hpp) it runs on each
// micro-batch: how gradients are combined does not depend on how they were computed.
#pragma once

#include <memory>
#include <optional>

#include "distributed/dist_settings.hpp"
#include "distributed/process_groups.hpp"
#include "train/train_step.hpp"

namespace tokbench::distributed {

struct DdpOptions {
  model::TrainPrecision dtype = model::TrainPrecision::fp32;
  train::AdamWOptions adamw;
  train::ZeroGrad zero_grad = train::ZeroGrad::none;
  int64_t bucket_bytes = parallel::kDefaultDdpBucketBytes;
  // Start each bucket's all-reduce from backward as soon as its gradients are in; false:
  // all buckets after backward (the comparison that shows what overlap buys).
  bool overlap = true;
  // No gradient sync on the first GA-1 micro-batches (DDP's no_sync); false: every one.
  bool skip_sync_until_last_micro = true;
  // How each micro-batch is computed; null: the eager computation in `dtype`.
  std::shared_ptr<train::LossComputation> computation;
};

struct FsdpOptions {
  model::TrainPrecision dtype = model::TrainPrecision::fp32;
  train::AdamWOptions adamw;
  train::ZeroGrad zero_grad = train::ZeroGrad::none;  // of the shard gradients
  ShardMode shard_mode = ShardMode::zero2;
  UnitPolicy units = UnitPolicy::per_block;
  int64_t min_unit_params = 0;  // UnitPolicy::by_size's threshold (parallel::layout_fsdp_units)
  // How each micro-batch is computed; null: the eager computation in `dtype`.
  std::shared_ptr<train::LossComputation> computation;
  // For a model built with deferred parameters (GPTImpl::ParameterStorage::deferred): the
  // seed whose initial values each rank materialises, keeping only what its sharding holds
  // (ZeRO-3: its shards; ZeRO-2: the whole flat buffers, its shards slices of them). Required
  // for such a model, ignored otherwise.
  std::optional<uint64_t> init_seed;
};

// Both broadcast rank 0's parameters first, so every rank starts from the same model (FSDP on
// deferred parameters draws them from FsdpOptions::init_seed on every rank instead).
std::unique_ptr<train::TrainStep> make_ddp_step(model::GPT model, const c10::Device& device,
                                                const ProcessGroups& groups, const DdpOptions& options);
std::unique_ptr<train::TrainStep> make_fsdp_step(model::GPT model, const c10::Device& device,
                                                 const ProcessGroups& groups, const FsdpOptions& options);

}  // namespace tokbench::distributed
