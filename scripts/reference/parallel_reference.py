#!/usr/bin/env python3
"""PyTorch's own DDP and FSDP training the model of a committed equivalence fixture, for
tokbench's parallel steps to be held to (tests/distributed/test_reference_parallel.cpp).

The fixture (tests/fixtures/model/equivalence/<family>.{json,bin}, from litgpt_reference.py)
gives the config and the initial weights. W ranks (processes over Gloo on the CPU, one thread
each) train litgpt's GPT from those weights, wrapped as python/tokbench_python_step.py wraps it
for `--executor python-eager` (the reference benchmark's wrappers: DistributedDataParallel,
FullyShardedDataParallel with SHARD_GRAD_OP / FULL_SHARD / the hybrid strategies over a device
mesh, units per litgpt Block), with torch.optim.AdamW(fused=True) at tokbench's defaults, for
ITERATIONS steps of GA micro-batches on token streams drawn here from a fixed seed. Every
micro-batch's loss is divided by GA before backward; under DDP the first GA-1 micro-batches run
under no_sync (--skip-data-sync, as tokbench's DDP step does), while FSDP reduce-scatters every
micro-batch (tokbench's FSDP step has no no_sync: it keeps shard-size gradients only), and the
reported loss of an iteration is its last micro-batch's
undivided loss averaged over ranks, as tokbench's steps report it.

Writes OUT/<case>.json + OUT/<case>.bin (the fixtures' blob format): the tokens (ITERATIONS, GA,
W, B, T+1), the per-iteration losses, and the final full parameters under litgpt's names.
Cases: ddp, zero2, zero3 at the given world size; hybrid_zero2 and hybrid_zero3 when it is 4
(shard groups of 2).

Run: .venv/bin/python scripts/reference/parallel_reference.py --world W --grad-accum GA --out DIR
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import types
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "model" / "equivalence"
ITERATIONS, MICRO_BATCH, TOKEN_SEED = 3, 1, 42
sys.path.insert(0, str(ROOT / "python"))
import tokbench_python_step as step  # noqa: E402  (the wrappers of --executor python-eager)


def read_fixture(family):
    doc = json.loads((FIXTURES / f"{family}.json").read_text())
    data = (FIXTURES / f"{family}.bin").read_bytes()
    tensors = {}
    for e in doc["tensors"]:
        dtype = torch.int64 if e["dtype"] == "int64" else torch.float32
        raw = bytearray(data[e["offset"]:e["offset"] + e["nbytes"]])
        tensors[e["name"]] = torch.frombuffer(raw, dtype=dtype).reshape(e["shape"]).clone()
    return doc, tensors


def write_blob(path, tensors, extra):
    index, offset = [], 0
    with open(path.with_suffix(".bin"), "wb") as f:
        for name, t in tensors.items():
            t = t.detach().contiguous().cpu()
            raw = t.numpy().tobytes()
            index.append({"name": name, "dtype": "int64" if t.dtype == torch.int64 else "float32",
                          "shape": list(t.shape), "offset": offset, "nbytes": len(raw)})
            f.write(raw)
            offset += len(raw)
    path.with_suffix(".json").write_text(json.dumps(dict(extra, tensors=index)))


def cases(world):
    out = [("ddp", "ddp", "zero2", None), ("zero2", "fsdp", "zero2", None), ("zero3", "fsdp", "zero3", None)]
    if world == 4:
        out += [("hybrid_zero2", "fsdp", "zero2", 2), ("hybrid_zero3", "fsdp", "zero3", 2)]
    return out


def full_parameters(model, mode):
    """litgpt's parameter names -> full values, gathered from the wrapper."""
    def clean(name):
        return name.replace("_fsdp_wrapped_module.", "").replace("module.", "", 1 if mode == "ddp" else 0)
    if mode == "ddp":
        return {clean(n): p.detach().clone() for n, p in model.named_parameters()}
    from torch.distributed.fsdp import FullyShardedDataParallel
    with FullyShardedDataParallel.summon_full_params(model, writeback=False):
        return {clean(n): p.detach().clone() for n, p in model.named_parameters()}


def worker(rank, world, grad_accum, family, out_dir, port):
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=300))
    from litgpt.config import Config
    from litgpt.model import GPT, Block
    doc, tensors = read_fixture(family)
    config = Config(**doc["config"])
    initial = {k[len("param/"):]: v for k, v in tensors.items() if k.startswith("param/")}
    generator = torch.Generator().manual_seed(TOKEN_SEED)
    T = config.block_size
    tokens = torch.randint(0, config.vocab_size, (ITERATIONS, grad_accum, world, MICRO_BATCH, T + 1),
                           generator=generator)
    for name, mode, shard, sharding in cases(world):
        model = GPT(config)
        model.load_state_dict(initial, strict=False)  # buffers (rope caches) are the model's own
        a = types.SimpleNamespace(distributed_mode=mode, shard_mode=shard, sharding_size=sharding, world_size=world,
                                  bucketing_mode="block", ddp_bucket_mb=25.0)
        wrapped = step.parallelize(a, torch, dist, model, torch.device("cpu"), Block)
        optimizer = torch.optim.AdamW(wrapped.parameters(), lr=5e-4, weight_decay=0.1, betas=(0.9, 0.95), eps=1e-8,
                                      fused=True)
        losses = []
        for i in range(ITERATIONS):
            for micro in range(grad_accum):
                batch = tokens[i, micro, rank]
                x, y = batch[:, :T], batch[:, 1:]
                skip_sync = mode == "ddp" and micro < grad_accum - 1
                context = wrapped.no_sync() if skip_sync else torch.enable_grad()
                with context:
                    logits = wrapped(x)
                    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
                    (loss / grad_accum).backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            reported = loss.detach().clone()
            dist.all_reduce(reported)
            losses.append(reported.item() / world)
        params = full_parameters(wrapped, mode)
        if rank == 0:
            blob = {"tokens": tokens, "losses": torch.tensor(losses, dtype=torch.float32)}
            blob.update({"param/" + n: p for n, p in params.items()})
            write_blob(Path(out_dir) / f"{name}_w{world}_ga{grad_accum}", blob,
                       {"family": family, "case": name, "world": world, "grad_accum": grad_accum,
                        "losses": losses, "torch": torch.__version__})
        dist.barrier()
    dist.barrier()
    # The wrappers' Gloo threads can deadlock an orderly teardown against the GIL (see
    # python/tokbench_python_step.py): end without one, the results are written.
    os._exit(0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--grad-accum", type=int, required=True)
    p.add_argument("--family", default="pythia")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # litgpt imported once here and the ranks forked: each spawned rank imported torch, litgpt and
    # lightning again (9 s of CPU apiece on a 2-core VM, most of the script's time). Nothing has
    # computed yet, so no thread pool exists to be lost in the fork.
    import litgpt.model  # noqa: F401
    mp.start_processes(worker, args=(a.world, a.grad_accum, a.family, a.out, port), nprocs=a.world,
                       start_method="fork", join=True)


if __name__ == "__main__":
    main()
