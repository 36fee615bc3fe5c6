#!/usr/bin/env python3
"""Generate data/litgpt_configs.json, tokbench's model catalog, from litgpt itself.

Input: the installed litgpt package, which must be the pinned version (LITGPT_VERSION below,
also pinned in scripts/reference/requirements.txt). For every entry of `litgpt.config.configs`
(in litgpt's order) the script builds litgpt's `Config` (so `__post_init__` derives head_size,
padded_vocab_size, n_query_groups, intermediate_size and the per-layer lists) and litgpt's `GPT`
on the meta device, whose parameter count (`litgpt.utils.num_parameters`, untied) becomes
`param_count`. Nothing is read from outside the repository.

Each entry keeps only the fields that differ from litgpt's Config defaults, plus the fields
finalize() would derive (head_size, n_query_groups, intermediate_size, padded_vocab_size), so
the C++ side never depends on re-deriving them from a possibly different rule. Per-layer
lists that finalize() derives itself ([1]*n_layer sliding windows) are dropped so that an
n_layer override re-derives them. The rules behind the fields: docs/litgpt-architecture.md.

    .venv/bin/pip install --no-deps -r scripts/reference/requirements.txt
    .venv/bin/python scripts/reference/make_catalog.py [OUTPUT_JSON]

Takes about a minute on two cores (the largest MoE configs are built on meta, module by module).
"""
import dataclasses
import json
import pathlib
import sys

LITGPT_VERSION = "0.5.13"
SOURCE_URL = f"https://github.com/Lightning-AI/litgpt/blob/v{LITGPT_VERSION}/litgpt/config.py"

# litgpt Config defaults (docs/litgpt-architecture.md, "Config fields and defaults"); fields
# absent here are always kept. Checked against the installed litgpt's own defaults before
# anything is written.
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
# Config fields that are not model shape: the name is kept as "name", hf_config as "hf".
NOT_SHAPE = ("name", "hf_config")


def load_litgpt():
    """litgpt's Config, configs, GPT and num_parameters, refusing any other litgpt version."""
    try:
        from importlib.metadata import version
        found = version("litgpt")
    except Exception as error:  # PackageNotFoundError, or no metadata at all
        sys.exit(f"make_catalog.py: litgpt is not installed ({error}); "
                 "install scripts/reference/requirements.txt first")
    if found != LITGPT_VERSION:
        sys.exit(f"make_catalog.py: litgpt {found} is installed; the catalog is made from "
                 f"litgpt {LITGPT_VERSION} (scripts/reference/requirements.txt)")
    import torch
    from litgpt.config import Config, configs
    from litgpt.model import GPT
    from litgpt.utils import num_parameters
    return torch, Config, configs, GPT, num_parameters


def check_defaults(Config):
    """DEFAULTS must be exactly litgpt's defaults for the fields it names."""
    fields = {f.name: f for f in dataclasses.fields(Config)}
    missing = sorted(set(DEFAULTS) - set(fields))
    if missing:
        sys.exit(f"make_catalog.py: litgpt's Config has no field(s) {missing}")
    wrong = [f"{name}: litgpt {fields[name].default!r}, here {value!r}"
             for name, value in DEFAULTS.items()
             if fields[name].default != value or type(fields[name].default) is not type(value)]
    if wrong:
        sys.exit("make_catalog.py: DEFAULTS differ from litgpt's Config: " + "; ".join(wrong))


def resolve(spec, Config, GPT, num_parameters, torch):
    """One litgpt config as litgpt resolves it: every field after __post_init__, in declaration
    order, then its Hugging Face id and litgpt's parameter count of the (untied) model."""
    config = Config(**dict(spec))  # a shallow copy, as Config.from_name makes
    entry = {"name": config.name}
    for field in dataclasses.fields(Config):
        if field.name not in NOT_SHAPE:
            entry[field.name] = getattr(config, field.name)
    with torch.device("meta"):
        model = GPT(config)
    entry["param_count"] = num_parameters(model)
    hf = config.hf_config
    entry["hf"] = f"{hf['org']}/{hf['name']}" if hf else ""
    return entry


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
    dst = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else here / "data/litgpt_configs.json"
    torch, Config, litgpt_configs, GPT, num_parameters = load_litgpt()
    check_defaults(Config)
    configs = [convert(resolve(spec, Config, GPT, num_parameters, torch)) for spec in litgpt_configs]
    names = [c["name"] for c in configs]
    if len(set(names)) != len(names):
        sys.exit("duplicate names in litgpt's catalog")
    doc = {"source": SOURCE_URL, "generator": "scripts/reference/make_catalog.py",
           "note": "non-default litgpt Config fields per model; derived sizes kept explicit; "
                   "param_count is litgpt's num_parameters (untied)",
           "configs": configs}
    # One entry per line keeps diffs readable and the file small.
    lines = ",\n".join("  " + json.dumps(c, separators=(", ", ": ")) for c in configs)
    header = json.dumps({k: v for k, v in doc.items() if k != "configs"})[:-1]
    dst.write_text(header + ', "configs": [\n' + lines + "\n]}\n")
    json.loads(dst.read_text())  # must round-trip
    print(f"wrote {len(configs)} configs from litgpt {LITGPT_VERSION} to {dst}")


if __name__ == "__main__":
    main()
