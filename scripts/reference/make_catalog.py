#!/usr/bin/env python3
"""Generate data/litgpt_configs.json, tokbench's model catalog, from the fully resolved
litgpt v0.5.13 reference (shared/reference/litgpt_configs.json).

Each entry keeps only the fields that differ from litgpt's Config defaults, plus the fields
finalize() would derive (head_size, n_query_groups, intermediate_size, padded_vocab_size), so
the C++ side never depends on re-deriving them from a possibly different rule. Per-layer
lists that finalize() derives itself ([1]*n_layer sliding windows) are dropped so that an
n_layer override re-derives them. Stdlib only:

    python3 scripts/reference/make_catalog.py [REFERENCE_JSON] [OUTPUT_JSON]
"""
import json
import pathlib
import sys

SOURCE_URL = "https://github.com/Lightning-AI/litgpt/blob/v0.5.13/litgpt/config.py"

# litgpt Config defaults (reference/litgpt.md §1.1); fields absent here are always kept.
DEFAULTS = {
    "block_size": 4096, "n_layer": 16, "n_embd": 4096, "vocab_size": 50254,
    "padding_multiple": 512, "norm_class_name": "LayerNorm", "norm_eps": 1e-5,
    "norm_qk": False, "norm_qk_type": "default", "post_attention_norm": False,
    "post_mlp_norm": False, "parallel_residual": True, "shared_attention_norm": False,
    "n_head": 32, "attn_bias": False, "attention_scores_scalar": None,
    "sliding_window_size": None, "sliding_window_indices": None,
    "attention_logit_softcapping": None, "rope_base": 10000, "rotary_percentage": 0.25,
    "rope_condense_ratio": 1, "rope_adjustments": None, "rope_interleave": False,
    "moe_intermediate_size": None, "bias": True, "mlp_class_name": "GptNeoxMLP",
    "gelu_approximate": "none", "n_expert": 0, "n_shared_expert": None,
    "n_expert_groups": None, "n_topk_groups": None, "n_topk_scores_per_group": None,
    "n_expert_per_token": 0, "first_k_dense_replace": None, "routed_scaling_factor": 1.0,
    "norm_topk_prob": False, "scale_embeddings": False, "lm_head_bias": False,
    "final_logit_softcapping": None, "norm_1": True, "norm_2": True,
    "latent_attention": None, "rope_local_base_freq": None, "rope_indices": None,
}
# Fields no catalog entry may set away from the default: tokbench does not implement them.
UNSUPPORTED = ["rope_interleave", "n_shared_expert", "n_expert_groups", "n_topk_groups",
               "n_topk_scores_per_group", "first_k_dense_replace", "routed_scaling_factor",
               "norm_topk_prob", "latent_attention"]


def convert(entry):
    for field in UNSUPPORTED:
        if entry[field] != DEFAULTS[field]:
            sys.exit(f"{entry['name']}: unsupported field {field}={entry[field]!r}")
    out = {"name": entry["name"], "hf": entry["hf"], "source": SOURCE_URL,
           "param_count": entry["param_count"]}
    for key, value in entry.items():
        if key in ("name", "hf", "param_count"):
            continue
        if key in DEFAULTS and value == DEFAULTS[key] and type(value) is type(DEFAULTS[key]):
            continue
        if key in DEFAULTS and value == DEFAULTS[key] and value is not None:
            continue  # 10000 vs 10000.0 and the like
        if (key == "sliding_window_indices" and value is not None and all(v == 1 for v in value)
                and len(value) == entry["n_layer"]):
            continue  # finalize() derives [1]*n_layer
        out[key] = value
    return out


def main():
    here = pathlib.Path(__file__).resolve().parents[2]
    src = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else here.parent / "shared/reference/litgpt_configs.json"
    dst = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else here / "data/litgpt_configs.json"
    reference = json.loads(src.read_text())
    configs = [convert(e) for e in reference["configs"]]
    names = [c["name"] for c in configs]
    if len(set(names)) != len(names):
        sys.exit("duplicate names in the reference catalog")
    doc = {"source": SOURCE_URL, "generator": "scripts/reference/make_catalog.py",
           "note": "non-default litgpt Config fields per model; derived sizes kept explicit; "
                   "param_count is litgpt's num_parameters (untied)",
           "configs": configs}
    # One entry per line keeps diffs readable and the file small.
    lines = ",\n".join("  " + json.dumps(c, separators=(", ", ": ")) for c in configs)
    header = json.dumps({k: v for k, v in doc.items() if k != "configs"})[:-1]
    dst.write_text(header + ', "configs": [\n' + lines + "\n]}\n")
    json.loads(dst.read_text())  # must round-trip
    print(f"wrote {len(configs)} configs to {dst}")


if __name__ == "__main__":
    main()
