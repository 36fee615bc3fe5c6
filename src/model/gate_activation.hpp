// The activation of a gated MLP (litgpt's LLaMAMLP: silu; GemmaMLP: gelu, its approximation
// per Config::gelu_approximate), named apart from the model so that a kernel's header can say
// which it computes without LibTorch's headers.
#pragma once

namespace tokbench::model {

enum class GateActivation { silu, gelu, gelu_tanh };

}  // namespace tokbench::model
