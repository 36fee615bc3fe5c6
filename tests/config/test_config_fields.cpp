// The option tables (config/*.cpp) and what follows from them: the `config` block keeps the
// keys and order users and the Python step know, compare's key keeps its fields and order, the
// sweep's value types follow the members, and every row is well formed (names, places).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "config/run_options.hpp"

namespace tokbench::config {
namespace {

RunOptions parse(std::vector<std::string> args) {
  CLI::App app;
  RunOptions options;
  register_fields(app, options);
  std::vector<const char*> argv{"run"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return options;
}

std::vector<std::string> keys_of(const nlohmann::ordered_json& block) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : block.items()) keys.push_back(key);
  return keys;
}

// The record's `config` block as records have always carried it: the same keys in the same
// order (a reordered or renamed key would break readers that diff records).
TEST(ConfigFields, ConfigBlockKeepsItsKeysAndOrder) {
  const std::vector<std::string> expected{
      "model_config", "data", "data_dtype", "seed", "lr", "weight_decay", "beta1", "beta2", "zero_grad",
      "n_layers", "peak_tflops", "flops_convention", "distributed_mode", "shard_mode", "bucketing_mode",
      "fsdp_bucket_params", "fsdp_min_unit_params", "sharding_size", "ddp_bucket_size_mb", "ddp_overlap",
      "skip_data_sync", "dist_timeout_s", "dist_launcher", "dist_backend", "dynamic", "tf32", "device", "dtype",
      "cpu_memory_cap_rank", "num_threads", "cpu_allocator", "cpu_memory_cap_mb", "use_sdpa",
      "dump_memory_snapshot", "dump_thunder_traces", "fp8_shard_intermediate_activation", "use_hf",
      "low_precision_mode", "use_torchao_fp8_linear", "use_torchao_fp8_allgather",
      "use_torchao_fp8_precompute_scale_for_fsdp", "time_account_iters", "data_seed", "grad_clip_norm"};
  const auto block = options_json(parse({}));
  const auto keys = keys_of(block);
  ASSERT_GE(keys.size(), expected.size());
  // New options go at the end: the known prefix does not move.
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + static_cast<long>(expected.size())), expected);
}

TEST(ConfigFields, ConfigBlockCarriesTheValuesGiven) {
  const auto block = options_json(parse({"--seed", "7", "--lr=1e-3", "--n_layers", "3", "--no-tf32",
                                         "--cpu-memory-cap-mb", "100", "--distributed-mode", "ddp"}));
  EXPECT_EQ(block["seed"], 7u);
  EXPECT_DOUBLE_EQ(block["lr"].get<double>(), 1e-3);
  EXPECT_EQ(block["n_layers"], 3);
  EXPECT_EQ(block["tf32"], false);
  EXPECT_EQ(block["cpu_memory_cap_mb"], 100);
  EXPECT_EQ(block["distributed_mode"], "ddp");
  // Unset optionals and the places the run fills are null.
  EXPECT_TRUE(block["peak_tflops"].is_null());
  EXPECT_TRUE(block["fsdp_min_unit_params"].is_null());
  EXPECT_TRUE(block["dist_launcher"].is_null());
  EXPECT_TRUE(block["data_seed"].is_null());  // unset: the run's --seed
  EXPECT_EQ(options_json(parse({"--data_seed=9"}))["data_seed"], 9u);
  EXPECT_TRUE(block["grad_clip_norm"].is_null());  // unset: no clipping
  EXPECT_DOUBLE_EQ(options_json(parse({"--grad_clip_norm=0.5"}))["grad_clip_norm"].get<double>(), 0.5);
}

// A row's defaults_to: with_defaults fills the unset optional from the field it names and keeps a
// given value (--data-seed from --seed); one without stays unset. Every row's defaults_to is
// visited, so one naming a field of another type throws here.
TEST(ConfigFields, WithDefaultsFillsUnsetOptionalsFromTheirRows) {
  RunOptions o = parse({"--seed", "11"});
  EXPECT_EQ(with_defaults(o).data_seed, 11u);
  EXPECT_FALSE(with_defaults(o).peak_tflops.has_value()) << "no defaults_to: unset stays unset";
  EXPECT_TRUE(options_json(o)["data_seed"].is_null()) << "the options as given keep it unset";
  o.data_seed = 12;
  EXPECT_EQ(with_defaults(o).data_seed, 12u);
  EXPECT_EQ(with_defaults(o).seed, 11u);
}

// Places are the order; two rows on one place would drop a key, a gap would be a forgotten one.
TEST(ConfigFields, PlacesAreUniqueAndWithoutGaps) {
  std::set<int> record, shapes;
  std::size_t record_rows = 0, shape_rows = 0;
  for (const Field* f : all_fields()) {
    if (f->record.place != 0) record.insert(f->record.place), ++record_rows;
    if (f->shapes.place != 0) shapes.insert(f->shapes.place), ++shape_rows;
  }
  for (const DerivedValue* d : all_derived_values()) {
    if (d->record.place != 0) record.insert(d->record.place), ++record_rows;
    if (d->shapes.place != 0) shapes.insert(d->shapes.place), ++shape_rows;
  }
  EXPECT_EQ(record.size(), record_rows);
  EXPECT_EQ(shapes.size(), shape_rows);
  EXPECT_EQ(*record.begin(), 1);
  EXPECT_EQ(*record.rbegin(), static_cast<int>(record.size()));
  EXPECT_EQ(*shapes.begin(), 1);
  EXPECT_EQ(*shapes.rbegin(), static_cast<int>(shapes.size()));
}

// Every option has a kebab-case name first and, where it has several words, the reference's
// snake_case twin; no long name is declared twice.
TEST(ConfigFields, NamesAreKebabWithTheirSnakeTwin) {
  // tokbench's own switch, never in the reference, has had its kebab-case name alone.
  const std::set<std::string> without_twin{"ddp-overlap"};
  std::set<std::string> seen;
  for (const Field* f : all_fields()) {
    const std::string names = f->names;
    ASSERT_EQ(names.rfind("--", 0), 0u) << names;
    const std::string first = names.substr(2, names.find(',') == std::string::npos ? std::string::npos
                                                                                     : names.find(',') - 2);
    EXPECT_EQ(first.find('_'), std::string::npos) << names;
    std::string snake = first;
    for (char& c : snake)
      if (c == '-') c = '_';
    if (snake != first && !without_twin.count(first)) EXPECT_NE(names.find("--" + snake), std::string::npos) << names;
    EXPECT_TRUE(seen.insert(first).second) << first;
  }
}

// compare's key, as it has always read: the reference's columns first.
TEST(ConfigFields, IterationKeysKeepCompareOrder) {
  const std::vector<std::string> expected{
      "ranks", "T", "B", "G", "GA", "mode", "sharding", "executor", "layers", "checkpoint", "model_config",
      "dtype", "tf32", "device", "threads", "data", "data_dtype", "zero_grad", "decay", "shard_mode",
      "bucketing", "ddp_bucket_mb", "ddp_overlap", "skip_data_sync", "backend", "dynamic", "cpu_allocator",
      "cpu_cap_mb", "cpu_cap_rank", "data_seed", "grad_clip_norm"};
  std::vector<std::string> labels;
  for (const auto& key : iteration_keys()) labels.push_back(key.heading());
  ASSERT_GE(labels.size(), expected.size());
  EXPECT_EQ(std::vector<std::string>(labels.begin(), labels.begin() + static_cast<long>(expected.size())), expected);
}

TEST(ConfigFields, ValueTypesFollowTheMembers) {
  EXPECT_EQ(option_type("micro-batch-size", "sweep"), usage::ValueType::whole_number);
  EXPECT_EQ(option_type("micro_batch_size", "sweep"), usage::ValueType::whole_number);
  EXPECT_EQ(option_type("seed", "sweep"), usage::ValueType::whole_number);
  EXPECT_EQ(option_type("block-size", "sweep"), usage::ValueType::whole_number);
  EXPECT_EQ(option_type("lr", "sweep"), usage::ValueType::number);
  EXPECT_EQ(option_type("fsdp-bucket-params", "sweep"), usage::ValueType::number);
  EXPECT_EQ(option_type("tf32", "sweep"), usage::ValueType::boolean);
  EXPECT_EQ(option_type("no-tf32", "sweep"), usage::ValueType::boolean);
  EXPECT_EQ(option_type("executor", "sweep"), usage::ValueType::text);
  try {
    option_type("micro-batch", "sweep");
    FAIL() << "an unknown option was typed";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "sweep: 'micro-batch' is not a `tokbench run` option; valid: the options of "
                                     "`tokbench run --help`, without their dashes");
  }
}

// A number is checked as it is parsed, with its row's `valid` text in the one-line refusal.
TEST(ConfigFields, NumbersAreCheckedWithTheirRowsValidText) {
  try {
    parse({"--n-layers", "1e30"});
    FAIL() << "1e30 layers parsed";
  } catch (const CLI::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("a whole number 1..100000"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse({"--seed", "-1"}), CLI::ParseError);
  EXPECT_THROW(parse({"--lr", "inf"}), CLI::ParseError);
  EXPECT_EQ(parse({"--max-iters", "010"}).max_iters, 10);  // decimal, not octal
}

TEST(ConfigFields, GivenIsSetOnlyWhenTheOptionIs) {
  EXPECT_FALSE(parse({}).skip_data_sync_given);
  const auto o = parse({"--skip-data-sync=False"});
  EXPECT_TRUE(o.skip_data_sync_given);
  EXPECT_FALSE(o.skip_data_sync);
}

}  // namespace
}  // namespace tokbench::config
