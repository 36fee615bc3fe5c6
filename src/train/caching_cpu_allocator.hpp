// A caching CPU allocator: tensor memory kept across iterations instead of being handed back
// to the kernel and faulted in again. LibTorch's default CPU allocator frees every block at
// once; glibc returns blocks above its mmap threshold (at most 32 MiB) to the kernel on
// free, so each step's large activations and gradients arrive as freshly mapped zero pages
// that the first kernel writing them (often a fill) pays to fault in (docs/PERFORMANCE.md,
// "CPU memory: cached, not refaulted").
//
// Built on jemalloc, not by hand: a dedicated arena whose dirty and muzzy decay are -1 (its
// freed pages are never purged, so a freed block's pages are reused by the next request of
// that size class), blocks of 16 KiB and more taken with mallocx(MALLOCX_ARENA |
// MALLOCX_TCACHE_NONE | MALLOCX_ALIGN(64)) and freed with dallocx; smaller blocks come from
// jemalloc's ordinary (thread-cached) small slabs. tokbench links libjemalloc, which makes it the
// process's malloc too; that is what makes any install/remove order safe: a block this
// allocator made and c10's default allocator frees (free()) and the reverse (dallocx on a
// posix_memalign'd block) are both frees of a jemalloc pointer. install() checks that malloc
// is jemalloc's and refuses otherwise (e.g. another allocator LD_PRELOADed).
//
// How its counts map to CUDA's caching allocator (torch.cuda.memory_allocated / _reserved):
//   allocated = bytes handed to live tensors: CpuMemoryCounter's count (memory_tracking.hpp),
//               as CUDA's "allocated" counts blocks in use;
//   reserved  = bytes the arena holds from the kernel, in use or cached: its active plus
//               dirty (freed, kept) plus muzzy pages, as CUDA's "reserved" counts the
//               cudaMalloc'd segments, in use or cached; plus the live small blocks. With
//               decay -1 the arena never shrinks while the process lives, as CUDA's
//               reserved never does without empty_cache.
#pragma once

#include <cstdint>

namespace c10 {
struct Allocator;
}

namespace tokbench::train {

// The process's one caching allocator (never destroyed: storages point to it).
c10::Allocator* caching_cpu_allocator();

// Whether `allocator` is the caching allocator (without creating it).
bool is_caching_cpu_allocator(const c10::Allocator* allocator);

// Bytes the caching allocator's arena holds (active + dirty + muzzy pages); 0 before first use.
int64_t caching_cpu_reserved_bytes();

// Installs the caching allocator as c10's CPU allocator for its lifetime and restores the
// allocator that was current before. Throws std::runtime_error (one line) when the process's
// malloc is not jemalloc's. Tensors made while installed may be freed after its removal,
// through any allocator (see the file comment).
class ScopedCachingCpuAllocator {
 public:
  ScopedCachingCpuAllocator();
  ~ScopedCachingCpuAllocator();
  ScopedCachingCpuAllocator(const ScopedCachingCpuAllocator&) = delete;
  ScopedCachingCpuAllocator& operator=(const ScopedCachingCpuAllocator&) = delete;

 private:
  c10::Allocator* previous_ = nullptr;
};

}  // namespace tokbench::train
