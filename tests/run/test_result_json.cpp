// The JSON result: the reference's keys with the contract's meanings, nulls for unknowns,
// figures pinned to what they must equal (a closed form for model_flops, the measured
// iterations for average_iter_time), and an atomic write that leaves no temporary file behind.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "run/resolve.hpp"
#include "run/result_json.hpp"
#include "parallel/layout.hpp"
#include "results/run_record.hpp"
#include "results/run_report.hpp"
#include "model/gpt.hpp"
#include "train/train_loop.hpp"

namespace tokbench::run {
namespace {

RunPlan plan_for_test() {
  machine::MachineInfo m;
  m.cuda_status = "none";
  m.mem_available_bytes = 16'000'000'000;
  m.cpu_model = "Test CPU";
  RunOptions o;  // pythia-14m, the default model
  o.seq_len = 32;
  o.micro_batch_size = 2;
  o.global_batch_size = 4;
  o.max_iters = 6;
  o.warmup_iters = 2;
  return resolve_run(o, m);
}

// The FLOPs of one micro-batch, forward and backward, under the matmul convention, for a
// dense GPT-NeoX-style config, written out from the config's fields alone (no call into
// src/model/counting.cpp): every linear layer costs 2·B·T·in·out forward, attention's two
// T×T products 2·2·B·T²·head_size per head and layer, and backward is twice forward.
int64_t closed_form_flops(const model::Config& c, int64_t B, int64_t T) {
  const int64_t hs = *c.head_size;
  const int64_t qkv_out = (c.n_head + 2 * *c.n_query_groups) * hs;
  const int64_t per_layer = c.n_embd * qkv_out           // attn.qkv
                            + c.n_head * hs * c.n_embd    // attn.proj
                            + c.n_embd * *c.intermediate_size   // mlp.fc
                            + *c.intermediate_size * c.n_embd;  // mlp.proj
  const int64_t sum_linear = c.n_layer * per_layer + c.n_embd * *c.padded_vocab_size;  // + lm_head
  const int64_t forward = 2 * B * T * sum_linear + 4 * B * T * T * c.n_layer * c.n_head * hs;
  return 3 * forward;
}

// What run_benchmark copies out of the train layer's result.
MeasuredRun measured_run_of(const train::TrainResult& result) {
  MeasuredRun run;
  run.outcome = result.status;
  run.message = result.message;
  for (const auto& r : result.iterations) run.iterations.push_back({r.index, r.warmup, r.seconds, r.loss, r.end_time});
  run.measured_window_seconds = result.measured_window_seconds;
  run.allocated_peak_bytes = result.memory.allocated_bytes;
  run.reserved_peak_bytes = result.memory.reserved_bytes;
  run.peak_rss_bytes = result.memory.peak_rss_bytes;
  run.overhead_seconds = result.overhead_seconds;
  return run;
}

MetricInputs inputs_of(const RunPlan& plan) {
  MetricInputs in{plan.train, plan.world_size()};
  in.flops_per_microbatch = plan.flops_per_microbatch;
  if (plan.peak) in.peak_flops_per_s = plan.peak->flops_per_s;
  return in;
}

// The mean of the measured (non-warm-up) iteration times listed in the JSON, in ms.
double mean_measured_time_ms(const nlohmann::ordered_json& j, int64_t* count) {
  double sum = 0;
  *count = 0;
  for (const auto& it : j["iterations"]) {
    if (it["warmup"].get<bool>()) continue;
    sum += it["time_ms"].get<double>();
    ++*count;
  }
  return *count > 0 ? sum / static_cast<double>(*count) : 0.0;
}

TEST(ResultJson, ReferenceKeysComeFirst) {
  const RunPlan plan = plan_for_test();
  MeasuredRun run;
  BenchMetrics metrics;
  const auto j = build_result_json(plan, run, metrics, machine::capture_environment());
  const char* reference[] = {"average_iter_time", "model_flops", "model_flop_per_sec", "tokens_per_sec",
                             "memory_used_GB",    "model_name",  "Num GPUS",           "Seq Len",
                             "Micro BS",          "Global BS",   "GA",                 "Distributed Mode",
                             "Sharding Size",     "compiler"};
  auto it = j.begin();
  for (const char* key : reference) {
    ASSERT_NE(it, j.end());
    EXPECT_EQ(it.key(), key);
    ++it;
  }
  EXPECT_EQ(j["GA"], 2);
  EXPECT_TRUE(j["tokens_per_sec"].is_null());  // unknown, never -1
  EXPECT_TRUE(j["mfu"].is_null());
  EXPECT_EQ(j["schema_version"], kResultSchemaVersion);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_FALSE(j["environment"]["libtorch_version"].get<std::string>().empty());
  EXPECT_EQ(j["environment"]["time"].get<std::string>().size(), 25u);  // 2026-01-02T03:04:05+00:00
}

// A real run of the plan (pythia-14m, B = 2, T = 32, GA = 2, 2 warm-up + 4 measured
// iterations on the CPU) through the same copy, metrics and JSON as `tokbench run`.
TEST(ResultJson, ARunsFiguresEqualTheirIndependentValues) {
  const RunPlan plan = plan_for_test();
  const model::Config& c = plan.config;
  // pythia-14m as litgpt defines it: a dense GPT-NeoX block (MLP of two linears).
  ASSERT_EQ(c.name, "pythia-14m");
  ASSERT_EQ(c.mlp_class_name, "GptNeoxMLP");
  EXPECT_EQ(c.n_layer, 6);
  EXPECT_EQ(c.n_embd, 128);
  EXPECT_EQ(c.n_head, 4);
  EXPECT_EQ(*c.head_size, 32);
  EXPECT_EQ(*c.n_query_groups, 4);
  EXPECT_EQ(*c.intermediate_size, 512);
  EXPECT_EQ(*c.padded_vocab_size, 50304);
  ASSERT_EQ(plan.train.micro_batch, 2);
  ASSERT_EQ(plan.train.seq_len, 32);
  ASSERT_EQ(plan.train.grad_accum, 2);
  ASSERT_EQ(plan.world_size(), 1);

  model::GPT gpt(c, torch::TensorOptions().dtype(torch::kFloat).device(torch::kCPU));
  gpt->reset_parameters(plan.train.seed);
  train::TrainOptions options;
  options.micro_batch = plan.train.micro_batch;
  options.seq_len = plan.train.seq_len;
  options.grad_accum = plan.train.grad_accum;
  options.max_iters = plan.train.max_iters;
  options.warmup_iters = plan.train.warmup_iters;
  const train::TrainResult result = train::run_training(gpt, torch::Device(torch::kCPU), options, nullptr, nullptr);
  ASSERT_EQ(result.status, train::RunStatus::ok) << result.message;
  const MeasuredRun run = measured_run_of(result);
  const auto j = build_result_json(plan, run, compute_metrics(inputs_of(plan), run), machine::capture_environment());

  // model_flops: one micro-batch, forward and backward, one device; not × GA, not × W.
  const int64_t flops = closed_form_flops(c, 2, 32);
  EXPECT_EQ(flops, 2'944'401'408);  // 3·(2·2·32·7,618,560 + 4·2·32²·6·4·32)
  EXPECT_EQ(j["flops_convention"], "matmul");
  EXPECT_EQ(j["model_flops"].get<int64_t>(), flops);
  EXPECT_EQ(j["model_flops_per_iter_per_device"].get<int64_t>(), 2 * flops);  // × GA
  EXPECT_EQ(j["model_flops_per_iter_total"].get<int64_t>(), 2 * flops);       // × W = 1

  // average_iter_time: the mean of the measured iterations' own times, warm-up left out.
  int64_t measured = 0;
  const double mean_ms = mean_measured_time_ms(j, &measured);
  EXPECT_EQ(measured, 4);
  EXPECT_EQ(j["measured_iters"], 4);
  EXPECT_EQ(j["iterations"].size(), 6u);
  EXPECT_NEAR(j["average_iter_time"].get<double>(), mean_ms, 1e-9 * mean_ms);
  // FLOP/s and tokens/s over that time, from the closed form and the batch, not from JSON keys.
  EXPECT_NEAR(j["model_flop_per_sec"].get<double>(), 2.0 * static_cast<double>(flops) / (mean_ms / 1e3),
              1e-9 * j["model_flop_per_sec"].get<double>());
  EXPECT_NEAR(j["tokens_per_sec"].get<double>(), 4.0 * 32.0 / (mean_ms / 1e3), 1e-9 * j["tokens_per_sec"].get<double>());

  // The printed report is read from this record: the reference's lines with its two decimals,
  // then one "Label: value unit" line per reportable column the record holds.
  std::ostringstream report;
  results::write_run_report(j, report);
  const std::string text = report.str();
  EXPECT_NE(text.find(fmt::format("\nAverage iter time: {:.2f} ms\n", j["average_iter_time"].get<double>())),
            std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("\nTFLOP/s: {:.2f}\n", j["model_flop_per_sec"].get<double>() / 1e12)),
            std::string::npos) << text;
  EXPECT_EQ(text.find("Sharding Mode:"), std::string::npos);  // FSDP only
  for (const auto& column : results::result_columns()) {
    if (column.section != results::Section::tokbench || !j.contains(column.key)) continue;
    const bool empty = (column.key == "message" && j[column.key] == "") ||
                       (j[column.key].is_array() && j[column.key].empty()) || (column.hide_null && j[column.key].is_null());
    const bool expected = column.in_report && !empty;
    const bool printed = text.find("\n" + column.label + ": ") != std::string::npos ||
                         text.find("\n" + column.label + " (" + column.unit + "): ") != std::string::npos;
    EXPECT_EQ(printed, expected) << column.key;
  }
  EXPECT_NE(text.find(fmt::format("\nMeasured iterations: {}\n", j["measured_iters"].get<int64_t>())),
            std::string::npos);
  EXPECT_NE(text.find(fmt::format("\nMFU: {:.2f}%\n", j["mfu"].get<double>() * 100)), std::string::npos) << text;
  // An MFU of an estimated peak says so on the next line, with how to measure the peak instead.
  for (const bool estimate : {true, false}) {
    auto marked = j;
    marked["mfu_peak_is_estimate"] = estimate;
    std::ostringstream marked_report;
    results::write_run_report(marked, marked_report);
    const std::string note = fmt::format("\nMFU: {:.2f}%\n  (MFU is of an estimated peak", j["mfu"].get<double>() * 100);
    EXPECT_EQ(marked_report.str().find(note) != std::string::npos, estimate) << marked_report.str();
    EXPECT_EQ(marked_report.str().find("`tokbench env --calibrate` measures it") != std::string::npos, estimate);
  }
  EXPECT_NE(text.find("\nIter time (ms): mean "), std::string::npos) << text;  // the record's own key order
  EXPECT_NE(text.find(fmt::format("\nTokens/s per device: {:.1f} tokens/s\n", j["tokens_per_sec_per_device"].get<double>())),
            std::string::npos);
}

// The record's keys are the column table's, in its order: nothing is written that the table
// does not describe, and a key outside the table is refused.
TEST(ResultJson, KeysFollowTheColumnTable) {
  const RunPlan plan = plan_for_test();
  const auto j = build_result_json(plan, MeasuredRun{}, BenchMetrics{}, machine::capture_environment());
  size_t previous = 0;
  const auto& columns = results::result_columns();
  for (const auto& [key, value] : j.items()) {
    const results::Column* c = results::find_column(key);
    ASSERT_NE(c, nullptr) << key;
    const size_t index = static_cast<size_t>(c - columns.data());
    EXPECT_GE(index, previous) << key;
    previous = index;
  }
  EXPECT_EQ(j["executor"], j["compiler"]);
  EXPECT_TRUE(j["sharding_mode"].is_null());
  nlohmann::ordered_json extra = j;
  extra["undocumented_figure"] = 1;
  EXPECT_THROW(results::in_column_order(extra), std::logic_error);
}

// unit_timings: the pass's figures under the record's keys, in their order; null when the run
// has none, and null for a run that did not end ok whatever it holds.
TEST(ResultJson, UnitTimingsKeepTheirKeysAndAreNullWithoutThem) {
  const RunPlan plan = plan_for_test();
  EXPECT_EQ(plan.unit_timing_iters, 2);  // on by default for tokbench's executors
  MeasuredRun run;
  EXPECT_TRUE(build_result_json(plan, run, BenchMetrics{}, machine::capture_environment())["unit_timings"].is_null());
  train::UnitTimings t;
  t.iterations = 2;
  t.clock = "host";
  t.micro_batches_per_iteration = 2;
  t.iteration_seconds = 0.5;
  t.exposed_comm_seconds = 0.0;
  t.optimizer_seconds = 0.1;
  t.units = {{"embedding", "embedding", 10, 0.01, 0.02, 0.025},
             {"block.0", "block", 20, 0.03, 0.06, 0.05},
             {"head", "head", 10, 0.04, 0.08, 0.025}};
  run.unit_timings = t;
  const auto j = build_result_json(plan, run, BenchMetrics{}, machine::capture_environment());
  const auto& u = j["unit_timings"];
  ASSERT_TRUE(u.is_object());
  std::vector<std::string> keys;
  for (const auto& [key, value] : u.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"iterations", "clock", "micro_batches_per_iteration", "iteration_seconds",
                                            "exposed_comm_seconds", "optimizer_seconds", "units",
                                            "communication", "parameter_shapes"}));
  // One rank sends nothing.
  EXPECT_EQ(u["communication"]["bytes_per_iteration"], 0);
  EXPECT_TRUE(u["communication"]["collectives"].empty());
  EXPECT_EQ(u["iterations"], 2);
  EXPECT_EQ(u["clock"], "host");
  EXPECT_EQ(u["micro_batches_per_iteration"], 2);
  EXPECT_DOUBLE_EQ(u["iteration_seconds"].get<double>(), 0.5);
  ASSERT_EQ(u["units"].size(), 3u);
  std::vector<std::string> unit_keys;
  for (const auto& [key, value] : u["units"][1].items()) unit_keys.push_back(key);
  EXPECT_EQ(unit_keys, (std::vector<std::string>{"name", "kind", "parameters", "forward_seconds", "backward_seconds",
                                                 "optimizer_seconds"}));
  EXPECT_EQ(u["units"][1]["name"], "block.0");
  EXPECT_EQ(u["units"][1]["kind"], "block");
  EXPECT_EQ(u["units"][1]["parameters"], 20);
  EXPECT_DOUBLE_EQ(u["units"][2]["backward_seconds"].get<double>(), 0.08);
  // Context, not a report line.
  const results::Column* column = results::find_column("unit_timings");
  ASSERT_NE(column, nullptr);
  EXPECT_EQ(column->kind, results::Kind::structured);
  EXPECT_EQ(column->section, results::Section::context);
  EXPECT_FALSE(column->in_report);
  std::ostringstream report;
  results::write_run_report(j, report);
  EXPECT_EQ(report.str().find("Unit timings"), std::string::npos) << report.str();
  run.outcome = Outcome::interrupted;
  EXPECT_TRUE(build_result_json(plan, run, BenchMetrics{}, machine::capture_environment())["unit_timings"].is_null());
}

// reference_probe: a one-rank CPU run's GEMMs beside its window, each side's milliseconds and
// the median and quartiles of all of them, kept as written when the record is read back; where
// none ran, why.
TEST(ResultJson, TheReferenceProbeIsRecordedAndReadBack) {
  const RunPlan plan = plan_for_test();
  MeasuredRun run;
  run.reference_probe_why = "a CUDA run: the probe times a host GEMM";
  const auto none = build_result_json(plan, run, BenchMetrics{}, machine::capture_environment())["reference_probe"];
  EXPECT_EQ(none["ran"], false);
  EXPECT_EQ(none["why"], run.reference_probe_why);
  train::ReferenceProbeTimes p;
  p.threads = 1;
  p.before_seconds = {0.020, 0.024, 0.021, 0.022};
  p.after_seconds = {0.030, 0.023, 0.025, 0.026};
  run.reference_probe = p;
  const auto j = build_result_json(plan, run, BenchMetrics{}, machine::capture_environment());
  const auto& b = j["reference_probe"];
  ASSERT_EQ(b["ran"], true) << b.dump();
  EXPECT_EQ(b["gemm_size"], train::kReferenceGemmSize);
  EXPECT_EQ(b["threads"], 1);
  EXPECT_EQ(b["repeats"], 8);
  ASSERT_EQ(b["before_ms"].size(), 4u);
  EXPECT_DOUBLE_EQ(b["before_ms"][1].get<double>(), 24.0);
  EXPECT_DOUBLE_EQ(b["after_ms"][0].get<double>(), 30.0);
  // Sorted: 20 21 22 23 24 25 26 30 (ms): median 23.5, quartiles at 21.75 and 25.25.
  EXPECT_NEAR(b["median_ms"].get<double>(), 23.5, 1e-9);
  EXPECT_NEAR(b["q1_ms"].get<double>(), 21.75, 1e-9);
  EXPECT_NEAR(b["q3_ms"].get<double>(), 25.25, 1e-9);
  EXPECT_NEAR(b["seconds"].get<double>(), 0.191, 1e-12);
  EXPECT_NE(b["what"].get<std::string>().find("1024x1024x1024"), std::string::npos);
  // Read back as a record and written again: the same block.
  EXPECT_EQ(results::to_json(results::record_from_json(j))["reference_probe"], b);
  const results::Column* column = results::find_column("reference_probe");
  ASSERT_NE(column, nullptr);
  EXPECT_EQ(column->kind, results::Kind::structured);
  EXPECT_FALSE(column->in_report);
  // Products inside the window: the level is theirs (the window's own moment), the sides kept.
  run.reference_probe->within_seconds = {0.040, 0.041};
  const auto two = build_result_json(plan, run, BenchMetrics{}, machine::capture_environment())["reference_probe"];
  EXPECT_NEAR(two["median_ms"].get<double>(), 23.5, 1e-9) << "two are too few to read a level from";
  run.reference_probe->within_seconds = {0.040, 0.043, 0.041, 0.050};
  const auto within = build_result_json(plan, run, BenchMetrics{}, machine::capture_environment());
  const auto& w = within["reference_probe"];
  ASSERT_EQ(w["within_ms"].size(), 4u);
  EXPECT_EQ(w["repeats"], 4);
  // Sorted: 40 41 43 50: median 42, quartiles at 40.75 and 44.75.
  EXPECT_NEAR(w["median_ms"].get<double>(), 42.0, 1e-9);
  EXPECT_NEAR(w["q1_ms"].get<double>(), 40.75, 1e-9);
  EXPECT_NEAR(w["q3_ms"].get<double>(), 44.75, 1e-9);
  EXPECT_NEAR(w["seconds"].get<double>(), 0.191 + 0.174, 1e-12);
  EXPECT_EQ(w["before_ms"], b["before_ms"]);
  EXPECT_NE(w["when"].get<std::string>().find("4 between the measured iterations"), std::string::npos) << w["when"];
  EXPECT_EQ(results::to_json(results::record_from_json(within))["reference_probe"], w);
  EXPECT_NE(w["when"].get<std::string>().find("after the window"), std::string::npos) << w["when"];
  // Stopped inside the window after some products there: no after-side, and `when` does not claim one.
  run.reference_probe->after_seconds.clear();
  const auto stopped = build_result_json(plan, run, BenchMetrics{}, machine::capture_environment())["reference_probe"];
  EXPECT_NE(stopped["when"].get<std::string>().find("did not finish its window"), std::string::npos) << stopped["when"];
  EXPECT_NEAR(stopped["median_ms"].get<double>(), 42.0, 1e-9);
  run.reference_probe->after_seconds = p.after_seconds;
  run.reference_probe->within_seconds.clear();
  // A run stopped in its window has only the first half.
  run.reference_probe->after_seconds.clear();
  const auto half = build_result_json(plan, run, BenchMetrics{}, machine::capture_environment())["reference_probe"];
  EXPECT_EQ(half["repeats"], 4);
  EXPECT_NE(half["when"].get<std::string>().find("before the warm-up only"), std::string::npos);
}

// unit_timings.communication: what the step sends, unit by unit, over the layout the step built
// (TrainStep::comm_layout; here laid out as the steps do, over one parameter per timed unit).
TEST(ResultJson, UnitTimingsHoldTheStepsCommunicationPlan) {
  RunPlan plan = plan_for_test();
  plan.dist.env.world_size = 4;
  plan.train.grad_accum = 2;
  MeasuredRun run;
  train::UnitTimings t;
  t.iterations = 1;
  t.units = {{"embedding", "embedding", 1000, 0, 0, 0}, {"block.0", "block", 2001, 0, 0, 0}, {"head", "head", 1000, 0, 0, 0}};
  t.parameter_shapes = {{"lm_head.weight", 1000, 4, 2}, {"transformer.wte.weight", 1000, 4, 0},
                        {"transformer.h.0.attn.weight", 2001, 4, 1}};
  const auto communication = [&] {
    run.unit_timings = t;
    return build_result_json(plan, run, BenchMetrics{}, machine::capture_environment())["unit_timings"]["communication"];
  };

  // DDP, fp32: every gradient all-reduced once per iteration (no_sync until the last micro-batch).
  plan.dist.mode = distributed::DistMode::ddp;
  t.comm_layout = parallel::layout_ddp_buckets(t.parameter_shapes, plan.dist.ddp_bucket_bytes);
  auto c = communication();
  EXPECT_EQ(c["bytes_per_iteration"], 4001 * 4);
  ASSERT_EQ(c["collectives"].size(), 1u);  // one 25 MB bucket holds all 16 kB
  EXPECT_EQ(c["collectives"][0]["call"], "all_reduce");
  EXPECT_EQ(c["collectives"][0]["group_size"], 4);

  // FSDP ZeRO-3 per block on Gloo: per block unit a gather before forward and before backward
  // (every micro-batch) and a reduction after backward, each an all-reduce of the flat buffer
  // padded to a multiple of 4 (block.0: 2001 -> 2004 elements).
  plan.dist.mode = distributed::DistMode::fsdp;
  plan.dist.shard_mode = distributed::ShardMode::zero3;
  plan.dist.units = distributed::UnitPolicy::per_block;
  t.comm_layout = parallel::layout_fsdp_units(t.parameter_shapes, parallel::UnitPolicy::per_block, 4);
  c = communication();
  int64_t block_bytes = 0;
  std::vector<std::string> purposes;
  for (const auto& x : c["collectives"])
    if (x["unit"] == "block.0") {
      purposes.push_back(x["purpose"]);
      block_bytes += x["bytes"].get<int64_t>() * x["per_iteration"].get<int64_t>();
    }
  EXPECT_EQ(purposes, (std::vector<std::string>{"gather_for_forward", "gather_for_backward", "reduce_gradients"}));
  EXPECT_EQ(block_bytes, 3 * 2 * 2004 * 4);

  // A step that laid nothing out (PyTorch's fully_shard, the Python executors): null, not a guess.
  t.comm_layout.reset();
  EXPECT_TRUE(communication().is_null());
  // Per-layer units are recorded from the step's layout like the others: one unit per module.
  plan.dist.shard_mode = distributed::ShardMode::zero2;
  plan.dist.units = distributed::UnitPolicy::per_layer;
  t.comm_layout = parallel::layout_fsdp_units(t.parameter_shapes, parallel::UnitPolicy::per_layer, 4);
  c = communication();
  ASSERT_FALSE(c.is_null());
  EXPECT_EQ(c["collectives"][0]["unit"], "lm_head");
  // The record lists the parameters a prediction lays out over, with their timed unit.
  const auto shapes = build_result_json(plan, run, BenchMetrics{}, machine::capture_environment())["unit_timings"]["parameter_shapes"];
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0]["name"], "lm_head.weight");
  EXPECT_EQ(shapes[0]["unit"], "head");
  EXPECT_EQ(shapes[2]["elements"], 2001);
}

// Warm-up iterations ten times slower than the measured ones: an average over all iterations,
// or a window divided by max_iters, would be far off the measured mean.
TEST(ResultJson, AverageIterTimeIsTheMeanOfTheMeasuredIterationsOnly) {
  const RunPlan plan = plan_for_test();
  MeasuredRun run;
  const double seconds[] = {2.0, 1.5, 0.10, 0.25, 0.15, 0.30};  // warm-up: the first two
  double t = 0;
  for (int i = 0; i < 6; ++i) {
    t += seconds[i];
    run.iterations.push_back({i, i < 2, seconds[i], 10.0 - i, t});
  }
  run.measured_window_seconds = t - run.iterations[1].end_time;
  const auto j = build_result_json(plan, run, compute_metrics(inputs_of(plan), run), machine::capture_environment());
  int64_t measured = 0;
  const double mean_ms = mean_measured_time_ms(j, &measured);
  EXPECT_EQ(measured, 4);
  EXPECT_DOUBLE_EQ(mean_ms, 200.0);
  EXPECT_NEAR(j["average_iter_time"].get<double>(), 200.0, 1e-9);
}

// A rank whose figures never arrived (it died, or the launcher wrote the record) is listed with
// its status, and its memory is null, not a false 0; a rank that reported keeps its figures.
TEST(ResultJson, ARankThatNeverReportedHasNullMemory) {
  const RunPlan plan = plan_for_test();
  MeasuredRun run;
  run.outcome = Outcome::oom;
  run.message = "rank 1 exited with code 3 after 1.9 s";
  RankSummary reported;
  reported.rank = 0;
  reported.peak_rss_bytes = 2'000'000'000;
  RankSummary silent;
  silent.rank = 1;
  silent.status = "oom";
  silent.reported = false;
  run.ranks = {reported, silent};
  const auto j = build_result_json(plan, run, compute_metrics(inputs_of(plan), run), machine::capture_environment());
  ASSERT_EQ(j["ranks"].size(), 2u) << j["ranks"].dump();
  EXPECT_DOUBLE_EQ(j["ranks"][0]["peak_rss_GB"].get<double>(), 2.0);
  EXPECT_TRUE(j["ranks"][0]["memory_allocated_peak_GB"].is_number());
  EXPECT_EQ(j["ranks"][1]["status"], "oom");
  EXPECT_TRUE(j["ranks"][1]["peak_rss_GB"].is_null()) << j["ranks"][1].dump();
  EXPECT_TRUE(j["ranks"][1]["memory_allocated_peak_GB"].is_null());
  EXPECT_TRUE(j["ranks"][1]["memory_reserved_peak_GB"].is_null());
}

// Whether this binary's std::filesystem::remove_all is libstdc++'s own. libtorch.so (the pip
// wheel's) exports copies of std::filesystem's functions, built against a newer libstdc++
// than this system's GCC 12 one, without symbol versions. A binary that links libtorch.so
// ahead of libstdc++ (the order CMake gives LibTorch targets) binds its std::filesystem calls
// to those copies. libtorch.so's remove_all calls recursive_directory_iterator::__erase, a
// newer-libstdc++ symbol that libtorch.so references weakly (it does not list libstdc++ as a
// dependency) and that libstdc++.so.6.0.30 does not define: it resolves to address 0 and
// remove_all jumps there (SIGSEGV). Linking libstdc++ ahead of LibTorch fixes the binding.
bool remove_all_is_libstdcxx() {
  using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&);
  const RemoveAll fn = &std::filesystem::remove_all;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(fn), &info) == 0 || info.dli_fname == nullptr) return false;
  return std::string(info.dli_fname).find("libstdc++") != std::string::npos;
}

// Removes `dir` and what it holds (files only): std::filesystem::remove_all when it is
// libstdc++'s, else the same with unlink/rmdir.
void remove_test_dir(const std::filesystem::path& dir) {
  if (remove_all_is_libstdcxx()) {
    std::filesystem::remove_all(dir);
    return;
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir)) ::unlink(entry.path().c_str());
  ::rmdir(dir.c_str());
}

// The build links libstdc++ ahead of LibTorch (CMakeLists.txt, tokbench_options) so that this
// holds; without it this test fails (and remove_all would crash).
TEST(ResultJson, StdFilesystemRemoveAllIsLibstdcxxs) {
  ASSERT_TRUE(remove_all_is_libstdcxx())
      << "std::filesystem::remove_all binds to LibTorch's bundled copy, which calls a null pointer with this "
         "libstdc++; link libstdc++ ahead of LibTorch (see remove_all_is_libstdcxx)";
  std::string dir_template = (std::filesystem::temp_directory_path() / "tokbench_remove_all_XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir_template.data()), nullptr);
  const std::filesystem::path dir(dir_template);
  std::filesystem::create_directories(dir / "a" / "b");
  { std::ofstream(dir / "a" / "b" / "f") << "x"; }
  EXPECT_EQ(std::filesystem::remove_all(dir), 4u);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(ResultJson, AtomicWriteReplacesAndLeavesNoTemp) {
  std::string dir_template = (std::filesystem::temp_directory_path() / "tokbench_json_XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir_template.data()), nullptr);
  const std::filesystem::path dir(dir_template);
  const auto path = dir / "result.json";
  { std::ofstream(path) << "old"; }
  write_json_atomically(path, nlohmann::ordered_json{{"status", "ok"}});
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["status"], "ok");
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
  remove_test_dir(dir);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(ResultJson, WriteIntoMissingDirectoryThrows) {
  EXPECT_THROW(write_json_atomically("/nonexistent-tokbench-dir/r.json", nlohmann::ordered_json::object()),
               std::runtime_error);
}

}  // namespace
}  // namespace tokbench::run
