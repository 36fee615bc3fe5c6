// tokbench throughput library: the one public header (C++20, standard library only).
// Lightning-compatible sliding-window throughput (`Throughput`, `ThroughputMonitor`), the
// datasheet peak-FLOPs table, a CPU peak estimate and MFU. Parity contract: same key order,
// bit-identical doubles and identical error texts as lightning.fabric.utilities.throughput
// (see docs/throughput.md for the deliberate differences).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tokbench {

// ---------------------------------------------------------------------------------------------
// Errors. Each mirrors a Python exception type; what() is exactly Python's str(exception), and
// where() says which library line raised it (docs/throughput.md, "Semantics (as Lightning)")
// without polluting the parity text.
struct SourceLocation {
  const char* file = "";
  int line = 0;
};

class ValueError : public std::invalid_argument {  // Python ValueError
 public:
  ValueError(const std::string& message, SourceLocation where = {});
  SourceLocation where() const noexcept { return where_; }

 private:
  SourceLocation where_;
};

class RuntimeError : public std::runtime_error {  // Python RuntimeError
 public:
  RuntimeError(const std::string& message, SourceLocation where = {});
  SourceLocation where() const noexcept { return where_; }

 private:
  SourceLocation where_;
};

class IndexError : public std::out_of_range {  // Python IndexError (compute() before update())
 public:
  IndexError(const std::string& message, SourceLocation where = {});
  SourceLocation where() const noexcept { return where_; }

 private:
  SourceLocation where_;
};

class AssertionError : public std::logic_error {  // Python `assert` (message may be empty)
 public:
  AssertionError(const std::string& message, SourceLocation where = {});
  SourceLocation where() const noexcept { return where_; }

 private:
  SourceLocation where_;
};

// Python's repr(float): shortest round-trip digits, ".0" kept on integral values, exponent
// form outside 1e-4 <= |x| < 1e16 ("1e+16", "1e-05"), and "inf", "-inf", "nan", "-0.0".
std::string python_repr(double value);

// ---------------------------------------------------------------------------------------------
// Warnings (Lightning's rank_zero_warn). The default sink prints each distinct message once to
// stderr, like Python's default warning filter. Pass nullptr to restore the default.
using WarningSink = std::function<void(std::string_view message)>;
WarningSink set_warning_sink(WarningSink sink);  // returns the previous sink
void emit_warning(std::string_view message);

// ---------------------------------------------------------------------------------------------
// Metric values and maps. Keys stay in Lightning's dict insertion order.
struct MetricValue {
  double value = 0.0;
  bool is_integer = false;  // batches, samples, lengths: Python ints

  static MetricValue integer(int64_t v) { return {static_cast<double>(v), true}; }
  static MetricValue real(double v) { return {v, false}; }
  int64_t as_int() const { return static_cast<int64_t>(value); }
  operator double() const { return value; }  // NOLINT: a metric reads as a number
  std::string to_string() const;              // "3" for ints, python_repr for doubles
  friend bool operator==(const MetricValue&, const MetricValue&) = default;
};

using Metrics = std::vector<std::pair<std::string, double>>;
using TypedMetrics = std::vector<std::pair<std::string, MetricValue>>;

namespace detail {
// Fixed-capacity FIFO that keeps the newest `capacity` values in insertion order. Storage
// grows only as values arrive, so a huge window size costs nothing until it fills.
template <typename T>
class SlidingWindow {
 public:
  explicit SlidingWindow(std::size_t capacity) : capacity_(capacity) {}
  std::size_t size() const { return data_.size(); }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return data_.empty(); }
  bool full() const { return data_.size() == capacity_; }
  void clear() {
    data_.clear();
    head_ = 0;
  }
  void push(T value) {
    if (data_.size() < capacity_) {
      data_.push_back(value);
    } else {  // overwrite the oldest; head_ always indexes the oldest once full
      data_[head_] = value;
      head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
    }
  }
  const T& front() const { return data_[head_]; }
  const T& back() const { return data_[head_ == 0 ? data_.size() - 1 : head_ - 1]; }
  // Oldest first, so sums run in the same order as Python's left-to-right sum().
  template <typename F>
  void for_each(F&& f) const {
    for (std::size_t i = head_; i < data_.size(); ++i) f(data_[i]);
    for (std::size_t i = 0; i < head_; ++i) f(data_[i]);
  }

 private:
  std::vector<T> data_;
  std::size_t head_ = 0;
  std::size_t capacity_;
};

// One flops-window entry, typed as Python would hold it. A float is stored already multiplied
// by the world size (one rounding, as in Python). An int keeps the two factors of its product:
// the product needs up to 127 bits, so the library forms it (and the window sum) exactly in
// wider-than-64-bit arithmetic, which keeps this header ISO C++.
struct FlopsEntry {
  double real = 0.0;       // float: flops x world size
  int64_t count = 0;       // int: flops per device
  int64_t world_size = 0;  // int: world size at update() (always > 0); 0 marks a float entry
  bool is_integer() const { return world_size != 0; }
};

// Integer FLOPs are taken as int64_t. A wider unsigned type (uint64_t, size_t) is rejected at
// compile time rather than wrapped or silently sent down the double path.
template <std::integral Int>
constexpr int64_t integer_flops(Int flops) {
  static_assert(sizeof(Int) < sizeof(int64_t) ||
                    (sizeof(Int) == sizeof(int64_t) && std::is_signed_v<Int>),
                "integer FLOPs must fit int64_t: cast to int64_t (exact) or double");
  return static_cast<int64_t>(flops);
}
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Defined outside the class so `Options options = {}` works as a default argument (GCC cannot
// use a nested class's member initializers before the enclosing class is complete).
struct ThroughputOptions {
  std::optional<double> available_flops;  // per-device peak FLOP/s; nullopt or 0 -> no mfu key
  int64_t world_size = 1;
  int64_t window_size = 100;
  std::string separator = "/";
  std::optional<bool> using_sparse_model;  // nullopt + available_flops -> dense-model warning
  double sparse_cuda_acceleration_factor = 2.0;
};

// Lightning-compatible sliding-window throughput (lightning master 7f0c3436cd3f semantics).
// update() takes cumulative time/batches/samples/lengths and per-interval flops per device;
// compute() reports rates over the last `window_size` updates (window_size-1 intervals).
// A failed update() keeps the values it appended before the failing check, as Python does.
class Throughput {
 public:
  using Options = ThroughputOptions;

  explicit Throughput(Options options = {});

  // Throws ValueError (non-increasing value, samples < batches, lengths < samples) or
  // RuntimeError (lengths passed on some updates but not others while the window fills).
  // Floating-point flops behave as a Python float.
  void update(double time, int64_t batches, int64_t samples,
              std::optional<int64_t> lengths = std::nullopt,
              std::optional<double> flops = std::nullopt);
  // Integer flops behave as a Python int: flops x world size and the window sum are exact (no
  // 2^53 limit) and become a double only where Python converts them. Chosen by the argument's
  // type, so an int64_t count takes this path and a double takes the one above.
  template <std::integral Int>
  void update(double time, int64_t batches, int64_t samples, std::optional<int64_t> lengths,
              Int flops) {
    const detail::FlopsEntry entry{0.0, detail::integer_flops(flops), world_size_};
    update_flops(time, batches, samples, lengths, &entry);
  }
  template <std::integral Int>
  void update(double time, int64_t batches, int64_t samples, std::optional<int64_t> lengths,
              std::optional<Int> flops) {
    if (flops.has_value()) {
      update(time, batches, samples, lengths, *flops);
    } else {
      update_flops(time, batches, samples, lengths, nullptr);
    }
  }

  Metrics compute() const;          // throws IndexError before the first update
  TypedMetrics compute_typed() const;  // same, with int-ness of counters kept
  void compute_into(Metrics& out) const;  // reuses `out`'s storage: no allocation when warm
  void reset();  // clears the windows; keeps flops, world size and separator

  std::optional<double> available_flops() const { return available_flops_; }
  int64_t world_size() const { return world_size_; }
  int64_t window_size() const { return window_size_; }
  const std::string& separator() const { return separator_; }
  // Python code assigns these attributes directly; the setters are their equivalents.
  void set_available_flops(std::optional<double> flops) { available_flops_ = flops; }
  void set_world_size(int64_t world_size);  // AssertionError unless > 0 (Python does not check)
  void set_separator(std::string separator);

  // Number of values currently held in each window (for tests and diagnostics).
  std::size_t time_window_size() const { return time_.size(); }
  std::size_t lengths_window_size() const { return lengths_.size(); }
  std::size_t flops_window_size() const { return flops_.size(); }

 private:
  friend class ThroughputMonitor;
  Throughput(Options options, bool emit_warnings);
  template <typename Out>
  void compute_impl(Out& out) const;
  void rebuild_keys();
  // The update() body shared by float and int flops (nullptr: none); the entry already holds
  // the world size.
  void update_flops(double time, int64_t batches, int64_t samples, std::optional<int64_t> lengths,
                    const detail::FlopsEntry* flops);

  std::optional<double> available_flops_;
  std::string separator_;
  int64_t world_size_;
  int64_t window_size_;
  detail::SlidingWindow<double> time_;
  detail::SlidingWindow<int64_t> batches_;
  detail::SlidingWindow<int64_t> samples_;
  detail::SlidingWindow<int64_t> lengths_;
  detail::SlidingWindow<detail::FlopsEntry> flops_;  // x world size; Python float or int each
  std::size_t integer_flops_ = 0;  // int entries in flops_; none: compute() sums doubles only
  // "device<sep>batches_per_sec", ... built once per separator, not per compute().
  std::string key_dev_batches_, key_dev_samples_, key_dev_items_, key_dev_flops_, key_dev_mfu_;
};

// ---------------------------------------------------------------------------------------------
// Fabric's ThroughputMonitor: a Throughput plus a step counter, logging into a sink. Only rank
// 0 measures: on other ranks update/reset do nothing and compute/compute_and_log return {}.
using MetricsSink = std::function<void(const TypedMetrics& metrics, int64_t step)>;

class ThroughputMonitor {
 public:
  ThroughputMonitor(Throughput::Options options, int64_t rank, MetricsSink sink = nullptr);

  void update(double time, int64_t batches, int64_t samples,
              std::optional<int64_t> lengths = std::nullopt,
              std::optional<double> flops = std::nullopt);
  // Integer flops, exact as in Throughput::update.
  template <std::integral Int>
  void update(double time, int64_t batches, int64_t samples, std::optional<int64_t> lengths,
              Int flops) {
    if (is_rank_zero()) throughput_.update(time, batches, samples, lengths, flops);
  }
  template <std::integral Int>
  void update(double time, int64_t batches, int64_t samples, std::optional<int64_t> lengths,
              std::optional<Int> flops) {
    if (is_rank_zero()) throughput_.update(time, batches, samples, lengths, flops);
  }
  Metrics compute() const;
  // step: nullopt -> previous step + 1 (the first is 0); a value overrides the counter.
  TypedMetrics compute_and_log(std::optional<int64_t> step = std::nullopt);
  void reset();

  int64_t step() const { return step_; }
  int64_t rank() const { return rank_; }
  bool is_rank_zero() const { return rank_ == 0; }
  std::optional<double> available_flops() const { return throughput_.available_flops(); }
  int64_t world_size() const { return throughput_.world_size(); }
  Throughput& throughput() { return throughput_; }
  const Throughput& throughput() const { return throughput_; }

 private:
  Throughput throughput_;
  int64_t rank_;
  int64_t step_ = -1;
  MetricsSink sink_;
};

// ---------------------------------------------------------------------------------------------
// Precisions whose peak we tabulate. Lookups take the precision explicitly: the caller decides
// whether fp32 matmuls run as tf32 (Lightning guesses from torch's global matmul setting).
enum class Precision { fp64, fp32, tf32, bf16, fp16, fp8, int8 };
inline constexpr Precision kAllPrecisions[] = {Precision::fp64, Precision::fp32, Precision::tf32,
                                               Precision::bf16, Precision::fp16, Precision::fp8,
                                               Precision::int8};

std::string_view to_string(Precision precision);  // "fp64", "fp32", ...
// Accepts our names, torch dtype names ("bfloat16", "torch.float16", "tfloat32") and Lightning
// precision flags ("bf16-mixed", "16-true", "32-true", "64", "transformer-engine"); any case.
std::optional<Precision> precision_from_string(std::string_view text);

struct DevicePeak {
  std::string chip;       // our table key ("h200 sxm"), or the CPU model for estimates
  double flops_per_s = 0;  // dense peak per device
  std::string source;     // datasheet citation, "estimate: ...", or "--peak-tflops"
};

// Our table key for a device name as torch/ROCm reports it ("NVIDIA H200" -> "h200 sxm");
// nullopt when the name is not one we can identify with certainty.
std::optional<std::string> match_device_chip(std::string_view device_name);
// nullopt = no peak known (unknown device, or the device has no such precision).
std::optional<DevicePeak> lookup_device_peak(std::string_view device_name, Precision precision);
// Every table key, in table order (for docs and tests).
std::vector<std::string> known_device_chips();

struct CpuInfo {
  std::string model;
  int physical_cores = 0;
  int logical_cpus = 0;
  double max_clock_ghz = 0;
  std::string vector_isa;  // "avx512", "avx2+fma", "avx", "sse", "neon", "sve", "" if unknown
};

CpuInfo detect_cpu();  // /proc/cpuinfo (flags = cpuid bits) and /sys cpufreq
// The parser behind detect_cpu(), exposed so it can be tested on recorded files.
CpuInfo parse_cpu_info(std::string_view proc_cpuinfo, std::optional<double> cpufreq_max_khz);
// cores x clock x FLOPs/cycle of the vector unit (fp32 and fp64 only; others -> nullopt).
std::optional<DevicePeak> estimate_cpu_peak(const CpuInfo& cpu, Precision precision);

// achieved / peak; nullopt when the peak is unknown, zero, negative or not finite.
std::optional<double> mfu(double achieved_flops_per_s_per_device,
                          std::optional<double> peak_flops_per_s);

}  // namespace tokbench
