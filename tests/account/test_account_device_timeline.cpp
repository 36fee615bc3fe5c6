// The device timeline's attribution (account/device_timeline.hpp) on host and device events built
// by hand, in microseconds, so that every microsecond of the iteration has a known home.
#include <gtest/gtest.h>

#include <numeric>

#include "account/device_timeline.hpp"
#include "account/range_names.hpp"

namespace tokbench::account {
namespace {

constexpr uint64_t kLoop = 7;    // the loop's thread
constexpr uint64_t kEngine = 9;  // the autograd engine's device thread

struct Timeline {
  std::vector<ProfiledEvent> host;
  std::vector<LaunchCall> launches;
  std::vector<DeviceActivity> device;
  uint64_t next_correlation = 100;

  void op(std::string name, int64_t start_us, int64_t end_us, uint64_t thread = kLoop, int64_t seq = -1,
          bool node = false, Shapes shapes = {}) {
    host.push_back({std::move(name), start_us * 1000, end_us * 1000, thread, seq, node, std::move(shapes)});
  }
  // A kernel launched at `launch_us` on `thread`, running [start_us, end_us) on `stream`.
  void kernel(std::string name, int64_t launch_us, int64_t start_us, int64_t end_us, int64_t stream = 7,
              uint64_t thread = kLoop) {
    const uint64_t id = next_correlation++;
    launches.push_back({id, launch_us * 1000, thread});
    device.push_back({std::move(name), start_us * 1000, end_us * 1000, stream, id});
  }
  // A kernel whose launch the profiler did not record.
  void orphan(std::string name, int64_t start_us, int64_t end_us) {
    device.push_back({std::move(name), start_us * 1000, end_us * 1000, 7, next_correlation++});
  }
};

double us(const ProfiledPass& p, Category c) { return p.seconds[index_of(c)] * 1e6; }
double sum_us(const ProfiledPass& p) { return std::accumulate(p.seconds.begin(), p.seconds.end(), 0.0) * 1e6; }

TEST(DeviceTimeline, KernelsTakeTheCategoryOfTheOperatorThatLaunchedThem) {
  Timeline t;
  t.op(ranges::kIteration, 0, 1000);
  t.op(ranges::kData, 0, 100);                                    // the batch: device idle here is data_host
  t.op(ranges::kForward, 100, 1000);
  t.op("aten::linear", 110, 200);
  t.op("aten::mm", 120, 190, kLoop, -1, false, {{64, 128}, {128, 32}});
  t.op("cudaLaunchKernel", 130, 140);                             // the runtime call inside mm
  t.op(ranges::kNorm, 200, 300);
  t.op("aten::mul", 210, 250);                                    // elementwise by name, norm by its range
  t.op("aten::some_new_op", 300, 320);                            // what no rule names
  t.kernel("sm90_xmma_gemm_f32f32", 135, 150, 350);               // 200 µs of GEMM
  t.kernel("elementwise_kernel<mul>", 220, 350, 450);             // 100 µs of normalization
  t.kernel("kernel_3", 310, 500, 540);                            // 40 µs: its operator and name are other
  t.orphan("mystery_kernel", 600, 650);                           // 50 µs with no known launch
  // Idle: [0,150) of which [0,100) in the batch; [450,500), [540,600), [650,1000) launch gaps.

  const DevicePass d = attribute_device_timeline(t.host, t.launches, t.device);
  const ProfiledPass& p = d.pass;
  EXPECT_EQ(p.iterations, 1);
  EXPECT_NEAR(us(p, Category::gemm), 200, 1e-9);
  EXPECT_NEAR(us(p, Category::normalization), 100, 1e-9);
  EXPECT_NEAR(us(p, Category::data_host), 100, 1e-9);
  EXPECT_NEAR(us(p, Category::device_idle), 50 + 50 + 60 + 350, 1e-9);
  EXPECT_NEAR(us(p, Category::other), 40 + 50, 1e-9);
  EXPECT_NEAR(us(p, Category::elementwise), 0, 1e-9);
  EXPECT_NEAR(sum_us(p), 1000, 1e-9);
  EXPECT_DOUBLE_EQ(p.range_seconds, 1000e-6);
  EXPECT_EQ(p.gemm_flops, 2 * 64 * 128 * 32);  // from the host operator's shapes
  EXPECT_NEAR(d.device.busy_seconds * 1e6, 200 + 100 + 40 + 50, 1e-9);
  EXPECT_EQ(d.device.activities, 4);
  EXPECT_EQ(d.device.unlaunched_activities, 1);
  EXPECT_NEAR(d.device.unlaunched_seconds * 1e6, 50, 1e-9);
  // other names what it holds: the launching operator, or the kernel when no launch is known.
  ASSERT_EQ(p.other_by_name.size(), 2u);
  EXPECT_EQ(p.other_by_name[0].first, "mystery_kernel");
  EXPECT_EQ(p.other_by_name[1].first, "aten::some_new_op");
}

TEST(DeviceTimeline, IdleBetweenIterationsIsHostWorkAndEachIterationIsItsOwn) {
  Timeline t;
  t.op(ranges::kIteration, 0, 500);   // the host sleeps [0,200) in the iteration's own gap (a slow pipeline)
  t.op(ranges::kForward, 200, 500);
  t.op("aten::gelu", 200, 220);
  t.kernel("gelu_kernel", 210, 220, 480);
  t.op(ranges::kIteration, 500, 700);
  t.op(ranges::kOptimizer, 520, 700);
  t.op("aten::_fused_adamw_", 530, 560);
  t.kernel("fused_adamw_kernel", 540, 550, 690);
  const DevicePass d = attribute_device_timeline(t.host, t.launches, t.device);
  const ProfiledPass& p = d.pass;
  EXPECT_EQ(p.iterations, 2);
  EXPECT_NEAR(us(p, Category::data_host), 200 + 20, 1e-9);  // the gaps at both iterations' starts
  EXPECT_NEAR(us(p, Category::elementwise), 260, 1e-9);
  EXPECT_NEAR(us(p, Category::optimizer), 140, 1e-9);
  EXPECT_NEAR(us(p, Category::device_idle), 20 + 20 + 30 + 10, 1e-9);
  EXPECT_NEAR(sum_us(p), 700, 1e-9);
}

TEST(DeviceTimeline, ConcurrentComputeCountsOnceAndCommunicationIsExposedOnlyAlone) {
  Timeline t;
  t.op(ranges::kIteration, 0, 1000);
  t.op(ranges::kForward, 0, 1000);  // the host is in the step throughout: idle is device_idle
  t.op("aten::mm", 0, 10, kLoop, -1, false, {{2, 2}, {2, 2}});
  t.op("aten::gelu", 10, 20);
  t.op("c10d::allreduce_", 20, 30);
  t.op("c10d::allreduce_", 30, 40);
  t.kernel("gemm", 5, 100, 400, 7);                    // two compute streams: [100,400) and [200,500)
  t.kernel("gelu", 15, 200, 500, 8);                   //   overlap [200,400) split evenly: 100 each
  t.kernel("ncclDevKernel_AllReduce", 25, 300, 450, 9);  // fully under compute: hidden
  t.kernel("ncclDevKernel_AllReduce", 35, 450, 700, 9);  // [450,500) hidden, [500,700) exposed
  const DevicePass d = attribute_device_timeline(t.host, t.launches, t.device);
  const ProfiledPass& p = d.pass;
  EXPECT_NEAR(us(p, Category::gemm), 100 + 100, 1e-9);
  EXPECT_NEAR(us(p, Category::elementwise), 100 + 100, 1e-9);
  EXPECT_NEAR(us(p, Category::exposed_comm), 200, 1e-9);
  EXPECT_NEAR(us(p, Category::device_idle), 100 + 300, 1e-9);
  EXPECT_NEAR(d.device.busy_seconds * 1e6, 600, 1e-9);            // the union, not 300+300+150+250
  EXPECT_NEAR(d.device.hidden_comm_seconds * 1e6, 150 + 50, 1e-9);
  EXPECT_NEAR(sum_us(p), 1000, 1e-9);
}

TEST(DeviceTimeline, UnevenSplitsStayInWholeNanosecondsAndSumExactly) {
  Timeline t;
  t.op(ranges::kIteration, 0, 10);
  t.op("aten::mm", 0, 1);
  t.op("aten::gelu", 1, 2);
  t.op("aten::native_layer_norm", 2, 3);
  // Three kernels on three streams over the same 1000 ns, which do not divide by 3.
  t.launches.push_back({1, 500, kLoop});
  t.launches.push_back({2, 1500, kLoop});
  t.launches.push_back({3, 2500, kLoop});
  t.device.push_back({"a", 3000, 4000, 7, 1});
  t.device.push_back({"b", 3000, 4000, 8, 2});
  t.device.push_back({"c", 3000, 4000, 9, 3});
  const DevicePass d = attribute_device_timeline(t.host, t.launches, t.device);
  const ProfiledPass& p = d.pass;
  EXPECT_NEAR(p.seconds[index_of(Category::gemm)], 334e-9, 1e-18);  // the earliest started takes the remainder
  EXPECT_NEAR(p.seconds[index_of(Category::elementwise)], 333e-9, 1e-18);
  EXPECT_NEAR(p.seconds[index_of(Category::normalization)], 333e-9, 1e-18);
  EXPECT_NEAR(sum_us(p), 10, 1e-9);
}

// On a CUDA device the autograd engine runs backward on its own thread: its nodes take their
// forward operators' categories, and the kernels they launch follow.
TEST(DeviceTimeline, BackwardOnTheEnginesThreadKeepsItsForwardsCategories) {
  Timeline t;
  t.op(ranges::kIteration, 0, 1000);
  t.op(ranges::kNorm, 0, 50);
  t.op("aten::mul", 10, 40, kLoop, 5);                       // forward: normalization by its range
  t.op(ranges::kBackward, 100, 1000);                         // the loop's thread waits here
  t.op("MulBackward0", 110, 200, kEngine, 5, true);
  t.op("aten::mul", 120, 190, kEngine);
  t.op("AddmmBackward0", 200, 300, kEngine, 6, true);
  t.op("aten::mm", 210, 290, kEngine, -1, false, {{4, 8}, {8, 16}});
  t.kernel("mul_kernel", 130, 300, 400, 7, kEngine);
  t.kernel("gemm_kernel", 220, 400, 700, 7, kEngine);
  t.op("aten::mm", 2000, 2100, kEngine, -1, false, {{4, 8}, {8, 16}});  // after the iteration: not counted
  const DevicePass d = attribute_device_timeline(t.host, t.launches, t.device);
  const ProfiledPass& p = d.pass;
  EXPECT_NEAR(us(p, Category::normalization), 100, 1e-9);
  EXPECT_NEAR(us(p, Category::gemm), 300, 1e-9);
  // Idle: [50,100) while the loop's thread is in the iteration's own gap is host work; the rest
  // (the device waiting for the engine's launches) device_idle.
  EXPECT_NEAR(us(p, Category::data_host), 50, 1e-9);
  EXPECT_NEAR(us(p, Category::device_idle), 250 + 300, 1e-9);
  EXPECT_EQ(p.gemm_flops, 2 * 4 * 8 * 16);  // the engine thread's products count, once
  EXPECT_EQ(d.device.unlaunched_activities, 0);
  EXPECT_NEAR(sum_us(p), 1000, 1e-9);
}

// Where the launching host event says nothing, the kernel's name decides: inductor's kernels
// launched from a compiled graph's range (names as torch 2.11 gives them on a GPU), a GEMM and
// the fused optimizer whose launch the profiler did not record, and a kernel whose name says
// nothing either, which stays other. A kernel launched under a classified operator keeps that
// operator's category whatever its name.
TEST(DeviceTimeline, KernelsByTheirOwnNameWhereTheHostSaysNothing) {
  Timeline t;
  t.op(ranges::kIteration, 0, 1000);
  t.op(ranges::kForward, 0, 1000);
  t.op("## Call CompiledFxGraph fxyz ##", 10, 900);
  t.kernel("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", 20, 100, 200);  // 100 µs of norm
  t.kernel("triton_poi_fused_add_mul_silu_3", 30, 200, 260);                     // 60 µs elementwise
  t.kernel("triton_tem_fused_mm_1", 40, 260, 300);                              // 40 µs GEMM template
  t.kernel("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0", 50,
           300, 330);                                                            // 30 µs attention
  t.kernel("kernel_3", 60, 330, 340);                                           // 10 µs: other
  t.op("aten::mul", 910, 950);
  t.kernel("nvjet_tst_128x256_64x6_2x1_2cta_v_bz_TNT", 920, 400, 420);         // under aten::mul: elementwise
  t.orphan("nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT", 500, 600);                // 100 µs GEMM, no launch
  t.orphan("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
           "FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
           "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float*, float*>",
           600, 680);                                                            // 80 µs optimizer, no launch
  const DevicePass d = attribute_device_timeline(t.host, t.launches, t.device);
  const ProfiledPass& p = d.pass;
  EXPECT_NEAR(us(p, Category::normalization), 100, 1e-9);
  EXPECT_NEAR(us(p, Category::elementwise), 60 + 20, 1e-9);
  EXPECT_NEAR(us(p, Category::gemm), 40 + 100, 1e-9);
  EXPECT_NEAR(us(p, Category::attention), 30, 1e-9);
  EXPECT_NEAR(us(p, Category::optimizer), 80, 1e-9);
  EXPECT_NEAR(us(p, Category::other), 10, 1e-9);
  EXPECT_NEAR(sum_us(p), 1000, 1e-9);
  EXPECT_EQ(d.device.unlaunched_activities, 2);  // still counted: their launches are unknown
  ASSERT_EQ(p.other_by_name.size(), 1u);
  EXPECT_EQ(p.other_by_name[0].first, "## Call CompiledFxGraph fxyz ##");
}

TEST(DeviceTimeline, CommunicationKernelsByName) {
  EXPECT_TRUE(is_communication_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_TRUE(is_communication_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t"));
  EXPECT_FALSE(is_communication_kernel("void at::native::vectorized_elementwise_kernel<4>"));
  EXPECT_FALSE(is_communication_kernel("nc"));
}

TEST(DeviceTimeline, NoIterationRangeNoAccount) {
  Timeline t;
  t.op("aten::mm", 0, 10);
  t.kernel("gemm", 5, 10, 20);
  const DevicePass d = attribute_device_timeline(t.host, t.launches, t.device);
  EXPECT_EQ(d.pass.iterations, 0);
  EXPECT_EQ(d.device.activities, 0);
}

}  // namespace
}  // namespace tokbench::account
