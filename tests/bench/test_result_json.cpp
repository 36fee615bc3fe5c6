// The JSON result: the reference's keys with the contract's meanings, nulls for unknowns,
// and an atomic write that leaves no temporary file behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdlib.h>
#include <unistd.h>

#include "bench/result_json.hpp"

namespace tokbench::bench {
namespace {

RunPlan plan_for_test() {
  MachineInfo m;
  m.cuda_status = "none";
  m.mem_available_bytes = 16'000'000'000;
  m.cpu_model = "Test CPU";
  BenchOptions o;
  o.seq_len = 32;
  o.micro_batch_size = 2;
  o.global_batch_size = 4;
  o.max_iters = 6;
  o.warmup_iters = 2;
  return resolve_run(o, m);
}

TEST(ResultJson, ReferenceKeysComeFirst) {
  const RunPlan plan = plan_for_test();
  MeasuredRun run;
  BenchMetrics metrics;
  const auto j = build_result_json(plan, run, metrics, capture_environment());
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
  EXPECT_EQ(j["model_flops"], plan.flops_per_microbatch);
  EXPECT_TRUE(j["tokens_per_sec"].is_null());  // unknown, never -1
  EXPECT_TRUE(j["mfu"].is_null());
  EXPECT_EQ(j["schema_version"], kResultSchemaVersion);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_FALSE(j["environment"]["libtorch_version"].get<std::string>().empty());
  EXPECT_EQ(j["environment"]["time"].get<std::string>().size(), 25u);  // 2026-01-02T03:04:05+00:00
}

TEST(ResultJson, AtomicWriteReplacesAndLeavesNoTemp) {
  // A fresh directory from mkdtemp, cleaned with plain unlink/rmdir.
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
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(ResultJson, WriteIntoMissingDirectoryThrows) {
  EXPECT_THROW(write_json_atomically("/nonexistent-tokbench-dir/r.json", nlohmann::ordered_json::object()),
               std::runtime_error);
}

}  // namespace
}  // namespace tokbench::bench
