#!/usr/bin/env python3
"""The reference training step in Python, timed by tokbench's protocol, for side-by-side runs.

litgpt's GPT, torch.optim.AdamW(fused=True) with the reference's hyper-parameters (the same
fused ATen kernel tokbench's AdamW calls, on the CPU and on CUDA), random token ids 0..99 as the reference draws them, loss divided
by GA, backward per micro-batch, one optimizer step per iteration, `loss.item()` (and
torch.cuda.synchronize on CUDA) at the end of every iteration. tokens/s = M·G·T / window with
the window from the end of the last warm-up iteration to the end of the last one — the same
definition tokbench uses. Prints one JSON object on stdout.
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F
from litgpt.config import Config
from litgpt.model import GPT


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model-name", required=True)
    p.add_argument("--n-layers", type=int)
    p.add_argument("--seq-len", type=int, required=True)
    p.add_argument("--micro-batch-size", type=int, default=1)
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--max-iters", type=int, default=45)
    p.add_argument("--warmup-iters", type=int, default=25)
    p.add_argument("--num-threads", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16-true"])
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--zero-grad", default="none", choices=["none", "in-place"],
                   help="none: zero_grad(set_to_none=True), the reference's choice; in-place: "
                        "set_to_none=False, as tokbench does (gradients keep their memory)")
    a = p.parse_args()

    if a.num_threads > 0:
        torch.set_num_threads(a.num_threads)
    device = torch.device(a.device)
    overrides = {"block_size": a.seq_len}
    if a.n_layers:
        overrides["n_layer"] = a.n_layers
    config = Config.from_name(a.model_name, **overrides)
    torch.manual_seed(a.seed)
    with device:
        model = GPT(config)
    if a.dtype == "bf16-true":
        model = model.to(torch.bfloat16)
    model.train()
    # fused=True on every device: tokbench's AdamW runs the same _fused_adamw_ kernel, so the
    # comparison measures the harness, not two optimizer implementations.
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.1, betas=(0.9, 0.95),
                                  fused=True)
    generator = torch.Generator().manual_seed(a.seed)
    B, T, GA, V = a.micro_batch_size, a.seq_len, a.grad_accum, config.padded_vocab_size

    ends, losses = [], []
    start = time.perf_counter()
    for _ in range(a.max_iters):
        for _ in range(GA):
            data = torch.randint(0, 100, (B, T + 1), generator=generator)
            x, y = data[:, :T].to(device), data[:, 1:].to(device)
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), ignore_index=-1) / GA
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=a.zero_grad == "none")
        losses.append(loss.item() * GA)
        if device.type == "cuda":
            torch.cuda.synchronize()
        ends.append(time.perf_counter() - start)

    M = a.max_iters - a.warmup_iters
    window = ends[-1] - (ends[a.warmup_iters - 1] if a.warmup_iters > 0 else 0.0)
    tokens_per_sec = M * B * GA * T / window
    result = {
        "runner": "python",
        "torch_version": torch.__version__,
        "num_threads": torch.get_num_threads(),
        "average_iter_time": window * 1000 / M,
        "tokens_per_sec": tokens_per_sec,
        "loss_first": losses[a.warmup_iters],
        "loss_last": losses[-1],
        "memory_used_GB": torch.cuda.max_memory_allocated() / 1e9 if device.type == "cuda" else None,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
