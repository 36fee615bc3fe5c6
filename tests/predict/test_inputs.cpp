// The prediction's inputs: cluster TOML (presets, refusals in one line), the comm document and
// its interpolation, the CPU contention factors, the ring formulas.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>
#include <memory>
#include <algorithm>
#include <stdexcept>
#include <string>

#include "config/run_options.hpp"
#include "predict/cluster.hpp"
#include "predict/collective_cost.hpp"
#include "predict/comm_measurements.hpp"
#include "predict/cpu_contention.hpp"
#include "predict/target_from_run_options.hpp"
#include "predict/target_options.hpp"

namespace tokbench::predict {
namespace {

// The message of the std::invalid_argument `f` throws ("" when it does not).
template <typename F>
std::string refusal(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

const char* kGoodCluster = R"(
device = "cuda"
devices_per_node = 4
[intra_node]
bandwidth_GBps = 100
[inter_node]
bandwidth_GBps = 25
latency_us = 5
efficiency = 0.9
)";

TEST(PredictCluster, EveryPresetParses) {
  const auto names = cluster_preset_names();
  for (const char* expected : {"a100-sxm-8", "h100-sxm-8", "h200-sxm-8", "l40s-pcie-8"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  for (const auto& name : names) {
    const Cluster c = load_cluster(name);
    EXPECT_EQ(c.devices_per_node, 8) << name;
    EXPECT_TRUE(c.inter_node.has_value()) << name;
    EXPECT_GT(c.peak_TFLOP_per_s.at("bf16"), 0) << name;
  }
  EXPECT_DOUBLE_EQ(load_cluster("h100-sxm-8").intra_node.bandwidth_GBps, 450);
  EXPECT_DOUBLE_EQ(load_cluster("a100-sxm-8").inter_node->bandwidth_GBps, 25);
}

TEST(PredictCluster, ParsesAFileWithDefaults) {
  const Cluster c = parse_cluster_toml(kGoodCluster, "good.toml");
  EXPECT_EQ(c.name, "good");
  EXPECT_DOUBLE_EQ(c.intra_node.efficiency, kDefaultLinkEfficiency);
  EXPECT_DOUBLE_EQ(c.intra_node.latency_us, 0);
  EXPECT_DOUBLE_EQ(c.inter_node->bytes_per_second(), 25e9 * 0.9);
  EXPECT_EQ(c.algorithm, RingAlgorithm::ring);
}

TEST(PredictCluster, RefusesBadFilesInOneLine) {
  const std::string base = kGoodCluster;
  auto refused = [](const std::string& text) { return refusal([&] { parse_cluster_toml(text, "bad.toml"); }); };
  EXPECT_NE(refused("device = \"cuda\"\ndevices_per_node = [").find("not TOML"), std::string::npos);
  EXPECT_NE(refused("speed = 3\n" + base).find("unknown key 'speed'; valid: name, device"), std::string::npos);
  EXPECT_NE(refused("devices_per_node = 4\n[intra_node]\nbandwidth_GBps = 1\n").find("'device' is missing"),
            std::string::npos);
  EXPECT_NE(refused("device = \"tpu\"\n").find("\"tpu\" is not valid; valid: cuda, cpu"), std::string::npos);
  EXPECT_NE(refused("algorithm = \"tree\"\n" + base).find("valid: ring, hierarchical"), std::string::npos);
  EXPECT_NE(refused("device = \"cuda\"\ndevices_per_node = 0\n").find("'devices_per_node' must be a whole number"),
            std::string::npos);
  EXPECT_NE(refused("device = \"cuda\"\ndevices_per_node = 2\n").find("'[intra_node]' is missing"), std::string::npos);
  EXPECT_NE(refused("device = \"cuda\"\ndevices_per_node = 2\n[intra_node]\nbandwidth_GBps = 10\nefficiency = 1.5\n")
                .find("'intra_node.efficiency' = 1.5 is not valid"),
            std::string::npos);
  EXPECT_NE(refused("device = \"cuda\"\ndevices_per_node = 2\n[intra_node]\nbandwidth_GBps = -1\n")
                .find("'intra_node.bandwidth_GBps' = -1 is not valid"),
            std::string::npos);
  EXPECT_NE(refused("device = \"cpu\"\ndevices_per_node = 2\n[intra_node]\nbandwidth_GBps = 1\n")
                .find("'cores_per_node' is missing"),
            std::string::npos);
  EXPECT_NE(refused("device = \"cuda\"\ndevices_per_node = 2\n[intra_node]\nbandwidth_GBps = 1\nwidth = 2\n")
                .find("unknown key 'intra_node.width'"),
            std::string::npos);
  for (const std::string& line : {refused("speed = 3\n" + base), refused("device = \"tpu\"\n")})
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_NE(refusal([] { load_cluster("b300-nvl72"); }).find("valid: a100-sxm-8, h100-sxm-8"), std::string::npos);
  EXPECT_NE(refusal([] { load_cluster("missing.toml"); }).find("no such file"), std::string::npos);
}

TEST(PredictRing, FormulasOverOneNodeAndAcross) {
  Cluster c = parse_cluster_toml(kGoodCluster, "good.toml");  // intra 100 GB/s x 0.8, inter 25 x 0.9, 5 us
  const double b = 1e9;
  // 4 ranks on one node: all-reduce 2·3/4·b/80e9, all-gather 3/4·b/80e9 (no latency inside).
  EXPECT_NEAR(ring_collective_seconds(c, CollectiveCall::all_reduce, {4, 1, 4}, b), 1.5 * b / 80e9, 1e-12);
  EXPECT_NEAR(ring_collective_seconds(c, CollectiveCall::all_gather, {4, 1, 4}, b), 0.75 * b / 80e9, 1e-12);
  // 8 ranks on 2 nodes, flat ring: the network per device (22.5e9 B/s) and its 5 us per step.
  EXPECT_NEAR(ring_collective_seconds(c, CollectiveCall::all_reduce, {8, 2, 4}, b), 2 * 7.0 / 8 * b / 22.5e9 + 14 * 5e-6,
              1e-12);
  // Hierarchical: inside each node on b (2·3/4·b/80e9), across 2 nodes on b/4 (2·1/2·(b/4)/22.5e9 + 2·5us).
  c.algorithm = RingAlgorithm::hierarchical;
  EXPECT_NEAR(ring_collective_seconds(c, CollectiveCall::all_reduce, {8, 2, 4}, b),
              1.5 * b / 80e9 + (b / 4) / 22.5e9 + 10e-6, 1e-12);
  EXPECT_NEAR(ring_broadcast_seconds(c, {4, 1, 4}, b), b / 80e9, 1e-12);
  c.inter_node.reset();
  EXPECT_NE(refusal([&] { ring_collective_seconds(c, CollectiveCall::all_reduce, {8, 2, 4}, b); }).find("no [inter_node]"),
            std::string::npos);
}

TEST(PredictRing, GroupShapesFollowConsecutiveRanks) {
  const Placement p{16, 2, 8, 4};  // 2 nodes of 8, shard groups of 4
  const GroupShape shard = group_shape(CommGroup::shard, p), replica = group_shape(CommGroup::replica, p);
  EXPECT_EQ(shard.size, 4);
  EXPECT_EQ(shard.nodes, 1);
  EXPECT_EQ(replica.size, 4);   // ranks r, r+4, r+8, r+12
  EXPECT_EQ(replica.nodes, 2);
  EXPECT_EQ(replica.members_per_node, 2);
  const GroupShape wide = group_shape(CommGroup::shard, Placement{16, 2, 8, 16});
  EXPECT_EQ(wide.nodes, 2);
}

std::string comm_document(const std::string& results, int version = 1) {
  return R"({"schema": "tokbench-comm", "schema_version": )" + std::to_string(version) +
         R"(, "backend": "gloo", "device": "cpu", "world_size": 2, "nnodes": 1, "nproc_per_node": 2,
            "threads_per_rank": 1, "dtype": "float32", "iters": 20, "warmup_iters": 5, "environment": {},
            "results": [)" + results + "]}";
}

TEST(PredictCommDocument, InterpolatesLogLogAndExtrapolatesBandwidth) {
  const CommMeasurements m = parse_comm_document(
      comm_document(R"({"collective": "all_reduce", "size_bytes": 1024, "count": 256, "time_us": 10, "correct": true},
                       {"collective": "all_reduce", "size_bytes": 4096, "count": 1024, "time_us": 40, "correct": true},
                       {"collective": "all_reduce", "size_bytes": 4096, "count": 1024, "time_us": 40})"),
      "comm.json");
  EXPECT_EQ(m.world_size, 2);
  ASSERT_EQ(m.by_collective.at("all_reduce").size(), 2u);  // the repeated size is one point
  EXPECT_NEAR(interpolated_seconds(m, "all_reduce", 2048), 20e-6, 1e-12);  // sqrt(10 · 40)
  EXPECT_NEAR(interpolated_seconds(m, "all_reduce", 512), 10e-6, 1e-12);   // latency-bound below
  EXPECT_NEAR(interpolated_seconds(m, "all_reduce", 16384), 160e-6, 1e-12);  // the largest's bandwidth held
  EXPECT_NE(refusal([&] { interpolated_seconds(m, "all_gather", 10); }).find("has no all_gather measurements (it has: "
                                                                             "all_reduce)"),
            std::string::npos);
}

TEST(PredictCommDocument, RefusesWhatIsNotOne) {
  auto refused = [](const std::string& text) { return refusal([&] { parse_comm_document(text, "c.json"); }); };
  EXPECT_NE(refused("{").find("not JSON"), std::string::npos);
  EXPECT_NE(refused(R"({"schema": "other"})").find("not a tokbench comm document"), std::string::npos);
  EXPECT_NE(refused(comm_document(R"({"collective": "all_reduce", "size_bytes": 8, "time_us": 1})", 2))
                .find("newer tokbench (schema version 2)"),
            std::string::npos);
  EXPECT_NE(refused(comm_document("")).find("\"results\" must be a non-empty list"), std::string::npos);
  EXPECT_NE(refused(comm_document(R"({"collective": "all_reduce", "size_bytes": 8, "time_us": -1})"))
                .find("results[0] needs"),
            std::string::npos);
  EXPECT_NE(refused(comm_document(R"({"collective": "all_reduce", "size_bytes": 8, "time_us": 1, "correct": false})"))
                .find("marked incorrect"),
            std::string::npos);
}

TEST(PredictCommDocument, MeasuredTimesOnlyAtTheirWorldSize) {
  const CommMeasurements m = parse_comm_document(
      comm_document(R"({"collective": "all_reduce", "size_bytes": 1000, "time_us": 100})"), "comm.json");
  Cluster c;
  c.intra_node = Link{1, 0, 1};
  const CollectiveTimer two(c, m, Placement{2, 1, 2, 2});
  PlannedCollective all_reduce{0, CommPurpose::ddp_bucket, CollectiveCall::all_reduce, CommGroup::world, 2, 1000, 1};
  EXPECT_NEAR(two.seconds(all_reduce), 100e-6, 1e-12);
  const CollectiveTimer four(c, m, Placement{4, 1, 4, 2});
  all_reduce.group = CommGroup::replica;
  EXPECT_NE(refusal([&] { four.seconds(PlannedCollective{0, CommPurpose::reduce_across_replicas, CollectiveCall::all_reduce,
                                                         CommGroup::world, 4, 1000, 1}); })
                .find("measured over 2 ranks"),
            std::string::npos);
}

// The compute sharing `tokbench comm` measures on CPU ranks: read when well formed, refused in
// one line when not, absent when the document has none (CUDA documents write null).
TEST(PredictCommDocument, ReadsComputeSharing) {
  const std::string row = R"({"collective": "all_reduce", "size_bytes": 1000, "time_us": 100})";
  auto with_sharing = [&](const std::string& sharing) {
    std::string doc = comm_document(row);
    doc.insert(doc.size() - 1, R"(, "compute_sharing": )" + sharing);
    return doc;
  };
  const CommMeasurements m = parse_comm_document(
      with_sharing(R"({"ranks_per_node": 2, "threads_per_rank": 1, "alone_ms": 29.3, "together_ms": 45.1, "slowdown": 1.54})"),
      "c.json");
  ASSERT_TRUE(m.compute_sharing.has_value());
  EXPECT_EQ(m.compute_sharing->ranks_per_node, 2);
  EXPECT_EQ(m.compute_sharing->threads_per_rank, 1);
  EXPECT_DOUBLE_EQ(m.compute_sharing->slowdown, 1.54);
  EXPECT_DOUBLE_EQ(m.compute_sharing->slowdown_q1, 1.54) << "no quartiles recorded: no spread";
  EXPECT_DOUBLE_EQ(m.compute_sharing->slowdown_q3, 1.54);
  const CommMeasurements q = parse_comm_document(
      with_sharing(R"({"ranks_per_node": 2, "threads_per_rank": 1, "slowdown": 1.54, "slowdown_q1": 1.3, "slowdown_q3": 1.7})"),
      "c.json");
  EXPECT_DOUBLE_EQ(q.compute_sharing->slowdown_q1, 1.3);
  EXPECT_DOUBLE_EQ(q.compute_sharing->slowdown_q3, 1.7);
  EXPECT_FALSE(parse_comm_document(with_sharing("null"), "c.json").compute_sharing.has_value());
  EXPECT_FALSE(parse_comm_document(comm_document(row), "c.json").compute_sharing.has_value());
  const std::string refused = refusal([&] {
    parse_comm_document(with_sharing(R"({"ranks_per_node": 2, "threads_per_rank": 1, "slowdown": -1})"), "c.json");
  });
  EXPECT_NE(refused.find("\"compute_sharing\" needs"), std::string::npos) << refused;

  // The GEMM beside a running collective (newer documents): read when whole, refused when not.
  const auto with_beside = [&](const std::string& beside) {
    return with_sharing(R"({"ranks_per_node": 2, "threads_per_rank": 1, "slowdown": 1.1, "beside_collective": )" +
                        beside + "}");
  };
  const CommMeasurements b = parse_comm_document(
      with_beside(R"({"steal": 0.46, "collective_rate": 0.63, "covered_repeats": 14, "repeats": 15})"), "c.json");
  ASSERT_TRUE(b.compute_sharing->beside.has_value());
  EXPECT_DOUBLE_EQ(b.compute_sharing->beside->steal, 0.46);
  EXPECT_DOUBLE_EQ(b.compute_sharing->beside->collective_rate, 0.63);
  EXPECT_EQ(b.compute_sharing->beside->covered_repeats, 14);
  EXPECT_EQ(b.compute_sharing->beside->repeats, 15);
  EXPECT_FALSE(m.compute_sharing->beside.has_value()) << "older documents";
  for (const char* bad : {R"({"steal": 1.0, "collective_rate": 0.6, "covered_repeats": 1, "repeats": 1})",
                          R"({"steal": 0.4, "collective_rate": 0, "covered_repeats": 1, "repeats": 1})",
                          R"({"steal": 0.4, "collective_rate": 0.6, "covered_repeats": 3, "repeats": 2})",
                          R"({"steal": 0.4})", R"(7)"}) {
    const std::string why = refusal([&] { parse_comm_document(with_beside(bad), "c.json"); });
    EXPECT_NE(why.find("\"compute_sharing.beside_collective\" needs"), std::string::npos) << bad << ": " << why;
  }
}

TEST(PredictCommDocument, ReadsGlooBusyFraction) {
  const std::string row = R"({"collective": "all_reduce", "size_bytes": 1000, "time_us": 100})";
  auto with_busy = [&](const std::string& busy) {
    std::string doc = comm_document(row);
    return doc.insert(doc.find("\"results\""), "\"gloo_cpu_busy\": " + busy + ", ");
  };
  const CommMeasurements m = parse_comm_document(with_busy(R"({"fraction": 0.82, "ranks_per_node": 2})"), "c.json");
  ASSERT_TRUE(m.gloo_busy_fraction.has_value());
  EXPECT_DOUBLE_EQ(*m.gloo_busy_fraction, 0.82);
  EXPECT_FALSE(parse_comm_document(comm_document(row), "c.json").gloo_busy_fraction.has_value()) << "older documents";
  EXPECT_FALSE(parse_comm_document(with_busy("null"), "c.json").gloo_busy_fraction.has_value());
  const std::string refused = refusal([&] { parse_comm_document(with_busy(R"({"fraction": -1})"), "c.json"); });
  EXPECT_NE(refused.find("\"gloo_cpu_busy\" needs a \"fraction\" >= 0"), std::string::npos) << refused;
}

// Hybrid groups on one CPU node: the shard groups' collectives run at once through the node's
// cores. Measured busy b: the node's 4 ranks ask for 4b cores of 2, the 2-rank document's own
// ranks for 2b of its 2; without b every collective is a whole core (4 / 2).
TEST(PredictCommDocument, ConcurrentGroupsShareTheNodesCoresByTheirMeasuredBusy) {
  const std::string row = R"({"collective": "all_reduce", "size_bytes": 1000, "time_us": 100})";
  auto group = [&](const std::string& busy) {
    std::string doc = comm_document(row);
    const std::string no_cores = "\"environment\": {}";
    doc.replace(doc.find(no_cores), no_cores.size(), "\"environment\": {\"cpu_cores\": 2}");
    if (!busy.empty()) doc.insert(doc.find("\"results\""), "\"gloo_cpu_busy\": {\"fraction\": " + busy + "}, ");
    return parse_comm_document(doc, "comm-w2.json");
  };
  Cluster cpu;
  cpu.device = "cpu";
  cpu.cores_per_node = 2;
  const Placement hybrid{4, 1, 4, 2};
  auto factor = [&](const std::string& busy) {
    const CommMeasurements g = group(busy);
    return CollectiveTimer(cpu, g, hybrid, {g}).concurrent_groups_factor(g);
  };
  EXPECT_DOUBLE_EQ(factor(""), 2.0) << "not measured: the ranks' ratio";
  EXPECT_DOUBLE_EQ(factor("0.85"), 4 * 0.85 / 2);
  EXPECT_DOUBLE_EQ(factor("1"), 2.0);
  EXPECT_DOUBLE_EQ(factor("0.4"), 1.0) << "4 x 0.4 cores fit in 2: no slowing";
  EXPECT_DOUBLE_EQ(group("0.85").cpu_cores.value_or(0), 2);
  Cluster gpu = cpu;
  gpu.device = "cuda";
  const CommMeasurements g = group("0.85");
  EXPECT_DOUBLE_EQ(CollectiveTimer(gpu, g, hybrid, {g}).concurrent_groups_factor(g), 1.0);
}

TEST(PredictContention, SharedCoresSlowComputeAndGlooTakesACore) {
  const CpuContentionFactors f;
  // Measured: one rank, 2 threads on 2 cores. Two ranks of 2 threads: 1 core each, twice as slow.
  const CpuPlacement measured{2, 1, 2}, two_ranks{2, 2, 2}, two_ranks_one_thread{2, 2, 1};
  EXPECT_DOUBLE_EQ(effective_cores(measured), 2);
  EXPECT_DOUBLE_EQ(effective_cores(two_ranks), 1);
  EXPECT_DOUBLE_EQ(compute_time_factor(measured, two_ranks, f), 2);
  EXPECT_DOUBLE_EQ(compute_time_factor(measured, two_ranks_one_thread, f), 2);
  // No spare core: the OS shares the 2 cores among both ranks' compute thread and Gloo's 0.3
  // of a core (the fitted fallback): compute keeps 1 / 1.3 of its rate.
  EXPECT_DOUBLE_EQ(f.gloo_busy_fraction, 0.3);
  EXPECT_DOUBLE_EQ(comm_compute_steal(two_ranks_one_thread, f), 1 - 1 / 1.3);
  // 16 cores, 2 ranks x 4 threads: 8 spare cores, Gloo is free.
  EXPECT_DOUBLE_EQ(comm_compute_steal(CpuPlacement{16, 2, 4}, f), 0);
  // 16 cores, 2 ranks x 8 threads: none spare, 8 threads share their 8 cores with 0.3 of one.
  EXPECT_DOUBLE_EQ(comm_compute_steal(CpuPlacement{16, 2, 8}, f), 1 - 8 / 8.3);
  // Room for both threads and Gloo's share (3 cores for 2 x (1 + 0.3)): nothing stolen.
  EXPECT_DOUBLE_EQ(comm_compute_steal(CpuPlacement{3, 2, 1}, f), 0);
  CpuContentionFactors whole_core;
  whole_core.gloo_busy_fraction = 1;
  EXPECT_DOUBLE_EQ(comm_compute_steal(two_ranks_one_thread, whole_core), 0.5);
  // Four ranks time-sliced on 2 cores lose the same share as two on their own cores: every
  // rank's Gloo work competes with every rank's compute, not with its own half core alone (the
  // earlier busy / effective cores gave 0.6 here, twice the 2-rank figure).
  EXPECT_DOUBLE_EQ(comm_compute_steal(CpuPlacement{2, 4, 1}, f), comm_compute_steal(two_ranks_one_thread, f));
  // The cores are shared both ways: beside the compute, a collective gets its share of them.
  // Two one-thread ranks on 2 cores, Gloo's 0.3: alone the collectives fit (0.6 of 2 cores);
  // beside the compute each thread gets 2 / 2.6 of what it asks for.
  EXPECT_DOUBLE_EQ(comm_rate_beside_compute(two_ranks_one_thread, f), 2 / 2.6);
  // A whole core each: alone 2 of 2 cores, beside the compute 2 of 4: half the rate.
  EXPECT_DOUBLE_EQ(comm_rate_beside_compute(two_ranks_one_thread, whole_core), 0.5);
  // Four ranks on 2 cores at a whole core each: alone they already time-slice (2 of 4 cores),
  // beside the compute 2 of 8: half of the rate the comm document measured.
  EXPECT_DOUBLE_EQ(comm_rate_beside_compute(CpuPlacement{2, 4, 1}, whole_core), 0.5);
  // Room for both: the collective runs at its own rate.
  EXPECT_DOUBLE_EQ(comm_rate_beside_compute(CpuPlacement{3, 2, 1}, f), 1);
  EXPECT_DOUBLE_EQ(comm_rate_beside_compute(CpuPlacement{16, 2, 4}, f), 1);
  CpuContentionFactors sublinear;
  sublinear.thread_scaling_exponent = 0.5;
  EXPECT_DOUBLE_EQ(compute_time_factor(CpuPlacement{4, 1, 4}, CpuPlacement{4, 1, 1}, sublinear), 2);
}

TEST(PredictContention, TheCoresBudgetIsEveryRanksCpuWorkOverItsShare) {
  CpuContentionFactors f;
  f.gloo_busy_fraction = 0.8;
  // A core per thread: no share to hand over, no budget.
  EXPECT_FALSE(cores_budget(CpuPlacement{2, 2, 1}, f, 1.0, 1.0, 0.0, 1.0).has_value());
  EXPECT_FALSE(cores_budget(CpuPlacement{4, 3, 1}, f, 1.0, 1.0, 0.0, 1.0).has_value());
  // Four one-thread ranks on 2 cores, half a core each: 1 s of compute there is 0.5 core-s; a
  // second of exposed collectives on the half core Gloo got alone (its 0.8 capped to the share)
  // 0.5 core-s; 0.4 s hidden at 0.5 of its rate is 0.2 s at its own, 0.1 core-s. 1.1 / 0.5.
  const auto b = cores_budget(CpuPlacement{2, 4, 1}, f, 1.0, 1.0, 0.4, 0.5);
  ASSERT_TRUE(b.has_value());
  EXPECT_DOUBLE_EQ(b->compute_cpu_seconds, 0.5);
  EXPECT_DOUBLE_EQ(b->gloo_cpu_seconds, 0.5 * 1.2);
  EXPECT_DOUBLE_EQ(b->iteration_seconds, (0.5 + 0.6) / 0.5);
  // Gloo asking less than the share: its own demand. Three ranks on 2 cores, 2/3 of a core each.
  f.gloo_busy_fraction = 0.3;
  const auto c = cores_budget(CpuPlacement{2, 3, 1}, f, 0.9, 1.0, 0.0, 1.0);
  ASSERT_TRUE(c.has_value());
  EXPECT_DOUBLE_EQ(c->gloo_cpu_seconds, 0.3);
  EXPECT_DOUBLE_EQ(c->iteration_seconds, (0.9 * 2.0 / 3.0 + 0.3) / (2.0 / 3.0));
}

TEST(PredictContention, RanksOutOfStepMeetHalfwayAndTheWaitsGiveUpWhatItTakes) {
  // Lockstep 2 s, the cores' budget 1.6 s: the point is 1.8 s, and the 0.2 s comes off the
  // 0.8 s of waits and contention the lockstep booked, each x 0.75.
  const OutOfStep o = between_lockstep_and_budget(2.0, 1.6, 0.8);
  EXPECT_DOUBLE_EQ(o.iteration_seconds, 1.8);
  EXPECT_DOUBLE_EQ(o.lockstep_seconds, 2.0);
  EXPECT_DOUBLE_EQ(o.budget_seconds, 1.6);
  EXPECT_DOUBLE_EQ(o.waits_scale, 0.75);
  // A budget at or above the lockstep is no lower end; nothing booked to the collectives, nothing to give.
  for (const OutOfStep& same : {between_lockstep_and_budget(2.0, 2.0, 0.8), between_lockstep_and_budget(2.0, 2.5, 0.8),
                                between_lockstep_and_budget(2.0, 1.6, 0.0)}) {
    EXPECT_DOUBLE_EQ(same.iteration_seconds, 2.0);
    EXPECT_DOUBLE_EQ(same.waits_scale, 1.0);
  }
  // Never more than the waits hold.
  const OutOfStep capped = between_lockstep_and_budget(2.0, 0.0, 0.5);
  EXPECT_DOUBLE_EQ(capped.iteration_seconds, 1.5);
  EXPECT_DOUBLE_EQ(capped.waits_scale, 0.0);
}

TEST(PredictContention, UnevenTimeSlicingIsWhereTheCoresDoNotDivideTheThreads) {
  // {cores, ranks, threads}: 3 one-thread ranks on 2 cores cannot share them evenly at every moment.
  EXPECT_TRUE(uneven_time_slicing(CpuPlacement{2, 3, 1}));
  EXPECT_TRUE(uneven_time_slicing(CpuPlacement{4, 3, 2}));  // 6 threads on 4 cores
  // Room for every thread, or a whole number of threads per core: even.
  EXPECT_FALSE(uneven_time_slicing(CpuPlacement{2, 2, 1}));
  EXPECT_FALSE(uneven_time_slicing(CpuPlacement{4, 3, 1}));
  EXPECT_FALSE(uneven_time_slicing(CpuPlacement{2, 4, 1}));
  EXPECT_FALSE(uneven_time_slicing(CpuPlacement{4, 3, 4}));  // 12 threads, 3 per core
}

TEST(SweepTarget, ARowsRunOptionsAreThePredictionsTarget) {
  const TargetOptions t = target_from_run_options({{"model-name", "pythia-14m"}, {"nproc-per-node", "8"},
                                                   {"nnodes", "2"}, {"distributed-mode", "fsdp"},
                                                   {"shard-mode", "hybrid_zero3"}, {"sharding-size", "8"},
                                                   {"bucketing-mode", "block"}, {"global-batch-size", "64"},
                                                   {"ddp-bucket-size", "12.5"}, {"num-threads", "3"}});
  EXPECT_EQ(t.taken(&config::LauncherSection::nproc_per_node), 8);
  EXPECT_EQ(t.taken(&config::LauncherSection::nnodes), 2);
  EXPECT_EQ(t.taken(&config::ParallelismSection::distributed_mode), "fsdp");
  EXPECT_EQ(t.taken(&config::ParallelismSection::shard_mode), "hybrid_zero3");
  EXPECT_EQ(t.taken(&config::ParallelismSection::sharding_size), 8);
  EXPECT_EQ(t.taken(&config::ParallelismSection::bucketing_mode), "block");
  EXPECT_EQ(t.taken(&config::BatchSection::global_batch_size), 64);
  EXPECT_EQ(t.taken(&config::ParallelismSection::ddp_bucket_size_mb), 12.5);
  EXPECT_EQ(t.taken(&config::DeviceSection::num_threads), 3);
  EXPECT_FALSE(t.taken(&config::BatchSection::micro_batch_size).has_value()) << "unset options stay the measured run's";
  EXPECT_EQ(t.given.count("--model-name"), 0u) << "an option predict does not model is not the target's";

  // A size-bucketed row's threshold (the reference's float spelling) becomes the target's; a
  // row that gives it without size keeps its prediction, as the run goes on without it.
  const TargetOptions sized = target_from_run_options({{"bucketing-mode", "size"}, {"fsdp-bucket-params", "1e6"}});
  EXPECT_EQ(sized.taken(&config::ParallelismSection::fsdp_bucket_params), 1e6);
  EXPECT_FALSE(target_from_run_options({{"bucketing-mode", "block"}, {"fsdp-bucket-params", "1e6"}})
                   .taken(&config::ParallelismSection::fsdp_bucket_params).has_value());

  // A row that names no ranks runs on one, as tokbench run does.
  const TargetOptions one = target_from_run_options({{"model-name", "pythia-14m"}});
  EXPECT_EQ(one.taken(&config::LauncherSection::nproc_per_node), 1);
  EXPECT_EQ(one.taken(&config::LauncherSection::nnodes), 1);

  try {
    target_from_run_options({{"nproc-per-node", "2x"}});
    FAIL() << "not a number, accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--nproc-per-node '2x' is not a whole number"), std::string::npos) << e.what();
  }
}

// What predict models is what the rows say: every row of `tokbench run` with a predict_help is a
// target option, shown with that help, and nothing else is (a predict_help on a row of a section
// the target is not made of would otherwise be ignored without a word).
TEST(SweepTarget, TheModelledOptionsAreTheRowsWithAPredictHelp) {
  std::vector<std::pair<std::string, std::string>> said, modelled;
  for (const config::Field* row : config::all_fields())
    if (row->predict_help != nullptr) said.emplace_back(first_name(row->names), row->predict_help);
  for (const auto& row : target_rows()) {
    modelled.emplace_back(first_name(row.names), row.help);
    EXPECT_STREQ(row.group, "Target run (unset: the measured run's)") << row.names;
  }
  std::sort(said.begin(), said.end());
  auto sorted = modelled;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, said) << "the same rows, with their predict_help";
  for (const char* name : {"--nproc-per-node", "--distributed-mode", "--global-batch-size", "--num-threads"})
    EXPECT_NE(std::find_if(modelled.begin(), modelled.end(), [&](const auto& m) { return m.first == name; }),
              modelled.end())
        << name;
}

// The target's options are its sections' rows: the reference's aliases and the rows' parse checks
// come with them, a given value is taken and an unset one is the measured run's, and an option of
// the sections the prediction does not model is refused by name, a modelled one outside its row.
TEST(SweepTarget, PredictsOptionsAreTheSectionsRows) {
  const auto parse = [](std::vector<std::string> args) {
    CLI::App app;
    auto t = std::make_unique<TargetOptions>();
    add_target_options(app, *t);
    std::reverse(args.begin(), args.end());
    app.parse(args);
    return t;
  };
  const auto t = parse({"--nproc_per_node", "4", "--distributed-mode", "fsdp", "--num-threads", "2"});
  EXPECT_EQ(t->taken(&config::LauncherSection::nproc_per_node), 4);
  EXPECT_EQ(t->taken(&config::ParallelismSection::distributed_mode), "fsdp");
  EXPECT_EQ(t->taken(&config::DeviceSection::num_threads), 2);
  EXPECT_FALSE(t->taken(&config::ParallelismSection::shard_mode).has_value()) << "unset: the measured run's";
  EXPECT_FALSE(t->taken(&config::LauncherSection::nnodes).has_value());
  EXPECT_NO_THROW(check_target_options(*t));

  EXPECT_THROW(parse({"--nproc-per-node", "2x"}), CLI::ValidationError);

  for (const auto& [args, line] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--max_iters", "5"}, "--max-iters is the measured run's: the prediction does not model it; valid: "
                                  "--nproc-per-node, --nnodes, --distributed-mode"},
           {{"--no-ddp-overlap"}, "--ddp-overlap is the measured run's"},
           {{"--device", "cuda"}, "--device is the measured run's"},
           // A modelled option alone, by its row, whatever the measured run.
           {{"--shard-mode", "zero9"}, "--shard-mode 'zero9' is not valid"},
           {{"--nnodes", "0"}, "--nnodes 0 "}}) {
    const auto given = parse(args);
    try {
      check_target_options(*given);
      FAIL() << args.front() << ": not refused";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(line, 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace tokbench::predict
