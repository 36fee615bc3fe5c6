// Throughput: Lightning's sliding-window rates with its exact arithmetic and key order.
// Parity notes: every division and product happens in the same order and type as in Python
// (int counters are converted to double exactly where Python's int/float promotion would),
// and the flops window is summed oldest-first from int 0 like CPython <= 3.11's sum(), with
// int flops kept exact until Python would turn them into a float.
#include <bit>
#include <cmath>
#include <string>

#include "check.hpp"
#include "metric_keys.hpp"
#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

std::string format_value(double v) { return python_repr(v); }
std::string format_value(int64_t v) { return std::to_string(v); }

// Lightning's _MonotonicWindow.append: strictly increasing values only ("last >= x" rejects,
// which lets NaN through exactly as Python does).
template <typename T>
void push_increasing(detail::SlidingWindow<T>& window, T value) {
  if (!window.empty()) {
    const T last = window.back();
    TB_CHECK(!(last >= value), ValueError,
             "Expected the value to increase, last: " + format_value(last) +
                 ", current: " + format_value(value));
  }
  window.push(value);
}

// Writes key/value pairs into a reused vector: assigning into existing strings keeps their
// heap buffers, so a warm compute_into() does not allocate.
template <typename Out>
class Writer {
 public:
  explicit Writer(Out& out) : out_(out) {}
  void put(const std::string& key, MetricValue value) {
    if (n_ < out_.size()) {
      out_[n_].first.assign(key);
      out_[n_].second = convert(value);
    } else {
      out_.emplace_back(key, convert(value));
    }
    ++n_;
  }
  void finish() { out_.resize(n_); }

 private:
  static auto convert(MetricValue v) {
    if constexpr (std::is_same_v<typename Out::value_type::second_type, double>) {
      return v.value;
    } else {
      return v;
    }
  }
  Out& out_;
  std::size_t n_ = 0;
};

// Python int arithmetic for int flops. An entry is int64 flops x int64 world size, so
// |product| <= 2^126 fits __int128; a window sum of such products passes 2^127 only with huge
// world sizes, but Python ints never overflow, so the sum carries into a third 64-bit word.
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

Int128 product(const detail::FlopsEntry& entry) {
  return static_cast<Int128>(entry.count) * entry.world_size;
}

// Correctly rounded (to nearest, ties to even) like Python's float(int): the leading 64 bits of
// the magnitude go to the hardware conversion with every lower bit folded into bit 0, which
// then decides ties exactly (it lies 11 bits below the 53 a double keeps).
double round_to_double(const uint64_t (&words)[3]) {  // magnitude, least significant word first
  int k = 2;
  while (k > 0 && words[k] == 0) --k;
  if (k == 0) return static_cast<double>(words[0]);
  const int shift = std::countl_zero(words[k]);
  uint64_t top = words[k] << shift;
  uint64_t rest = words[k - 1];
  if (shift > 0) {
    top |= words[k - 1] >> (64 - shift);
    rest = words[k - 1] << shift;
  }
  const bool sticky = rest != 0 || (k == 2 && words[0] != 0);
  return std::ldexp(static_cast<double>(top | (sticky ? 1u : 0u)), 64 * k - shift);
}

// An exact signed integer of 192 bits: value = high * 2^128 + low (two's complement).
class ExactInt {
 public:
  ExactInt() = default;
  explicit ExactInt(Int128 value) { add(value); }
  void add(Int128 value) {
    const UInt128 before = low_;
    low_ += static_cast<UInt128>(value);
    high_ += (low_ < before ? 1 : 0) + (value < 0 ? -1 : 0);  // carry out + sign extension
  }
  double to_double() const {
    UInt128 low = low_;
    auto high = static_cast<uint64_t>(high_);
    if (high_ < 0) {  // magnitude = two's complement negation
      low = ~low + 1;
      high = ~high + (low == 0 ? 1 : 0);
    }
    const uint64_t words[3] = {static_cast<uint64_t>(low), static_cast<uint64_t>(low >> 64), high};
    const double magnitude = round_to_double(words);
    return high_ < 0 ? -magnitude : magnitude;
  }

 private:
  UInt128 low_ = 0;
  int64_t high_ = 0;
};

double to_double(const detail::FlopsEntry& entry) {
  return entry.is_integer() ? ExactInt(product(entry)).to_double() : entry.real;
}

namespace mk = throughput::metric_key;
const std::string kTime = mk::time, kBatches = mk::batches, kSamples = mk::samples, kLengths = mk::lengths,
                  kBatchesPerSec = mk::batches_per_sec, kSamplesPerSec = mk::samples_per_sec,
                  kItemsPerSec = mk::items_per_sec, kFlopsPerSec = mk::flops_per_sec;

}  // namespace

Throughput::Throughput(Options options) : Throughput(std::move(options), true) {}

Throughput::Throughput(Options options, bool emit_warnings)
    : time_(0), batches_(0), samples_(0), lengths_(0), flops_(0) {
  // Same checks in the same order as Lightning master's __init__.
  TB_CHECK(options.sparse_cuda_acceleration_factor >= 1.0, AssertionError,
           "sparse acceleration factor cannot reduce peak FLOPs");
  if (!options.using_sparse_model.has_value() && options.available_flops.has_value() &&
      emit_warnings) {
    emit_warning(
        "MFU assumes dense model FLOPs (no sparsity acceleration). Set 'using_sparse_model=True' "
        "for MFU to use sparse FLOPs.");
  }
  if (options.using_sparse_model.value_or(false) && options.available_flops.has_value()) {
    *options.available_flops *= options.sparse_cuda_acceleration_factor;
  }
  available_flops_ = options.available_flops;
  separator_ = std::move(options.separator);
  TB_CHECK(options.world_size > 0, AssertionError, "");
  world_size_ = options.world_size;
  // At least 2: rates come from the difference of the window's first and last entries.
  TB_CHECK(options.window_size > 1, AssertionError, "");
  window_size_ = options.window_size;
  const auto capacity = static_cast<std::size_t>(window_size_);
  time_ = detail::SlidingWindow<double>(capacity);
  batches_ = detail::SlidingWindow<int64_t>(capacity);
  samples_ = detail::SlidingWindow<int64_t>(capacity);
  lengths_ = detail::SlidingWindow<int64_t>(capacity);
  flops_ = detail::SlidingWindow<detail::FlopsEntry>(capacity);
  rebuild_keys();
}

void Throughput::rebuild_keys() {
  const std::string device = mk::device + separator_;
  key_dev_batches_ = device + kBatchesPerSec;
  key_dev_samples_ = device + kSamplesPerSec;
  key_dev_items_ = device + kItemsPerSec;
  key_dev_flops_ = device + kFlopsPerSec;
  key_dev_mfu_ = device + mk::mfu;
}

void Throughput::set_world_size(int64_t world_size) {
  // Python would accept 0 and then divide by it in compute(); we keep the constructor's check.
  TB_CHECK(world_size > 0, AssertionError, "");
  world_size_ = world_size;
}

void Throughput::set_separator(std::string separator) {
  separator_ = std::move(separator);
  rebuild_keys();
}

void Throughput::update(double time, int64_t batches, int64_t samples,
                        std::optional<int64_t> lengths, std::optional<double> flops) {
  if (!flops.has_value()) return update_flops(time, batches, samples, lengths, nullptr);
  // Python float x int world size: the world size becomes a float, one rounding.
  const detail::FlopsEntry entry{*flops * static_cast<double>(world_size_)};
  update_flops(time, batches, samples, lengths, &entry);
}

void Throughput::update_flops(double time, int64_t batches, int64_t samples,
                              std::optional<int64_t> lengths,
                              const detail::FlopsEntry* flops) {
  // No rollback: a later failing check leaves the earlier appends in place, like Lightning.
  push_increasing(time_, time);
  TB_CHECK(!(samples < batches), ValueError,
           "Expected samples (" + std::to_string(samples) +
               ") to be greater or equal than batches (" + std::to_string(batches) + ")");
  push_increasing(batches_, batches);
  push_increasing(samples_, samples);
  if (lengths.has_value()) {
    TB_CHECK(!(*lengths < samples), ValueError,
             "Expected lengths (" + std::to_string(*lengths) +
                 ") to be greater or equal than samples (" + std::to_string(samples) + ")");
    push_increasing(lengths_, *lengths);
    TB_CHECK(samples_.size() == lengths_.size(), RuntimeError,
             "If lengths are passed (" + std::to_string(lengths_.size()) +
                 "), there needs to be the same number of samples (" +
                 std::to_string(samples_.size()) + ")");
  }
  if (flops != nullptr) {  // summed over ranks (x world size)
    if (flops_.full() && flops_.front().is_integer()) --integer_flops_;  // evicted by the push
    flops_.push(*flops);
    integer_flops_ += flops->is_integer() ? 1 : 0;
  }
}

template <typename Out>
void Throughput::compute_impl(Out& out) const {
  // Python indexes [-1] of each list in this order; a failed update() can leave time filled
  // while batches/samples are still empty, so each read is guarded like Python's IndexError.
  TB_CHECK(!time_.empty(), IndexError, "list index out of range");
  TB_CHECK(!batches_.empty(), IndexError, "list index out of range");
  TB_CHECK(!samples_.empty(), IndexError, "list index out of range");
  Writer<Out> w(out);
  w.put(kTime, MetricValue::real(time_.back()));
  w.put(kBatches, MetricValue::integer(batches_.back()));
  w.put(kSamples, MetricValue::integer(samples_.back()));
  if (!lengths_.empty()) w.put(kLengths, MetricValue::integer(lengths_.back()));

  const bool add_global = world_size_ > 1;
  const double ws = static_cast<double>(world_size_);
  if (time_.full()) {
    const double elapsed_time = time_.back() - time_.front();
    const auto elapsed_batches = static_cast<double>(batches_.back() - batches_.front());
    const auto elapsed_samples = static_cast<double>(samples_.back() - samples_.front());
    const double dev_samples_per_sec = elapsed_samples / elapsed_time;
    const double dev_batches_per_sec = elapsed_batches / elapsed_time;
    w.put(key_dev_batches_, MetricValue::real(dev_batches_per_sec));
    w.put(key_dev_samples_, MetricValue::real(dev_samples_per_sec));
    if (add_global) {
      w.put(kBatchesPerSec, MetricValue::real(dev_batches_per_sec * ws));
      w.put(kSamplesPerSec, MetricValue::real(dev_samples_per_sec * ws));
    }
    if (lengths_.full()) {
      const auto elapsed_lengths = static_cast<double>(lengths_.back() - lengths_.front());
      const double dev_items_per_sec = elapsed_lengths / elapsed_time;
      w.put(key_dev_items_, MetricValue::real(dev_items_per_sec));
      if (add_global) w.put(kItemsPerSec, MetricValue::real(dev_items_per_sec * ws));
    }
  }
  // Checked separately from the time window, as in Lightning: flops may be passed on only
  // some updates (their entries then do not line up with the time window; see the docs).
  if (flops_.full()) {
    // A running sum would drift from Python's fresh left-to-right sum in the last bits, so the
    // window is re-summed: ~window_size dependent adds, well under the per-call budget.
    // sum(self._flops) starts from int 0 and stays an exact int until the first float; that
    // float is added to the int sum rounded once, and every later int is rounded, then added.
    ExactInt exact;
    double real = 0.0;
    bool is_float = false;
    if (integer_flops_ == 0) {  // floats only (the double overload): one plain double sum
      flops_.for_each([&real](const detail::FlopsEntry& entry) { real += entry.real; });
      is_float = true;
    } else {
      flops_.for_each([&](const detail::FlopsEntry& entry) {
        if (is_float) {
          real += to_double(entry);
        } else if (entry.is_integer()) {
          exact.add(product(entry));
        } else {
          real = exact.to_double() + entry.real;
          is_float = true;
        }
      });
    }
    // "- self._flops[0]": float - float, or float - int (the int rounded first), or an exact
    // int - int whose result the division below rounds once (Python's int / float).
    double elapsed_flops;
    if (is_float) {
      elapsed_flops = real - to_double(flops_.front());
    } else {
      exact.add(-product(flops_.front()));
      elapsed_flops = exact.to_double();
    }
    const double elapsed_time = time_.back() - time_.front();
    const double flops_per_sec = elapsed_flops / elapsed_time;
    const double dev_flops_per_sec = flops_per_sec / ws;
    if (add_global) w.put(kFlopsPerSec, MetricValue::real(flops_per_sec));
    w.put(key_dev_flops_, MetricValue::real(dev_flops_per_sec));
    // Python truthiness: None and 0.0 give no mfu key; NaN is truthy.
    if (available_flops_.has_value() && *available_flops_ != 0.0) {
      w.put(key_dev_mfu_, MetricValue::real(dev_flops_per_sec / *available_flops_));
    }
  }
  w.finish();
}

Metrics Throughput::compute() const {
  Metrics out;
  out.reserve(12);
  compute_impl(out);
  return out;
}

TypedMetrics Throughput::compute_typed() const {
  TypedMetrics out;
  out.reserve(12);
  compute_impl(out);
  return out;
}

void Throughput::compute_into(Metrics& out) const { compute_impl(out); }

void Throughput::reset() {
  time_.clear();
  batches_.clear();
  samples_.clear();
  lengths_.clear();
  flops_.clear();
  integer_flops_ = 0;
}

}  // namespace tokbench
