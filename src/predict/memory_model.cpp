// The memory model (memory_model.hpp).
#include "predict/memory_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <functional>

#include "parallel/strategy.hpp"

namespace tokbench::predict {
namespace {

// AdamW's two moments per updated element, in the parameters' dtype (its step counts are noise).
constexpr double kAdamWMomentsPerElement = 2.0;

// The closed form of docs/distributed.md ("Memory") for the parts a step holds.
MemoryParts closed_form(parallel::DistMode strategy, bool zero3, double shard_size, double parameter_bytes) {
  MemoryParts p;
  const double s = strategy == parallel::DistMode::fsdp ? shard_size : 1.0;
  p.parameters = strategy == parallel::DistMode::fsdp && zero3 ? parameter_bytes / s : parameter_bytes;
  p.gradients = parameter_bytes / s;
  p.optimizer_state = kAdamWMomentsPerElement * parameter_bytes / s;
  p.comm_buffers = parallel::mode_entry(strategy).layout == parallel::LayoutKind::ddp_buckets ? parameter_bytes : 0;
  return p;
}

// The closed form knows DDP's and tokbench's FSDP; a mode predict does not model (fully_shard)
// counts as one unsharded copy.
parallel::DistMode strategy_of(parallel::DistMode mode) {
  return parallel::mode_entry(mode).predict_refusal == nullptr ? mode : parallel::DistMode::none;
}

}  // namespace

MemoryPrediction predict_memory(const MeasuredRun& run, const MemoryTarget& target) {
  MemoryPrediction m;
  const double element = static_cast<double>(run.bytes_per_parameter());
  const double whole = static_cast<double>(run.parameters) * element;
  const MeasuredMemory& mm = run.memory;
  m.measured_breakdown = mm.has_breakdown();
  if (m.measured_breakdown) {
    m.measured = {*mm.parameters_GB * 1e9, *mm.gradients_GB * 1e9, *mm.optimizer_state_GB * 1e9,
                  *mm.activations_GB * 1e9, *mm.comm_buffers_GB * 1e9};
    m.assumptions.push_back("memory: starts from the measured peak and breakdown of the reported rank");
  } else {
    const bool zero3 = parallel::find_shard_word(run.shard_mode).value_or(parallel::ShardWord{}).mode ==
                       parallel::ShardMode::zero3;
    m.measured = closed_form(strategy_of(run.distributed_mode), zero3,
                             static_cast<double>(run.shard_size()), whole);
    m.assumptions.push_back("memory: the record has no breakdown; its parameters, gradients and optimizer state are taken "
                            "as the closed form's (docs/distributed.md, Memory)");
  }
  // Optimizer state per element the rank updates, as measured (AdamW: 2 moments), times the
  // elements the target's rank updates.
  const double measured_updated = static_cast<double>(run.parameters) / static_cast<double>(run.shard_size());
  const double state_per_element = measured_updated > 0 && m.measured.optimizer_state > 0
                                       ? m.measured.optimizer_state / measured_updated
                                       : kAdamWMomentsPerElement * element;

  MemoryParts& p = m.predicted;
  p.activations = m.measured.activations;
  const double s = static_cast<double>(std::max<int64_t>(1, target.shard_size));
  if (target.strategy != parallel::DistMode::fsdp || !target.plan || target.plan->units.empty()) {
    p.parameters = whole;
    p.gradients = whole;
    p.optimizer_state = state_per_element * static_cast<double>(run.parameters);
    if (parallel::mode_entry(target.strategy).layout == parallel::LayoutKind::ddp_buckets) {
      p.comm_buffers = whole;  // every bucket is allocated once and held: together, every gradient
      m.assumptions.push_back("memory (DDP): buckets hold a copy of every gradient, allocated once");
    }
  } else {
    std::vector<double> flat;  // each unit's flat buffer, bytes
    double padded_total = 0;
    for (const auto& u : target.plan->units) {
      flat.push_back(static_cast<double>(u.padded_elements) * element);
      padded_total += flat.back();
    }
    p.parameters = target.zero3 ? padded_total / s : padded_total;
    p.gradients = padded_total / s;
    p.optimizer_state = state_per_element * padded_total / element / s;
    std::vector<double> largest = flat;
    std::sort(largest.begin(), largest.end(), std::greater<>());
    const double two_largest = largest[0] + (largest.size() > 1 ? largest[1] : 0.0);
    p.comm_buffers = two_largest;  // at most two flat gradients in flight
    m.assumptions.push_back("memory (FSDP): at most two flat gradients in flight, the two largest units'");
    if (target.zero3) {
      // Gathered at once, at most: the units kept through the forward (the embedding's and the
      // head's), the block computing and the next, gathered ahead (parallel::zero3_gathers).
      const parallel::Zero3Gathers& g = target.plan->fsdp_gathers;
      auto bytes_of = [&](const std::set<int64_t>& units) {
        double bytes = 0;
        for (const int64_t u : units) bytes += flat[u];
        return bytes;
      };
      const std::set<int64_t> kept(g.kept.begin(), g.kept.end());
      double gathered = bytes_of(kept);
      for (std::size_t k = 1; k + 1 < g.needs.size(); ++k) {  // the blocks; needs[k + 1] is the head's after the last
        std::set<int64_t> held = kept;
        held.insert(g.needs[k].begin(), g.needs[k].end());
        held.insert(g.needs[k + 1].begin(), g.needs[k + 1].end());
        gathered = std::max(gathered, bytes_of(held));
      }
      p.comm_buffers += gathered;
      m.assumptions.push_back("memory (ZeRO-3): gathered at once: the units of the embedding and head, and those of the "
                              "block computing and the next, gathered ahead (the largest such set)");
    } else {
      m.assumptions.push_back("memory (ZeRO-2): whole flat parameters kept, shards are slices of them");
    }
  }
  const double delta = (p.parameters - m.measured.parameters) + (p.gradients - m.measured.gradients) +
                       (p.optimizer_state - m.measured.optimizer_state) + (p.comm_buffers - m.measured.comm_buffers);
  if (mm.peak_GB) {
    m.measured_peak = *mm.peak_GB * 1e9;
    m.predicted_peak = std::max(p.parameters + p.gradients + p.optimizer_state, *m.measured_peak + delta);
  }
  if (mm.reserved_GB) {
    m.measured_reserved = *mm.reserved_GB * 1e9;
    m.predicted_reserved = std::max(m.predicted_peak.value_or(0.0), *m.measured_reserved + delta);
  }
  m.assumptions.push_back("memory: activations, temporaries and the allocator's reserve stay as measured (same "
                          "micro-batch and sequence length); the peak moves by the change in parameters, gradients, "
                          "optimizer state and communication buffers");
  return m;
}

}  // namespace tokbench::predict
