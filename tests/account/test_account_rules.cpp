// The classification rules, FLOPs from shapes and the self-time attribution of
// account/profiled_pass.hpp, on events built by hand so every second has a known home.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "account/matmul_flops.hpp"
#include "account/op_rules.hpp"
#include "account/profiled_pass.hpp"
#include "account/range_names.hpp"

namespace tokbench::account {
namespace {

TEST(Categories, NamesAreUniqueAndReadBack) {
  std::set<std::string_view> names;
  for (const Category c : all_categories()) {
    EXPECT_TRUE(names.insert(json_name(c)).second) << json_name(c);
    EXPECT_EQ(category_named(json_name(c)), c);
    EXPECT_FALSE(label(c).empty());
  }
  EXPECT_EQ(names.size(), kCategoryCount);
  EXPECT_FALSE(category_named("gemms").has_value());
}

TEST(Rules, OperatorsAndRangesHaveTheirCategory) {
  auto category = [](std::string_view name) { return rule_for_name(name).value().category; };
  EXPECT_EQ(category("aten::addmm"), Category::gemm);
  EXPECT_EQ(category("mkldnn::_linear_pointwise"), Category::gemm);
  EXPECT_EQ(category("aten::_scaled_dot_product_flash_attention_for_cpu_backward"), Category::attention);
  EXPECT_EQ(category("aten::native_layer_norm"), Category::normalization);
  EXPECT_EQ(category("aten::_log_softmax"), Category::loss);
  EXPECT_EQ(category("aten::_fused_adamw_"), Category::optimizer);
  EXPECT_EQ(category("aten::_foreach_mul_"), Category::optimizer);
  EXPECT_EQ(category("aten::gelu"), Category::elementwise);
  EXPECT_EQ(category(ranges::kData), Category::data_host);
  EXPECT_EQ(category(ranges::kIteration), Category::data_host);
  EXPECT_EQ(category(ranges::kNorm), Category::normalization);
  EXPECT_EQ(rule_for_name("aten::gelu")->reach, Reach::weak);
  EXPECT_EQ(rule_for_name("aten::mm")->reach, Reach::decisive);
  EXPECT_EQ(rule_for_name(ranges::kForward)->reach, Reach::self_only);
  EXPECT_FALSE(rule_for_name("aten::some_new_op").has_value());
}

// Inductor's kernels are classified by the operators their names spell (op_rules.hpp), with
// the names torch 2.11 gives them on the CPU and, for the GPU prefixes, Triton's.
TEST(Rules, GeneratedKernelsByWhatTheyFuse) {
  auto rule = [](std::string_view name) { return rule_for_name(name).value(); };
  EXPECT_EQ(rule("cpp_fused__log_softmax_nll_loss_forward_7").category, Category::loss);
  EXPECT_EQ(rule("cpp_fused__log_softmax_backward_data_nll_loss_backward_0").category, Category::loss);
  EXPECT_EQ(rule("cpp_fused_add_mean_mul_pow_rsqrt_2").category, Category::normalization);
  EXPECT_EQ(rule("cpp_fused_native_layer_norm_0").category, Category::normalization);
  EXPECT_EQ(rule("cpp_fused_native_layer_norm_backward_3").category, Category::normalization);
  EXPECT_EQ(rule("triton_per_fused_add_native_layer_norm_5").category, Category::normalization);
  EXPECT_EQ(rule("cpp_fused_add_mean_mul_pow_rsqrt_2").reach, Reach::decisive);
  EXPECT_EQ(rule("cpp_fused__log_softmax_0").reach, Reach::decisive);
  // A softmax that is not a log-softmax is attention's, weak as ATen's: a context decides.
  EXPECT_EQ(rule("cpp_fused__softmax_div_masked_fill_1").category, Category::attention);
  EXPECT_EQ(rule("cpp_fused__softmax_backward_data_4").category, Category::attention);
  EXPECT_EQ(rule("cpp_fused__softmax_1").reach, Reach::weak);
  // Everything else is elementwise work; words inside other words do not count.
  EXPECT_EQ(rule("cpp_fused_gelu_gelu_backward_6").category, Category::elementwise);
  EXPECT_EQ(rule("cpp_fused_embedding_dense_backward_8").category, Category::elementwise);
  EXPECT_EQ(rule("cpp_fused_clone_meant_variance_0").category, Category::elementwise);
  EXPECT_EQ(rule("cpp_fused_add_1").reach, Reach::weak);
  // A norm fused into the loss's kernel is the loss's (the loss rule comes first).
  EXPECT_EQ(rule("cpp_fused__log_softmax_mean_rsqrt_9").category, Category::loss);
  // torch 2.11's CPU names, with their graph's prefix.
  EXPECT_EQ(rule("graph_0_cpp_fused_add_native_layer_norm_native_layer_norm_backward_view_4").category,
            Category::normalization);
  EXPECT_EQ(rule("graph_0_cpp_fused_embedding_native_layer_norm_0").category, Category::normalization);
  EXPECT_EQ(rule("graph_12_cpp_fused_gelu_gelu_backward_sum_view_1").category, Category::elementwise);
  EXPECT_EQ(rule("graph_0_cpp_fused__scaled_dot_product_flash_attention_for_cpu_backward_transpose_view_3").category,
            Category::attention);
  EXPECT_FALSE(rule_for_generated_kernel("graph_cpp_fused_add_0").has_value());
  EXPECT_FALSE(rule_for_generated_kernel("aten::mean").has_value());
  EXPECT_FALSE(rule_for_generated_kernel("my_cpp_fused_add").has_value());
}

// A compiled step's events: the generated kernels take their categories, the extern GEMMs
// stay GEMMs, and the compiled function's backward node keeps only its own glue (other).
TEST(Attribution, CompiledStepByKernelNames) {
  std::vector<ProfiledEvent> events = {
      {.name = ranges::kIteration, .start_ns = 0, .end_ns = 1000},
      {.name = ranges::kForward, .start_ns = 0, .end_ns = 500},
      {.name = "CompiledFunction", .start_ns = 10, .end_ns = 490, .sequence_nr = 7},
      {.name = "cpp_fused_native_layer_norm_0", .start_ns = 20, .end_ns = 120},
      {.name = "aten::addmm", .start_ns = 120, .end_ns = 320, .input_shapes = {{4}, {2, 3}, {3, 4}, {}, {}}},
      {.name = "cpp_fused__softmax_1", .start_ns = 320, .end_ns = 370},
      {.name = "cpp_fused_gelu_2", .start_ns = 370, .end_ns = 470},
      {.name = ranges::kBackward, .start_ns = 500, .end_ns = 1000},
      {.name = "CompiledFunctionBackward", .start_ns = 510, .end_ns = 990, .sequence_nr = 7, .backward_node = true},
      {.name = "cpp_fused_gelu_gelu_backward_3", .start_ns = 520, .end_ns = 620},
      {.name = "aten::mm", .start_ns = 620, .end_ns = 820, .input_shapes = {{2, 3}, {3, 4}}},
      {.name = "cpp_fused_native_layer_norm_backward_4", .start_ns = 820, .end_ns = 970},
  };
  const ProfiledPass pass = attribute_events(events);
  auto ns = [&](Category c) { return std::lround(pass.seconds[index_of(c)] * 1e9); };
  EXPECT_EQ(ns(Category::normalization), 100 + 150);
  EXPECT_EQ(ns(Category::gemm), 200 + 200);
  EXPECT_EQ(ns(Category::attention), 50);
  EXPECT_EQ(ns(Category::elementwise), 100 + 100);
  // forward's and backward's own 20 ns each, and the compiled function's 30 ns each way.
  EXPECT_EQ(ns(Category::other), 20 + 30 + 20 + 30);
  EXPECT_EQ(pass.gemm_flops, 2 * 2 * 3 * 4 * 2);
}

// Device kernels by their own names (category_of_kernel), as CUPTI names them on NVIDIA GPUs:
// PyTorch's ATen kernels, cuBLAS's and CUTLASS's GEMMs, cuDNN's, flash and memory-efficient
// attention, inductor's and nvFuser's generated kernels, NCCL's.
TEST(Rules, DeviceKernelsByTheirOwnNames) {
  const std::vector<std::pair<std::string_view, Category>> named = {
      // GEMMs: cuBLAS on Hopper (nvjet, whose tile names spell no "gemm"), CUTLASS, cuBLASLt's
      // split-K reduction, inductor's template.
      {"nvjet_tst_128x256_64x6_2x1_2cta_v_bz_TNT", Category::gemm},
      {"nvjet_tst_128x8_64x12_2x1_v_bz_splitK_TNT", Category::gemm},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel"
       "__5x_cublas", Category::gemm},
      {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>(cutlass_80_"
       "tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8::Params)", Category::gemm},
      {"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, true, false, "
       "false>(cublasLt::cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, "
       "float const*, __nv_bfloat16 const*, void*, long, float*, int*)", Category::gemm},
      {"triton_tem_fused_mm_0", Category::gemm},
      // Attention: cuDNN's SDPA, PyTorch's flash (whose template arguments name cutlass types)
      // and memory-efficient (fmha_cutlass*) kernels.
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0",
       Category::attention},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x128_4x1x1_kernel0_0",
       Category::attention},
      {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
       "cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, "
       "true, true, false, false>(pytorch_flash::Flash_fwd_params)", Category::attention},
      {"fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
       "cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)", Category::attention},
      {"fmha_cutlassB_bf16_aligned_128x64_k128_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::"
       "Sm80, cutlass::bfloat16_t, true, false, true, 128, 64, 128, false>::Params)", Category::attention},
      // The loss: ATen's log-softmax (its epilogue names it) and NLL; inductor's fusion of both.
      {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, "
       "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
       Category::loss},
      {"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, "
       "float*, float const*, long const*, float const*, bool, long, long, long, long)", Category::loss},
      {"triton_red_fused__log_softmax_nll_loss_forward_3", Category::loss},
      // The optimizer: the fused AdamW and a foreach operator, both through multi_tensor_apply.
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
       "FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
       "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float*, float*>",
       Category::optimizer},
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
       "TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, "
       "std::multiplies<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<1>, ...)",
       Category::optimizer},
      // Norms: ATen's layer norm forward and backward, inductor's RMSNorm.
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, false>(int, "
       "float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
       Category::normalization},
      {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, float, 32u, 32u, "
       "256u, false, true, true>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, "
       "c10::BFloat16*, c10::BFloat16*)", Category::normalization},
      {"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", Category::normalization},
      // nvFuser's fusions, by their scheduler.
      {"nvfuser_pointwise_f0_c1_r0_g0", Category::elementwise},
      {"nvfuser_inner_persistent_f2_c1_r0_g1", Category::normalization},
      {"nvfuser_inner_outer_persistent_f3_c1_r0_g0", Category::normalization},
      {"(anonymous namespace)::nvfuser_inner_persistent_f0_c1_r0_g0(Tensor<float, 2, 2>, Tensor<float, 2, 2>)",
       Category::normalization},
      {"nvfuser_reduction_f1_c1_r0_g2", Category::elementwise},
      {"nvfuser_matmul_f4_c1_r0_g0", Category::gemm},
      // ATen's elementwise, reductions, indexing, concatenation; the device's copies and fills.
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
       "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
       Category::elementwise},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
       "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
       "unsigned int, float, 4, 4> >(at::native::ReduceOp<float, ...>)", Category::elementwise},
      {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, "
       "true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, ...)", Category::elementwise},
      {"triton_poi_fused_add_mul_silu_3", Category::elementwise},
      {"Memcpy DtoD (Device -> Device)", Category::elementwise},
      {"Memset (Device)", Category::elementwise},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", Category::exposed_comm},
  };
  for (const auto& [name, category] : named) {
    const auto got = category_of_kernel(name);
    ASSERT_TRUE(got.has_value()) << name;
    EXPECT_EQ(json_name(*got), json_name(category)) << name;
  }
  EXPECT_FALSE(category_of_kernel("kernel_3").has_value());
  EXPECT_FALSE(category_of_kernel("hadamard_transform_kernel").has_value());  // "adam" inside is no optimizer
}

TEST(Rules, BackwardNodesByTheOperatorTheyNameOrTheirFunction) {
  EXPECT_EQ(forward_operator_of("MulBackward0"), "mul");
  EXPECT_EQ(forward_operator_of("autograd::engine::evaluate_function: NativeLayerNormBackward0"), "native_layer_norm");
  EXPECT_EQ(forward_operator_of("torch::autograd::AccumulateGrad"), "");
  auto category = [](std::string_view node) { return rule_for_backward_node(node).value().category; };
  EXPECT_EQ(category("AddmmBackward0"), Category::gemm);
  EXPECT_EQ(category("UnsafeViewBackward0"), Category::elementwise);  // aten::_unsafe_view
  EXPECT_EQ(category("ScaledDotProductFlashAttentionForCpuBackward0"), Category::attention);
  EXPECT_EQ(category("NllLossBackward0"), Category::loss);
  EXPECT_EQ(category("torch::autograd::CppNode<tokbench::train::(anonymous namespace)::FusedLinearFunction>"),
            Category::gemm);
  EXPECT_EQ(category("autograd::engine::evaluate_function: torch::autograd::CppNode<x::ChunkedLinearCrossEntropyFunction>"),
            Category::loss);
  // tokbench's own functions, each backward node by the function it runs (the fused ones inside
  // the plain ones' names included).
  for (const auto& [function, want] : std::vector<std::pair<std::string, Category>>{
           {"RmsNormRowsFunction", Category::normalization},
           {"AddRmsNormRowsFunction", Category::normalization},
           {"LayerNormRowsFunction", Category::normalization},
           {"AddLayerNormRowsFunction", Category::normalization},
           {"GatedActivationFunction", Category::elementwise},
           {"RopeRotationFunction", Category::elementwise}})
    EXPECT_EQ(category("torch::autograd::CppNode<tokbench::train::(anonymous namespace)::" + function + ">"), want)
        << function;
  EXPECT_EQ(rule_for_backward_node("CheckpointedBlockBackward")->reach, Reach::self_only);
  // A compiled graph's node (torch.compile's, thunder's) is glue around its own operators.
  for (const char* node : {"CompiledFunctionBackward", "ThunderFunctionBackward", "ThunderOutputFunctionBackward"})
    EXPECT_EQ(rule_for_backward_node(node)->reach, Reach::self_only) << node;
  EXPECT_FALSE(rule_for_backward_node("SomethingElse").has_value());
}

TEST(MatmulFlops, FromTheRecordedShapes) {
  EXPECT_EQ(matmul_flops("aten::mm", {{64, 128}, {128, 384}})->flops, 2 * 64 * 128 * 384);
  EXPECT_EQ(matmul_flops("aten::addmm", {{384}, {64, 128}, {128, 384}, {}, {}})->flops, 2 * 64 * 128 * 384);
  EXPECT_EQ(matmul_flops("aten::bmm", {{8, 32, 16}, {8, 16, 32}})->flops, 2 * 8 * 32 * 16 * 32);
  EXPECT_EQ(matmul_flops("mkldnn::_linear_pointwise", {{2, 32, 128}, {512, 128}, {512}, {}})->flops,
            2 * 64 * 512 * 128);
  const Shapes q{{2, 4, 32, 8}, {2, 4, 32, 8}, {2, 4, 32, 8}, {}, {}};
  const auto forward = matmul_flops("aten::_scaled_dot_product_flash_attention_for_cpu", q);
  ASSERT_TRUE(forward.has_value());
  EXPECT_EQ(forward->category, Category::attention);
  EXPECT_EQ(forward->flops, 4 * 2 * 4 * 32 * 32 * 8);  // two products over the full 32×32 square
  Shapes backward{{2, 4, 32, 8}};
  backward.insert(backward.end(), q.begin(), q.end());
  EXPECT_EQ(matmul_flops("aten::_scaled_dot_product_flash_attention_for_cpu_backward", backward)->flops,
            2 * forward->flops);
  EXPECT_FALSE(matmul_flops("aten::mm", {{64, 128}, {127, 384}}).has_value());  // shapes that do not multiply
  EXPECT_FALSE(matmul_flops("aten::mm", {}).has_value());
  EXPECT_FALSE(counts_matmul_flops("aten::linear"));  // composites: their kernels count
  EXPECT_FALSE(counts_matmul_flops("aten::scaled_dot_product_attention"));
  EXPECT_TRUE(counts_matmul_flops("aten::_scaled_dot_product_efficient_attention_backward"));
}

// Events of one thread, built in microseconds.
struct Builder {
  std::vector<ProfiledEvent> events;
  ProfiledEvent& add(std::string name, int64_t start_us, int64_t end_us, int64_t seq = -1, bool node = false,
                     Shapes shapes = {}) {
    events.push_back({std::move(name), start_us * 1000, end_us * 1000, 7, seq, node, std::move(shapes)});
    return events.back();
  }
};

double seconds(const ProfiledPass& p, Category c) { return p.seconds[index_of(c)]; }

TEST(Attribution, EverySelfMicrosecondInOneCategory) {
  Builder b;
  b.add(ranges::kIteration, 0, 1000);
  b.add(ranges::kData, 5, 25);                   // 20 µs of batch
  b.add("aten::copy_", 10, 20);                  //   a copy inside it: still data
  b.add(ranges::kForward, 30, 430);              // 400 µs, of which 50 µs between operators
  b.add(ranges::kNorm, 30, 80, -1);              //   litgpt's RMSNorm composition
  b.add("aten::mul", 35, 75, 5);                 //     elementwise by name, normalization by context
  b.add("aten::linear", 80, 280, 6);             //   a linear: 200 µs
  b.add("aten::t", 82, 84, 6);                   //     its transpose
  b.add("aten::addmm", 90, 270, 7, false, {{384}, {64, 128}, {128, 384}, {}, {}});
  b.add("aten::gelu", 280, 330, 8);              //   an activation: 50 µs
  b.add("aten::some_new_op", 330, 380, 9);       //   an operator no rule names: 50 µs of other
  b.add(ranges::kBackward, 430, 930);            // 500 µs, of which 100 between nodes
  b.add("autograd::engine::evaluate_function: MulBackward0", 430, 530, 5, true);
  b.add("MulBackward0", 431, 529, 5, true);      //   the norm's mul: normalization via its number
  b.add("aten::mul", 432, 528);
  b.add("AddmmBackward0", 530, 830, 7, true);
  b.add("aten::mm", 540, 680, -1, false, {{64, 384}, {384, 128}});
  b.add("aten::mm", 680, 820, -1, false, {{128, 64}, {64, 384}});
  b.add("aten::sum", 820, 825);                  //     the bias gradient: the linear's backward
  b.add(ranges::kOptimizer, 930, 990);
  b.add("aten::_fused_adamw_", 935, 985);
  // Outside the iteration, and on another thread: not in the account.
  b.add("aten::mm", 1000, 1500, -1, false, {{1, 1}, {1, 1}});
  b.events.push_back({"aten::mm", 100, 200, 8, -1, false, {{1, 1}, {1, 1}}});

  const ProfiledPass p = attribute_events(b.events);
  EXPECT_EQ(p.iterations, 1);
  EXPECT_DOUBLE_EQ(p.range_seconds, 1000e-6);
  const double sum = std::accumulate(p.seconds.begin(), p.seconds.end(), 0.0);
  EXPECT_NEAR(sum, p.range_seconds, 1e-12);
  EXPECT_NEAR(seconds(p, Category::data_host), 20e-6 + 20e-6, 1e-12);  // the batch, the iteration's gaps
  EXPECT_NEAR(seconds(p, Category::normalization), 50e-6 + 100e-6, 1e-12);
  EXPECT_NEAR(seconds(p, Category::gemm), 200e-6 + 300e-6, 1e-12);  // the linear and its backward node, whole
  EXPECT_NEAR(seconds(p, Category::elementwise), 50e-6, 1e-12);     // gelu (t and sum are the linear's)
  EXPECT_NEAR(seconds(p, Category::optimizer), 60e-6, 1e-12);
  EXPECT_NEAR(seconds(p, Category::other), 50e-6 + 50e-6 + 100e-6, 1e-12);  // the step's gaps, the unknown op
  EXPECT_EQ(p.gemm_flops, 3 * 2 * 64 * 128 * 384);  // forward, grad-input, grad-weight; nothing twice
  EXPECT_EQ(p.attention_flops, 0);
  EXPECT_EQ(p.uncounted_matmuls, 0);
  ASSERT_FALSE(p.other_by_name.empty());
  EXPECT_EQ(p.other_by_name.front().first, ranges::kBackward);
}

TEST(Attribution, GemmInsideAGemmCountsOnceAndMissingShapesAreCounted) {
  Builder b;
  b.add(ranges::kIteration, 0, 100);
  b.add("aten::mm", 10, 90, -1, false, {{2, 3}, {3, 4}});
  b.add("aten::mm", 20, 30, -1, false, {{2, 3}, {3, 4}});  // a kernel inside a kernel: not again
  b.add(ranges::kIteration, 100, 200);
  b.add("aten::bmm", 110, 120);  // no shapes recorded
  const ProfiledPass p = attribute_events(b.events);
  EXPECT_EQ(p.iterations, 2);
  EXPECT_EQ(p.gemm_flops, 2 * 2 * 3 * 4);
  EXPECT_EQ(p.uncounted_matmuls, 1);
  EXPECT_NEAR(seconds(p, Category::gemm), 90e-6, 1e-12);
  EXPECT_NEAR(seconds(p, Category::data_host), 110e-6, 1e-12);
}

// A distributed step's waits for collectives are exposed communication wherever they run: in
// the optimizer range (DDP without overlap), inside a backward node (a gradient hook), in the
// step's forward (FSDP's gathers); what encloses them keeps only the rest.
TEST(Attribution, WaitsForCollectivesAreExposedCommunicationWhereverTheyRun) {
  Builder b;
  b.add(ranges::kIteration, 0, 1000);
  b.add(ranges::kForward, 0, 200);
  b.add(ranges::kCommWait, 10, 60);             //   a gather's wait: 50 µs
  b.add(ranges::kBackward, 200, 600);
  b.add("AddmmBackward0", 200, 500, 7, true);   //   a GEMM's node, 300 µs
  b.add(ranges::kCommWait, 300, 400);           //     a hook's wait inside it: 100 µs
  b.add(ranges::kOptimizer, 600, 1000);
  b.add(ranges::kCommWait, 600, 900);           //   the all-reduces' waits: 300 µs
  b.add("aten::_fused_adamw_", 900, 1000);
  const ProfiledPass p = attribute_events(b.events);
  EXPECT_NEAR(seconds(p, Category::exposed_comm), 450e-6, 1e-12);
  EXPECT_NEAR(seconds(p, Category::gemm), 200e-6, 1e-12);
  EXPECT_NEAR(seconds(p, Category::optimizer), 100e-6, 1e-12);
  EXPECT_NEAR(seconds(p, Category::other), 150e-6 + 100e-6, 1e-12);  // forward's and backward's gaps
  EXPECT_NEAR(std::accumulate(p.seconds.begin(), p.seconds.end(), 0.0), p.range_seconds, 1e-12);
}

// DDP's bucket copies and averaging are elementwise work, even inside the optimizer's range
// (no overlap: the step flattens, waits, averages and copies back before AdamW).
TEST(Attribution, CollectiveBufferCopiesAreElementwiseInsideTheOptimizer) {
  Builder b;
  b.add(ranges::kIteration, 0, 1000);
  b.add(ranges::kOptimizer, 0, 1000);
  b.add(ranges::kCommBuffers, 0, 200);          //   flattening a bucket
  b.add("aten::copy_", 10, 190);
  b.add(ranges::kCommWait, 200, 500);           //   its all-reduce's wait
  b.add(ranges::kCommBuffers, 500, 700);        //   averaging and copying back
  b.add("aten::mul_", 500, 550);
  b.add("aten::copy_", 550, 690);
  b.add("aten::_fused_adamw_", 700, 950);
  const ProfiledPass p = attribute_events(b.events);
  EXPECT_NEAR(seconds(p, Category::elementwise), 400e-6, 1e-12);  // the ranges, their gaps included
  EXPECT_NEAR(seconds(p, Category::exposed_comm), 300e-6, 1e-12);
  EXPECT_NEAR(seconds(p, Category::optimizer), 250e-6 + 50e-6, 1e-12);  // AdamW and the range's own gap
  EXPECT_NEAR(std::accumulate(p.seconds.begin(), p.seconds.end(), 0.0), p.range_seconds, 1e-12);
}

TEST(Attribution, NoIterationRangeNoAccount) {
  Builder b;
  b.add("aten::mm", 0, 10);
  const ProfiledPass p = attribute_events(b.events);
  EXPECT_EQ(p.iterations, 0);
  EXPECT_EQ(p.events, 0);
}

}  // namespace
}  // namespace tokbench::account
