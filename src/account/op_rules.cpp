// The classification tables (op_rules.hpp). Each list says what it holds and why; an operator
// missing from every list lands in "other", which a test keeps small on the models tokbench
// trains, so a new operator shows up there rather than in a wrong category.
#include "account/op_rules.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <vector>

#include "account/range_names.hpp"

namespace tokbench::account {
namespace {

using namespace std::string_view_literals;

// Matrix products, and the composites made of them (their glue is the GEMM's cost).
constexpr std::array kGemm = {
    "aten::mm"sv,       "aten::addmm"sv,      "aten::bmm"sv,     "aten::baddbmm"sv, "aten::addbmm"sv,
    "aten::matmul"sv,   "aten::linear"sv,     "aten::_addmm_activation"sv, "aten::mv"sv, "aten::addmv"sv,
    "aten::dot"sv,      "aten::mkldnn_linear"sv, "mkldnn::_linear_pointwise"sv,
};
// Attention kernels: PyTorch's SDPA entry point and every backend's forward and backward.
constexpr std::array kAttentionPrefixes = {
    "aten::scaled_dot_product_attention"sv, "aten::_scaled_dot_product_"sv, "aten::_flash_attention_"sv,
    "aten::_efficient_attention_"sv,        "aten::_cudnn_attention_"sv,
};
constexpr std::array kNormalization = {
    "aten::layer_norm"sv,      "aten::native_layer_norm"sv, "aten::native_layer_norm_backward"sv,
    "aten::rms_norm"sv,        "aten::_fused_rms_norm"sv,   "aten::_fused_rms_norm_backward"sv,
    "aten::group_norm"sv,      "aten::native_group_norm"sv, "aten::native_group_norm_backward"sv,
};
// Cross-entropy as ATen computes it: log-softmax, then NLL.
constexpr std::array kLoss = {
    "aten::cross_entropy_loss"sv, "aten::log_softmax"sv,       "aten::_log_softmax"sv,
    "aten::_log_softmax_backward_data"sv, "aten::nll_loss"sv,  "aten::nll_loss_nd"sv,
    "aten::nll_loss_forward"sv,   "aten::nll_loss_backward"sv, "aten::nll_loss2d_forward"sv,
    "aten::nll_loss2d_backward"sv,
};
constexpr std::array kOptimizer = {"aten::_fused_adamw_"sv, "aten::_fused_adam_"sv};
constexpr std::array kOptimizerPrefixes = {"aten::_foreach_"sv};
// Memory-bound tensor work: pointwise arithmetic and activations, comparisons, reductions,
// copies and casts, views and reshapes, concatenation, indexing (the embedding is a gather),
// and the tensors made to hold results. Softmax is here for routers and the like; inside an
// attention or loss context it is that context's.
constexpr std::array kElementwise = {
    "aten::add"sv, "aten::add_"sv, "aten::sub"sv, "aten::sub_"sv, "aten::rsub"sv, "aten::mul"sv, "aten::mul_"sv,
    "aten::div"sv, "aten::div_"sv, "aten::neg"sv, "aten::exp"sv, "aten::exp_"sv, "aten::log"sv, "aten::rsqrt"sv,
    "aten::sqrt"sv, "aten::pow"sv, "aten::square"sv, "aten::abs"sv, "aten::reciprocal"sv, "aten::tanh"sv,
    "aten::tanh_backward"sv, "aten::sigmoid"sv, "aten::sigmoid_backward"sv, "aten::gelu"sv,
    "aten::gelu_backward"sv, "aten::silu"sv, "aten::silu_backward"sv, "aten::relu"sv,
    "aten::threshold_backward"sv, "aten::lerp_"sv, "aten::addcmul_"sv, "aten::addcdiv_"sv, "aten::where"sv,
    "aten::masked_fill"sv, "aten::masked_fill_"sv, "aten::clamp"sv, "aten::clamp_min"sv, "aten::clamp_max"sv,
    "aten::ne"sv, "aten::eq"sv, "aten::lt"sv, "aten::le"sv, "aten::gt"sv, "aten::ge"sv, "aten::bitwise_not"sv,
    "aten::bitwise_and"sv, "aten::logical_not"sv, "aten::sum"sv, "aten::mean"sv, "aten::amax"sv,
    "aten::logsumexp"sv, "aten::softmax"sv, "aten::_softmax"sv, "aten::_softmax_backward_data"sv,
    "aten::fill_"sv, "aten::zero_"sv, "aten::zeros"sv, "aten::zeros_like"sv, "aten::ones"sv,
    "aten::ones_like"sv, "aten::full"sv, "aten::full_like"sv, "aten::empty"sv, "aten::empty_like"sv,
    "aten::empty_strided"sv, "aten::arange"sv, "aten::scalar_tensor"sv, "aten::copy_"sv, "aten::clone"sv,
    "aten::contiguous"sv, "aten::to"sv, "aten::_to_copy"sv, "aten::cat"sv, "aten::stack"sv, "aten::split"sv,
    "aten::split_with_sizes"sv, "aten::chunk"sv, "aten::unbind"sv, "aten::narrow"sv, "aten::slice"sv,
    "aten::slice_backward"sv, "aten::select"sv, "aten::select_backward"sv, "aten::index"sv,
    "aten::index_select"sv, "aten::index_add_"sv, "aten::gather"sv, "aten::scatter_add_"sv,
    "aten::embedding"sv, "aten::embedding_backward"sv, "aten::embedding_dense_backward"sv, "aten::view"sv,
    "aten::_unsafe_view"sv, "aten::reshape"sv, "aten::as_strided"sv, "aten::expand"sv, "aten::expand_as"sv,
    "aten::view_as"sv, "aten::t"sv, "aten::transpose"sv, "aten::permute"sv, "aten::unsqueeze"sv,
    "aten::squeeze"sv, "aten::flatten"sv, "aten::detach"sv, "aten::alias"sv, "aten::resolve_conj"sv,
    "aten::resolve_neg"sv, "aten::repeat"sv, "aten::repeat_interleave"sv, "aten::triu"sv, "aten::tril"sv,
    "aten::resize_"sv, "aten::item"sv, "aten::_local_scalar_dense"sv, "aten::lift_fresh"sv,
    "torch::autograd::AccumulateGrad"sv,  // gradient accumulation into .grad: a move or an add
};

// tokbench's own autograd functions and nodes, and torch.compile's and thunder's, by a part of
// their node names.
// A part matches inside a longer name: "RmsNormRowsFunction" is AddRmsNormRowsFunction's too, and
// "LayerNormRowsFunction" AddLayerNormRowsFunction's.
constexpr std::array<std::pair<std::string_view, Rule>, 11> kCustomNodes = {{
    {"FusedLinearFunction", {Category::gemm, Reach::context}},
    {"LinearGraphOnly", {Category::gemm, Reach::context}},
    {"ChunkedLinearCrossEntropyFunction", {Category::loss, Reach::context}},
    {"RmsNormRowsFunction", {Category::normalization, Reach::context}},
    {"LayerNormRowsFunction", {Category::normalization, Reach::context}},
    // The MLP's activation with its gating, and rotary embeddings: what eager does for them with
    // ATen's elementwise operators.
    {"GatedActivationFunction", {Category::elementwise, Reach::context}},
    {"RopeRotationFunction", {Category::elementwise, Reach::context}},
    // A checkpointed block's node: its own time is glue; the recomputed forward and the inner
    // backward inside it are classified by their own names.
    {"CheckpointedBlockBackward", {Category::other, Reach::self_only}},
    // torch.compile's whole compiled graph as one autograd node: its own time is glue, its
    // generated kernels and extern GEMMs inside it are classified by their own names (its
    // forward, CompiledFunction, is glue too, so its category would say nothing).
    {"CompiledFunctionBackward", {Category::other, Reach::self_only}},
    // thunder.jit's, likewise: its backward trace's torch operators run inside these nodes.
    {"ThunderFunctionBackward", {Category::other, Reach::self_only}},
    {"ThunderOutputFunctionBackward", {Category::other, Reach::self_only}},
}};

template <typename List>
bool listed(const List& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

template <typename List>
bool prefixed(const List& prefixes, std::string_view name) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return name.starts_with(p); });
}

std::optional<Rule> range_rule(std::string_view name) {
  if (name == ranges::kIteration) return Rule{Category::data_host, Reach::self_only};
  if (name == ranges::kData) return Rule{Category::data_host, Reach::context};
  // Inside the step, the time between operators is host work of the framework (dispatch, the
  // autograd engine's bookkeeping) and, while profiling, the profiler's own: "other".
  if (name == ranges::kForward || name == ranges::kBackward) return Rule{Category::other, Reach::self_only};
  if (name == ranges::kOptimizer) return Rule{Category::optimizer, Reach::context};
  if (name == ranges::kCommBuffers) return Rule{Category::elementwise, Reach::context};
  if (name == ranges::kNorm || name == ranges::kRmsNormRows || name == ranges::kRmsNormRowsBackward ||
      name == ranges::kLayerNormRows || name == ranges::kLayerNormRowsBackward)
    return Rule{Category::normalization, Reach::context};
  if (name == ranges::kAttention) return Rule{Category::attention, Reach::context};
  if (name == ranges::kLoss || name == ranges::kCrossEntropyRows) return Rule{Category::loss, Reach::context};
  if (name == ranges::kLinear) return Rule{Category::gemm, Reach::context};
  return std::nullopt;
}

// The prefixes inductor gives its kernels: C++ on the CPU, Triton's pointwise, reduction and
// persistent-reduction kernels on a GPU. What follows is the fused operators' names joined by
// '_', then the kernel's index.
constexpr std::array kGeneratedKernelPrefixes = {
    "cpp_fused_"sv, "triton_poi_fused_"sv, "triton_red_fused_"sv, "triton_per_fused_"sv, "triton_fused_"sv,
};
// Inductor's template kernels (max-autotune's Triton matrix products): "triton_tem_fused_mm_0",
// "triton_tem_fused_addmm_relu_1"; whatever they fuse into their epilogue is the GEMM's.
constexpr std::string_view kGeneratedGemmPrefix = "triton_tem_fused_"sv;

// The words of a generated kernel's name after its prefix: "_log_softmax_nll_loss_3" ->
// {"log", "softmax", "nll", "loss", "3"}.
std::vector<std::string_view> kernel_words(std::string_view fused) {
  std::vector<std::string_view> words;
  while (!fused.empty()) {
    const std::size_t end = fused.find('_');
    if (end != 0) words.push_back(fused.substr(0, end));
    if (end == std::string_view::npos) break;
    fused.remove_prefix(end + 1);
  }
  return words;
}

}  // namespace

std::optional<Rule> rule_for_generated_kernel(std::string_view name) {
  // Inductor on the CPU names a kernel's RecordFunction after its graph too: "graph_0_cpp_fused_...".
  constexpr std::string_view kGraph = "graph_";
  if (name.starts_with(kGraph)) {
    std::size_t digits = kGraph.size();
    while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
    if (digits > kGraph.size() && digits < name.size() && name[digits] == '_') name.remove_prefix(digits + 1);
  }
  if (name.starts_with(kGeneratedGemmPrefix)) return Rule{Category::gemm, Reach::decisive};
  const auto prefix = std::find_if(kGeneratedKernelPrefixes.begin(), kGeneratedKernelPrefixes.end(),
                                   [&](std::string_view p) { return name.starts_with(p); });
  if (prefix == kGeneratedKernelPrefixes.end()) return std::nullopt;
  const std::vector<std::string_view> words = kernel_words(name.substr(prefix->size()));
  auto has = [&](std::string_view w) { return std::find(words.begin(), words.end(), w) != words.end(); };
  auto has_pair = [&](std::string_view first, std::string_view second) {
    for (std::size_t i = 0; i + 1 < words.size(); ++i)
      if (words[i] == first && words[i + 1] == second) return true;
    return false;
  };
  const bool log_softmax = has_pair("log", "softmax");
  if (log_softmax || has("nll")) return Rule{Category::loss, Reach::decisive};
  if (has("rsqrt") || has("mean") || has("var") || has_pair("layer", "norm") || has_pair("rms", "norm"))
    return Rule{Category::normalization, Reach::decisive};
  // Softmax outside a log-softmax: attention's scores (explicit attention, or a decomposed SDPA);
  // and the layout kernels inductor fuses with an SDPA kernel's own operator (the transposes
  // that feed its backward), which in eager run inside the SDPA operator.
  for (std::size_t i = 0; i < words.size(); ++i)
    if (words[i] == "softmax" && (i == 0 || words[i - 1] != "log")) return Rule{Category::attention, Reach::weak};
  if (has("attention")) return Rule{Category::attention, Reach::weak};
  return Rule{Category::elementwise, Reach::weak};
}

namespace {

// Parts of kernel names, matched in the lower-cased name (category_of_kernel says the order).
// Each list holds names seen in PyTorch's, cuBLAS's, cuDNN's and nvFuser's kernels; whole-name
// parts only, so that an operator's name inside a template argument cannot mislead ("badd" in
// an nvjet GEMM's tile name is not an add).
constexpr std::array kAttentionKernelParts = {
    "flash_fwd"sv, "flash_bwd"sv, "flash::"sv, "fmha"sv, "native_sdpa"sv, "attention"sv,
};
constexpr std::array kLossKernelParts = {"nll_loss"sv, "logsoftmax"sv, "log_softmax"sv, "cross_entropy"sv};
// ("adam_", "_adam", not "adam": a Hadamard transform's kernel is no optimizer.)
constexpr std::array kOptimizerKernelParts = {"multi_tensor_apply"sv, "fusedadam"sv, "adam_"sv, "_adam"sv, "adamw"sv};
constexpr std::array kNormKernelParts = {
    "layer_norm"sv, "layernorm"sv, "rms_norm"sv, "rmsnorm"sv, "group_norm"sv, "batch_norm"sv,
    "gammabetabackward"sv, "rowwisemoments"sv, "computegradinput"sv,
};
constexpr std::array kGemmKernelParts = {"gemm"sv, "gemv"sv, "cutlass"sv, "cublas"sv, "xmma"sv, "splitkreduce"sv};
constexpr std::array kGemmKernelPrefixes = {"nvjet_"sv};
constexpr std::array kElementwiseKernelParts = {
    "elementwise"sv, "reduce_kernel"sv, "at::native::"sv, "memcpy"sv, "memset"sv, "fill"sv, "copy"sv,
    "index"sv, "scatter"sv, "gather"sv, "embedding"sv, "cat_"sv, "cub::"sv, "softmax"sv,
};

template <typename List>
bool contains_any(const List& parts, std::string_view lowered) {
  return std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return lowered.find(p) != std::string_view::npos; });
}

// nvFuser's kernels: "nvfuser_<scheduler>_f<fusion>_c<cache>_r<runtime>_g<group>", demangled
// inside the anonymous namespace of its generated source ("(anonymous namespace)::nvfuser_...").
std::optional<Category> nvfuser_category(std::string_view lowered) {
  constexpr std::string_view kPrefix = "nvfuser_";
  const std::size_t at = lowered.find(kPrefix);
  if (at == std::string_view::npos || (at != 0 && lowered.substr(0, at) != "(anonymous namespace)::"))
    return std::nullopt;
  const std::string_view scheduler = lowered.substr(at + kPrefix.size());
  if (scheduler.starts_with("matmul")) return Category::gemm;
  if (scheduler.find("persistent") != std::string_view::npos) return Category::normalization;
  return Category::elementwise;
}

// Collectives issued through the dispatcher (torch.distributed's ops, PyTorch 2.11:
// "c10d::allreduce_", "c10d::_allgather_base_", "c10d::_reduce_scatter_base_", ...) and the
// communication record PyTorch wraps some of them in. Their own time on the loop's thread is
// the issue and, for a synchronous collective, the whole wait; what runs inside them (the
// chunking of a buffer) is classified by its own rules.
constexpr std::array kCollectivePrefixes = {"c10d::"sv};
constexpr std::array kCollectives = {"record_param_comms"sv};
// A collective running on a communication backend's own threads, recorded there as an
// asynchronous event from its start to its completion ("gloo:all_reduce", "gloo:all_gather").
constexpr std::array kCollectiveInFlightPrefixes = {"gloo:"sv, "nccl:"sv};

}  // namespace

bool is_collective_in_flight(std::string_view name) { return prefixed(kCollectiveInFlightPrefixes, name); }

std::optional<Rule> rule_for_name(std::string_view name) {
  if (auto range = range_rule(name)) return range;
  if (listed(kCollectives, name) || prefixed(kCollectivePrefixes, name))
    return Rule{Category::exposed_comm, Reach::self_only};
  if (listed(kGemm, name)) return Rule{Category::gemm, Reach::decisive};
  if (prefixed(kAttentionPrefixes, name)) return Rule{Category::attention, Reach::decisive};
  if (listed(kNormalization, name)) return Rule{Category::normalization, Reach::decisive};
  if (listed(kLoss, name)) return Rule{Category::loss, Reach::decisive};
  if (listed(kOptimizer, name) || prefixed(kOptimizerPrefixes, name)) return Rule{Category::optimizer, Reach::decisive};
  if (listed(kElementwise, name)) return Rule{Category::elementwise, Reach::weak};
  return rule_for_generated_kernel(name);
}

std::optional<Category> category_of_kernel(std::string_view name) {
  for (const std::string_view lead : {"void "sv, "__global__ "sv})
    if (name.starts_with(lead)) name.remove_prefix(lead.size());
  if (auto generated = rule_for_generated_kernel(name)) return generated->category;
  std::string lowered(name);
  for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lowered.starts_with("nccl")) return Category::exposed_comm;
  if (auto fusion = nvfuser_category(lowered)) return fusion;
  if (contains_any(kAttentionKernelParts, lowered)) return Category::attention;
  if (contains_any(kLossKernelParts, lowered)) return Category::loss;
  if (contains_any(kOptimizerKernelParts, lowered)) return Category::optimizer;
  if (contains_any(kNormKernelParts, lowered)) return Category::normalization;
  if (contains_any(kGemmKernelParts, lowered) || prefixed(kGemmKernelPrefixes, lowered)) return Category::gemm;
  if (contains_any(kElementwiseKernelParts, lowered)) return Category::elementwise;
  return std::nullopt;
}

std::string forward_operator_of(std::string_view node) {
  if (node.starts_with(kEngineWrapper)) node.remove_prefix(kEngineWrapper.size());
  while (!node.empty() && std::isdigit(static_cast<unsigned char>(node.back()))) node.remove_suffix(1);
  constexpr std::string_view kSuffix = "Backward";
  if (!node.ends_with(kSuffix) || node.size() == kSuffix.size()) return {};
  node.remove_suffix(kSuffix.size());
  std::string snake;
  for (const char c : node) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return {};  // a C++ type name, not an ATen node
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (!snake.empty()) snake += '_';
      snake += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      snake += c;
    }
  }
  return snake;
}

std::optional<Rule> rule_for_backward_node(std::string_view node) {
  if (node.starts_with(kEngineWrapper)) node.remove_prefix(kEngineWrapper.size());
  for (const auto& [part, rule] : kCustomNodes)
    if (node.find(part) != std::string_view::npos) return rule;
  if (auto rule = rule_for_name(node)) return Rule{rule->category, Reach::context};  // AccumulateGrad
  const std::string op = forward_operator_of(node);
  if (op.empty()) return std::nullopt;
  // Node names drop the leading underscore of private operators (_unsafe_view, _to_copy).
  for (const std::string& candidate : {"aten::" + op, "aten::_" + op})
    if (auto rule = rule_for_name(candidate)) return Rule{rule->category, Reach::context};
  return std::nullopt;
}

}  // namespace tokbench::account
