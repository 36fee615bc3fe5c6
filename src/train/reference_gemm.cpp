// The reference probe's matrix product (reference_gemm.hpp).
#include "train/reference_gemm.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cstdlib>
#include <new>
#include <fmt/format.h>

namespace tokbench::train {

// The operands live in plain heap storage, not LibTorch's CPU allocator: a probe held through a
// run's window (its in-window products) must not show in the run's memory figures, which count
// that allocator's blocks (tokbench's caching arena keeps what it was given). Aligned to 64 bytes
// as that allocator aligns, so the product runs as it did from its blocks.
struct ReferenceGemm::Operands {
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> storage;
  at::Tensor a, b, out;
};

ReferenceGemm::ReferenceGemm(int64_t size) : operands_(std::make_unique<Operands>()), size_(size) {
  const int64_t elements = size * size;
  constexpr std::size_t kAlignment = 64;
  const std::size_t bytes = static_cast<std::size_t>(3 * elements) * sizeof(float);
  // aligned_alloc takes a size that is a multiple of the alignment.
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  operands_->storage.reset(static_cast<float*>(std::aligned_alloc(kAlignment, rounded)));
  if (!operands_->storage) throw std::bad_alloc();
  float* base = operands_->storage.get();
  const auto matrix = [&](int64_t index) { return at::from_blob(base + index * elements, {size, size}, at::kFloat); };
  operands_->a = matrix(0);
  operands_->b = matrix(1);
  operands_->out = matrix(2);
  // Its own generator: a probe beside a run leaves the process's random stream as it found it.
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(/*seed_in=*/1024);
  operands_->a.uniform_(0, 1, generator);
  operands_->b.uniform_(0, 1, generator);
  at::mm_out(operands_->out, operands_->a, operands_->b);  // warm-up, untimed
}

ReferenceGemm::~ReferenceGemm() = default;

double ReferenceGemm::seconds() {
  const auto start = std::chrono::steady_clock::now();
  at::mm_out(operands_->out, operands_->a, operands_->b);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<double> time_reference_gemm(int repeats, int64_t size) {
  ReferenceGemm gemm(size);
  std::vector<double> out;
  for (int i = 0; i < repeats; ++i) out.push_back(gemm.seconds());
  return out;
}

int64_t within_window_stride(int64_t measured_iters) {
  if (measured_iters <= 1) return 0;
  // The last measured iteration is followed by the after-side's products, not one of these.
  const int64_t gaps = measured_iters - 1;
  return (gaps + kMaxWithinWindowProbes - 1) / kMaxWithinWindowProbes;
}

std::string reference_gemm_words(int64_t size) { return fmt::format("fp32 {0}x{0}x{0} matrix product (at::mm_out)", size); }

}  // namespace tokbench::train
