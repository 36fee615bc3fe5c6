// The names of the GPT's modules and parameters (litgpt's module tree, so a state dict's names are
// litgpt's: "transformer.h.0.attn.qkv.weight"): model/gpt.cpp registers each under these. They are
// not the config's fields (litgpt_keys.hpp), though norm_1, bias, ... name both. Constants only.
#pragma once

namespace tokbench::model::module_key {

// GPT
inline constexpr char transformer[] = "transformer";
inline constexpr char wte[] = "wte";
inline constexpr char h[] = "h";
inline constexpr char ln_f[] = "ln_f";
inline constexpr char lm_head[] = "lm_head";
// Block
inline constexpr char norm_1[] = "norm_1";
inline constexpr char attn[] = "attn";
inline constexpr char post_attention_norm[] = "post_attention_norm";
inline constexpr char norm_2[] = "norm_2";
inline constexpr char mlp[] = "mlp";
inline constexpr char post_mlp_norm[] = "post_mlp_norm";
// CausalSelfAttention
inline constexpr char qkv[] = "qkv";
inline constexpr char proj[] = "proj";
inline constexpr char norm_q[] = "norm_q";
inline constexpr char norm_k[] = "norm_k";
// The MLPs (GptNeoxMLP: fc, proj; LLaMAMLP and GemmaMLP: fc_1, fc_2, proj) and LLaMAMoE
inline constexpr char fc[] = "fc";
inline constexpr char fc_1[] = "fc_1";
inline constexpr char fc_2[] = "fc_2";
inline constexpr char gate[] = "gate";
inline constexpr char experts[] = "experts";
// Linear, Embedding, the norms
inline constexpr char weight[] = "weight";
inline constexpr char bias[] = "bias";

}  // namespace tokbench::model::module_key
