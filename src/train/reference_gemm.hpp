// The reference probe: one fixed fp32 matrix product, timed on the host, that says how fast this
// machine computes at a moment. `tokbench comm` times it for its compute sharing, and a one-rank
// CPU `tokbench run` times it beside its measured window; `tokbench predict` records their ratio,
// and with --compute-level comm-document divides the two to carry the run's compute to the comm
// document's moment (docs/predict.md, "The compute's level").
// This header is torch-free; the product runs LibTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tokbench::train {

// The product's size (n x n times n x n, fp32): large enough that one product (about 20 ms on one
// thread of the CI VM's cores) is not a timer's noise, small enough that a few fit beside a run.
inline constexpr int64_t kReferenceGemmSize = 1024;

// Two random n x n operands and an output, allocated once; one untimed product at construction
// (the kernel's first call pays for its set-up and the output's first touch).
class ReferenceGemm {
 public:
  explicit ReferenceGemm(int64_t size = kReferenceGemmSize);
  ~ReferenceGemm();
  ReferenceGemm(const ReferenceGemm&) = delete;
  ReferenceGemm& operator=(const ReferenceGemm&) = delete;
  // One product on the process's intra-op threads: its wall seconds (steady clock).
  double seconds();
  int64_t size() const { return size_; }

 private:
  struct Operands;
  std::unique_ptr<Operands> operands_;
  int64_t size_;
};

// `repeats` products of a ReferenceGemm made for the call and freed after: their seconds each.
std::vector<double> time_reference_gemm(int repeats, int64_t size = kReferenceGemmSize);

// Products on each side of a one-rank run's window: 8 in all with two untimed warm-ups, about
// 0.2 s on one thread of the CI VM (a 15-iteration pythia-31m window there is about 3 s).
inline constexpr int64_t kReferenceProbeRepeats = 4;

// Inside the window, one product between measured iterations, at most this many: the host's
// speed moves within seconds, and products at the window's edges read other moments than the
// iterations between them (docs/run.md, "The reference probe"). Each is outside the iterations'
// clocks, and each follows an untimed one (the iteration between has made the operands cold);
// 16 such pairs are about 0.4 s on one thread of the CI VM.
inline constexpr int64_t kMaxWithinWindowProbes = 16;

// A product after every this-many measured iterations (counted from the window's first), the last
// measured iteration excepted, so at most kMaxWithinWindowProbes of them; 0 for a window of one.
int64_t within_window_stride(int64_t measured_iters);

// The probe beside a one-rank run's window (LoopOptions::reference_probe_repeats): its products'
// seconds before the warm-up and after the measured window, each side's own ReferenceGemm, and
// between the window's iterations (one ReferenceGemm held through the loop).
struct ReferenceProbeTimes {
  int64_t size = kReferenceGemmSize;
  int64_t threads = 1;  // intra-op threads the products ran on
  std::vector<double> before_seconds, after_seconds, within_seconds;
};

// "fp32 NxNxN matrix product (at::mm_out)": the product in words, the same text in every record.
std::string reference_gemm_words(int64_t size = kReferenceGemmSize);

}  // namespace tokbench::train
