// What one rank's memory holds, part by part, in bytes: the breakdown a run reports beside its
// peak (docs/run.md, "Memory breakdown"). A plain record, torch-free, so the rank records that
// carry it between processes (distributed/rank_record.hpp) need no LibTorch.
//
// Each part is measured or counted on its own; they do not sum to the peak, because they are
// not all at their largest at the same moment (activations peak at the end of forward,
// gradients at the optimizer step) and the peak also holds temporaries of single operations.
#pragma once

#include <cstdint>

namespace tokbench::train {

struct MemoryBreakdown {
  // Parameters resident between iterations: the whole model, or this rank's shard (FSDP
  // ZeRO-2 keeps the whole model, its shard a slice of it; ZeRO-3 only the shard).
  int64_t parameters = 0;
  // The gradients the optimizer step reads: the whole model's, or this rank's shard's.
  int64_t gradients = 0;
  // Optimizer state (AdamW's two moments, its step counts where kept as tensors).
  int64_t optimizer_state = 0;
  // The most bytes a forward pass left held for its backward (saved activations, the loss)
  // over the run's micro-batches: bytes held at the end of forward minus at its start.
  int64_t activations = 0;
  // The most bytes of communication buffers held at once: DDP's buckets; FSDP's flat
  // gradients in flight and, with ZeRO-3, the units gathered for compute.
  int64_t comm_buffers = 0;
  // What the allocator held beyond live tensors at its peak: reserved peak - allocated peak.
  int64_t allocator_reserve = 0;
};

}  // namespace tokbench::train
