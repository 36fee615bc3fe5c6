// Which category an operator or a named range belongs to, by its name alone
// (docs/time-account.md, "The classification rule"). How far a rule reaches decides what
// happens to the events inside: a decisive operator (a GEMM, an SDPA kernel, a norm kernel,
// the loss kernels, the fused optimizer) keeps its category wherever it runs; a context (a
// named range, an autograd node) hands its category to what runs inside it; a weak rule (an
// elementwise operator) applies only where no context encloses it. Torch-free: the profiled
// pass hands names over as strings.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "account/category.hpp"

namespace tokbench::account {

enum class Reach {
  self_only,  // the event's own time; its children are classified as if it were not there
  weak,       // its category unless an enclosing context says otherwise
  context,    // its category, and the category of every non-decisive event inside it
  decisive,   // its category wherever it runs; a context for what runs inside it
};

// The autograd engine's range around each node it evaluates: "<this>MulBackward0".
inline constexpr std::string_view kEngineWrapper = "autograd::engine::evaluate_function: ";

struct Rule {
  Category category = Category::other;
  Reach reach = Reach::weak;
};

// The rule for an operator ("aten::addmm", "mkldnn::_linear_pointwise"), a collective issued
// through the dispatcher ("c10d::allreduce_": exposed_comm, self_only), a named range
// (range_names.hpp) or a kernel inductor generated (rule_for_generated_kernel); nullopt when no
// rule names it (it then takes its parent's category).
std::optional<Rule> rule_for_name(std::string_view name);

// A collective in flight on a communication backend's threads, recorded there from its start
// to its completion as an asynchronous event: "gloo:all_reduce", "gloo:all_gather" (PyTorch's
// ProcessGroupGloo), "nccl:..." likewise. Not a rule: such events are not the loop's work; they
// say when the loop's gaps are waits (profiled_pass.hpp).
bool is_collective_in_flight(std::string_view name);

// The rule for a kernel torch.compile's inductor generated, by the operators its name spells
// ("cpp_fused__log_softmax_nll_loss_forward_4", "triton_per_fused_add_mean_mul_pow_rsqrt_2"):
//   log_softmax or nll           -> loss, decisive
//   rsqrt, mean, var, layer_norm, rms_norm (forward or backward) -> normalization, decisive
//   softmax (not log_softmax), or an SDPA operator's name (the layout work fused with it)
//                                -> attention, weak (an enclosing context's, as ATen's softmax)
//   anything else                -> elementwise, weak
// in that order (a kernel that fuses a norm into the loss is loss), reading whole words (the
// name split at '_'). Its matrix products are never inside it: inductor calls ATen's (extern
// aten::mm/addmm/bmm, the SDPA kernels) for them. The CPU's names may start with their graph's
// ("graph_0_cpp_fused_..."). nullopt when the name is not a generated kernel's (no cpp_fused_ /
// triton_*_fused_ prefix).
std::optional<Rule> rule_for_generated_kernel(std::string_view name);

// The category of a device kernel by its own name, for the device timeline when the host event
// that launched it says nothing (a compiled graph's range, a fusion's call, framework glue, or
// no known launch): inductor's generated kernels as rule_for_generated_kernel reads them
// (triton_tem_fused_* templates are GEMMs); attention kernels (flash, cuDNN's SDPA, PyTorch's
// memory-efficient fmha_cutlass*); the loss's (nll_loss, log-softmax epilogues, cross_entropy);
// the optimizer's (multi_tensor_apply_kernel, which runs the fused and foreach optimizers, and
// Adam's own kernels); norms (layer_norm, rms_norm, GammaBetaBackward, ...); GEMMs (cuBLAS's nvjet_*,
// *gemm*/*gemv*, cutlass, xmma, cublasLt's split-K reduction); nvFuser's fusions by the
// scheduler their name carries (matmul: gemm; inner/outer persistent: normalization, the
// schedulers made for norms; pointwise, reduction, transpose: elementwise); NCCL's:
// exposed_comm; and ATen's elementwise, reduction, copy, fill, indexing and embedding kernels,
// and the device's copies and fills: elementwise. Checked in that order, on the name with any
// leading "void " (so "fmha_cutlassF" is attention, not a GEMM). nullopt when the name says
// none of these.
std::optional<Category> category_of_kernel(std::string_view kernel_name);

// The rule for an autograd node by its own name when its forward operator cannot be found:
// tokbench's custom functions ("torch::autograd::CppNode<...FusedLinearFunction>") by a table,
// ATen's nodes ("AddmmBackward0") by the forward operator the name spells ("aten::addmm").
// The engine's wrapper ("autograd::engine::evaluate_function: MulBackward0") is read as the
// node it wraps. nullopt when neither names one.
std::optional<Rule> rule_for_backward_node(std::string_view node_name);

// "MulBackward0" -> "mul", "NativeLayerNormBackward0" -> "native_layer_norm"; "" when the name
// is not an ATen node's (no "Backward" suffix).
std::string forward_operator_of(std::string_view node_name);

}  // namespace tokbench::account
