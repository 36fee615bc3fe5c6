// The print format against pandas itself: the expected texts below are what pandas 3.1.1
// prints for the same pivots (print(df) with display width/columns/rows unlimited; rows and
// executors in first-appearance order), the reference runner's `print` output.
#include <gtest/gtest.h>

#include <sstream>

#include "results/tables.hpp"

namespace tokbench::results {
namespace {

using nlohmann::json;

std::string print(const std::vector<json>& runs, bool only_varying = false) {
  std::ostringstream out;
  TableOptions options;
  options.only_varying_columns = only_varying;
  write_report(format_from_string("print"), json::object(), runs, options, out, {});
  return out.str();
}

json run(const std::string& model, int ranks, int global, const std::string& mode, const std::string& compiler) {
  return json{{"model_name", model}, {"Num GPUS", ranks}, {"Seq Len", 1024}, {"Micro BS", 2}, {"Global BS", global},
              {"GA", 1}, {"Distributed Mode", mode}, {"Sharding Size", nullptr}, {"compiler", compiler},
              {"status", "ok"}};
}

// The issue's example: phi-2 on 1 and 4 GPUs, eager and inductor.
TEST(PrintFormat, TheReferenceExample) {
  std::vector<json> runs;
  const double times[] = {228.613844, 223.161, 253.434114, 242.95623};
  for (int i = 0; i < 4; ++i) {
    json r = run("phi-2", i < 2 ? 1 : 4, i < 2 ? 1 : 4, i < 2 ? "none" : "fsdp_zero2_none_bucketing",
                 i % 2 ? "inductor" : "eager");
    r["Seq Len"] = 2048;
    r["Micro BS"] = 1;
    r["average_iter_time"] = times[i];
    runs.push_back(r);
  }
  const std::string text = print(runs);
  EXPECT_EQ(text.substr(0, text.find("\n\n") + 1), R"(AVERAGE ITERATION TIME (ms)
compiler model_name  Num GPUS  Seq Len  Micro BS  Global BS  GA           Distributed Mode Sharding Size       eager   inductor
0             phi-2         1     2048         1          1   1                       none          none  228.613844  223.16100
1             phi-2         4     2048         1          4   1  fsdp_zero2_none_bucketing          none  253.434114  242.95623
)");
}

// A failed run (object column), a finished run without MFU and an executor without a run (NaN),
// a value over 10^6 and mixed decimals.
std::vector<json> mixed_runs() {
  std::vector<json> runs = {run("Llama-3.2-1B", 1, 2, "none", "eager"), run("Llama-3.2-1B", 1, 2, "none", "python-inductor"),
                            run("Llama-3.2-1B", 8, 16, "fsdp_zero3_block_bucketing", "eager"),
                            run("Llama-3.2-1B", 8, 16, "fsdp_zero3_block_bucketing", "python-inductor")};
  for (auto& r : runs) {
    r["average_iter_time"] = 88.5;
    r["tokens_per_sec"] = 23141.24;
    r["tokens_per_sec_per_device"] = 23141.24;
    r["memory_used_GB"] = 21.75;
    r["model_TFLOP_per_s_per_device"] = 310.25;
    r["mfu"] = 0.3136;
  }
  runs[1]["average_iter_time"] = 71.0625;
  runs[1]["tokens_per_sec"] = runs[1]["tokens_per_sec_per_device"] = 28844.98;
  runs[1]["mfu"] = nullptr;
  runs[2]["average_iter_time"] = 95.125;
  runs[2]["tokens_per_sec"] = 1722431.5;
  runs[2]["tokens_per_sec_per_device"] = 215303.9375;
  runs[3]["status"] = "oom";
  return runs;
}

TEST(PrintFormat, FailuresMissingValuesAndWideNumbersAsPandas) {
  EXPECT_EQ(print(mixed_runs()), R"(AVERAGE ITERATION TIME (ms)
compiler    model_name  Num GPUS  Seq Len  Micro BS  Global BS  GA            Distributed Mode Sharding Size   eager python-inductor
0         Llama-3.2-1B         1     1024         2          2   1                        none          none  88.500         71.0625
1         Llama-3.2-1B         8     1024         2         16   1  fsdp_zero3_block_bucketing          none  95.125             oom

THROUGHPUT (tokens/s)
compiler    model_name  Num GPUS  Seq Len  Micro BS  Global BS  GA            Distributed Mode Sharding Size       eager python-inductor
0         Llama-3.2-1B         1     1024         2          2   1                        none          none    23141.24        28844.98
1         Llama-3.2-1B         8     1024         2         16   1  fsdp_zero3_block_bucketing          none  1722431.50             oom

NORMALIZED THROUGHPUT (tokens/s/GPU)
compiler    model_name  Num GPUS  Seq Len  Micro BS  Global BS  GA            Distributed Mode Sharding Size        eager python-inductor
0         Llama-3.2-1B         1     1024         2          2   1                        none          none   23141.2400        28844.98
1         Llama-3.2-1B         8     1024         2         16   1  fsdp_zero3_block_bucketing          none  215303.9375             oom

MEMORY ALLOCATED (GB)
compiler    model_name  Num GPUS  Seq Len  Micro BS  Global BS  GA            Distributed Mode Sharding Size  eager python-inductor
0         Llama-3.2-1B         1     1024         2          2   1                        none          none  21.75           21.75
1         Llama-3.2-1B         8     1024         2         16   1  fsdp_zero3_block_bucketing          none  21.75             oom

TFLOP/s PER DEVICE
compiler    model_name  Num GPUS  Seq Len  Micro BS  Global BS  GA            Distributed Mode Sharding Size   eager python-inductor
0         Llama-3.2-1B         1     1024         2          2   1                        none          none  310.25          310.25
1         Llama-3.2-1B         8     1024         2         16   1  fsdp_zero3_block_bucketing          none  310.25             oom

MFU (%)
compiler    model_name  Num GPUS  Seq Len  Micro BS  Global BS  GA            Distributed Mode Sharding Size  eager python-inductor
0         Llama-3.2-1B         1     1024         2          2   1                        none          none  31.36             NaN
1         Llama-3.2-1B         8     1024         2         16   1  fsdp_zero3_block_bucketing          none  31.36             oom

STATUS
compiler    model_name  Num GPUS  Seq Len  Micro BS  Global BS  GA            Distributed Mode Sharding Size eager python-inductor
0         Llama-3.2-1B         1     1024         2          2   1                        none          none    ok              ok
1         Llama-3.2-1B         8     1024         2         16   1  fsdp_zero3_block_bucketing          none    ok             oom
)");
}

TEST(PrintFormat, OnlyVaryingColumns) {
  const std::string text = print(mixed_runs(), true);
  EXPECT_EQ(text.substr(0, text.find("\n\n") + 1), R"(AVERAGE ITERATION TIME (ms)
compiler  Num GPUS  Global BS            Distributed Mode   eager python-inductor
0                1          2                        none  88.500         71.0625
1                8         16  fsdp_zero3_block_bucketing  95.125             oom
)");
}

// 12345678.25 stays fixed (" 12345678.25" is 12 characters once trimmed), as in pandas.
TEST(PrintFormat, SmallAndHugeValuesGoScientificAsPandas) {
  json a = run("m", 1, 2, "none", "eager"), b = run("m", 2, 4, "ddp", "eager");
  a["average_iter_time"] = 123456789.125;  // over 10^6, and wider than 12 characters at 6 decimals
  b["average_iter_time"] = 0.5;
  a["mfu"] = 1e-9;  // a percentage under 10^-6
  b["mfu"] = 0.25;
  const std::string text = print({a, b}, true);
  EXPECT_NE(text.find(" 1.234568e+08\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" 5.000000e-01\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" 1.000000e-07\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" 2.500000e+01\n"), std::string::npos) << text;
}

TEST(PrintFormat, NoRuns) {
  const std::string expected =
      "AVERAGE ITERATION TIME (ms)\nEmpty DataFrame\nColumns: [model_name, Num GPUS, Seq Len, Micro BS, Global BS, "
      "GA, Distributed Mode, Sharding Size]\nIndex: []\n\nTHROUGHPUT (tokens/s)\nEmpty";
  EXPECT_EQ(print({}).substr(0, expected.size()), expected);
}

}  // namespace
}  // namespace tokbench::results
