// The sweep's matrix (parsing, stable expansion, one-rank normalisation, ids) and compare's
// verdicts on synthetic runs whose iteration times are known.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "sweep/compare.hpp"
#include "sweep/matrix.hpp"

namespace tokbench::sweep {
namespace {

TEST(Matrix, ArgumentsGiveAxesInOrderAndTheLastVariesFastest) {
  const Matrix m = matrix_from_arguments({"--model_name", "a,b", "--micro-batch-size=1,2", "--no-ddp-overlap"});
  ASSERT_EQ(m.axes.size(), 3u);
  EXPECT_EQ(m.axes[0].option, "model-name");
  EXPECT_EQ(m.axes[2].option, "ddp-overlap");
  EXPECT_EQ(m.axes[2].values, std::vector<std::string>{"false"});
  const auto configs = expand(m);
  ASSERT_EQ(configs.size(), 4u);
  EXPECT_EQ(configs[0].describe(), "model-name=a micro-batch-size=1 ddp-overlap=false");
  EXPECT_EQ(configs[1].describe(), "model-name=a micro-batch-size=2 ddp-overlap=false");
  EXPECT_EQ(configs[2].describe(), "model-name=b micro-batch-size=1 ddp-overlap=false");
  EXPECT_EQ(configs[1].run_arguments(),
            (std::vector<std::string>{"--model-name", "a", "--micro-batch-size", "2", "--ddp-overlap=False"}));
}

TEST(Matrix, IdsDependOnTheOptionsNotTheirOrder) {
  const auto a = expand(matrix_from_arguments({"--x", "1", "--y", "2"}));
  const auto b = expand(matrix_from_arguments({"--y", "2", "--x", "1"}));
  const auto c = expand(matrix_from_arguments({"--x", "1", "--y", "3"}));
  EXPECT_EQ(a[0].id, b[0].id);
  EXPECT_NE(a[0].id, c[0].id);
  EXPECT_EQ(a[0].id.size(), 16u);
}

TEST(Matrix, OneRankSourceIsTheMatrixsOwnOneRankRow) {
  // `sweep --predict`: the 2- and 4-rank rows predict from the matrix's own one-rank row (same id,
  // so it is run once), the global batch divided by the ranks (GA kept).
  const auto configs = expand_all({matrix_from_arguments(
      {"--model-name", "m", "--nproc-per-node", "1,2,4", "--distributed-mode", "fsdp", "--shard-mode", "zero3"})});
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_FALSE(one_rank_source(configs[0]).has_value()) << "a one-rank row has no source";
  EXPECT_EQ(one_rank_source(configs[1])->id, configs[0].id);
  EXPECT_EQ(one_rank_source(configs[2])->id, configs[0].id);

  const Configuration batched = make_configuration(
      {{"model-name", "m"}, {"nproc-per-node", "4"}, {"nnodes", "2"}, {"global-batch-size", "16"},
       {"distributed-mode", "ddp"}, {"ddp-bucket-size", "50"}});
  const auto source = one_rank_source(batched);
  ASSERT_TRUE(source.has_value());
  EXPECT_EQ(source->describe(), "model-name=m nproc-per-node=1 nnodes=1 global-batch-size=2 ddp-bucket-size=50");
  EXPECT_EQ(source->id, make_configuration(source->options).id);

  // Nothing to divide: a global batch the 8 ranks do not split, or ranks that are not numbers.
  EXPECT_FALSE(one_rank_source(make_configuration({{"nproc-per-node", "8"}, {"global-batch-size", "12"}})));
  EXPECT_FALSE(one_rank_source(make_configuration({{"nproc-per-node", "two"}})));
}

TEST(Matrix, OneRankPointsDropTheDistributedMode) {
  const auto configs = expand_all({matrix_from_arguments(
      {"--nproc-per-node", "1,2", "--distributed-mode", "ddp,fsdp", "--shard-mode", "zero3"})});
  // nproc 1 with ddp and with fsdp collapse into one configuration without a mode.
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(configs[0].describe(), "nproc-per-node=1");
  EXPECT_EQ(configs[1].describe(), "nproc-per-node=2 distributed-mode=ddp shard-mode=zero3");
  EXPECT_EQ(configs[2].describe(), "nproc-per-node=2 distributed-mode=fsdp shard-mode=zero3");
}

TEST(Matrix, TomlMatricesShareTheTopLevelKeys) {
  const std::string path = ::testing::TempDir() + "/matrix.toml";
  std::ofstream(path) << "model-name = \"m\"\nseq_len = [1, 2]\n[[matrix]]\nmicro-batch-size = 4\n"
                         "[[matrix]]\nseq-len = 9\nlr = 0.5\nddp-overlap = false\n";
  const auto configs = expand_all(matrices_from_toml(path));
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(configs[0].describe(), "model-name=m seq-len=1 micro-batch-size=4");
  EXPECT_EQ(configs[1].describe(), "model-name=m seq-len=2 micro-batch-size=4");
  EXPECT_EQ(configs[2].describe(), "model-name=m seq-len=9 lr=0.5 ddp-overlap=false");
  std::remove(path.c_str());
}

TEST(Matrix, RefusesWhatItCannotRead) {
  EXPECT_THROW(matrix_from_arguments({"model-name"}), std::invalid_argument);
  EXPECT_THROW(matrix_from_arguments({"--seq-len", "1,,2"}), std::invalid_argument);
  Matrix huge;
  for (int i = 0; i < 5; ++i) huge.axes.push_back({"x" + std::to_string(i), std::vector<std::string>(10, "v")});
  try {
    expand(huge, 10000);
    FAIL() << "100000 configurations accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("at most 10000"), std::string::npos) << e.what();
  }
}

// A run whose measured iterations take `ms` plus a small alternating jitter.
nlohmann::json run_with_times(double ms, double jitter, int n = 20, const std::string& compiler = "eager") {
  nlohmann::json run = {{"model_name", "m"}, {"Num GPUS", 1},  {"Seq Len", 32},        {"Micro BS", 1},
                        {"Global BS", 1},    {"GA", 1},        {"Distributed Mode", "none"},
                        {"Sharding Size", nullptr}, {"compiler", compiler}, {"status", "ok"},
                        {"tokens_per_sec", 32 / ms * 1000}};
  run["iterations"] = nlohmann::json::array();
  run["iterations"].push_back({{"index", 0}, {"warmup", true}, {"time_ms", 10 * ms}});
  for (int i = 0; i < n; ++i)
    run["iterations"].push_back({{"index", i + 1}, {"warmup", false}, {"time_ms", ms + (i % 2 ? jitter : -jitter)}});
  return run;
}

TEST(Compare, VerdictsFollowTheIntervalNotTheBareRatio) {
  // 20% slower with little noise: slower.
  auto c = compare_runs({run_with_times(100, 1)}, {run_with_times(120, 1)}, 0.05);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].verdict, Verdict::slower);
  EXPECT_NEAR(*c[0].time_ratio, 1.2, 1e-12);
  EXPECT_GT(*c[0].ratio_low, 1.05);
  // 8% slower but with noise as large as the difference: not a regression.
  c = compare_runs({run_with_times(100, 40)}, {run_with_times(108, 40)}, 0.05);
  EXPECT_EQ(c[0].verdict, Verdict::unchanged);
  EXPECT_LT(*c[0].ratio_low, 1.05);
  // Faster.
  c = compare_runs({run_with_times(100, 1)}, {run_with_times(80, 1)}, 0.05);
  EXPECT_EQ(c[0].verdict, Verdict::faster);
}

TEST(Compare, PairsByConfigurationAndReportsWhatIsMissingOrFailed) {
  auto failed = run_with_times(100, 1, 20, "fused");
  failed["status"] = "oom";
  const auto c = compare_runs({run_with_times(100, 1), run_with_times(100, 1, 20, "fused")},
                              {run_with_times(101, 1), failed, run_with_times(50, 1, 20, "python-eager")}, 0.05);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].verdict, Verdict::unchanged);
  EXPECT_EQ(c[1].verdict, Verdict::failed);
  EXPECT_EQ(c[2].verdict, Verdict::missing);
  EXPECT_EQ(c[2].note, "not in BASE");
}

}  // namespace
}  // namespace tokbench::sweep
