// The one-pass cross-entropy row kernel equals at::cross_entropy_loss (reduction none,
// ignore_index -1) in per-row loss and, through autograd, in gradient: fp32 and bf16 logits,
// with and without soft-capping, ignored rows, a vocab that is no multiple of any vector
// width (and one narrower than a vector), and rows whose logits overflow exp without the
// max subtraction. ctest also runs this file under ATEN_CPU_CAPABILITY=default and avx2, so
// each ISA's kernel is checked on a machine that has them. Tolerance: relative norm.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "row_kernel_references.hpp"
#include "train/cross_entropy_rows.hpp"

namespace tokbench::train {
namespace {

using testing::relative_error;

struct RowsCase {
  torch::ScalarType dtype;
  int64_t rows, vocab;
  std::optional<double> softcap;
};

using Reference = testing::CrossEntropyReference;

Reference reference(const torch::Tensor& logits, const torch::Tensor& targets, std::optional<double> softcap,
                    double scale) {
  return testing::cross_entropy_reference(logits, targets, softcap, scale);
}

std::pair<torch::Tensor, torch::Tensor> inputs(const RowsCase& c) {
  return testing::cross_entropy_inputs(c.rows, c.vocab, c.dtype);
}

void check_rows(const RowsCase& c) {
  constexpr double kScale = 0.037;  // 1 / count · 1 / grad_accum in the chunked head
  auto [logits, targets] = inputs(c);
  const Reference want = reference(logits, targets, c.softcap, kScale);
  auto grad = logits.clone();
  const auto losses = cross_entropy_rows_in_place(grad, targets, c.softcap, kScale);
  ASSERT_EQ(losses.scalar_type(), torch::kFloat);
  ASSERT_EQ(grad.scalar_type(), c.dtype);
  EXPECT_TRUE(torch::isfinite(losses).all().item<bool>()) << losses;
  // Losses are fp32 arithmetic on the same values in both dtypes. The bf16 gradient is the
  // fp32 one rounded once (relative error below 2^-9 per element).
  EXPECT_LE(relative_error(losses, want.losses), 1e-5) << "losses, isa " << cross_entropy_rows_isa();
  const double grad_tolerance = c.dtype == torch::kFloat ? 1e-5 : 4e-3;
  EXPECT_LE(relative_error(grad, want.grad), grad_tolerance) << "gradient, isa " << cross_entropy_rows_isa();
  const auto ignored = targets.eq(-1);
  EXPECT_EQ(grad.index({ignored}).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(losses.index({ignored}).abs().sum().item<double>(), 0.0);
}

TEST(CrossEntropyRows, Fp32EqualsCrossEntropy) { check_rows({torch::kFloat, 24, 1003, {}}); }
TEST(CrossEntropyRows, Fp32SoftcappedEqualsCrossEntropy) { check_rows({torch::kFloat, 24, 1003, 30.0}); }
TEST(CrossEntropyRows, Bf16EqualsCrossEntropy) { check_rows({torch::kBFloat16, 24, 1003, {}}); }
TEST(CrossEntropyRows, Bf16SoftcappedEqualsCrossEntropy) { check_rows({torch::kBFloat16, 24, 1003, 30.0}); }
TEST(CrossEntropyRows, VocabNarrowerThanAVector) {
  check_rows({torch::kFloat, 9, 5, {}});
  check_rows({torch::kBFloat16, 9, 5, 3.0});
}
TEST(CrossEntropyRows, ManyVectorBlocks) { check_rows({torch::kFloat, 4, 70001, {}}); }

// The comparison can fail: a target off by one changes loss and gradient of that row.
TEST(CrossEntropyRows, ComparisonDetectsAWrongTarget) {
  auto [logits, targets] = inputs({torch::kFloat, 8, 37, {}});
  targets[0] = 4;
  const Reference want = reference(logits, targets, {}, 1.0);
  auto shifted = targets.clone();
  shifted[0] = 5;
  auto grad = logits.clone();
  const auto losses = cross_entropy_rows_in_place(grad, shifted, {}, 1.0);
  EXPECT_GT(relative_error(losses, want.losses), 1e-5);
  EXPECT_GT(relative_error(grad, want.grad), 1e-5);
}

TEST(CrossEntropyRows, AllIgnoredGivesZeroLossesAndGradient) {
  auto grad = torch::randn({5, 40});
  const auto losses = cross_entropy_rows_in_place(grad, torch::full({5}, -1, torch::kLong), {}, 1.0);
  EXPECT_EQ(losses.abs().sum().item<double>(), 0.0);
  EXPECT_EQ(grad.abs().sum().item<double>(), 0.0);
}

TEST(CrossEntropyRows, RejectsTargetsOutOfRange) {
  auto grad = torch::randn({3, 10});
  EXPECT_THROW(cross_entropy_rows_in_place(grad, torch::tensor({1, 10, 2}, torch::kLong), {}, 1.0), c10::Error);
  EXPECT_THROW(cross_entropy_rows_in_place(grad, torch::tensor({1, -2, 2}, torch::kLong), {}, 1.0), c10::Error);
  EXPECT_THROW(cross_entropy_rows_in_place(grad.t(), torch::tensor({1, 2, 3}, torch::kLong), {}, 1.0), c10::Error);
}

// The kernel of the ISA ATen runs: under ATEN_CPU_CAPABILITY (ctest's default/avx2 entries)
// the one named there, otherwise the one ATen reports for this CPU (at::get_cpu_capability):
// fails if that ISA's copy of the kernel is missing and another runs in its place.
TEST(CrossEntropyRows, RunsTheIsaAtenRuns) {
  const char* forced = std::getenv("ATEN_CPU_CAPABILITY");
  std::string want = forced ? forced : at::get_cpu_capability();
  for (auto& ch : want) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  EXPECT_EQ(std::string(cross_entropy_rows_isa()), want);
}

}  // namespace
}  // namespace tokbench::train
