// A litgpt model configuration: the fields keep litgpt's names verbatim (litgpt/config.py) so
// a reader can move between the two. `finalize()` applies litgpt's __post_init__ derivations
// once (head_size, padded_vocab_size, n_query_groups, intermediate_size, rope_n_elem, the
// per-layer index lists); every other part of tokbench reads only finalized configs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tokbench::model {

// rope_adjustments: Llama-3.1 style ({factor, low_freq_factor, high_freq_factor,
// original_max_seq_len}) or linear ({factor} alone). YaRN is not used by any catalog entry
// and is rejected when a custom config asks for it.
struct RopeAdjustments {
  double factor = 1.0;
  std::optional<double> low_freq_factor;
  std::optional<double> high_freq_factor;
  std::optional<int64_t> original_max_seq_len;
  bool is_llama3() const { return low_freq_factor.has_value(); }
};

struct Config {
  std::string name;
  std::string hf;  // Hugging Face id "org/name"; empty for custom configs

  int64_t block_size = 4096;
  int64_t n_layer = 16;
  int64_t n_embd = 4096;
  int64_t vocab_size = 50254;
  int64_t padding_multiple = 512;
  std::optional<int64_t> padded_vocab_size;  // set by finalize()
  std::string norm_class_name = "LayerNorm";  // "LayerNorm" | "RMSNorm"
  double norm_eps = 1e-5;
  bool norm_qk = false;
  std::string norm_qk_type = "default";  // "default" | "olmo2"
  bool post_attention_norm = false;
  bool post_mlp_norm = false;
  bool parallel_residual = true;
  bool shared_attention_norm = false;
  int64_t n_head = 32;
  std::optional<int64_t> head_size;       // set by finalize()
  std::optional<int64_t> n_query_groups;  // set by finalize()
  bool attn_bias = false;
  std::optional<double> attention_scores_scalar;
  std::optional<int64_t> sliding_window_size;
  std::vector<int> sliding_window_indices;  // per layer 0/1; finalize() fills or truncates
  std::optional<double> attention_logit_softcapping;
  double rope_base = 10000;
  double rotary_percentage = 0.25;
  int64_t rope_condense_ratio = 1;
  std::optional<RopeAdjustments> rope_adjustments;
  std::optional<int64_t> intermediate_size;  // set by finalize()
  std::optional<int64_t> moe_intermediate_size;
  bool bias = true;
  std::string mlp_class_name = "GptNeoxMLP";  // GptNeoxMLP | LLaMAMLP | GemmaMLP | LLaMAMoE
  std::string gelu_approximate = "none";      // "none" | "tanh"
  int64_t n_expert = 0;
  int64_t n_expert_per_token = 0;
  bool scale_embeddings = false;
  bool lm_head_bias = false;
  std::optional<double> final_logit_softcapping;
  bool norm_1 = true;
  bool norm_2 = true;
  std::optional<double> rope_local_base_freq;
  std::vector<int> rope_indices;  // per layer 0 (global base) / 1 (local base)

  // Derived by finalize().
  int64_t rope_n_elem = 0;

  // litgpt's __post_init__; throws std::invalid_argument naming the field on bad values.
  // Idempotent: finalizing an already finalized config changes nothing.
  void finalize();

  // Behaviours litgpt keys on the name rather than on a field (docs/litgpt-architecture.md,
  // "Rules keyed on the name").
  bool rmsnorm_unit_offset() const { return name.find("Gemma") != std::string::npos; }
  bool layernorm_without_params() const { return name.find("OLMo") != std::string::npos; }

  // Accessors for finalized fields (valid after finalize()).
  int64_t hs() const { return *head_size; }
  int64_t groups() const { return *n_query_groups; }
  int64_t vocab() const { return *padded_vocab_size; }
  int64_t mlp_hidden() const { return *intermediate_size; }
  int64_t expert_hidden() const { return moe_intermediate_size.value_or(*intermediate_size); }
};

}  // namespace tokbench::model
