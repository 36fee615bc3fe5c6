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

// The rule for an operator ("aten::addmm", "mkldnn::_linear_pointwise") or a named range
// (range_names.hpp); nullopt when no rule names it (it then takes its parent's category).
std::optional<Rule> rule_for_name(std::string_view name);

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
