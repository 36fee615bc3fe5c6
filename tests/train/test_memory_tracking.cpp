// The counting CPU allocator: it sees tensor allocations, peaks and frees, enforces its cap
// with c10::OutOfMemoryError, refuses to nest, restores the previous allocator and hands out
// blocks every CPU path accepts (install/remove orders: test_allocator_safety.cpp).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>

#include <stdexcept>

#include "train/memory_tracking.hpp"

namespace tokbench::train {
namespace {

constexpr int64_t kMiB = 1 << 20;

TEST(CpuMemoryCounter, SeesAOneMegabyteTensorAndItsRelease) {
  CpuMemoryCounter counter;
  const int64_t before = counter.current_bytes();
  {
    at::Tensor t = at::ones({kMiB}, at::kByte);
    EXPECT_GE(counter.current_bytes() - before, kMiB);
    EXPECT_GE(counter.peak_bytes() - before, kMiB);
  }
  EXPECT_EQ(counter.current_bytes(), before);
  EXPECT_GE(counter.peak_bytes() - before, kMiB);  // the peak stays
  counter.reset_peak();
  EXPECT_EQ(counter.peak_bytes(), counter.current_bytes());
}

TEST(CpuMemoryCounter, EmptyTensorsCostNothing) {
  CpuMemoryCounter counter;
  const int64_t before = counter.current_bytes();
  at::Tensor empty = at::empty({0});
  EXPECT_EQ(counter.current_bytes(), before);
  empty.resize_({16});  // grows through the counting allocator
  EXPECT_GE(counter.current_bytes() - before, 16 * 4);
  empty.reset();
  EXPECT_EQ(counter.current_bytes(), before);
}

TEST(CpuMemoryCounter, CountsTheBaselineAndIntermediateResults) {
  CpuMemoryCounter counter(std::nullopt, 10 * kMiB);
  EXPECT_GE(counter.current_bytes(), 10 * kMiB);
  const int64_t before = counter.peak_bytes();
  at::Tensor a = at::randn({512, 512});  // 1 MiB of fp32
  at::Tensor b = at::matmul(a, a);      // another MiB, made inside an ATen kernel
  EXPECT_GE(counter.peak_bytes() - before, 2 * kMiB);
}

TEST(CpuMemoryCounter, CapRaisesOutOfMemoryError) {
  int64_t held = 0;
  {
    CpuMemoryCounter probe;
    held = probe.current_bytes();  // counted tensors still alive from earlier tests
  }
  CpuMemoryCounter counter(/*cap_bytes=*/held + 4 * kMiB, 0);
  at::Tensor small = at::empty({kMiB}, at::kByte);  // within the cap
  EXPECT_THROW(at::empty({8 * kMiB}, at::kByte), c10::OutOfMemoryError);
  try {
    at::empty({8 * kMiB}, at::kByte);
  } catch (const c10::OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("CPU memory cap exceeded"), std::string::npos) << e.what();
  }
}

TEST(CpuMemoryCounter, RestoresThePreviousAllocatorAndRefusesToNest) {
  c10::Allocator* before = c10::GetAllocator(c10::DeviceType::CPU);
  at::Tensor outlives;
  {
    CpuMemoryCounter counter;
    EXPECT_NE(c10::GetAllocator(c10::DeviceType::CPU), before);
    EXPECT_THROW(CpuMemoryCounter nested, std::logic_error);
    outlives = at::ones({1024});
  }
  EXPECT_EQ(c10::GetAllocator(c10::DeviceType::CPU), before);
  outlives.add_(1);  // a tensor made by the counter lives on and is freed after it is removed
  EXPECT_EQ(outlives[0].item<float>(), 2.0f);
  outlives.resize_({4096});  // resizing goes through the storage's (counting) allocator
  outlives.reset();
}

// The counter's DataPtrs look like the default allocator's: data == context, and the one
// deleter raw_deleter() names, so raw_allocate/raw_deallocate, clone and copy-on-write
// storages work on them as on any CPU block.
TEST(CpuMemoryCounter, HandsOutSimpleDataPtrsThatRawAndCopyOnWritePathsAccept) {
  CpuMemoryCounter counter;
  c10::Allocator* allocator = c10::GetAllocator(c10::DeviceType::CPU);
  const int64_t before = counter.current_bytes();
  at::Tensor t = at::arange(1024, at::kFloat);
  const c10::DataPtr& data_ptr = t.storage().data_ptr();
  EXPECT_EQ(data_ptr.get(), data_ptr.get_context());
  EXPECT_TRUE(allocator->is_simple_data_ptr(data_ptr));
  EXPECT_EQ(data_ptr.get_deleter(), allocator->raw_deleter());
  EXPECT_EQ(counter.current_bytes() - before, 4096);

  c10::DataPtr copy = allocator->clone(t.data_ptr(), 4096);  // Allocator::clone -> copy_data
  EXPECT_EQ(static_cast<const float*>(copy.get())[1000], 1000.0f);
  EXPECT_EQ(counter.current_bytes() - before, 2 * 4096);
  copy.clear();

  at::Tensor lazy = t._lazy_clone();  // copy-on-write: shares the block until written
  EXPECT_EQ(counter.current_bytes() - before, 4096);
  lazy.add_(1);                       // materializes through the storage's (counting) allocator
  EXPECT_EQ(counter.current_bytes() - before, 2 * 4096);
  EXPECT_EQ(lazy[1023].item<float>(), 1024.0f);
  EXPECT_EQ(t[1023].item<float>(), 1023.0f);
  t.reset();
  lazy.reset();
  EXPECT_EQ(counter.current_bytes(), before);

  void* raw = allocator->raw_allocate(100);
  EXPECT_EQ(counter.current_bytes() - before, 100);
  allocator->raw_deallocate(raw);
  EXPECT_EQ(counter.current_bytes(), before);
}

TEST(RunMemoryTracker, CpuPeaksIncludeTheBaselineAndRss) {
  RunMemoryTracker tracker(c10::Device(c10::kCPU), std::nullopt, 3 * kMiB);
  at::Tensor t = at::ones({kMiB}, at::kByte);
  const MemoryPeaks peaks = tracker.peaks();
  EXPECT_GE(peaks.allocated_bytes, 4 * kMiB);
  EXPECT_EQ(peaks.reserved_bytes, peaks.allocated_bytes);
  EXPECT_GT(peaks.peak_rss_bytes, kMiB);
}

TEST(PeakRss, IsPositive) { EXPECT_GT(peak_rss_bytes(), 0); }

}  // namespace
}  // namespace tokbench::train
