// Option parsing: both spellings (kebab and the reference's snake_case), `--x v` and
// `--x=v`, booleans as `--x=True/False`, and the defaults of the reference benchmark.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "config/rows.hpp"
#include "model/train_precision.hpp"
#include "run/run_options.hpp"

namespace tokbench::run {
namespace {

RunOptions parse(std::vector<std::string> args) {
  CLI::App app;
  RunOptions options;
  add_bench_options(app, options);
  std::vector<const char*> argv{"run"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return options;
}

TEST(RunOptions, DefaultsAreTheReferenceDefaults) {
  RunOptions o = parse({});
  EXPECT_EQ(o.max_iters, 45);
  EXPECT_EQ(o.warmup_iters, 25);
  EXPECT_EQ(o.micro_batch_size, 1);
  EXPECT_EQ(o.seed, 1337u);
  EXPECT_DOUBLE_EQ(o.lr, 5e-4);
  EXPECT_DOUBLE_EQ(o.weight_decay, 0.1);
  EXPECT_DOUBLE_EQ(o.beta1, 0.9);
  EXPECT_DOUBLE_EQ(o.beta2, 0.95);
  EXPECT_EQ(o.compile, "eager");
  EXPECT_EQ(o.distributed_mode, "none");
  EXPECT_FALSE(o.return_metrics_as_json);
  EXPECT_FALSE(o.global_batch_size.has_value());
}

TEST(RunOptions, ReferenceCommandLineParsesUnchanged) {
  RunOptions o = parse({"--model_name=Llama-2-7b-hf", "--micro_batch_size=2", "--global_batch_size=8",
                          "--compile=eager", "--return_metrics_as_json=True", "--json_path=x.json",
                          "--distributed_mode=none", "--shard_mode=zero3", "--bucketing_mode=block",
                          "--n_layers=2", "--max_iters=10", "--warmup_iters=3", "--block_size=128"});
  EXPECT_EQ(o.model_name, "Llama-2-7b-hf");
  EXPECT_EQ(o.micro_batch_size, 2);
  EXPECT_EQ(o.global_batch_size, 8);
  EXPECT_TRUE(o.return_metrics_as_json);
  EXPECT_EQ(o.json_path, "x.json");
  EXPECT_EQ(o.shard_mode, "zero3");
  EXPECT_EQ(o.bucketing_mode, "block");
  EXPECT_EQ(o.n_layers, 2);
  EXPECT_EQ(o.max_iters, 10);
  EXPECT_EQ(o.warmup_iters, 3);
  EXPECT_EQ(o.seq_len, 128);
  // The reference's size bucketing, its threshold a float as jsonargparse takes it.
  o = parse({"--bucketing_mode=size", "--fsdp_bucket_params=1e6"});
  EXPECT_EQ(o.bucketing_mode, "size");
  EXPECT_EQ(o.fsdp_bucket_params, 1e6);
  EXPECT_FALSE(parse({}).fsdp_bucket_params.has_value());
}

TEST(RunOptions, KebabCaseWithSpaceSeparatedValues) {
  RunOptions o = parse({"--model-name", "pythia-14m", "--micro-batch-size", "4", "--seq-len", "64",
                          "--device", "cpu", "--dtype", "fp32", "--executor", "eager", "--lr", "1e-3",
                          "--peak-tflops", "2.5", "--flops-convention", "palm", "--log-every", "5"});
  EXPECT_EQ(o.model_name, "pythia-14m");
  EXPECT_EQ(o.micro_batch_size, 4);
  EXPECT_EQ(o.seq_len, 64);
  EXPECT_EQ(o.device, "cpu");
  EXPECT_DOUBLE_EQ(o.lr, 1e-3);
  EXPECT_EQ(o.peak_tflops, 2.5);
  EXPECT_EQ(o.flops_convention, "palm");
  EXPECT_EQ(o.log_every, 5);
}

TEST(RunOptions, BooleansTakeTrueFalseValues) {
  EXPECT_FALSE(parse({"--tf32=False"}).tf32);
  EXPECT_FALSE(parse({"--no-tf32"}).tf32);
  EXPECT_TRUE(parse({"--tf32=True"}).tf32);
  EXPECT_FALSE(parse({"--return_metrics_as_json=False"}).return_metrics_as_json);
  EXPECT_TRUE(parse({"--return-metrics-as-json"}).return_metrics_as_json);
}

TEST(RunOptions, NonNumericSizeIsAParseError) {
  EXPECT_THROW(parse({"--micro-batch-size", "four"}), CLI::ParseError);
  EXPECT_THROW(parse({"--max_iters=ten"}), CLI::ParseError);
}

// The --dtype row's words are model::TrainPrecision's canonical names and auto: the row lists
// them (model sits beside config, with LibTorch), so this fails when one list gains a name.
TEST(RunOptions, DtypeWordsAreTheTrainPrecisions) {
  std::vector<std::string> expected{"auto"};
  for (model::TrainPrecision p : model::kTrainPrecisions) expected.emplace_back(model::to_string(p));
  const config::Field& row = config::row_of(config::device_fields(), &config::DeviceSection::dtype);
  ASSERT_NE(row.choices, nullptr);
  EXPECT_EQ(row.choices(), expected);
}

TEST(RunOptions, HelpShowsDefaults) {
  CLI::App app;
  RunOptions options;
  add_bench_options(app, options);
  const std::string help = app.help();
  EXPECT_NE(help.find("--warmup-iters"), std::string::npos);
  EXPECT_NE(help.find("45"), std::string::npos);
  EXPECT_NE(help.find("pythia-14m"), std::string::npos);
}

// An option is declared, registered and echoed from one table row (src/config/): every registered
// option appears in the echo under its snake_case name, except those the record keeps elsewhere.
// A new option without its echo line fails here.
TEST(RunOptions, EveryOptionIsEchoedOrRecordedElsewhere) {
  CLI::App app;
  RunOptions options;
  add_bench_options(app, options);
  const auto echo = options_json(options);
  // Keys of the echo whose option names differ (the unit is in the key).
  const std::set<std::string> renamed{"ddp_bucket_size", "dist_timeout"};
  // Top-level keys of the record (model_name, Seq Len, compiler...), where it came from
  // (the launcher's), or output and testing switches that are not the run's configuration.
  const std::set<std::string> recorded_elsewhere{
      "model_name", "seq_len", "micro_batch_size", "global_batch_size", "max_iters", "warmup_iters",
      "compile", "checkpoint_activations", "nproc_per_node", "nnodes", "node_rank", "master_addr",
      "master_port", "nsys_enabled", "profiler_start", "profiler_stop", "json_path", "return_metrics_as_json", "log_every", "quiet",
      "profile", "profile_iters", "unit_timing_iters"};
  std::set<std::string> missing;
  for (const CLI::Option* option : app.get_options()) {
    std::string name = option->get_single_name();  // the first long name
    if (name == "help") continue;
    std::replace(name.begin(), name.end(), '-', '_');
    if (recorded_elsewhere.count(name)) continue;
    if (renamed.count(name)) {
      EXPECT_TRUE(echo.contains(name + (name == "dist_timeout" ? "_s" : "_mb"))) << name;
      continue;
    }
    if (!echo.contains(name)) missing.insert(name);
  }
  EXPECT_TRUE(missing.empty()) << "registered but not echoed: " << ::testing::PrintToString(missing);
  EXPECT_GE(echo.size(), 25u);
}

}  // namespace
}  // namespace tokbench::run
