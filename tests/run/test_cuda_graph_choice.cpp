// --cuda-graphs (run/cuda_graph_choice.hpp) on pretend machines: `on` is refused with one line
// naming the option, the reason and the valid values wherever capture is not possible, `auto`
// falls back there with the reason, `off` never captures, and the record's top-level
// cuda_graphs / cuda_graphs_note say what happened (a capture abandoned at run time included).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "machine/machine_info.hpp"
#include "results/run_record.hpp"
#include "run/cuda_graph_choice.hpp"
#include "run/metrics.hpp"
#include "run/resolve.hpp"
#include "run/result_json.hpp"
#include "run/run_options.hpp"
#include "test_machines.hpp"

namespace tokbench::run {
namespace {

using testing::cpu_machine;
using testing::gpu_machine;

// The fused executor on the GPU with room in the warm-up to capture: auto captures it.
RunOptions capturable() {
  RunOptions o;
  o.model_name = "pythia-14m";
  o.seq_len = 32;
  o.micro_batch_size = 2;
  o.max_iters = 8;
  o.warmup_iters = kCudaGraphMinWarmupIters;
  o.device = "cuda:0";
  o.compile = "fused";
  return o;
}

// The one refusal line `on` gives, holding each of `needles`.
void expect_refused(RunOptions o, std::initializer_list<std::string> needles,
                    const machine::MachineInfo& m = gpu_machine()) {
  o.cuda_graphs = "on";
  try {
    resolve_run(o, m);
    FAIL() << "--cuda-graphs on was not refused";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind("--cuda-graphs on: ", 0), 0u) << what;
    EXPECT_NE(what.find("; valid: --cuda-graphs auto (falls back to eager) or off"), std::string::npos) << what;
    for (const auto& needle : needles) EXPECT_NE(what.find(needle), std::string::npos) << what << " lacks " << needle;
  }
}

// What auto chose, with the fallback reason holding `needle`.
void expect_auto_off(RunOptions o, const std::string& needle, const machine::MachineInfo& m = gpu_machine()) {
  o.cuda_graphs = "auto";
  const CudaGraphChoice c = resolve_run(o, m).cuda_graphs;
  EXPECT_FALSE(c.on);
  EXPECT_EQ(c.note.rfind("off (auto): ", 0), 0u) << c.note;
  EXPECT_NE(c.note.find(needle), std::string::npos) << c.note << " lacks " << needle;
}

TEST(ResolveCudaGraphs, AutoCapturesTheFusedStepOnOneGpu) {
  RunOptions o = capturable();
  CudaGraphChoice c = resolve_run(o, gpu_machine()).cuda_graphs;
  EXPECT_EQ(c.mode, "auto");
  EXPECT_TRUE(c.on);
  // The default passes after the window (unit timings, time account) run eagerly: said.
  EXPECT_NE(c.note.find("run the step eagerly"), std::string::npos) << c.note;
  o.unit_timing_iters = 0;
  o.time_account_iters = 0;
  c = resolve_run(o, gpu_machine()).cuda_graphs;
  EXPECT_TRUE(c.on);
  EXPECT_EQ(c.note, "");
  o.cuda_graphs = "on";
  EXPECT_TRUE(resolve_run(o, gpu_machine()).cuda_graphs.on);
}

TEST(ResolveCudaGraphs, OffNeverCaptures) {
  RunOptions o = capturable();
  o.cuda_graphs = "off";
  const CudaGraphChoice c = resolve_run(o, gpu_machine()).cuda_graphs;
  EXPECT_FALSE(c.on);
  EXPECT_EQ(c.note, "off as asked (--cuda-graphs off)");
}

TEST(ResolveCudaGraphs, CpuDevice) {
  RunOptions o = capturable();
  o.device = "cpu";
  expect_refused(o, {"CUDA graphs need a CUDA device (device is cpu)"}, cpu_machine());
  expect_auto_off(o, "need a CUDA device", cpu_machine());
}

TEST(ResolveCudaGraphs, PythonExecutors) {
  for (const char* executor : {"python-eager", "python-inductor", "thunder"}) {
    RunOptions o = capturable();
    o.compile = executor;
    expect_refused(o, {std::string("--compile ") + executor, "PyTorch's own step"});
    expect_auto_off(o, "tokbench does not capture");
  }
}

TEST(ResolveCudaGraphs, ManyRanks) {
  machine::MachineInfo two_gpus = gpu_machine();
  two_gpus.cuda_devices.push_back({1, "NVIDIA H100 80GB HBM3", 80'000'000'000, 9, 0, 132});
  for (const char* mode : {"ddp", "fsdp"}) {
    RunOptions o = capturable();
    o.device = "cuda";  // one GPU per rank
    o.distributed_mode = mode;
    o.nproc_per_node = 2;
    expect_refused(o, {std::string("--distributed-mode ") + mode, "2 rank(s)", "not captured yet"}, two_gpus);
    expect_auto_off(o, "collectives are not captured yet", two_gpus);
  }
}

// An MoE reads its experts' token counts on the host every forward.
TEST(ResolveCudaGraphs, MixtureOfExperts) {
  RunOptions o = capturable();
  o.model_name = "Mixtral-8x7B-v0.1";
  o.n_layers = 1;
  expect_refused(o, {"routes tokens to 8 experts", "on the host"});
  expect_auto_off(o, "8 experts");
}

TEST(ResolveCudaGraphs, WarmupTooShortToCapture) {
  RunOptions o = capturable();
  o.warmup_iters = kCudaGraphMinWarmupIters - 1;
  expect_refused(o, {"--warmup-iters 2", "needs --warmup-iters 3 or more"});
  expect_auto_off(o, "--warmup-iters 2");
}

// tokbench's eager executor stays launch for launch the reference's under auto; on captures it.
TEST(ResolveCudaGraphs, EagerExecutorOnlyWhenAsked) {
  RunOptions o = capturable();
  o.compile = "eager";
  expect_auto_off(o, "--compile eager");
  o.cuda_graphs = "on";
  EXPECT_TRUE(resolve_run(o, gpu_machine()).cuda_graphs.on);
}

// --dynamic pads every sequence to T: one shape, so capture is possible.
TEST(ResolveCudaGraphs, DynamicLengthsKeepOneShape) {
  RunOptions o = capturable();
  o.dynamic = true;
  o.cuda_graphs = "on";
  EXPECT_TRUE(resolve_run(o, gpu_machine()).cuda_graphs.on);
}

TEST(ResolveCudaGraphs, RecordSaysWhatRan) {
  RunOptions o = capturable();
  o.unit_timing_iters = 0;
  o.time_account_iters = 0;
  const RunPlan on = resolve_run(o, gpu_machine());
  MeasuredRun run;
  results::RunRecord r = build_run_record(on, run, BenchMetrics{}, machine::Environment{});
  EXPECT_EQ(r.cuda_graphs.value_or(std::string()), "on");
  EXPECT_TRUE(r.cuda_graphs_note.is_null());
  // A capture abandoned at run time (auto): off, with its reason.
  run.cuda_graph_fallback = "off (auto): the capture failed at iteration 2: x; the run went on eagerly";
  r = build_run_record(on, run, BenchMetrics{}, machine::Environment{});
  EXPECT_EQ(r.cuda_graphs.value_or(std::string()), "off");
  EXPECT_EQ(r.cuda_graphs_note.value_or(std::string()), run.cuda_graph_fallback);
  // auto's fallback, from the plan.
  o.device = "cpu";
  const RunPlan cpu = resolve_run(o, cpu_machine());
  r = build_run_record(cpu, MeasuredRun{}, BenchMetrics{}, machine::Environment{});
  EXPECT_EQ(r.cuda_graphs.value_or(std::string()), "off");
  EXPECT_EQ(r.cuda_graphs_note.value_or(std::string()), cpu.cuda_graphs.note);
  const auto json = results::to_json(r);
  EXPECT_EQ(json.at("cuda_graphs"), "off");
  EXPECT_EQ(json.at("config").at("cuda_graphs"), "auto");  // the option as given
}

}  // namespace
}  // namespace tokbench::run
