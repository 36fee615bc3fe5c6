// --dump-memory-snapshot: a run's memory history in PyTorch's own snapshot format, the pickle
// torch.cuda.memory._dump_snapshot writes and PyTorch's memory viewer (pytorch.org/memory_viz,
// torch.cuda._memory_viz) reads. On CUDA it is c10's caching allocator's history, recorded by
// PyTorch itself (cuda_support.hpp). On the CPU, where PyTorch records none, it is built from
// the counting allocator's (cpu_memory_counter.hpp): each counted block is its own segment (the
// counter sees tensors' blocks, not an arena's pages), its allocations and frees are the
// device trace, with no stack frames.
#pragma once

#include <string>
#include <vector>

#include "train/cpu_memory_counter.hpp"

namespace tokbench::train {

// The CPU snapshot of the counter's history and the blocks it holds, pickled.
std::string cpu_memory_snapshot_pickled(const std::vector<CounterEvent>& events,
                                        const std::vector<CounterBlock>& live_blocks);

}  // namespace tokbench::train
