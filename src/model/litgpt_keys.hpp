// The fields of a litgpt model config (litgpt/config.py's Config, in its declaration order): the
// document a --model-config file, each entry of the compiled-in catalog and `tokbench info`'s
// `config` hold. model/config_json.cpp's field table reads and writes them by these; config.cpp's
// checks and `tokbench models` name them by these too. A header of constants only.
#pragma once

namespace tokbench::model::litgpt_key {

inline constexpr char name[] = "name";
inline constexpr char hf_config[] = "hf_config";
inline constexpr char hf[] = "hf";
inline constexpr char block_size[] = "block_size";
inline constexpr char n_layer[] = "n_layer";
inline constexpr char n_embd[] = "n_embd";
inline constexpr char vocab_size[] = "vocab_size";
inline constexpr char padding_multiple[] = "padding_multiple";
inline constexpr char padded_vocab_size[] = "padded_vocab_size";
inline constexpr char norm_class_name[] = "norm_class_name";
inline constexpr char norm_eps[] = "norm_eps";
inline constexpr char norm_qk[] = "norm_qk";
inline constexpr char norm_qk_type[] = "norm_qk_type";
inline constexpr char post_attention_norm[] = "post_attention_norm";
inline constexpr char post_mlp_norm[] = "post_mlp_norm";
inline constexpr char parallel_residual[] = "parallel_residual";
inline constexpr char shared_attention_norm[] = "shared_attention_norm";
inline constexpr char n_head[] = "n_head";
inline constexpr char head_size[] = "head_size";
inline constexpr char n_query_groups[] = "n_query_groups";
inline constexpr char attn_bias[] = "attn_bias";
inline constexpr char attention_scores_scalar[] = "attention_scores_scalar";
inline constexpr char sliding_window_size[] = "sliding_window_size";
inline constexpr char sliding_window_indices[] = "sliding_window_indices";
inline constexpr char attention_logit_softcapping[] = "attention_logit_softcapping";
inline constexpr char rope_base[] = "rope_base";
inline constexpr char rotary_percentage[] = "rotary_percentage";
inline constexpr char rope_condense_ratio[] = "rope_condense_ratio";
inline constexpr char rope_adjustments[] = "rope_adjustments";
inline constexpr char rope_interleave[] = "rope_interleave";
inline constexpr char intermediate_size[] = "intermediate_size";
inline constexpr char moe_intermediate_size[] = "moe_intermediate_size";
inline constexpr char bias[] = "bias";
inline constexpr char mlp_class_name[] = "mlp_class_name";
inline constexpr char gelu_approximate[] = "gelu_approximate";
inline constexpr char n_expert[] = "n_expert";
inline constexpr char n_shared_expert[] = "n_shared_expert";
inline constexpr char n_expert_groups[] = "n_expert_groups";
inline constexpr char n_topk_groups[] = "n_topk_groups";
inline constexpr char n_topk_scores_per_group[] = "n_topk_scores_per_group";
inline constexpr char n_expert_per_token[] = "n_expert_per_token";
inline constexpr char first_k_dense_replace[] = "first_k_dense_replace";
inline constexpr char routed_scaling_factor[] = "routed_scaling_factor";
inline constexpr char norm_topk_prob[] = "norm_topk_prob";
inline constexpr char scale_embeddings[] = "scale_embeddings";
inline constexpr char lm_head_bias[] = "lm_head_bias";
inline constexpr char final_logit_softcapping[] = "final_logit_softcapping";
inline constexpr char norm_1[] = "norm_1";
inline constexpr char norm_2[] = "norm_2";
inline constexpr char latent_attention[] = "latent_attention";
inline constexpr char rope_local_base_freq[] = "rope_local_base_freq";
inline constexpr char rope_indices[] = "rope_indices";
// Written only: derived by finalize().
inline constexpr char rope_n_elem[] = "rope_n_elem";
// hf_config's keys: {org, name}.
inline constexpr char org[] = "org";
// rope_adjustments' keys (Llama-3.1 style, and YaRN's, which tokbench refuses).
inline constexpr char factor[] = "factor";
inline constexpr char low_freq_factor[] = "low_freq_factor";
inline constexpr char high_freq_factor[] = "high_freq_factor";
inline constexpr char original_max_seq_len[] = "original_max_seq_len";
inline constexpr char beta_fast[] = "beta_fast";
inline constexpr char beta_slow[] = "beta_slow";
inline constexpr char mscale[] = "mscale";
inline constexpr char mscale_all_dim[] = "mscale_all_dim";

}  // namespace tokbench::model::litgpt_key
