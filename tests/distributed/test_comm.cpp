// `tokbench comm`'s arithmetic (nccl-tests' sizes, counts and bus-bandwidth factors), the
// resolution of its options against a pretend machine, and the result document and its table.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "comm/comm_figures.hpp"
#include "comm/comm_plan.hpp"
#include "comm/comm_result.hpp"
#include "config/run_options.hpp"

namespace tokbench::comm {
namespace {

TEST(CommFigures, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_reduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_reduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_gather, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_gather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::reduce_scatter, 3), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::broadcast, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::broadcast, 64), 1.0);
}

TEST(CommFigures, SizeIsTheWholeArrayRoundedToWholeElementsPerRank) {
  // all_reduce and broadcast: whole elements of the buffer.
  EXPECT_EQ(size_point(Collective::all_reduce, 1024, 4, 3).size_bytes, 1024);
  EXPECT_EQ(size_point(Collective::all_reduce, 1024, 4, 3).count, 256);
  EXPECT_EQ(size_point(Collective::broadcast, 1023, 2, 2).size_bytes, 1022);
  EXPECT_EQ(size_point(Collective::broadcast, 1023, 2, 2).count, 511);
  // all_gather and reduce_scatter: the whole array, a whole number of elements per rank.
  EXPECT_EQ(size_point(Collective::all_gather, 1024, 4, 3).size_bytes, 1020);
  EXPECT_EQ(size_point(Collective::all_gather, 1024, 4, 3).count, 255);
  EXPECT_EQ(size_point(Collective::reduce_scatter, 1000, 2, 3).size_bytes, 996);
  EXPECT_EQ(size_point(Collective::reduce_scatter, 1000, 2, 4).size_bytes, 1000);
  // Too small for an element per rank: no point.
  EXPECT_EQ(size_point(Collective::all_gather, 8, 4, 3).count, 0);
  EXPECT_EQ(size_point(Collective::all_reduce, 8, 4, 3).count, 2);
}

TEST(CommFigures, BufferCountsPerRank) {
  EXPECT_EQ(buffer_counts(Collective::all_reduce, 256, 4).input, 256);
  EXPECT_EQ(buffer_counts(Collective::all_reduce, 256, 4).output, 256);
  EXPECT_EQ(buffer_counts(Collective::all_gather, 256, 4).input, 64);
  EXPECT_EQ(buffer_counts(Collective::all_gather, 256, 4).output, 256);
  EXPECT_EQ(buffer_counts(Collective::reduce_scatter, 256, 4).input, 256);
  EXPECT_EQ(buffer_counts(Collective::reduce_scatter, 256, 4).output, 64);
  EXPECT_EQ(buffer_counts(Collective::broadcast, 256, 4).input, 256);
}

TEST(CommFigures, SizeSweep) {
  const auto sizes = size_sweep(1024, 64 << 20, 2);
  ASSERT_EQ(sizes.size(), 17u);
  EXPECT_EQ(sizes.front(), 1024);
  EXPECT_EQ(sizes.back(), 64 << 20);
  EXPECT_EQ(size_sweep(1000, 5000, 2), (std::vector<int64_t>{1000, 2000, 4000}));
  EXPECT_EQ(size_sweep(1000, 1000, 4), (std::vector<int64_t>{1000}));
  // No overflow past the largest sizes.
  EXPECT_EQ(size_sweep(int64_t{1} << 61, int64_t{1} << 62, 4), (std::vector<int64_t>{int64_t{1} << 61}));
}

TEST(CommFigures, ByteSizes) {
  EXPECT_EQ(parse_byte_size("4096"), 4096);
  EXPECT_EQ(parse_byte_size("1K"), 1024);
  EXPECT_EQ(parse_byte_size("1k"), 1024);
  EXPECT_EQ(parse_byte_size("64M"), 64 << 20);
  EXPECT_EQ(parse_byte_size("1G"), int64_t{1} << 30);
  EXPECT_EQ(parse_byte_size("2KiB"), 2048);
  EXPECT_EQ(parse_byte_size("3KB"), 3072);
  for (const char* bad : {"", "K", "0", "0K", "-1", "1.5K", "1T", " 1K", "1K ", "16G0", "99999999999G", "0x10"})
    EXPECT_FALSE(parse_byte_size(bad).has_value()) << bad;
  EXPECT_EQ(byte_size_text(1024), "1K");
  EXPECT_EQ(byte_size_text(1536), "1536");
  EXPECT_EQ(byte_size_text(64 << 20), "64M");
  EXPECT_EQ(byte_size_text(int64_t{3} << 30), "3G");
}

TEST(CommFigures, BandwidthAndSummary) {
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_GBps(1'000'000'000, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_GBps(1024, 1e-6), 1.024);
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_GBps(1024, 0.0), 0.0);
  const IterationSummary s = summarize({3e-6, 1e-6, 2e-6});
  EXPECT_DOUBLE_EQ(s.mean_seconds, 2e-6);
  EXPECT_DOUBLE_EQ(s.min_seconds, 1e-6);
  EXPECT_DOUBLE_EQ(s.max_seconds, 3e-6);
  EXPECT_DOUBLE_EQ(summarize({}).mean_seconds, 0.0);
}

machine::MachineInfo cpu_machine() {
  machine::MachineInfo m;
  m.cpu_model = "Test CPU";
  m.cuda_status = "no CUDA driver";
  m.mem_total_bytes = m.mem_available_bytes = int64_t{16} << 30;
  return m;
}

CommOptions two_ranks() {
  CommOptions o;
  o.nproc_per_node = 2;
  return o;
}

std::string refusal(const CommOptions& o, const machine::MachineInfo& m = cpu_machine()) {
  try {
    resolve_comm(o, m);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(CommPlan, Defaults) {
  const CommPlan plan = resolve_comm(two_ranks(), cpu_machine());
  EXPECT_EQ(plan.world_size, 2);
  EXPECT_EQ(plan.nnodes, 1);
  EXPECT_EQ(plan.nproc_per_node, 2);
  EXPECT_FALSE(plan.cuda);
  EXPECT_EQ(plan.backend, distributed::CommBackend::gloo);
  EXPECT_EQ(plan.collectives.size(), 4u);
  EXPECT_EQ(plan.sizes.front(), 1024);
  EXPECT_EQ(plan.sizes.back(), 64 << 20);  // the CPU's default
  EXPECT_EQ(plan.format->name, "print");
  EXPECT_TRUE(plan.compute_sharing);  // predict's input on CPU ranks, unless asked off
}

TEST(CommPlan, RefusesInOneLine) {
  auto with = [](auto change) {
    CommOptions o = two_ranks();
    change(o);
    return refusal(o);
  };
  EXPECT_NE(with([](CommOptions& o) { o.min_bytes = "64K", o.max_bytes = "1K"; }).find("--min-bytes 64K is larger"),
            std::string::npos);
  EXPECT_NE(with([](CommOptions& o) { o.collectives = "all_reduce,alltoall"; }).find("'alltoall' is not a collective"),
            std::string::npos);
  EXPECT_NE(with([](CommOptions& o) { o.device = "cuda"; }).find("no usable CUDA device"), std::string::npos);
  EXPECT_NE(with([](CommOptions& o) { o.backend = "nccl"; }).find("--backend nccl needs --device cuda"),
            std::string::npos);
  // 2G of float32: buffers 4G and the check's temporaries 8G per rank, two ranks past 16 GB.
  EXPECT_NE(with([](CommOptions& o) { o.max_bytes = "2G"; }).find("GB is available"), std::string::npos);
  EXPECT_EQ(with([](CommOptions& o) { o.max_bytes = "256M"; }), "");
  EXPECT_NE(with([](CommOptions& o) { o.nproc_per_node = 4096, o.max_bytes = "16", o.min_bytes = "16"; })
                .find("all_gather over 4096 ranks"),
            std::string::npos);
  EXPECT_NE(with([](CommOptions& o) { o.compute_sharing = "no"; }).find("--compute-sharing"), std::string::npos);
  CommOptions off = two_ranks();
  off.compute_sharing = "off";
  EXPECT_FALSE(resolve_comm(off, cpu_machine()).compute_sharing);
  for (const std::string& message : {with([](CommOptions& o) { o.dtype = "fp8"; }),
                                     with([](CommOptions& o) { o.format = "pdf"; })})
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// The launcher's options, --num-threads and --dist-timeout are `tokbench run`'s rows: the same
// names and the same refusals, from one declaration (config/launcher.cpp, device.cpp, parallelism.cpp).
TEST(CommPlan, RunsRowsRefuseAsInRun) {
  auto with = [](auto change) {
    CommOptions o = two_ranks();
    change(o);
    return refusal(o);
  };
  EXPECT_EQ(with([](CommOptions& o) { o.nnodes = 0; }), "--nnodes 0 is not valid; valid: 1..4096");
  EXPECT_EQ(with([](CommOptions& o) { o.node_rank = 2, o.nnodes = 2, o.master_port = 29500; }),
            "--node-rank 2 is not valid; valid: 0..1 (--nnodes 2)");
  EXPECT_EQ(with([](CommOptions& o) { o.master_port = 70000; }),
            "--master-port 70000 is not valid; valid: 0 (a free port) or 1..65535");
  EXPECT_NE(with([](CommOptions& o) { o.nnodes = 2; }).find("--master-port 0 picks a free port on one node only"),
            std::string::npos);
  EXPECT_EQ(with([](CommOptions& o) { o.nproc_per_node = 5000; }), "--nproc-per-node 5000 is not valid; valid: 1..4096");
  EXPECT_EQ(with([](CommOptions& o) { o.num_threads = -1; }),
            "--num-threads -1 is not valid; valid: 0..1024 (0: LibTorch's default)");
  EXPECT_EQ(with([](CommOptions& o) { o.dist_timeout_s = 0.5; }),
            "--dist-timeout 0.5 is not valid; valid: seconds from 1 to 604800");
  // Each of comm's rows is a row of run's, by its names.
  std::set<std::string> run_names;
  for (const config::Field* field : config::all_fields()) run_names.insert(field->names);
  ASSERT_EQ(comm_rows().size(), 7u);
  for (const auto* row : comm_rows()) EXPECT_TRUE(run_names.count(row->names)) << row->names;
}

TEST(CommPlan, CudaTakesTheLocalRanksGpu) {
  machine::MachineInfo m = cpu_machine();
  m.cuda_devices.resize(2);
  m.cuda_devices[0].name = "GPU zero";
  m.cuda_devices[1].name = "GPU one";
  m.cuda_devices[1].total_memory_bytes = m.cuda_devices[0].total_memory_bytes = int64_t{80} << 30;
  m.cuda_status = "ok";
  m.dist_env.source = "torchrun";
  m.dist_env.world_size = 4;
  m.dist_env.rank = 3;
  m.dist_env.local_rank = 1;
  m.dist_env.local_world_size = 2;
  CommOptions o;
  o.device = "cuda";
  const CommPlan plan = resolve_comm(o, m);
  EXPECT_TRUE(plan.cuda);
  EXPECT_EQ(plan.device_index, 1);
  EXPECT_EQ(plan.device_name, "GPU one");
  EXPECT_EQ(plan.backend, distributed::CommBackend::nccl);
  EXPECT_EQ(plan.nnodes, 2);
  EXPECT_EQ(plan.nproc_per_node, 2);
  EXPECT_EQ(plan.sizes.back(), int64_t{1} << 30);  // the GPU's default
  m.dist_env.local_world_size = 4;  // more ranks on the node than GPUs
  EXPECT_NE(refusal(o, m).find("needs a GPU for each"), std::string::npos);
}

TEST(CommResult, DocumentSortedWithNcclTestsFigures) {
  CommPlan plan = resolve_comm(two_ranks(), cpu_machine());
  plan.world_size = 4;
  std::vector<MeasuredPoint> points;
  auto point = [&](Collective c, int64_t bytes, std::vector<double> seconds) {
    MeasuredPoint p;
    p.collective = c;
    p.size = size_point(c, bytes, 4, 4);
    p.seconds = std::move(seconds);
    points.push_back(p);
  };
  point(Collective::reduce_scatter, 2048, {2e-6, 2e-6});
  point(Collective::all_reduce, 2048, {1e-6, 3e-6});
  point(Collective::all_reduce, 1024, {1e-6, 1e-6});
  point(Collective::broadcast, 1024, {4e-6, 4e-6});
  points.back().correct = false;
  const auto doc = comm_document(plan, points, 3, {{"host", "h"}});
  EXPECT_EQ(doc.at("schema"), "tokbench-comm");
  EXPECT_EQ(doc.at("schema_version"), 1);
  EXPECT_EQ(doc.at("world_size"), 4);
  EXPECT_EQ(doc.at("threads_per_rank"), 3);
  EXPECT_EQ(doc.at("environment").at("host"), "h");
  const auto& r = doc.at("results");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].at("collective"), "all_reduce");
  EXPECT_EQ(r[0].at("size_bytes"), 1024);
  EXPECT_EQ(r[1].at("size_bytes"), 2048);
  EXPECT_EQ(r[2].at("collective"), "broadcast");
  EXPECT_EQ(r[3].at("collective"), "reduce_scatter");
  EXPECT_DOUBLE_EQ(r[1].at("time_us").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(r[1].at("min_time_us").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r[1].at("max_time_us").get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(r[1].at("algbw_GBps").get<double>(), 2048 / 2e-6 / 1e9);
  EXPECT_DOUBLE_EQ(r[1].at("busbw_GBps").get<double>(), 1.5 * 2048 / 2e-6 / 1e9);  // 2(n-1)/n at n = 4
  EXPECT_DOUBLE_EQ(r[3].at("busbw_GBps").get<double>(), 0.75 * 2048 / 2e-6 / 1e9);
  EXPECT_EQ(r[3].at("count"), 512);
  EXPECT_FALSE(r[2].at("correct").get<bool>());

  const results::FlatTable table = comm_table(doc);
  EXPECT_EQ(table.rows().size(), 4u);
  ASSERT_NE(table.value(table.rows()[0], "dtype"), nullptr);  // the document's, shared by every row
  EXPECT_EQ(*table.value(table.rows()[0], "dtype"), "float32");
  EXPECT_EQ(table.value(table.rows()[0], "environment"), nullptr);  // not a scalar: no cell
  EXPECT_FALSE(table.context().contains("results"));
  // No CPU time measured (a GPU's document): no busy figure, per result or in all.
  EXPECT_TRUE(doc.at("gloo_cpu_busy").is_null());
  EXPECT_FALSE(r[0].contains("cpu_busy"));
}

// How busy Gloo keeps a core: the ranks' CPU seconds over their wall seconds, per result and
// over all of them weighted by time (the long collectives weigh most).
TEST(CommResult, GlooBusyIsCpuTimeOverWallTimeWeightedByTime) {
  CommPlan plan = resolve_comm(two_ranks(), cpu_machine());
  std::vector<MeasuredPoint> points(2);
  points[0].size = size_point(Collective::all_reduce, 1024, 4, 2);
  points[0].seconds = {1e-3, 1e-3};
  points[0].cpu_seconds = 0.2;  // summed over the ranks
  points[0].wall_seconds = 1.0;
  points[1].size = size_point(Collective::all_reduce, 1 << 20, 4, 2);
  points[1].seconds = {1e-1, 1e-1};
  points[1].cpu_seconds = 8.0;
  points[1].wall_seconds = 10.0;
  ASSERT_TRUE(gloo_busy_fraction(points).has_value());
  EXPECT_DOUBLE_EQ(*gloo_busy_fraction(points), 8.2 / 11.0) << "not the mean of 0.2 and 0.8";
  const auto doc = comm_document(plan, points, 1, {});
  EXPECT_DOUBLE_EQ(doc.at("results")[0].at("cpu_busy").get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(doc.at("results")[1].at("cpu_busy").get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(doc.at("gloo_cpu_busy").at("fraction").get<double>(), 8.2 / 11.0);
  EXPECT_EQ(doc.at("gloo_cpu_busy").at("ranks_per_node"), plan.nproc_per_node);
  points[0].wall_seconds = points[1].wall_seconds = 0;
  EXPECT_FALSE(gloo_busy_fraction(points).has_value());
}

}  // namespace
}  // namespace tokbench::comm
