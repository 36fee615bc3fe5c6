// The two collectives of FSDP over flat buffers: reduce-scatter of a flat gradient into this
// rank's part, and all-gather of the shards into the full flat buffer.
//
// On NCCL they are the backend's own (_reduce_scatter_base, _allgather_base). On Gloo both go
// through its in-place all-reduce instead: Gloo's reduce_scatter_tensor and
// all_gather_into_tensor each stage the whole buffer in a temporary copy (measured: a 309 MB
// flat buffer raised the tensor peak by 309 MB for either, and the all-reduce by nothing), and
// on the CPU they took about twice as long as the all-reduce of the same buffer. With the
// all-reduce, a rank's reduced part is its slice of the summed flat gradient, and a gather is
// an all-reduce of the full buffer holding only this rank's shard and zeros (adding zeros
// changes no value). docs/distributed.md, "Memory", gives the measurements.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <cstdint>

namespace tokbench::distributed {

// A reduce-scatter on its way. `flat` (the input, full size) must live until it is done.
struct PendingReduceScatter {
  c10::intrusive_ptr<c10d::Work> work;
  at::Tensor flat;
  at::Tensor part;  // (numel / group size,): the reduced slice once `work` is done
  // After the wait: the part in storage of its own, so `flat` can be freed.
  at::Tensor owned_part() const;
};

// Starts summing `flat` (numel a multiple of the group's size) over the group; this rank's
// part is slice `group_rank` of the sum.
PendingReduceScatter start_reduce_scatter(c10d::Backend& group, at::Tensor flat, int64_t group_rank);

// Starts gathering every rank's `shard` into `full` (slice `group_rank` of it is this rank's).
// `shard` is either storage of its own or exactly that slice of `full` (an in-place gather,
// which NCCL supports for a send buffer at the receive buffer's rank offset).
c10::intrusive_ptr<c10d::Work> start_all_gather(c10d::Backend& group, at::Tensor& full, const at::Tensor& shard,
                                                int64_t group_rank);

}  // namespace tokbench::distributed
