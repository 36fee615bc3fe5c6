// The prediction end to end (prediction.hpp).
#include "predict/prediction.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "account/time_account_json.hpp"
#include "config/row_record_keys.hpp"
#include "predict/collective_cost.hpp"
#include "predict/input_spread.hpp"
#include "predict/predicted_account.hpp"
#include "parallel/strategy.hpp"
#include "predict/cluster_keys.hpp"
#include "predict/comm_plan.hpp"
#include "predict/memory_model.hpp"
#include "predict/optimizer_model.hpp"
#include "predict/prediction_keys.hpp"
#include "predict/schedule.hpp"
#include "predict/step_copies.hpp"
#include "results/comm_plan_json.hpp"
#include "results/comm_plan_keys.hpp"
#include "results/record_blocks.hpp"
#include "results/record_keys.hpp"
#include "results/record_status.hpp"
#include "results/result_columns.hpp"
#include "results/run_record.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::predict {

// The record's config block's keys (the option rows').
namespace config_key = config::config_key;
// The prediction block's, the cluster file's (its echo in the block) and the comm plan's keys.
namespace pk = prediction_key;
namespace plan_key = results::comm_plan_key;

namespace {

using json = nlohmann::ordered_json;

// The bounds `tokbench run` puts on the launcher's options (run_options.hpp).
constexpr int64_t kMaxRanksPerNode = 4096;
constexpr int64_t kMaxNodes = 4096;

using usage::refuse;
using usage::require_choice;

json opt(const std::optional<double>& v, double scale = 1.0) { return v ? json(*v * scale) : json(nullptr); }

// Everything the target run is, resolved and checked.
struct Target {
  int64_t nproc_per_node = 1, nnodes = 1, world_size = 1;
  parallel::DistMode strategy = parallel::DistMode::none;
  std::string shard_mode = parallel::default_shard_word(), bucketing_mode = "none";
  int64_t min_unit_params = 0;  // bucketing size: its threshold
  bool zero3 = false;
  std::optional<int64_t> sharding_size;
  int64_t shard_size = 1;  // S
  int64_t micro_batch = 1, grad_accum = 1, global_batch = 1;
  double ddp_bucket_size_mb = parallel::kDefaultDdpBucketMb;
  int64_t num_threads = 0;
};

Target resolve_target(const MeasuredRun& run, const ClusterInput& in, const TargetOptions& o) {
  const Cluster& c = in.cluster;
  Target t;
  check_target_options(o);
  t.nproc_per_node = o.taken(&config::LauncherSection::nproc_per_node).value_or(std::min(run.local_ranks, c.devices_per_node));
  t.nnodes = o.taken(&config::LauncherSection::nnodes).value_or(1);
  if (t.nproc_per_node < 1 || t.nproc_per_node > kMaxRanksPerNode)
    refuse(fmt::format("--nproc-per-node {} is not valid; valid: 1..{}", t.nproc_per_node, kMaxRanksPerNode));
  // A comm document holds one world size: say so before anything else about the ranks.
  if (in.measured && t.nproc_per_node * t.nnodes != in.measured->world_size)
    refuse(fmt::format("--cluster measured: comm document '{}' was measured over {} ranks, not {}; predict for {} ranks "
                      "or measure {} with tokbench comm",
                      in.measured->source, in.measured->world_size, t.nproc_per_node * t.nnodes,
                      in.measured->world_size, t.nproc_per_node * t.nnodes));
  if (t.nproc_per_node > c.devices_per_node)
    refuse(fmt::format("--nproc-per-node {} exceeds cluster '{}''s {} devices per node; valid: 1..{}", t.nproc_per_node,
                      c.name, c.devices_per_node, c.devices_per_node));
  if (t.nnodes < 1 || t.nnodes > kMaxNodes) refuse(fmt::format("--nnodes {} is not valid; valid: 1..{}", t.nnodes, kMaxNodes));
  if (t.nnodes > 1 && !c.inter_node)
    refuse(fmt::format("--nnodes {} needs the cluster's network, but cluster '{}' has no [inter_node]; valid: --nnodes 1",
                      t.nnodes, c.name));
  t.world_size = t.nproc_per_node * t.nnodes;
  const int64_t w = t.world_size;
  // The modes predict models: a schedule of their collectives (schedule.cpp) and a memory form.
  const auto modelled = [](const parallel::ModeEntry& e) { return e.predict_refusal == nullptr; };
  const auto distributed_mode = o.taken(&config::ParallelismSection::distributed_mode);
  if (distributed_mode) {
    const parallel::ModeEntry* asked = parallel::find_mode(*distributed_mode);
    require_choice("--distributed-mode", *distributed_mode, parallel::mode_words(modelled),
                   asked && asked->predict_refusal ? asked->predict_refusal : "");
    t.strategy = asked->mode;
  } else {
    t.strategy = run.distributed_mode;
    const parallel::ModeEntry& measured = parallel::mode_entry(t.strategy);
    if (measured.predict_refusal)
      require_choice("--distributed-mode", measured.word, parallel::mode_words(modelled), measured.predict_refusal);
    // A measured run of one rank predicted over many: DDP, the first mode of many ranks.
    if (!measured.multi_rank && w > 1) t.strategy = parallel::DistMode::ddp;
  }
  const parallel::ModeEntry& mode = parallel::mode_entry(t.strategy);
  if (!mode.multi_rank && w > 1)
    refuse(fmt::format("--distributed-mode '{}' cannot run on {} ranks: every rank would train alone; valid: {}",
                       mode.word, w,
                       fmt::join(parallel::mode_words([](const parallel::ModeEntry& e) {
                                   return e.multi_rank && e.predict_refusal == nullptr;
                                 }), ", ")));
  if (mode.multi_rank && w <= 1)
    refuse(fmt::format("--distributed-mode '{}' needs more than one rank, but this is 1 (--nproc-per-node {} --nnodes {}); "
                      "valid here: {}",
                      mode.word, t.nproc_per_node, t.nnodes,
                      fmt::join(parallel::mode_words([](const parallel::ModeEntry& e) { return !e.multi_rank; }), ", ")));
  const auto shard_mode = o.taken(&config::ParallelismSection::shard_mode);
  t.shard_mode = shard_mode.value_or(run.distributed_mode == parallel::DistMode::fsdp ? run.shard_mode
                                                                                       : parallel::default_shard_word());
  require_choice("--shard-mode", t.shard_mode, parallel::shard_mode_words());
  t.bucketing_mode = o.taken(&config::ParallelismSection::bucketing_mode).value_or(run.bucketing_mode);
  require_choice("--bucketing-mode", t.bucketing_mode, {"none", "block", "size"},
                 t.bucketing_mode == "layer" ? " (per-layer units have no timings: a run times embedding, blocks, head)"
                                             : "");
  t.zero3 = parallel::parse_shard_word(t.shard_mode).mode == parallel::ShardMode::zero3;
  const auto fsdp_bucket_params = o.taken(&config::ParallelismSection::fsdp_bucket_params);
  if (fsdp_bucket_params) {
    const double n = *fsdp_bucket_params;
    if (!(n >= 1 && n <= 9007199254740992.0) || std::floor(n) != n)
      refuse(fmt::format("--fsdp-bucket-params {} is not valid; valid: a positive whole number of parameters (e.g. 1e8)", n));
    if (t.bucketing_mode != "size")
      refuse(fmt::format("--fsdp-bucket-params applies to --bucketing-mode size only (mode is {})", t.bucketing_mode));
  }
  if (t.bucketing_mode == "size") {
    t.min_unit_params = fsdp_bucket_params ? static_cast<int64_t>(*fsdp_bucket_params)
                                             : run.fsdp_min_unit_params.value_or(parallel::kDefaultMinUnitParams);
  }
  t.sharding_size = o.taken(&config::ParallelismSection::sharding_size);
  if (!t.sharding_size && !distributed_mode && !shard_mode && run.distributed_mode == parallel::DistMode::fsdp &&
      run.sharding_size &&
      w % *run.sharding_size == 0)
    t.sharding_size = run.sharding_size;  // the measured run's groups, when they still fit
  if (t.sharding_size) {
    if (*t.sharding_size < 1) refuse(fmt::format("--sharding-size {} is not valid; valid: a divisor of {}", *t.sharding_size, w));
    if (*t.sharding_size > w) refuse(fmt::format("--sharding-size {} exceeds the world size {}", *t.sharding_size, w));
    if (w % *t.sharding_size != 0)
      refuse(fmt::format("--sharding-size {} does not divide the world size {}; valid: a divisor of {}", *t.sharding_size,
                        w, w));
    if (t.strategy != parallel::DistMode::fsdp)
      refuse(fmt::format("--sharding-size {} applies to --distributed-mode fsdp only (mode is {})", *t.sharding_size,
                        parallel::to_string(t.strategy)));
  }
  if (parallel::parse_shard_word(t.shard_mode).hybrid && !t.sharding_size && t.strategy == parallel::DistMode::fsdp)
    refuse(fmt::format("--shard-mode '{}' needs --sharding-size (ranks per shard group)", t.shard_mode));
  t.shard_size = t.strategy == parallel::DistMode::fsdp ? t.sharding_size.value_or(w) : 1;
  t.micro_batch = run.micro_batch;
  if (const auto micro = o.taken(&config::BatchSection::micro_batch_size); micro && *micro != run.micro_batch)
    refuse(fmt::format("--micro-batch-size {} differs from the measured run's {}: compute per micro-batch is measured, "
                      "not modelled; valid: {} (or measure a run at {})",
                      *micro, run.micro_batch, run.micro_batch, *micro));
  t.global_batch = o.taken(&config::BatchSection::global_batch_size).value_or(run.micro_batch * run.grad_accum * w);
  if (t.global_batch < 1 || t.global_batch % (t.micro_batch * w) != 0)
    refuse(fmt::format("--global-batch-size {} does not split into micro-batches of {} over {} ranks; valid: a multiple "
                      "of {}",
                      t.global_batch, t.micro_batch, w, t.micro_batch * w));
  t.grad_accum = t.global_batch / (t.micro_batch * w);
  t.ddp_bucket_size_mb = o.taken(&config::ParallelismSection::ddp_bucket_size_mb).value_or(run.ddp_bucket_size_mb);
  if (!(t.ddp_bucket_size_mb > 0 && t.ddp_bucket_size_mb <= 1e6))
    refuse(fmt::format("--ddp-bucket-size {} is not valid; valid: a size in MB in (0, 1000000]", t.ddp_bucket_size_mb));
  const auto num_threads = o.taken(&config::DeviceSection::num_threads);
  t.num_threads = num_threads ? *num_threads : run.num_threads;
  if (t.num_threads < 0 || t.num_threads > 4096)
    refuse(fmt::format("--num-threads {} is not valid; valid: 0 (LibTorch's default: every core) or 1..4096", t.num_threads));
  return t;
}

std::string mode_label(const Target& t) {
  return parallel::distributed_mode_label(t.strategy, t.zero3 ? parallel::ShardMode::zero3 : parallel::ShardMode::zero2,
                                          t.shard_size < t.world_size, parallel::parse_unit_policy(t.bucketing_mode));
}

std::string sharding_label(const Target& t) {
  return parallel::shard_mode_label(t.zero3 ? parallel::ShardMode::zero3 : parallel::ShardMode::zero2,
                                    t.shard_size < t.world_size);
}

// The units' forward and backward on the predicted rank, every micro-batch, as scaled.
double forward_backward_seconds(const ScheduleResult& r) {
  return r.compute_seconds - r.optimizer_seconds - r.step_copy_seconds;
}

json link_json(const Link& l) {
  namespace key = cluster_key;
  return {{key::bandwidth_GBps, l.bandwidth_GBps}, {key::latency_us, l.latency_us}, {key::efficiency, l.efficiency}};
}

}  // namespace

ClusterInput measured_cluster(CommMeasurements m, std::vector<CommMeasurements> groups) {
  ClusterInput in;
  Cluster& c = in.cluster;
  c.name = cluster_key::measured_cluster;
  c.source = "measured " + m.source;
  c.device = m.device;
  c.devices_per_node = std::max<int64_t>(1, m.nproc_per_node);
  c.cores_per_node = m.cpu_cores;
  c.intra_node = Link{};
  if (m.nnodes > 1) c.inter_node = Link{};
  in.measured = std::move(m);
  in.group_measurements = std::move(groups);
  return in;
}

namespace {

// Whether a comm document's ranks each had cores of their own for their threads: only then is its
// busy fraction the collective's demand rather than the share time-slicing left it.
bool ranks_had_their_own_cores(const CommMeasurements& d) {
  return d.cpu_cores && d.nproc_per_node * std::max<int64_t>(1, d.threads_per_rank) <= *d.cpu_cores;
}

// The busy fraction of the comm documents given, preferring one measured where each rank had a
// core of its own for its compute threads (ranks x threads <= cores): where ranks time-slice,
// the figure is the share a collective got, not what it asks for.
struct MeasuredBusy {
  double fraction = 0;
  std::string from;
};

std::optional<MeasuredBusy> measured_gloo_busy(const ClusterInput& in) {
  if (!in.measured || in.cluster.device != "cpu") return std::nullopt;
  std::vector<const CommMeasurements*> docs{&*in.measured};
  for (const auto& g : in.group_measurements) docs.push_back(&g);
  const CommMeasurements* chosen = nullptr;
  for (const CommMeasurements* d : docs) {
    if (!d->gloo_busy_fraction) continue;
    if (ranks_had_their_own_cores(*d)) {
      chosen = d;
      break;
    }
    if (!chosen) chosen = d;
  }
  if (!chosen) return std::nullopt;
  const bool own_cores = ranks_had_their_own_cores(*chosen);
  return MeasuredBusy{*chosen->gloo_busy_fraction,
                      fmt::format("{} ({} rank(s) on {} core(s){})", chosen->source, chosen->nproc_per_node,
                                  chosen->cpu_cores ? fmt::format("{}", *chosen->cpu_cores) : std::string("?"),
                                  own_cores ? ""
                                            : "; ranks time-sliced there, so the share they got: a lower bound; a "
                                              "document of this machine measured with a core per rank's threads, "
                                              "given beside it in --comm, holds the collective's own demand")};
}

// The comm document's GEMM beside a running collective, where it was measured for the predicted
// placement (its ranks per node, threads per rank and cores) and its all-reduce outlasted the
// GEMM in most repeats (else its steal is a lower bound): a check of the model's steal and
// collective rate, recorded beside them. Not used in their place: on the 2-core CI VM the
// measurement moved more between documents hours apart (the collective's rate 0.42 to 0.63 at
// 2 ranks) than the model's figures from the measured busy fraction (0.57 to 0.60), and put in
// their place it made the held-out predictions worse (docs/predict.md, "CPU ranks share cores").
std::optional<CommMeasurements::ComputeSharing::BesideCollective> steal_check_figures(
    const ClusterInput& in, const CpuPlacement& predicted, std::vector<std::string>& assumptions) {
  if (!in.measured || !in.measured->compute_sharing || !in.measured->compute_sharing->beside) return std::nullopt;
  const auto& s = *in.measured->compute_sharing;
  const auto& b = *s.beside;
  const int64_t doc_cores = in.measured->cpu_cores.value_or(predicted.cores);
  if (s.ranks_per_node != predicted.ranks || s.threads_per_rank != predicted.threads || doc_cores != predicted.cores) {
    assumptions.push_back(fmt::format(
        "the comm document's GEMM beside a collective ({} rank(s) x {} thread(s) on {} cores) is not this placement "
        "({} x {} on {}): nothing to check the model's steal against",
        s.ranks_per_node, s.threads_per_rank, doc_cores, predicted.ranks, predicted.threads, predicted.cores));
    return std::nullopt;
  }
  if (2 * b.covered_repeats <= b.repeats) {
    assumptions.push_back(fmt::format(
        "the comm document's all-reduce outlasted its GEMM in {} of {} repeats only (a lower bound of the steal): "
        "nothing to check the model's steal against",
        b.covered_repeats, b.repeats));
    return std::nullopt;
  }
  return b;
}

std::string measured_inputs(bool sharing_applied, const std::optional<MeasuredBusy>& busy,
                            const ReferenceLevel& level) {
  std::string what = sharing_applied ? "compute_time_factor: tokbench comm's compute_sharing for this placement"
                                     : "compute_time_factor from the core count, nothing measured";
  if (busy) what += "; gloo_busy_fraction: tokbench comm's gloo_cpu_busy (" + busy->from + ")";
  what += level.applied ? fmt::format("; the compute's level: the run's reference probe against the comm document's "
                                      "(x {:.3f}, prediction.reference_level)",
                                      level.scale)
                        : "; the compute's level: the run's own (prediction.reference_level says why)";
  return what;
}

}  // namespace

results::RunRecord predict_record(const MeasuredRun& measured, const ClusterInput& in, const TargetOptions& o,
                                  const CpuContentionFactors& given_factors) {
  // The run's compute at its own level, or at the comm document's moment where that is chosen
  // and both timed the reference GEMM.
  const MeasuredRun run = at_reference_level(measured, in.measured ? &*in.measured : nullptr, in.compute_level);
  Cluster cluster = in.cluster;
  // Gloo's busy fraction, measured by tokbench comm where a document records it.
  CpuContentionFactors factors = given_factors;
  const std::optional<MeasuredBusy> busy = measured_gloo_busy(in);
  if (busy) factors.gloo_busy_fraction = busy->fraction;
  if (o.cores_per_node) cluster.cores_per_node = o.cores_per_node;
  const std::string measured_kind = run.device_is_cpu() ? "cpu" : "cuda";
  if (cluster.device != measured_kind)
    refuse(fmt::format("--from '{}' was measured on {} and cluster '{}' computes on {}: compute is measured, not modelled; "
                      "valid: a cluster of {} devices (or measure on the cluster's)",
                      run.source, measured_kind, cluster.name, cluster.device, measured_kind));
  const Target t = resolve_target(run, ClusterInput{cluster, in.measured, {}}, o);
  std::vector<std::string> assumptions;
  const bool cpu = cluster.device == "cpu";

  // Compute per unit, on the predicted rank.
  double compute_factor = 1.0, steal = 0.0, comm_rate = 1.0;
  // Whether the run was one rank alone and the prediction puts several on a node at its threads:
  // then the node's ranks share memory bandwidth, which the memory probe measures.
  bool alone_to_shared = false;
  // Where tokbench comm's compute sharing scales the compute: its quartiles over its median.
  std::optional<std::pair<double, double>> sharing_quartile_ratios;
  json contention = nullptr;
  std::optional<CommMeasurements::ComputeSharing::BesideCollective> steal_check;
  std::optional<CpuPlacement> cpu_placement;  // the predicted node's, for the cores' budget
  if (cpu) {
    if (!cluster.cores_per_node)
      refuse(fmt::format("cluster '{}' does not say how many cores a node has; pass --cores-per-node N", cluster.name));
    const int64_t measured_cores = o.measured_cores.value_or(run.cpu_cores.value_or(*cluster.cores_per_node));
    if (measured_cores < 1) refuse(fmt::format("--measured-cores {} is not valid; valid: 1 or more", measured_cores));
    if (!o.measured_cores && !run.cpu_cores)
      assumptions.push_back(fmt::format("the run was measured on a machine of the cluster's {} cores (the record does "
                                        "not say; --measured-cores overrides)",
                                        measured_cores));
    const CpuPlacement measured{measured_cores, run.local_ranks, run.num_threads > 0 ? run.num_threads : measured_cores};
    const CpuPlacement predicted{*cluster.cores_per_node, t.nproc_per_node,
                                 t.num_threads > 0 ? t.num_threads : *cluster.cores_per_node};
    cpu_placement = predicted;
    compute_factor = compute_time_factor(measured, predicted, factors);
    alone_to_shared = measured.ranks == 1 && predicted.ranks > 1 && measured.threads == predicted.threads;
    steal = comm_compute_steal(predicted, factors);
    comm_rate = comm_rate_beside_compute(predicted, factors);
    assumptions.push_back(describe(measured, predicted, factors));
    const bool uneven = uneven_time_slicing(predicted);
    if (uneven)
      assumptions.push_back(fmt::format(
          "not modelled: {} rank(s) of {} thread(s) on {} cores do not divide evenly, so the OS cannot give every rank "
          "the same share at every moment and one rank computes longer than the others; every rank here follows one "
          "schedule, so expect the iteration slower than predicted (on a 2-core VM, 3 ranks: the slowest rank busy "
          "3-14% of the iteration longer than the ranks' mean; cpu_contention.uneven_time_slicing)",
          predicted.ranks, predicted.threads, predicted.cores));
    steal_check = steal_check_figures(in, predicted, assumptions);
    if (steal_check)
      assumptions.push_back(fmt::format(
          "checked: `tokbench comm` measured its GEMM beside an all-reduce on this placement, a steal of {:.3g} and "
          "the collective at {:.3g} of its rate, against the model's {:.3g} and {:.3g} (the model's are used; "
          "cpu_contention.steal_check)",
          steal_check->steal, steal_check->collective_rate, steal, comm_rate));
    // What the cores cannot say: ranks computing at once on one machine slow each other (shared
    // physical cores, caches, memory bandwidth). `tokbench comm` measured it for its placement;
    // it applies where the run was one rank alone and the prediction is that placement.
    double sharing_slowdown = 1;
    bool sharing_applied = false;
    if (in.measured && in.measured->compute_sharing) {
      const auto& s = *in.measured->compute_sharing;
      const bool applies = measured.ranks == 1 && measured.threads == s.threads_per_rank &&
                           predicted.ranks == s.ranks_per_node && predicted.threads == s.threads_per_rank;
      if (applies) {
        // The measured slowdown already holds any time-slicing of more threads than cores. Ranks
        // sharing a machine do not speed each other up: a figure below 1 is the probe's noise.
        const double slowdown = std::max(1.0, s.slowdown);
        sharing_applied = true;
        sharing_quartile_ratios = {std::max(1.0, s.slowdown_q1) / slowdown, std::max(1.0, s.slowdown_q3) / slowdown};
        sharing_slowdown = slowdown / compute_factor;
        compute_factor = slowdown;
        assumptions.push_back(fmt::format(
            "compute time x {:.3g}: {} rank(s) of {} thread(s) computing at once, as `tokbench comm` measured them "
            "(its compute_sharing, {:.3g}{}; it replaces the core-count factor)",
            slowdown, s.ranks_per_node, s.threads_per_rank, s.slowdown,
            s.slowdown < 1 ? ", below 1 and so taken as 1" : ""));
      } else {
        assumptions.push_back(fmt::format(
            "the comm document's compute sharing ({} rank(s) x {} thread(s)) is not this placement (measured {} x {}, "
            "predicted {} x {}): the core-count factor alone",
            s.ranks_per_node, s.threads_per_rank, measured.ranks, measured.threads, predicted.ranks, predicted.threads));
      }
    }
    contention = {{pk::measured,
                   {{pk::cores, measured.cores}, {pk::ranks, measured.ranks}, {pk::threads, measured.threads}}},
                  {pk::predicted,
                   {{pk::cores, predicted.cores}, {pk::ranks, predicted.ranks}, {pk::threads, predicted.threads}}},
                  {pk::effective_cores_measured, effective_cores(measured)},
                  {pk::effective_cores_predicted, effective_cores(predicted)},
                  {pk::compute_time_factor, compute_factor},
                  {pk::measured_sharing_factor, sharing_slowdown},
                  {pk::comm_compute_steal, steal},
                  {pk::comm_rate_beside_compute, comm_rate},
                  {pk::uneven_time_slicing, uneven},
                  {pk::factors,
                   {{pk::thread_scaling_exponent, factors.thread_scaling_exponent},
                    {pk::gloo_cores_per_collective, factors.gloo_cores_per_collective},
                    {pk::gloo_busy_fraction, factors.gloo_busy_fraction}}},
                  {pk::measured_inputs, measured_inputs(sharing_applied, busy, run.reference_level)},
                  {pk::assumed_inputs, busy ? kContentionAssumedBusyMeasured : kContentionAssumed}};
    if (busy) contention[pk::gloo_busy_measured] = {{pk::fraction, busy->fraction}, {pk::from, busy->from}};
    if (steal_check)
      contention[pk::steal_check] = {{pk::measured_steal, steal_check->steal},
                                     {pk::measured_collective_rate, steal_check->collective_rate},
                                     {pk::model_steal, steal},
                                     {pk::model_collective_rate, comm_rate},
                                     {pk::covered_repeats, steal_check->covered_repeats},
                                     {pk::repeats, steal_check->repeats},
                                     {pk::from, in.measured->source}};
  } else {
    assumptions.push_back("GPU ranks: each unit's compute time is the measured one (same device kind; "
                          "one rank per device, no contention between ranks)");
    if (!cluster.device_name.empty() && !run.device_name.empty() && cluster.device_name != run.device_name)
      assumptions.push_back(fmt::format("the run was measured on {}, the cluster has {}: compute times are the measured "
                                        "device's",
                                        run.device_name, cluster.device_name));
  }

  // What is sent, and how long each takes.
  CommPlanInput plan_input;
  for (const auto& u : run.units) plan_input.units.push_back(u.shape);
  plan_input.parameters = run.parameter_shapes;
  plan_input.strategy = t.strategy;
  plan_input.zero3 = t.zero3;
  plan_input.fsdp_units = parallel::parse_unit_policy(t.bucketing_mode);
  plan_input.fsdp_min_unit_params = t.min_unit_params;
  plan_input.world_size = t.world_size;
  plan_input.shard_size = t.shard_size;
  plan_input.grad_accum = t.grad_accum;
  plan_input.ddp_bucket_bytes = static_cast<int64_t>(t.ddp_bucket_size_mb * 1e6);
  // FSDP reduce-scatters every micro-batch; DDP keeps the measured run's choice (default: skip).
  plan_input.ddp_skip_sync = parallel::mode_entry(run.distributed_mode).layout == parallel::LayoutKind::ddp_buckets ? run.skip_data_sync : true;
  plan_input.backend = cpu ? parallel::CommBackend::gloo : parallel::CommBackend::nccl;
  const CommPlan plan = plan_communication(plan_input);
  const CollectiveTimer timer(cluster, in.measured, Placement{t.world_size, t.nnodes, t.nproc_per_node, t.shard_size},
                              in.group_measurements);

  ScheduleInput s;
  s.strategy = t.strategy;
  s.zero3 = t.zero3;
  s.ddp_overlap = run.ddp_overlap;
  s.ddp_skip_sync = plan_input.ddp_skip_sync;
  s.grad_accum = t.grad_accum;
  for (const auto& u : run.units) {
    s.forward_seconds.push_back(u.forward_seconds * compute_factor);
    s.backward_seconds.push_back(u.backward_seconds * compute_factor);
  }
  s.plan = plan;
  // The step's own copies, which the one-rank run never made: bytes from the layout, timed at
  // the rate the node's ranks copy at together (CPU: measured here by the probe).
  const PlacedCopyBytes placed = plan.collectives.empty() ? PlacedCopyBytes{} : placed_copy_bytes(plan, t.shard_size, cpu);
  const StepCopyBytes copies = placed.per_iteration(plan);
  const int64_t copy_bytes = copies.total();
  json step_copies = nullptr;
  std::optional<MemoryRate> memory_rate;
  if (cpu && !(in.memory_rate && in.memory_rate->ranks == t.nproc_per_node) && !in.measure_memory) {
    step_copies = {{pk::bytes_per_iteration, copy_bytes},
                   {pk::copied_bytes, copies.copied},
                   {pk::filled_bytes, copies.filled},
                   {pk::added_bytes, copies.added},
                   {pk::ms, nullptr},
                   {pk::why, "no copy rate was given or measured (tokbench predict measures one; a sweep's predictions "
                             "do not): the step's own copies are counted, not timed"}};
    if (copy_bytes > 0)
      assumptions.push_back(fmt::format("the parallel step's own copies ({:.1f} MB per iteration) are not timed: no copy "
                                        "rate was measured",
                                        static_cast<double>(copy_bytes) / 1e6));
  } else if (cpu) {
    // A rate given for this many ranks per node, else the probe's, here and now.
    memory_rate = in.memory_rate && in.memory_rate->ranks == t.nproc_per_node ? *in.memory_rate
                                                                             : in.measure_memory(t.nproc_per_node);
    const double rate = memory_rate->together_bytes_per_s;
    const auto seconds = [rate](const std::vector<StepCopyBytes>& per_call) {
      std::vector<double> out;
      for (const auto& b : per_call) out.push_back(b.copy_equivalent() / rate);
      return out;
    };
    s.copy_before_issue_seconds = seconds(placed.before_issue);
    s.copy_after_wait_seconds = seconds(placed.after_wait);
    s.step_copy_seconds = placed.at_step.copy_equivalent() / rate;
    const double copy_seconds = copies.copy_equivalent() / rate;
    step_copies = {{pk::bytes_per_iteration, copy_bytes},
                   {pk::copied_bytes, copies.copied},
                   {pk::filled_bytes, copies.filled},
                   {pk::added_bytes, copies.added},
                   {pk::fill_cost_of_copy, kFillCostOfCopy},
                   {pk::add_cost_of_copy, kAddCostOfCopy},
                   {pk::ms, copy_seconds * 1e3},
                   {pk::memory_rate, to_json(*memory_rate)},
                   {pk::measured, "the copy rate with the node's ranks copying at once (memory_rate)"},
                   {pk::assumed, "every copy and in-place scale of the step moves its bytes at memcpy's rate, every fill "
                                 "(a buffer zeroed) at half of a copy's time (derived: it writes its bytes without "
                                 "reading them), every accumulation (gradients added into a flat buffer) at a copy's time "
                                 "(add_cost_of_copy, from traces of this project's machine, not measured here); the "
                                 "ranks' copies overlap in time; each runs where the step makes it, "
                                 "beside the collectives then in flight: before its collective's issue, after its wait, "
                                 "or (the shard gradients' scaling) before the optimizer"}};
    if (copy_bytes > 0)
      assumptions.push_back(fmt::format(
          "the parallel step's own copies (buckets, flat gradients, gather buffers): {:.1f} MB copied, {:.1f} MB "
          "zeroed (at {:g} of a copy's time) and {:.1f} MB accumulated into (at {:g}) per iteration at {:.2f} GB/s ({} "
          "ranks copying at once, {}): {:.2f} ms, under elementwise",
          static_cast<double>(copies.copied) / 1e6, static_cast<double>(copies.filled) / 1e6, kFillCostOfCopy,
          static_cast<double>(copies.added) / 1e6, kAddCostOfCopy,
          memory_rate->together_bytes_per_s / 1e9, memory_rate->ranks, memory_rate->source, copy_seconds * 1e3));
  } else if (copy_bytes > 0) {
    assumptions.push_back("GPU ranks: the step's own copies on the device are not modelled");
  }
  // The optimizer: a per-tensor and a per-element cost over what the rank updates (FSDP: one flat
  // shard per unit), the per-element part slowed as the node's ranks share memory bandwidth.
  json optimizer = nullptr;
  const bool sharded = t.strategy == parallel::DistMode::fsdp && !plan.layout.units.empty();
  if (run.shard_size() > 1) {
    // A sharded measured run: its own shards are not laid out here; elements alone.
    const double updated_ratio = static_cast<double>(run.shard_size()) / static_cast<double>(t.shard_size);
    s.optimizer_seconds = run.optimizer_seconds * compute_factor * updated_ratio;
    optimizer = {{pk::rule, "the measured run was sharded: its optimizer time times the measured over the predicted "
                            "shard size, and the compute factor"}};
  } else {
    const OptimizerWork measured_work = unsharded_work(run.parameter_shapes);
    const OptimizerWork predicted_work = sharded ? sharded_work(plan.layout) : measured_work;
    const double element_factor = alone_to_shared && memory_rate ? memory_rate->sharing_slowdown() : compute_factor;
    const OptimizerCostRates* rates = in.optimizer_cost ? &*in.optimizer_cost : nullptr;
    const double ratio = optimizer_time_ratio(rates, measured_work, predicted_work, compute_factor, element_factor);
    s.optimizer_seconds = run.optimizer_seconds * ratio;
    optimizer = {{pk::measured_work, to_json(measured_work)},
                 {pk::predicted_work, to_json(predicted_work)},
                 {pk::per_tensor_us, rates ? json(rates->per_tensor_seconds * 1e6) : json(nullptr)},
                 {pk::per_element_ns, rates ? json(rates->per_element_seconds * 1e9) : json(nullptr)},
                 {pk::costs_from, rates ? json(rates->source) : json("not measured: elements alone (assumed)")},
                 {pk::per_tensor_factor, compute_factor},
                 {pk::per_element_factor, element_factor},
                 {pk::per_element_factor_from, alone_to_shared && memory_rate
                                                   ? "memory_rate.sharing_slowdown (measured)"
                                                   : "the compute factor (assumed: as compute)"},
                 {pk::ratio, ratio},
                 {pk::rule, "predicted = measured optimizer x (a.tensors_p.per_tensor_factor + b.elements_p."
                            "per_element_factor) / (a.tensors_m + b.elements_m), a and b the per-tensor and per-element "
                            "costs"}};
    assumptions.push_back(fmt::format(
        "optimizer: {} tensor(s) of {} elements updated on the predicted rank (measured: {} of {}); {}; the per-element "
        "part x {:.3g} ({}): x {:.3g} of the measured optimizer",
        predicted_work.tensors, predicted_work.elements, measured_work.tensors, measured_work.elements,
        rates ? fmt::format("{:.3g} us per tensor and {:.3g} ns per element ({})", rates->per_tensor_seconds * 1e6,
                            rates->per_element_seconds * 1e9, rates->source)
              : std::string("no per-tensor cost measured: elements alone"),
        element_factor, alone_to_shared && memory_rate ? "ranks sharing memory bandwidth, measured" : "as compute",
        ratio));
  }
  json communication = results::comm_plan_json(plan);
  for (std::size_t i = 0; i < plan.collectives.size(); ++i) {
    s.collective_seconds.push_back(timer.seconds(plan.collectives[i]));
    communication[plan_key::collectives][i][pk::ms_each] = s.collective_seconds.back() * 1e3;
  }
  s.comm_compute_steal = steal;
  s.comm_rate_beside_compute = comm_rate;
  ScheduleResult r = simulate_iteration(s);
  // Where ranks time-slice the cores the schedule's lockstep is one end of the iteration and the
  // cores' budget the other: the point is between them (cpu_contention.hpp), and the schedule's
  // waits and contention give up what it takes off.
  std::optional<OutOfStep> out_of_step;
  if (cpu_placement) {
    if (const auto budget = cores_budget(*cpu_placement, factors, r.compute_seconds, r.exposed_comm_seconds,
                                         r.hidden_comm_seconds(), comm_rate)) {
      out_of_step = between_lockstep_and_budget(r.iteration_seconds, budget->iteration_seconds,
                                                r.exposed_comm_seconds + r.contention_seconds);
      r.iteration_seconds = out_of_step->iteration_seconds;
      r.exposed_comm_seconds *= out_of_step->waits_scale;
      r.contention_seconds *= out_of_step->waits_scale;
      r.copy_contention_seconds *= out_of_step->waits_scale;
      contention[pk::cores_budget] = {{pk::iteration_ms, budget->iteration_seconds * 1e3},
                                      {pk::compute_cpu_ms, budget->compute_cpu_seconds * 1e3},
                                      {pk::gloo_cpu_ms, budget->gloo_cpu_seconds * 1e3}};
      contention[pk::ranks_out_of_step] = {{pk::lockstep_iteration_ms, out_of_step->lockstep_seconds * 1e3},
                                           {pk::weight, kOutOfStepWeight},
                                           {pk::iteration_ms, out_of_step->iteration_seconds * 1e3},
                                           {pk::waits_scale, out_of_step->waits_scale}};
      assumptions.push_back(fmt::format(
          "ranks out of step, not measured: the schedule runs the {} time-slicing ranks in lockstep ({:.2f} ms), so "
          "a rank's share of the cores is idle while it waits (but for Gloo's part); with every core kept busy, as "
          "ranks drifting apart keep them, the iteration is {:.2f} ms (cpu_contention.cores_budget: compute {:.2f} "
          "and Gloo {:.2f} core-ms per rank). {} (docs/predict.md, \"Assumptions and limits\")",
          cpu_placement->ranks, out_of_step->lockstep_seconds * 1e3, budget->iteration_seconds * 1e3,
          budget->compute_cpu_seconds * 1e3, budget->gloo_cpu_seconds * 1e3,
          out_of_step->below_lockstep()
              ? fmt::format("The prediction is their midpoint, {:.2f} ms, its waits and contention x {:.3g}, and its "
                            "interval spans both",
                            out_of_step->iteration_seconds * 1e3, out_of_step->waits_scale)
              : std::string("The budget is no lower end here: the prediction is the lockstep's")));
    }
  }

  // Memory.
  const MemoryPrediction memory = predict_memory(run, MemoryTarget{t.strategy, t.zero3, t.shard_size, &plan});
  for (const auto& a : memory.assumptions) assumptions.push_back(a);
  assumptions.push_back("one communication stream per rank: collectives start in issue order when issued and the "
                        "stream is free; the loss average and the stop agreement (a few bytes) are not modelled");
  if (parallel::mode_entry(t.strategy).layout == parallel::LayoutKind::ddp_buckets)
    assumptions.push_back("DDP: a unit's gradients arrive evenly over its backward, in reverse registration order; "
                          "buckets take whole parameters, as the step lays them out");
  if (!run.parameter_shapes_recorded)
    assumptions.push_back("the record lists no parameter_shapes (an older tokbench): each timed unit is laid out as "
                          "one parameter");
  if (!in.measured)
    assumptions.push_back(fmt::format("collectives: {}; a group on one node uses the intra-node link, across nodes "
                                      "the inter-node bandwidth per device bounds it",
                                      timer.method()));
  else
    assumptions.push_back("collectives: " + timer.method());
  if (in.measured && t.strategy == parallel::DistMode::fsdp && t.shard_size < t.world_size && t.nnodes == 1)
    assumptions.push_back(fmt::format(
        "hybrid groups on one machine: the {} shard groups (or {} replica groups) run their collectives at once; a "
        "group's time is tokbench comm's for that many ranks{}",
        t.world_size / t.shard_size, t.shard_size,
        cpu ? (busy ? fmt::format(", times the cores the node's {} ranks' collectives ask for at once ({} each, "
                                  "measured) over the node's, against the document's own (they share the CPU node's "
                                  "cores)",
                                  t.nproc_per_node, busy->fraction)
                    : std::string(", times the node's ranks over the ranks the document measured on it (they share "
                                  "the CPU node's cores and memory)"))
            : std::string(" (each group on links of its own)")));
  if (run.world_size > 1)
    assumptions.push_back("the measured run had several ranks: its unit times may hold its own contention and hook waits");

  // The record, in tokbench run's keys.
  const double iteration = r.iteration_seconds;
  const int64_t w = t.world_size;
  const double tokens = static_cast<double>(t.global_batch) * static_cast<double>(run.seq_len);
  const results::RunRecord& m = run.record;
  using results::Field;
  using results::Number;
  // A key the prediction carries over from the measured record, as that record holds it (or
  // `absent` where the record has no such key).
  const auto carried = []<typename T>(const Field<T>& field, Field<T> absent) { return field.present() ? field : absent; };
  const auto number = [](const Field<Number>& field) {
    return field.value() ? std::optional<double>(std::visit([](auto v) { return static_cast<double>(v); }, *field.value()))
                         : std::nullopt;
  };
  const auto flops = number(m.model_flops);
  const auto hw_flops = m.hardware_flops.value() ? number(m.hardware_flops) : flops;
  const double ga = static_cast<double>(t.grad_accum);
  std::optional<double> peak_tflops;
  Field<std::string> peak_chip = carried(m.mfu_peak_chip, Field<std::string>(nullptr));
  Field<std::string> peak_source = carried(m.mfu_peak_source, Field<std::string>(nullptr));
  Field<bool> peak_estimate = carried(m.mfu_peak_is_estimate, Field<bool>(nullptr));
  const std::string precision = m.mfu_precision.value_or(cluster_key::fp32);
  if (auto it = cluster.peak_TFLOP_per_s.find(precision); it != cluster.peak_TFLOP_per_s.end()) {
    peak_tflops = it->second;
    peak_chip = cluster.device_name.empty() ? cluster.name : cluster.device_name;
    peak_source = "cluster " + cluster.source;
    peak_estimate = false;
  } else {
    peak_tflops = m.mfu_peak_tflop_per_s.value();
  }
  const std::optional<double> per_device_tflops =
      flops && iteration > 0 ? std::optional<double>(*flops * ga / iteration / 1e12) : std::nullopt;
  std::optional<double> hw_tflops;
  if (hw_flops && iteration > 0) hw_tflops = hw_flops.value_or(0.0) * ga / iteration / 1e12;
  auto fraction = [&](const std::optional<double>& v) {
    return v && peak_tflops && *peak_tflops > 0 ? std::optional<double>(*v / *peak_tflops) : std::nullopt;
  };
  const auto gb = [](std::optional<double> bytes) { return bytes ? std::optional<double>(*bytes / 1e9) : std::nullopt; };

  std::string message = fmt::format("predicted from {} for {} ({} x {} ranks)", run.source, cluster.name, t.nnodes,
                                    t.nproc_per_node);
  bool fits = true;
  if (cluster.memory_per_device_GB && memory.predicted_peak && *memory.predicted_peak / 1e9 > *cluster.memory_per_device_GB) {
    fits = false;
    message += fmt::format("; its predicted peak {:.2f} GB exceeds the device's {} GB: it would run out of memory",
                           *memory.predicted_peak / 1e9, *cluster.memory_per_device_GB);
  }

  // The measured record's config in the order it was read (nlohmann::json: sorted), the target's
  // keys replacing theirs in place.
  json config = m.config.value() ? json(*m.config.value()) : json::object();
  if (!config.is_object()) config = json::object();
  config[config_key::distributed_mode] = parallel::to_string(t.strategy);
  config[config_key::shard_mode] = t.shard_mode;
  config[config_key::bucketing_mode] = t.bucketing_mode;
  // What resolution decides, in two parts so that a key the measured config lacks lands where it
  // always did (the writer puts only the members it is given).
  results::ResolvedConfig units, sync;
  units.fsdp_min_unit_params =
      t.strategy == parallel::DistMode::fsdp && t.bucketing_mode == "size" ? Field<int64_t>(t.min_unit_params) : nullptr;
  results::put_resolved(config, units);
  config[config_key::sharding_size] = t.sharding_size ? json(*t.sharding_size) : json(nullptr);
  config[config_key::ddp_bucket_size_mb] = t.ddp_bucket_size_mb;
  sync.skip_data_sync = parallel::mode_entry(t.strategy).layout == parallel::LayoutKind::ddp_buckets ? plan_input.ddp_skip_sync : false;
  sync.dist_backend = w > 1 ? Field<std::string>(cpu ? "gloo" : "nccl") : nullptr;
  sync.dist_launcher = "none";
  results::put_resolved(config, sync);
  config[config_key::num_threads] = t.num_threads;
  // The target's device, as `tokbench run` on the cluster would record it.
  config[config::record_key::device] = cluster.device;
  results::RunRecord rec;
  rec.average_iter_time = iteration * 1e3;
  rec.model_flops = flops ? Field<Number>(*flops) : nullptr;
  rec.model_flop_per_sec = flops && iteration > 0 ? Field<double>(*flops * ga * static_cast<double>(w) / iteration) : nullptr;
  rec.tokens_per_sec = iteration > 0 ? Field<double>(tokens / iteration) : nullptr;
  rec.memory_used_gb = gb(memory.predicted_peak);
  rec.model_name = run.model_name;
  rec.num_gpus = w;
  rec.seq_len = run.seq_len;
  rec.micro_bs = t.micro_batch;
  rec.global_bs = t.global_batch;
  rec.ga = t.grad_accum;
  rec.distributed_mode = mode_label(t);
  rec.sharding_size = t.strategy == parallel::DistMode::fsdp && t.sharding_size ? Field<results::Given>(*t.sharding_size) : nullptr;
  rec.compiler = carried(m.compiler, Field<std::string>(run.executor));
  rec.schema_version = results::kSchemaVersion;
  rec.status = std::string(results::kStatusPredicted);
  rec.message = message;
  rec.executor = run.executor;
  rec.kernels = carried(m.kernels, Field<results::Block>(nullptr));
  rec.tokens_per_sec_per_device = iteration > 0 ? Field<double>(tokens / iteration / static_cast<double>(w)) : nullptr;
  rec.model_flops_per_iter_per_device = flops ? Field<Number>(*flops * ga) : nullptr;
  rec.model_flops_per_iter_total = flops ? Field<Number>(*flops * ga * static_cast<double>(w)) : nullptr;
  rec.model_tflop_per_s_per_device = per_device_tflops;
  rec.model_tflop_per_s_total =
      per_device_tflops ? Field<double>(*per_device_tflops * static_cast<double>(w)) : nullptr;
  rec.mfu = fraction(per_device_tflops);
  rec.checkpoint_activations = carried(m.checkpoint_activations, Field<bool>(false));
  rec.hardware_flops = hw_flops ? Field<Number>(*hw_flops) : nullptr;
  rec.hardware_tflop_per_s_per_device = hw_tflops;
  rec.hfu = fraction(hw_tflops);
  rec.mfu_peak_tflop_per_s = peak_tflops;
  rec.mfu_peak_chip = peak_chip;
  rec.mfu_peak_source = peak_source;
  rec.mfu_peak_is_estimate = peak_estimate;
  rec.mfu_precision = precision;
  rec.flops_convention = carried(m.flops_convention, Field<std::string>(nullptr));
  rec.warmup_iters = nullptr;
  rec.max_iters = nullptr;
  rec.measured_iters = 0;
  rec.measured_window_s = nullptr;
  rec.iter_time_ms = nullptr;
  rec.iterations = json::array();  // nothing was measured
  rec.loss_first = nullptr;
  rec.loss_last = nullptr;
  rec.parameters = run.parameters;
  rec.n_layer = run.n_layer;
  rec.memory_allocated_peak_gb = gb(memory.predicted_peak);
  rec.memory_reserved_peak_gb = gb(memory.predicted_reserved);
  rec.peak_rss_gb = nullptr;
  results::put_memory_breakdown(
      rec, {.parameters = memory.predicted.parameters / 1e9,
            .gradients = memory.predicted.gradients / 1e9,
            .optimizer_state = memory.predicted.optimizer_state / 1e9,
            .activations = memory.predicted.activations / 1e9,
            .comm_buffers = memory.predicted.comm_buffers / 1e9,
            .allocator_reserve = memory.predicted_reserved && memory.predicted_peak
                                     ? std::optional<double>((*memory.predicted_reserved - *memory.predicted_peak) / 1e9)
                                     : std::nullopt});
  rec.memory_estimate_gb = nullptr;
  rec.harness_overhead_percent = nullptr;
  rec.world_size = w;
  rec.sharding_mode = t.strategy == parallel::DistMode::fsdp ? Field<std::string>(sharding_label(t)) : nullptr;
  rec.bucketing = t.strategy == parallel::DistMode::fsdp ? Field<std::string>(t.bucketing_mode) : nullptr;
  rec.ranks = json::array();
  rec.device = cluster.device;
  rec.device_name = cluster.device_name.empty() ? run.device_name : cluster.device_name;
  rec.dtype = run.dtype;
  rec.tf32 = carried(m.tf32, Field<bool>(nullptr));
  rec.zero_grad = carried(m.zero_grad, Field<std::string>(nullptr));
  rec.config = config;
  rec.environment = carried(m.environment, Field<results::Block>(nullptr));
  // The measured account carried to the predicted rank, in a measured account's shape; none
  // (null, with the reason in prediction.time_account) when the measured run has none.
  const PredictedAccount predicted_account = predict_time_account(
      run,
      PredictedIteration{iteration, forward_backward_seconds(r), r.optimizer_seconds, r.step_copy_seconds,
                         r.exposed_comm_seconds, r.contention_seconds, r.copy_contention_seconds, t.grad_accum},
      PredictedFlops{flops ? static_cast<int64_t>(std::llround(*flops * ga)) : 0,
                     peak_tflops ? std::optional<double>(*peak_tflops * 1e12) : std::nullopt,
                     peak_source.value_or("")});
  rec.time_account = predicted_account.account ? Field<results::Block>(account::to_json(*predicted_account.account))
                                               : Field<results::Block>(nullptr);
  // How noisy the measured run was, and the interval that follows on the predicted iteration.
  std::string no_spread;
  const std::optional<IterationSpread> spread = iteration_spread(m.iterations.value_or(json()), no_spread);
  // The interval: the measured run's spread on the compute, the comm document's on the
  // communication that reaches the iteration, its compute-sharing probe's on forward and backward.
  std::vector<SpreadPart> spread_parts;
  if (spread) {
    const PredictionInterval p = prediction_interval(*spread, iteration, r.compute_seconds);
    spread_parts.push_back({"the measured run's iterations (quartiles)", iteration - p.low_ms / 1e3,
                            p.high_ms / 1e3 - iteration});
  }
  // No run spread, no interval (input_spread says why): the comm document's parts join it.
  if (spread && in.measured && !plan.collectives.empty()) {
    double weight = 0, below = 0, above = 0;
    for (std::size_t i = 0; i < plan.collectives.size(); ++i) {
      const auto& c = plan.collectives[i];
      const double w_i = s.collective_seconds[i] * static_cast<double>(c.per_iteration);
      const double lo = relative_spread(*in.measured, to_string(c.call), static_cast<double>(c.bytes)).first;
      weight += w_i;
      // The mean already holds the slow calls, and the slowest of a few is an outlier (on a shared
      // 2-core VM up to 5x the mean): the fastest call's distance below the mean, either side.
      below += w_i * std::max(0.0, 1.0 - lo);
      above += w_i * std::max(0.0, 1.0 - lo);
    }
    const double reaching = r.exposed_comm_seconds + r.contention_seconds;
    if (weight > 0)
      spread_parts.push_back({"the comm document's collective times (the fastest call against the mean)",
                              reaching * below / weight, reaching * above / weight});
  }
  // The reference level's own noise: the run's probe between its quartiles moves the scale.
  if (spread && run.reference_level.applied)
    spread_parts.push_back({"the run's reference probe (quartiles of its products)",
                            r.compute_seconds * run.reference_level.relative_below(),
                            r.compute_seconds * run.reference_level.relative_above()});
  if (spread && sharing_quartile_ratios)
    spread_parts.push_back({"the comm document's compute sharing (quartiles of its pairs)",
                            forward_backward_seconds(r) * std::max(0.0, 1.0 - sharing_quartile_ratios->first),
                            forward_backward_seconds(r) * std::max(0.0, sharing_quartile_ratios->second - 1.0)});
  // Ranks in or out of step: the interval reaches both ends.
  if (spread && out_of_step)
    spread_parts.push_back({"ranks in or out of step (cpu_contention.ranks_out_of_step: the lockstep schedule above, "
                            "the cores' budget below)",
                            std::max(0.0, out_of_step->iteration_seconds - out_of_step->budget_seconds),
                            std::max(0.0, out_of_step->lockstep_seconds - out_of_step->iteration_seconds)});
  json interval = nullptr;
  if (!spread_parts.empty()) {
    const PredictionInterval p = combined_interval(iteration, spread_parts);
    json parts = json::array();
    for (const auto& part : spread_parts)
      parts.push_back({{pk::from, part.name}, {pk::below_ms, part.below_s * 1e3}, {pk::above_ms, part.above_s * 1e3}});
    interval = {{pk::low, p.low_ms}, {pk::high, p.high_ms}, {pk::rule, interval_rule()}, {pk::parts, parts}};
  }
  json cluster_json = {{cluster_key::name, cluster.name},
                       {pk::source, cluster.source},
                       {cluster_key::device, cluster.device},
                       {cluster_key::device_name, cluster.device_name},
                       {cluster_key::devices_per_node, cluster.devices_per_node},
                       {pk::nnodes, t.nnodes},
                       {pk::nproc_per_node, t.nproc_per_node},
                       {cluster_key::memory_per_device_GB, opt(cluster.memory_per_device_GB)},
                       {cluster_key::cores_per_node,
                        cluster.cores_per_node ? json(*cluster.cores_per_node) : json(nullptr)},
                       {cluster_key::algorithm, to_string(cluster.algorithm)},
                       {pk::collective_times, timer.method()}};
  if (!in.measured) {
    cluster_json[cluster_key::intra_node] = link_json(cluster.intra_node);
    cluster_json[cluster_key::inter_node] = cluster.inter_node ? link_json(*cluster.inter_node) : json(nullptr);
  }
  const double forward_backward = forward_backward_seconds(r);
  json parts = {{pk::parameters, memory.predicted.parameters / 1e9},
                {pk::gradients, memory.predicted.gradients / 1e9},
                {pk::optimizer_state, memory.predicted.optimizer_state / 1e9},
                {pk::activations, memory.predicted.activations / 1e9},
                {pk::comm_buffers, memory.predicted.comm_buffers / 1e9}};
  json measured_parts = {{pk::parameters, memory.measured.parameters / 1e9},
                         {pk::gradients, memory.measured.gradients / 1e9},
                         {pk::optimizer_state, memory.measured.optimizer_state / 1e9},
                         {pk::activations, memory.measured.activations / 1e9},
                         {pk::comm_buffers, memory.measured.comm_buffers / 1e9}};
  rec.prediction = json{
      {pk::source,
       {{pk::record, run.source},
        {results::key::model_name, run.model_name},
        {results::key::device, run.device},
        {results::key::device_name, run.device_name},
        {results::key::world_size, run.world_size},
        {config_key::distributed_mode, !m.distributed_mode.present() ? json(parallel::to_string(run.distributed_mode))
                                       : m.distributed_mode.value()    ? json(*m.distributed_mode.value())
                                                                       : json(nullptr)},
        {results::key::ga, run.grad_accum},
        {config_key::num_threads, run.num_threads},
        {pk::average_iter_time_ms, run.average_iter_time_ms},
        {pk::unit_timings_clock, run.clock}}},
      {pk::cluster, cluster_json},
      {pk::time_ms,
       {{pk::iteration, iteration * 1e3},
        {pk::compute, r.compute_seconds * 1e3},
        {pk::forward_backward, forward_backward * 1e3},
        {pk::optimizer, r.optimizer_seconds * 1e3},
        {pk::step_copies, r.step_copy_seconds * 1e3},
        {pk::comm_total, r.comm_seconds * 1e3},
        {pk::exposed_comm, r.exposed_comm_seconds * 1e3},
        {pk::hidden_comm, r.hidden_comm_seconds() * 1e3},
        {pk::cpu_contention, r.contention_seconds * 1e3}}},
      {pk::exposed_comm_ms_per_iter, r.exposed_comm_seconds * 1e3},
      {pk::communication, communication},
      {pk::cpu_contention, contention},
      {pk::step_copies, step_copies},
      {pk::optimizer, optimizer},
      {pk::memory,
       {{pk::measured_peak_GB, opt(gb(memory.measured_peak))},
        {pk::predicted_peak_GB, opt(gb(memory.predicted_peak))},
        {pk::measured_breakdown, memory.measured_breakdown},
        {pk::measured_parts_GB, measured_parts},
        {pk::predicted_parts_GB, parts},
        {pk::device_memory_GB, opt(cluster.memory_per_device_GB)},
        {pk::fits, fits}}},
      {pk::assumptions, assumptions},
      {pk::time_account, predicted_account.description},
      {pk::input_spread, to_json(spread, no_spread)},
      {pk::unit_timings_level, to_json(run.unit_timings_level)},
      {pk::reference_level, to_json(run.reference_level)},
      {pk::interval_ms, interval},
  };
  return rec;
}

json predict(const MeasuredRun& run, const ClusterInput& in, const TargetOptions& o, const CpuContentionFactors& factors) {
  return results::to_json(predict_record(run, in, o, factors));
}

}  // namespace tokbench::predict
