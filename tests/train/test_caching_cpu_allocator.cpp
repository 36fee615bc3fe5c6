// The caching CPU allocator (caching_cpu_allocator.hpp): counted as CUDA's caching allocator
// is — reserved >= allocated, reserved flat across iterations once warm (blocks are reused,
// not refaulted), allocated back at its baseline after each iteration — and safe when
// blocks cross an install or removal in either direction, also under the counting allocator.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>

#include <cstring>
#include <vector>

#include "model/catalog.hpp"
#include "train/caching_cpu_allocator.hpp"
#include "train/memory_tracking.hpp"
#include "train/train_loop.hpp"

namespace tokbench::train {
namespace {

c10::Allocator* current_cpu_allocator() { return c10::GetAllocator(c10::DeviceType::CPU); }

// One pretend training iteration: activations of a few sizes (small and above glibc's mmap
// threshold), written, combined and freed.
void iteration() {
  std::vector<at::Tensor> activations;
  for (int64_t n : {1 << 10, 1 << 16, 1 << 20, 12 << 20}) activations.push_back(at::ones({n}, at::kFloat));
  at::Tensor sum = activations.back().sum();
  void* raw = current_cpu_allocator()->raw_allocate(3 << 20);  // as oneDNN's scratchpads are
  std::memset(raw, 1, 3 << 20);
  current_cpu_allocator()->raw_deallocate(raw);
  ASSERT_EQ(sum.item<float>(), 12 << 20);
}

TEST(CachingCpuAllocator, ReservedCoversAllocatedAndStaysFlatOnceWarm) {
  ScopedCachingCpuAllocator caching;
  ASSERT_TRUE(is_caching_cpu_allocator(current_cpu_allocator()));
  const at::Tensor parameters = at::zeros({4 << 20}, at::kFloat);  // held across iterations
  CpuMemoryCounter counter(std::nullopt, 0);
  const int64_t baseline = counter.current_bytes();
  std::vector<int64_t> reserved;
  for (int i = 0; i < 12; ++i) {
    counter.reset_peak();
    iteration();
    const int64_t now = caching_cpu_reserved_bytes();
    EXPECT_GE(now, counter.peak_bytes()) << "iteration " << i;
    EXPECT_GE(now, static_cast<int64_t>(parameters.nbytes()));
    EXPECT_EQ(counter.current_bytes(), baseline) << "iteration " << i << " left tensors allocated";
    reserved.push_back(now);
  }
  // After two warm-up iterations the arena serves every block from pages it already holds.
  for (int i = 2; i < 12; ++i) EXPECT_EQ(reserved[i], reserved[1]) << "iteration " << i << " " << reserved[i] - reserved[1];
}

TEST(CachingCpuAllocator, BlocksCrossInstallAndRemovalEitherWay) {
  at::Tensor from_default = at::ones({1 << 20}, at::kFloat);
  void* raw_default = current_cpu_allocator()->raw_allocate(5 << 20);
  at::Tensor from_caching;
  void* raw_caching = nullptr;
  {
    ScopedCachingCpuAllocator caching;
    from_caching = at::ones({1 << 20}, at::kFloat);
    raw_caching = current_cpu_allocator()->raw_allocate(5 << 20);
    std::memset(raw_caching, 2, 5 << 20);
    current_cpu_allocator()->raw_deallocate(raw_default);  // default's block, caching's deleter
    from_default.reset();
  }
  EXPECT_FALSE(is_caching_cpu_allocator(current_cpu_allocator()));
  current_cpu_allocator()->raw_deallocate(raw_caching);  // caching's block, default's deleter
  EXPECT_EQ(from_caching.sum().item<float>(), 1 << 20);
  from_caching.reset();
}

TEST(CachingCpuAllocator, CounterAndCachingInAnyOrder) {
  std::optional<ScopedCachingCpuAllocator> caching(std::in_place);
  std::optional<CpuMemoryCounter> counter(std::in_place);
  at::Tensor a = at::ones({1 << 20}, at::kFloat);
  caching.reset();  // removed while the counter is still installed: the counter keeps wrapping it
  at::Tensor b = at::ones({1 << 20}, at::kFloat);
  counter.reset();
  a.reset();
  b.reset();
  counter.emplace();
  caching.emplace();  // installed over the counter
  at::Tensor c = at::ones({1 << 20}, at::kFloat);
  counter.reset();
  caching.reset();
  c.reset();
  SUCCEED();
}

// A real training run under the caching allocator: reserved >= allocated in its peaks.
TEST(CachingCpuAllocator, TrainingRunReportsReservedAtLeastAllocated) {
  ScopedCachingCpuAllocator caching;
  model::GPT gpt(model::with_overrides(model::config_by_name("pythia-14m"), {.n_layer = 1, .seq_len = 32}),
                 torch::TensorOptions().dtype(torch::kFloat));
  gpt->reset_parameters(1);
  TrainOptions o;
  o.micro_batch = 2;
  o.seq_len = 32;
  o.max_iters = 4;
  o.warmup_iters = 1;
  const TrainResult r = run_training(gpt, torch::Device(torch::kCPU), o, nullptr, nullptr);
  ASSERT_EQ(r.status, RunStatus::ok) << r.message;
  EXPECT_GT(r.memory.allocated_bytes, 0);
  EXPECT_GE(r.memory.reserved_bytes, r.memory.allocated_bytes);
}

}  // namespace
}  // namespace tokbench::train
