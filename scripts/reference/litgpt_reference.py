#!/usr/bin/env python3
"""Golden figures for tokbench's GPT module, produced by running the real litgpt (0.5.13).

Two outputs, both committed under tests/fixtures/model/:
  flops_reference.json      FlopCounterMode FLOPs (forward; forward+loss+backward; the same with every block
                            under torch.utils.checkpoint) of litgpt's GPT for
                            catalog configs at small n_layer / T / B, measured exactly as thunder's
                            benchmark_litgpt.py measures them (meta device; MoE on the CPU with real
                            values and the math SDPA backend forced, because routing needs values).
  equivalence/<family>.{json,bin}
                            tiny 2-layer versions of one config per family with fixed random weights:
                            config (litgpt fields), weights, an input batch, logits, loss and every
                            parameter's gradient, as a raw little-endian blob plus a JSON index.

Run: .venv/bin/python scripts/reference/litgpt_reference.py [--flops] [--equivalence]
(no flag = both). Needs torch, litgpt==0.5.13 and lightning (scripts/reference/requirements.txt).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.checkpoint import checkpoint
from torch.utils.flop_counter import FlopCounterMode

import litgpt
from litgpt.config import Config
from litgpt.model import GPT

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "model"

# ---------------------------------------------------------------------------------------------
# FLOPs
# ---------------------------------------------------------------------------------------------

# Configs chosen so that, together, they exercise every feature of the catalog: GptNeox/LLaMA/
# Gemma/MoE MLPs, LayerNorm/RMSNorm (Gemma offset, OLMo parameter-free), parallel and shared-norm
# residuals, MHA/GQA/MQA, explicit head_size != C/n_head, partial rotary, sliding windows, soft
# capping, post norms, q/k norms (default and olmo2), attn_bias, lm_head bias, scaled embeddings.
FLOPS_CONFIGS = [
    "pythia-14m", "pythia-160m", "pythia-1b", "pythia-2.8b",
    "phi-1_5", "phi-2", "Phi-3-mini-4k-instruct", "phi-4",
    "falcon-7b", "falcon-40b", "Falcon3-7B-Base",
    "Llama-2-7b-hf", "Llama-2-70b-hf", "Llama-3-8B", "Llama-3.1-8B", "Llama-3.1-405B",
    "Llama-3.2-1B", "Llama-3.2-3B", "CodeLlama-7b-hf", "open_llama_3b", "tiny-llama-1.1b",
    "micro-llama-300M",
    "Mistral-7B-v0.1", "Mistral-Large-Instruct-2411",
    "Mixtral-8x7B-v0.1", "Qwen3-30B-A3B",
    "Gemma-2b", "Gemma-7b", "Gemma-2-2b", "Gemma-2-9b", "Gemma-3-1b-it", "Gemma-3-4b-it",
    "Qwen2.5-0.5B", "Qwen2.5-7B", "Qwen3-0.6B", "Qwen3-8B",
    "OLMo-1B-hf", "OLMo-2-1124-7B",
    "stablelm-base-alpha-3b", "stablelm-3b-4e1t", "stablecode-completion-alpha-3b",
    "SmolLM2-135M", "salamandra-2b",
]
# (n_layer, seq_len, micro_batch)
FLOPS_SHAPES = [(1, 16, 1), (2, 64, 2)]


def measure(model: torch.nn.Module, x: torch.Tensor, backward: bool) -> int:
    """Lightning's measure_flops, inlined: FlopCounterMode around forward (+ loss + backward)."""
    counter = FlopCounterMode(display=False)
    with counter:
        y = model(x)
        if backward:
            # thunder benchmark_litgpt.calculate_model_flops: targets are the inputs themselves.
            F.cross_entropy(y.reshape(-1, y.size(-1)), x.reshape(-1), ignore_index=-1).backward()
    return counter.get_total_flops()


class CheckpointedBlock(torch.nn.Module):
    """A litgpt Block under torch.utils.checkpoint, as the reference's --checkpoint_activations
    wraps each block (checkpoint_wrapper, CheckpointImpl.NO_REENTRANT): non-reentrant, so the
    recomputation stops after the last value backward reads."""

    def __init__(self, block: torch.nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, *args, **kwargs):
        return checkpoint(self.block, *args, use_reentrant=False, preserve_rng_state=False, **kwargs)


def checkpoint_blocks(model: GPT) -> None:
    for i, block in enumerate(model.transformer.h):
        model.transformer.h[i] = CheckpointedBlock(block)


def moe_model_on_cpu(config: Config) -> GPT:
    """MoE routing is data dependent: build on meta, materialise on the CPU in bf16 (halves the
    memory of a one-layer Mixtral; FLOP counts do not depend on dtype) and fill with values."""
    with torch.device("meta"):
        model = GPT(config)
    model = model.to_empty(device="cpu").to(torch.bfloat16)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.02, generator=gen)
        cos, sin = model.rope_cache(device=torch.device("cpu"))
        model.cos, model.sin = cos.to(torch.bfloat16), sin.to(torch.bfloat16)
    return model


def flops_reference() -> None:
    rows = []
    for name in FLOPS_CONFIGS:
        for n_layer, seq_len, micro_batch in FLOPS_SHAPES:
            # Overrides before __post_init__, as tokbench's with_overrides does (block_size = T).
            config = Config.from_name(name, n_layer=n_layer, block_size=seq_len)
            moe = config.mlp_class_name == "LLaMAMoE"
            if moe:
                model = moe_model_on_cpu(config)
                x = torch.randint(0, 1, (micro_batch, seq_len))
                with sdpa_kernel(SDPBackend.MATH):
                    fwd = measure(model, x, backward=False)
                    total = measure(model, x, backward=True)
                    checkpoint_blocks(model)
                    checkpointed = measure(model, x, backward=True)
                del model
            else:
                with torch.device("meta"):
                    model = GPT(config)
                    x = torch.randint(0, 1, (micro_batch, seq_len))
                fwd = measure(model, x, backward=False)
                total = measure(model, x, backward=True)
                checkpoint_blocks(model)
                checkpointed = measure(model, x, backward=True)
            # flops_total_checkpointed: forward + backward with every block under
            # torch.utils.checkpoint, the recomputed forward included (hardware FLOPs).
            rows.append(dict(name=name, n_layer=n_layer, seq_len=seq_len, micro_batch=micro_batch,
                             device="cpu-bf16-math-sdpa" if moe else "meta",
                             flops_forward=int(fwd), flops_total=int(total),
                             flops_total_checkpointed=int(checkpointed)))
            print(f"{name:32s} L={n_layer} T={seq_len:3d} B={micro_batch} fwd={fwd:.6e} total={total:.6e}",
                  flush=True)
    out = FIXTURES / "flops_reference.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = dict(generator="scripts/reference/litgpt_reference.py --flops",
               litgpt=litgpt.__version__ if hasattr(litgpt, "__version__") else "0.5.13",
               torch=torch.__version__, convention="matmul (FlopCounterMode)", rows=rows)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {out} ({len(rows)} rows)")


# ---------------------------------------------------------------------------------------------
# Equivalence fixtures
# ---------------------------------------------------------------------------------------------

# Small versions of one config per family. Widths are tiny so that all fixtures stay ~2 MB;
# each keeps its family's features (norm kind, residual style, GQA/MQA ratio, head_size != C/nh,
# partial rotary, ...). Values that only bite at scale are shrunk so that they bite here too:
# sliding windows shorter than T, soft caps near the logit range, Llama-3.1 rope adjustments with
# an original length around T (so the frequency smoothing changes the angles at T = 16).
COMMON = dict(n_layer=2, block_size=32, padded_vocab_size=64, vocab_size=60)
FAMILIES = {
    "pythia": dict(base="pythia-14m", n_embd=32, n_head=4, intermediate_size=64),
    "phi-2": dict(base="phi-2", n_embd=40, n_head=4, intermediate_size=64),
    "llama-2": dict(base="Llama-2-7b-hf", n_embd=32, n_head=4, intermediate_size=64),
    "llama-3.1": dict(base="Llama-3.1-8B", n_embd=32, n_head=4, n_query_groups=2, head_size=16,
                      intermediate_size=64, rope_base=10000,
                      rope_adjustments=dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                            original_max_seq_len=16)),
    "mistral": dict(base="Mistral-7B-v0.1", n_embd=32, n_head=4, n_query_groups=2,
                    intermediate_size=64, sliding_window_size=5),
    "gemma-2": dict(base="Gemma-2-2b", n_embd=32, n_head=4, n_query_groups=2, head_size=16,
                    attention_scores_scalar=12, intermediate_size=64, sliding_window_size=5,
                    sliding_window_indices=[1, 0], attention_logit_softcapping=2.0, final_logit_softcapping=3.0),
    "gemma-3": dict(base="Gemma-3-4b-it", n_embd=32, n_head=4, n_query_groups=1, head_size=16,
                    attention_scores_scalar=12, intermediate_size=64, sliding_window_size=5,
                    sliding_window_indices=[1, 0], rope_indices=[1, 0], rope_local_base_freq=100,
                    rope_adjustments=dict(factor=8.0)),
    "qwen3": dict(base="Qwen3-8B", n_embd=32, n_head=4, n_query_groups=2, head_size=16,
                  intermediate_size=64),
    "olmo-2": dict(base="OLMo-2-1124-7B", n_embd=32, n_head=4, intermediate_size=64),
    "olmo": dict(base="OLMo-1B-hf", n_embd=32, n_head=4, intermediate_size=64),
    "falcon": dict(base="falcon-7b", n_embd=32, n_head=4, n_query_groups=1, intermediate_size=64),
    "qwen2.5": dict(base="Qwen2.5-0.5B", n_embd=32, n_head=4, n_query_groups=2, intermediate_size=64),
    "mixtral": dict(base="Mixtral-8x7B-v0.1", n_embd=32, n_head=4, n_query_groups=2,
                    intermediate_size=32, n_expert=4, n_expert_per_token=2),
    "qwen3-moe": dict(base="Qwen3-30B-A3B", n_embd=32, n_head=4, n_query_groups=2, head_size=16,
                      intermediate_size=64, moe_intermediate_size=16, n_expert=8,
                      n_expert_per_token=3),
}
BATCH, SEQ = 2, 16


def tiny_config(family: str, spec: dict) -> tuple[Config, dict]:
    """litgpt fields of the base config with the overrides applied, plus the overrides themselves.
    The name keeps the base's family word ("Gemma", "OLMo") because litgpt keys behaviour on it."""
    spec = dict(spec)
    base = spec.pop("base")
    fields = dict(Config.from_name(base).__dict__)
    for derived in ("rope_n_elem", "hf_config"):
        fields.pop(derived, None)
    # Derived fields are recomputed from the new widths unless the spec sets them.
    for key in ("head_size", "n_query_groups", "intermediate_size", "sliding_window_indices",
                "rope_indices"):
        fields[key] = None
    fields.update(COMMON)
    fields.update(spec)
    fields["name"] = f"{base}-tiny"
    config = Config(**fields)
    return config, fields


def fill_parameters(model: GPT, gen: torch.Generator) -> None:
    """Values far from litgpt's init on purpose: O(1) activations, random biases and norm weights,
    so that a wrong bias, norm offset or cap changes the logits well above the tolerance."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif p.dim() == 1:  # norm weights
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=gen))
            elif name == "transformer.wte.weight":
                p.copy_(torch.randn(p.shape, generator=gen))
            else:  # Linear (out, in)
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[1]))


class Blob:
    """Tensors appended to one raw buffer, indexed by name/dtype/shape/offset."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.index = []

    def add(self, name: str, t: torch.Tensor) -> None:
        t = t.detach().contiguous().cpu()
        assert t.dtype in (torch.float32, torch.int64), t.dtype
        raw = t.numpy().tobytes()  # little-endian on every machine we run on
        self.index.append(dict(name=name, dtype="float32" if t.dtype == torch.float32 else "int64",
                               shape=list(t.shape), offset=len(self.data), nbytes=len(raw)))
        self.data += raw


def equivalence_fixture(family: str, spec: dict, seed: int) -> int:
    config, fields = tiny_config(family, spec)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = GPT(config)  # fp32, CPU
    fill_parameters(model, gen)
    tokens = torch.randint(0, config.vocab_size, (BATCH, SEQ + 1), generator=gen)
    idx, targets = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

    logits = model(idx)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    loss.backward()

    blob = Blob()
    blob.add("input", idx)
    blob.add("targets", targets)
    blob.add("logits", logits)
    blob.add("loss", loss.reshape(()))
    names = []
    for name, p in model.named_parameters():
        names.append(name)
        blob.add(f"param/{name}", p)
        # An expert that received no token has no gradient in PyTorch; store zeros.
        blob.add(f"grad/{name}", p.grad if p.grad is not None else torch.zeros_like(p))

    # The full resolved litgpt config, for the reader and for the C++ loader (which finalizes).
    resolved = {k: v for k, v in config.__dict__.items() if k != "hf_config"}
    doc = dict(family=family, seed=seed, generator="scripts/reference/litgpt_reference.py --equivalence",
               torch=torch.__version__, config=fields, resolved=resolved,
               state_dict_keys=list(model.state_dict().keys()), parameters=names,
               batch=BATCH, seq_len=SEQ, tensors=blob.index)
    out = FIXTURES / "equivalence"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{family}.bin").write_bytes(bytes(blob.data))
    (out / f"{family}.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{family:10s} params={sum(p.numel() for p in model.parameters()):7d} loss={loss.item():.6f} "
          f"bytes={len(blob.data)}")
    return len(blob.data)


def equivalence() -> None:
    total = 0
    for i, (family, spec) in enumerate(FAMILIES.items()):
        total += equivalence_fixture(family, spec, seed=1234 + i)
    print(f"equivalence fixtures: {total / 1e6:.2f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flops", action="store_true")
    parser.add_argument("--equivalence", action="store_true")
    args = parser.parse_args()
    both = not (args.flops or args.equivalence)
    torch.set_num_threads(2)
    if args.equivalence or both:
        equivalence()
    if args.flops or both:
        flops_reference()
    return 0


if __name__ == "__main__":
    sys.exit(main())
