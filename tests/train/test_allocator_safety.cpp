// The counting CPU allocator under every install/remove order. c10's CPU allocator is one
// process-wide slot, and oneDNN (through ideep, for bf16 on the CPU) allocates with
// GetAllocator(CPU)->raw_allocate and frees with GetAllocator(CPU)->raw_deallocate, asking
// the slot each time: a block can be allocated by one allocator and freed by whichever is
// current later. These tests do exactly that, directly and inside bf16 training runs, with
// counters installed and removed in different orders. Against the earlier counter (a header
// in front of each block) every test that crosses a swap with a raw block crashed: free():
// invalid pointer (a counted block freed by the default allocator), or a jump through a
// garbage "header" read in front of a block the counter never made.
//
// Exact counts come first: the tests after them free counted blocks behind the counter's
// back on purpose, and those bytes stay counted until their address comes back through the
// counter (memory_tracking.hpp), which would shift later exact counts when the whole binary
// runs in one process (ctest runs each test in a process of its own).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "model/catalog.hpp"
#include "train/memory_tracking.hpp"
#include "train/train_loop.hpp"

namespace tokbench::train {
namespace {

constexpr int64_t kMiB = 1 << 20;

c10::Allocator* current_cpu_allocator() { return c10::GetAllocator(c10::DeviceType::CPU); }

// What ideep's engine allocator does (ATen/native/mkldnn/IDeepRegistration.cpp): allocate
// and free through whatever CPU allocator is current at that moment.
void* onednn_malloc(std::size_t n) {
  void* p = current_cpu_allocator()->raw_allocate(n);
  std::memset(p, 0xA5, n);  // touch it, as a kernel would
  return p;
}
void onednn_free(void* p) { current_cpu_allocator()->raw_deallocate(p); }

TEST(AllocatorSafety, RawBlockFromBeforeInstallIsFreedByItsOwnAllocator) {
  std::vector<void*> blocks;
  for (std::size_t n : {64u, 1000u, 4096u, 100000u, 3u << 20}) blocks.push_back(onednn_malloc(n));
  CpuMemoryCounter counter;
  ASSERT_NE(current_cpu_allocator(), c10::GetDefaultCPUAllocator());
  const int64_t before = counter.current_bytes();
  for (void* p : blocks) onednn_free(p);  // the counter's raw deleter, on blocks it never made
  EXPECT_EQ(counter.current_bytes(), before);  // nothing uncounted that was not counted
}

TEST(AllocatorSafety, RawBlocksAllocatedAndFreedUnderTheCounterAreCountedExactly) {
  CpuMemoryCounter counter;
  const int64_t before = counter.current_bytes();
  void* a = onednn_malloc(5000);
  void* b = onednn_malloc(kMiB);
  EXPECT_EQ(counter.current_bytes() - before, 5000 + kMiB);
  EXPECT_GE(counter.peak_bytes() - before, 5000 + kMiB);
  onednn_free(a);
  EXPECT_EQ(counter.current_bytes() - before, kMiB);
  onednn_free(b);
  EXPECT_EQ(counter.current_bytes(), before);
}

TEST(AllocatorSafety, BlocksOutliveTheirCounterAndAreUncountedByTheNextOne) {
  at::Tensor from_default = at::ones({kMiB}, at::kByte);  // before any counter
  at::Tensor from_first;
  void* raw_from_first = nullptr;
  {
    CpuMemoryCounter first;
    from_first = at::ones({2 * kMiB}, at::kByte);
    raw_from_first = onednn_malloc(kMiB);
  }
  at::Tensor from_between = at::ones({kMiB}, at::kByte);  // no counter
  {
    CpuMemoryCounter second;
    const int64_t held = second.current_bytes();
    from_default.reset();  // the default allocator's deleter travels with the tensor
    from_between.reset();
    EXPECT_EQ(second.current_bytes(), held);
    from_first.reset();  // counted by the first counter: uncounted now, by exactly its bytes
    EXPECT_EQ(second.current_bytes(), held - 2 * kMiB);
    onednn_free(raw_from_first);  // through the second counter's raw deleter
    EXPECT_EQ(second.current_bytes(), held - 3 * kMiB);
  }
}

// A CPU allocator of someone else's (a pool) in the slot before the counter: the counter wraps
// it, and every block must go back to it whatever is current when it is freed. It keeps freed
// blocks for reuse (last freed, first reused), so an address comes back deterministically,
// and it aborts on a pointer it did not hand out: a free sent to the wrong allocator.
class PoolCpuAllocator final : public c10::Allocator {
 public:
  static PoolCpuAllocator& instance() {
    static auto* allocator = new PoolCpuAllocator();
    return *allocator;
  }
  c10::DataPtr allocate(std::size_t n) override {
    void* p = nullptr;
    if (n > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& free_list = free_[n];
      if (!free_list.empty()) {
        p = free_list.back();
        free_list.pop_back();
      } else if (::posix_memalign(&p, 64, n) != 0) {
        throw std::bad_alloc();
      }
      live_[p] = n;
    }
    return {p, p, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
  std::size_t live_blocks() {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }

 private:
  static void release(void* p) {
    if (p == nullptr) return;
    PoolCpuAllocator& self = instance();
    std::lock_guard<std::mutex> lock(self.mutex_);
    const auto it = self.live_.find(p);
    if (it == self.live_.end()) std::abort();
    self.free_[it->second].push_back(p);
    self.live_.erase(it);
  }
  std::mutex mutex_;
  std::unordered_map<void*, std::size_t> live_;
  std::unordered_map<std::size_t, std::vector<void*>> free_;
};

// Puts `allocator` in the CPU slot for a scope and the previous one back after.
class CpuSlot {
 public:
  explicit CpuSlot(c10::Allocator* allocator) : previous_(current_cpu_allocator()) {
    c10::SetAllocator(c10::DeviceType::CPU, allocator, 255);
  }
  ~CpuSlot() { c10::SetAllocator(c10::DeviceType::CPU, previous_, 255); }
  CpuSlot(const CpuSlot&) = delete;
  CpuSlot& operator=(const CpuSlot&) = delete;

 private:
  c10::Allocator* previous_;
};

// The one free the counter cannot see: a counted block freed by another allocator after the
// counter's removal. Its bytes stay counted until the address comes back through the
// counter, and are then uncounted once, not counted twice.
TEST(AllocatorSafety, ABlockFreedBehindTheCounterIsUncountedOnceWhenItsAddressReturns) {
  PoolCpuAllocator& pool = PoolCpuAllocator::instance();
  CpuSlot slot(&pool);
  void* first = nullptr;
  int64_t held = 0;
  {
    CpuMemoryCounter counter;
    held = counter.current_bytes();
    first = onednn_malloc(8192);
    EXPECT_EQ(counter.current_bytes(), held + 8192);
  }
  onednn_free(first);  // the pool's raw deleter: the counter does not see this free
  {
    CpuMemoryCounter counter;
    EXPECT_EQ(counter.current_bytes(), held + 8192);  // still counted
    void* again = onednn_malloc(8192);
    ASSERT_EQ(again, first);  // the pool hands the same block out again
    EXPECT_EQ(counter.current_bytes(), held + 8192);  // its stale record replaced, not added to
    onednn_free(again);
    EXPECT_EQ(counter.current_bytes(), held);
  }
  EXPECT_EQ(pool.live_blocks(), 0u);
}

TEST(AllocatorSafety, EveryBlockGoesBackToTheAllocatorThatMadeIt) {
  PoolCpuAllocator& pool = PoolCpuAllocator::instance();
  CpuSlot slot(&pool);
  void* before_counter = onednn_malloc(4096);
  at::Tensor tensor_before = at::ones({1000});
  void* under_counter = nullptr;
  at::Tensor tensor_under;
  {
    CpuMemoryCounter counter;
    const int64_t held = counter.current_bytes();
    onednn_free(before_counter);  // the counter's raw deleter -> the pool's
    tensor_before.reset();        // the pool's deleter, carried by the tensor
    EXPECT_EQ(counter.current_bytes(), held);
    under_counter = onednn_malloc(8192);
    tensor_under = at::ones({2000});
    EXPECT_EQ(counter.current_bytes(), held + 8192 + 8000);
  }
  EXPECT_EQ(current_cpu_allocator(), &pool);  // the counter put back what it wrapped
  onednn_free(under_counter);                 // the pool's raw deleter, on a counted block
  tensor_under.reset();                       // the counter's deleter -> the pool's
  EXPECT_EQ(pool.live_blocks(), 0u);
}

TEST(AllocatorSafety, RawBlockFromTheCounterIsFreedAfterItsRemoval) {
  std::vector<void*> blocks;
  {
    CpuMemoryCounter counter;
    const int64_t before = counter.current_bytes();
    for (std::size_t n : {64u, 1000u, 4096u, 100000u, 3u << 20}) blocks.push_back(onednn_malloc(n));
    EXPECT_EQ(counter.current_bytes() - before, 64 + 1000 + 4096 + 100000 + (3 << 20));
  }
  ASSERT_EQ(current_cpu_allocator(), c10::GetDefaultCPUAllocator());
  for (void* p : blocks) onednn_free(p);  // the default allocator's raw deleter, on counted blocks
  // The process is still sound: the allocator hands out and frees memory as before.
  for (int i = 0; i < 100; ++i) onednn_free(onednn_malloc(4096));
}

// Allocation and free on the intra-op threads, as oneDNN's kernels do, across removals; each
// block holds its own byte pattern, which a block freed twice or handed out twice would break.
TEST(AllocatorSafety, ThreadsAllocateUnderOneAllocatorAndFreeUnderAnother) {
  constexpr int64_t kBlocks = 256;
  auto size_of = [](int64_t i) { return static_cast<std::size_t>(64 * (i + 1)); };
  std::vector<unsigned char*> blocks(kBlocks, nullptr);
  std::atomic<int64_t> corrupted{0};
  auto check_and_free = [&](int64_t i) {
    for (std::size_t b = 0; b < size_of(i); ++b) {
      if (blocks[i][b] != static_cast<unsigned char>(i)) {
        corrupted.fetch_add(1);
        break;
      }
    }
    onednn_free(blocks[i]);
  };
  for (int round = 0; round < 6; ++round) {
    std::optional<CpuMemoryCounter> counter;
    if (round % 2 == 0) counter.emplace();
    at::parallel_for(0, kBlocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if (blocks[i] != nullptr) check_and_free(i);
        blocks[i] = static_cast<unsigned char*>(onednn_malloc(size_of(i)));
        std::memset(blocks[i], static_cast<int>(i & 0xFF), size_of(i));
      }
    });
  }
  {
    CpuMemoryCounter counter;  // frees the last round's blocks, made with no counter
    at::parallel_for(0, kBlocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) check_and_free(i);
    });
    EXPECT_GE(counter.current_bytes(), 0);
  }
  EXPECT_EQ(corrupted.load(), 0);
}

// bf16 matmuls and their backward go through oneDNN on the CPU; swap allocators between them.
// oneDNN's buffers live within one kernel, so swaps between kernels on the same thread never
// cross one (this passed before the side table too); the next test crosses them.
TEST(AllocatorSafety, Bf16KernelsAcrossSwaps) {
  at::manual_seed(0);
  const at::Tensor x = at::randn({64, 256}).to(at::kBFloat16);
  at::Tensor w = at::randn({256, 256}).to(at::kBFloat16).requires_grad_(true);
  const at::Tensor reference = at::matmul(x, w).to(at::kFloat);
  for (int round = 0; round < 6; ++round) {
    std::optional<CpuMemoryCounter> counter;
    if (round % 3 != 2) counter.emplace();
    at::Tensor y = at::linear(x, w);
    y.sum().backward();
    EXPECT_TRUE(at::allclose(at::matmul(x, w.detach()).to(at::kFloat), reference));
    w.mutable_grad().reset();
  }
}

// The realistic crossing: oneDNN's buffers (scratchpads, reorders) live for one kernel, so
// they cross a swap when another thread installs or removes a counter mid-kernel.
TEST(AllocatorSafety, Bf16KernelsOnAnotherThreadWhileCountersComeAndGo) {
  std::atomic<bool> done{false};
  std::atomic<int64_t> kernels{0};
  std::thread worker([&] {
    at::manual_seed(0);
    const at::Tensor x = at::randn({64, 256}).to(at::kBFloat16);
    at::Tensor w = at::randn({256, 256}).to(at::kBFloat16).requires_grad_(true);
    while (!done.load()) {
      at::linear(x, w).sum().backward();
      w.mutable_grad().reset();
      kernels.fetch_add(1);
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int64_t swaps = 0;
  while ((kernels.load() < 300 || swaps < 3000) && std::chrono::steady_clock::now() < deadline) {
    CpuMemoryCounter counter;
    ++swaps;
    std::this_thread::yield();
  }
  done = true;
  worker.join();
  EXPECT_GT(kernels.load(), 0);
  EXPECT_EQ(current_cpu_allocator(), c10::GetDefaultCPUAllocator());
}

model::Config tiny_config() {
  return model::with_overrides(model::config_by_name("pythia-14m"), {.n_layer = 1, .seq_len = 32});
}

model::GPT tiny_model(uint64_t seed = 1337) {
  model::GPT gpt(tiny_config(), torch::TensorOptions().dtype(torch::kFloat).device(torch::kCPU));
  gpt->reset_parameters(seed);
  return gpt;
}

TrainOptions tiny_options(model::TrainPrecision dtype) {
  TrainOptions options;
  options.micro_batch = 2;
  options.seq_len = 32;
  options.max_iters = 3;
  options.warmup_iters = 1;
  options.dtype = dtype;
  return options;
}

// Several bf16-true and bf16-mixed runs in one process (each installs and removes its own
// counter), interleaved with counters installed around model construction and with
// oneDNN-style blocks that cross each run's install and removal: one allocated before a run
// and freed inside it, one allocated inside it and freed after it.
TEST(AllocatorSafety, Bf16RunsInterleavedWithCounters) {
  using model::TrainPrecision;
  const TrainPrecision modes[] = {TrainPrecision::bf16_true, TrainPrecision::bf16_mixed, TrainPrecision::bf16_mixed,
                                  TrainPrecision::bf16_true, TrainPrecision::bf16_true, TrainPrecision::bf16_mixed};
  std::vector<void*> made_inside;  // allocated during a run, freed after it
  for (int run = 0; run < 6; ++run) {
    // Odd runs build their model under a counter of their own, removed before the run.
    std::optional<model::GPT> gpt;
    if (run % 2 == 1) {
      CpuMemoryCounter building;
      gpt.emplace(tiny_model(1337 + run));
    } else {
      gpt.emplace(tiny_model(1337 + run));
    }
    void* made_before = onednn_malloc(static_cast<std::size_t>(3000 + 17 * run));
    bool freed_inside = false;
    const TrainResult result = run_training(
        *gpt, torch::Device(torch::kCPU), tiny_options(modes[run]),
        [&](const IterationRecord& record) {
          if (!freed_inside) {
            onednn_free(made_before);  // the run's counter is current now
            freed_inside = true;
          }
          made_inside.push_back(onednn_malloc(static_cast<std::size_t>(5000 + record.index)));
        },
        nullptr);
    ASSERT_EQ(result.status, RunStatus::ok) << "run " << run << " (" << to_string(modes[run]) << "): " << result.message;
    for (const auto& record : result.iterations) EXPECT_TRUE(std::isfinite(record.loss)) << "run " << run;
    EXPECT_GT(result.memory.allocated_bytes, 0);
    // Half of the blocks made inside runs are freed with no counter, half under a new one.
    if (run % 2 == 0) {
      for (void* p : made_inside) onednn_free(p);
    } else {
      CpuMemoryCounter freeing;
      for (void* p : made_inside) onednn_free(p);
    }
    made_inside.clear();
    // The model's parameters (some counted by the building counter) are freed here, with no
    // counter installed, and the next run's counter is then installed over the default again.
    gpt.reset();
    ASSERT_EQ(current_cpu_allocator(), c10::GetDefaultCPUAllocator());
  }
}

}  // namespace
}  // namespace tokbench::train
