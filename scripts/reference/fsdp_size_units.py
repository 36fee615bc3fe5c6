#!/usr/bin/env python3
"""Golden FSDP units of PyTorch's size_based_auto_wrap_policy over litgpt's GPT.

For a few litgpt models and thresholds, wraps the model in PyTorch's FullyShardedDataParallel
(one rank, Gloo, on the CPU) with auto_wrap_policy=partial(size_based_auto_wrap_policy,
min_num_params=N), exactly as the reference's --bucketing_mode size does, and writes each FSDP
instance's flat parameter: the module it wraps and the parameters it holds, in the order
named_modules() lists the instances. parallel::layout_fsdp_units(by_size) must give the same
units from the parameter names and sizes alone (tests/parallel/test_layout.cpp).

Output, committed: tests/fixtures/parallel/fsdp_size_units.json.
Run: .venv/bin/python scripts/reference/fsdp_size_units.py (torch, litgpt==0.5.13).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import torch
import torch.distributed as dist
from litgpt import GPT, Config
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import size_based_auto_wrap_policy

OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "parallel" / "fsdp_size_units.json"


def tiny_llama() -> Config:
    # A Llama-shaped model (RMSNorm, LLaMAMLP with three linears, no biases) small enough to
    # build with real tensors; its block tree differs from pythia's (fc_1/fc_2 vs fc).
    return Config(name="tiny-llama", block_size=64, vocab_size=1000, padded_vocab_size=1024, n_layer=3, n_head=4,
                  n_embd=64, n_query_groups=2, rotary_percentage=1.0, parallel_residual=False, bias=False,
                  norm_class_name="RMSNorm", mlp_class_name="LLaMAMLP", intermediate_size=176)


def configs() -> list[tuple[str, Config]]:
    pythia = Config.from_name("pythia-14m")
    pythia.n_layer = 3
    return [("pythia-14m", pythia), ("tiny-llama", tiny_llama())]


def units_of(config: Config, min_num_params: int) -> dict:
    torch.manual_seed(0)
    model = GPT(config)
    names = {id(p): n for n, p in model.named_parameters()}
    parameters = [{"name": n, "elements": p.numel()} for n, p in model.named_parameters()]
    policy = functools.partial(size_based_auto_wrap_policy, min_num_params=min_num_params)
    wrapped = FSDP(model, auto_wrap_policy=policy, use_orig_params=True, device_id=torch.device("cpu"))
    units = []
    for path, module in wrapped.named_modules():
        if not isinstance(module, FSDP):
            continue
        flat = module._flat_param
        held = [] if flat is None else [names[id(p)] for p in flat._params]
        # The wrapped module's path in the original model: FSDP inserts "_fsdp_wrapped_module".
        original = ".".join(part for part in path.split(".") if part != "_fsdp_wrapped_module")
        units.append({"module": original, "parameters": held})
    return {"model": config.name, "n_layer": config.n_layer, "min_num_params": min_num_params,
            "parameters": parameters, "units": units}


def main() -> None:
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    cases = []
    for _, config in configs():
        total = sum(p.numel() for p in GPT(config).parameters())
        # From "every leaf module" to "the root only": the thresholds cross each kind of module.
        # 66_100 wraps pythia's mlp and then its block around the rest (a unit inside a unit);
        # 150_000 (pythia) and 40_000 (tiny-llama) wrap whole blocks; 1 leaves the root empty.
        sizes = sorted({1, 1000, 20_000, 25_000, 40_000, 50_000, 66_100, 100_000, 150_000, 300_000, 1_000_000, total,
                        100_000_000})
        for n in sizes:
            cases.append(units_of(config, n))
    dist.destroy_process_group()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"torch": torch.__version__, "cases": cases}, indent=1) + "\n")
    print(f"{OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
