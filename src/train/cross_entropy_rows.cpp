// cross_entropy_rows_in_place (cross_entropy_rows.hpp): argument checks, the rows spread over
// ATen's intra-op threads, ignored rows zeroed, and each row handed to the kernel of the
// widest ISA that ATen itself uses on this machine (at::get_cpu_capability, which honours
// ATEN_CPU_CAPABILITY), chosen once per process.
#include "train/cross_entropy_rows.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "train/cross_entropy_rows_kernel.hpp"

namespace tokbench::train {
namespace {

using Fp32Row = float (*)(float*, int64_t, int64_t, float, float);
using Bf16Row = float (*)(c10::BFloat16*, float*, int64_t, int64_t, float, float);
struct RowKernels {
  const char* isa;
  Fp32Row fp32;
  Bf16Row bf16;
};

const RowKernels& row_kernels() {
  namespace k = cross_entropy_kernel;
  static const RowKernels chosen = []() -> RowKernels {
#if defined(__x86_64__)
    const std::string isa = at::get_cpu_capability();
    if (isa == "AVX512") return {"AVX512", &k::AVX512::cross_entropy_row, &k::AVX512::cross_entropy_row};
    if (isa == "AVX2") return {"AVX2", &k::AVX2::cross_entropy_row, &k::AVX2::cross_entropy_row};
#endif
    return {"DEFAULT", &k::DEFAULT::cross_entropy_row, &k::DEFAULT::cross_entropy_row};
  }();
  return chosen;
}

}  // namespace

at::Tensor cross_entropy_rows_in_place(const at::Tensor& logits, const at::Tensor& targets,
                                       std::optional<double> softcap, double grad_scale) {
  TORCH_CHECK(logits.device().is_cpu() && logits.dim() == 2 && logits.is_contiguous(),
              "cross_entropy_rows_in_place: contiguous (R, V) CPU logits expected, got ", logits.sizes(), " on ",
              logits.device());
  TORCH_CHECK(logits.scalar_type() == at::kFloat || logits.scalar_type() == at::kBFloat16,
              "cross_entropy_rows_in_place: fp32 or bf16 logits expected, got ", logits.scalar_type());
  TORCH_CHECK(targets.device().is_cpu() && targets.dim() == 1 && targets.size(0) == logits.size(0) &&
                  targets.scalar_type() == at::kLong,
              "cross_entropy_rows_in_place: (R) int64 CPU targets expected, got ", targets.sizes(), " ",
              targets.scalar_type());
  TORCH_CHECK(!softcap || *softcap > 0, "cross_entropy_rows_in_place: softcap must be positive");
  const int64_t rows = logits.size(0), vocab = logits.size(1);
  auto losses = at::empty({rows}, logits.options().dtype(at::kFloat));
  const auto targets_c = targets.contiguous();
  const int64_t* target_of = targets_c.data_ptr<int64_t>();
  float* loss_of = losses.data_ptr<float>();
  const float cap = static_cast<float>(softcap.value_or(0.0));
  const float scale = static_cast<float>(grad_scale);
  const bool bf16 = logits.scalar_type() == at::kBFloat16;
  char* base = static_cast<char*>(logits.data_ptr());
  const int64_t row_bytes = vocab * static_cast<int64_t>(logits.element_size());
  const RowKernels& kernels = row_kernels();
  at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(bf16 ? vocab : 0);  // the bf16 row in fp32, once per thread
    for (int64_t r = begin; r < end; ++r) {
      void* row = base + r * row_bytes;
      const int64_t target = target_of[r];
      if (target == -1) {  // all-zero bits are 0.0 in both dtypes
        std::memset(row, 0, row_bytes);
        loss_of[r] = 0.0f;
        continue;
      }
      TORCH_CHECK(target >= 0 && target < vocab, "cross_entropy_rows_in_place: target ", target,
                  " out of range for vocab ", vocab, " (row ", r, ")");
      loss_of[r] = bf16 ? kernels.bf16(static_cast<c10::BFloat16*>(row), scratch.data(), vocab, target, cap, scale)
                        : kernels.fp32(static_cast<float*>(row), vocab, target, cap, scale);
    }
  });
  return losses;
}

const char* cross_entropy_rows_isa() { return row_kernels().isa; }

}  // namespace tokbench::train
