// The reference probe's matrix product (reference_gemm.hpp).
#include "train/reference_gemm.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <fmt/format.h>

namespace tokbench::train {

struct ReferenceGemm::Operands {
  at::Tensor a, b, out;
};

ReferenceGemm::ReferenceGemm(int64_t size) : operands_(std::make_unique<Operands>()), size_(size) {
  // Its own generator: a probe beside a run leaves the process's random stream as it found it.
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(/*seed_in=*/1024);
  operands_->a = at::rand({size, size}, generator);
  operands_->b = at::rand({size, size}, generator);
  operands_->out = at::empty_like(operands_->a);
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

std::string reference_gemm_words(int64_t size) { return fmt::format("fp32 {0}x{0}x{0} matrix product (at::mm_out)", size); }

}  // namespace tokbench::train
