// The keys of `tokbench info --json`'s document, which run/info_report.cpp writes and users and
// tests read. Its n_layer, checkpoint_activations, model_flops and hardware_flops are the run
// record's by meaning (one micro-batch's FLOPs on one device) and are written by results::key's
// constants; these are the document's own. A header of constants only.
#pragma once

namespace tokbench::run::info_key {

inline constexpr char model[] = "model";  // the model's name
inline constexpr char hf[] = "hf";        // its Hugging Face repository
inline constexpr char seq_len[] = "seq_len";
inline constexpr char micro_batch_size[] = "micro_batch_size";
inline constexpr char params[] = "params";
inline constexpr char params_embedding[] = "params_embedding";
inline constexpr char params_lm_head[] = "params_lm_head";
inline constexpr char params_final_norm[] = "params_final_norm";
inline constexpr char params_per_block[] = "params_per_block";
inline constexpr char flops_default_convention[] = "flops_default_convention";
inline constexpr char flops[] = "flops";  // by FLOP convention
inline constexpr char flops_forward[] = "flops_forward";
inline constexpr char flops_backward[] = "flops_backward";
inline constexpr char flops_total[] = "flops_total";
inline constexpr char flops_recompute[] = "flops_recompute";
inline constexpr char memory_bytes[] = "memory_bytes";  // by precision
inline constexpr char weights[] = "weights";
inline constexpr char gradients[] = "gradients";
inline constexpr char optimizer[] = "optimizer";
inline constexpr char activations[] = "activations";
inline constexpr char total[] = "total";
inline constexpr char config[] = "config";  // the model's litgpt config (model/config_json.hpp)

}  // namespace tokbench::run::info_key
