#!/usr/bin/env python3
"""tokbench's training step in Python: litgpt's GPT under PyTorch eager or torch.compile (inductor).

`tokbench run --executor python-eager|python-inductor` starts this script as a child with the
configuration it has already validated and reads its stdout, one JSON object per line:

  {"event": "unavailable", "python": ..., "error": ...}   torch or litgpt cannot be imported (exit 2)
  {"event": "ready", "torch_version": ..., "litgpt_version": ..., "python_version": ..., "num_threads": N}
  {"event": "iteration", "index": i, "warmup": bool, "seconds": s, "loss": l, "end_time": t}
  {"event": "result", "status": "ok"|"oom"|"nan"|"interrupted"|"error", "message": ...,
   "measured_window_seconds": w, "allocated_peak_bytes": n|null, "reserved_peak_bytes": n|null,
   "peak_rss_bytes": n, "profile_message": "..."}   (profile_message only with --profile)

The step is the reference's: litgpt's
GPT, torch.optim.AdamW(fused=True) — the same fused ATen kernel tokbench's AdamW calls, so a
comparison measures the executors, not two optimizers — random token ids 0..99 as the reference
draws them, loss divided by GA, backward per micro-batch, one optimizer step per iteration,
`loss.item()` (and torch.cuda.synchronize on CUDA) at the end of every iteration. The timing
protocol is tokbench's: the window runs from the end of the last warm-up iteration to the end of
the last one, so tokens/s = M·G·T / window. With --compile inductor the model is wrapped in
torch.compile (default mode, as the reference does); compilation happens in the first
iteration, which is why warm-up iterations exist.

--profile PATH writes a Chrome trace of --profile-iters more iterations after the measured
window (torch.profiler with shapes and memory events, and forward/backward/optimizer ranges),
as tokbench's own --profile does, so the two traces can be compared op by op.

Only the JSON lines go to stdout: everything else printed by Python, litgpt or the inductor's
compiler (C++ compiler output included) is sent to stderr at the file-descriptor level, so the
parent's reader never sees a stray line.
Stop: the first SIGINT/SIGTERM stops the run after the current micro-batch (status
interrupted, what was measured is kept); the parent sends SIGKILL on a second one.
"""
import argparse
import json
import math
import os
import resource
import signal
import sys
import time


def open_result_stream():
    """Returns a text stream on the original stdout and points fd 1 (and sys.stdout) at stderr."""
    result_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(result_fd, "w", buffering=1)


def emit(stream, event, **fields):
    stream.write(json.dumps({"event": event, **fields}, allow_nan=False) + "\n")
    stream.flush()


def parse_args():
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
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16-true", "bf16-mixed"])
    p.add_argument("--tf32", action="store_true", help="allow TF32 matmuls (CUDA, fp32)")
    p.add_argument("--compile", default="eager", choices=["eager", "inductor"])
    p.add_argument("--dynamic", action="store_true", help="torch.compile(dynamic=True) (the reference's switch)")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.95)
    p.add_argument("--zero-grad", default="none", choices=["none", "inplace", "in-place"],
                   help="none: zero_grad(set_to_none=True), the reference's choice; inplace: "
                        "set_to_none=False, gradients keep their memory")
    p.add_argument("--profile", help="write a Chrome trace of --profile-iters iterations after the window")
    p.add_argument("--profile-iters", type=int, default=3)
    return p.parse_args()


class StopRequest:
    """The first SIGINT/SIGTERM asks the loop to stop between micro-batches."""

    def __init__(self):
        self.requested = False
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)

    def _on_signal(self, signum, frame):
        self.requested = True


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


def train(a, torch, GPT, Config, out, stop):
    import torch.nn.functional as F

    if a.num_threads > 0:
        torch.set_num_threads(a.num_threads)
    device = torch.device(a.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = a.tf32
        torch.backends.cudnn.allow_tf32 = a.tf32
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
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay,
                                  betas=(a.beta1, a.beta2), fused=True)
    forward = torch.compile(model, dynamic=a.dynamic or None) if a.compile == "inductor" else model
    generator = torch.Generator().manual_seed(a.seed)
    B, T, GA, V = a.micro_batch_size, a.seq_len, a.grad_accum, config.padded_vocab_size
    set_to_none = a.zero_grad == "none"

    def autocast():
        if a.dtype == "bf16-mixed":
            return torch.autocast(device.type, dtype=torch.bfloat16)
        import contextlib
        return contextlib.nullcontext()

    def ranged(name):
        # The profile's named ranges; outside a profile record_function costs next to nothing,
        # but the measured loop does without it, as the reference's does.
        import contextlib
        return torch.profiler.record_function(name) if profiling else contextlib.nullcontext()

    def one_iteration():
        """Forward and backward of GA micro-batches and one optimizer step; the last micro-batch's
        loss (divided by GA), or None when a stop request came between micro-batches."""
        loss = None
        for _ in range(GA):
            if stop.requested:
                return None
            data = torch.randint(0, 100, (B, T + 1), generator=generator)
            x, y = data[:, :T].to(device), data[:, 1:].to(device)
            with ranged("forward"), autocast():
                logits = forward(x)
                loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), ignore_index=-1) / GA
            with ranged("backward"):
                loss.backward()
        with ranged("optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=set_to_none)
        return loss

    profiling = False
    iterations = []
    status, message = "ok", ""
    start = time.perf_counter()
    previous_end = 0.0
    for index in range(a.max_iters):
        loss = one_iteration()
        if loss is None:
            status, message = "interrupted", f"stopped by a signal in iteration {index}"
            break
        value = loss.item() * GA
        if device.type == "cuda":
            torch.cuda.synchronize()
        end = time.perf_counter() - start
        sample = {"index": index, "warmup": index < a.warmup_iters, "seconds": end - previous_end,
                  "loss": value if math.isfinite(value) else None, "end_time": end}
        previous_end = end
        iterations.append(sample)
        emit(out, "iteration", **sample)
        if not math.isfinite(value):
            status, message = "nan", f"non-finite loss {value} at iteration {index}"
            break
    window = 0.0
    if status == "ok":
        window = iterations[-1]["end_time"] - (iterations[a.warmup_iters - 1]["end_time"] if a.warmup_iters > 0 else 0.0)
    memory = {"allocated_peak_bytes": None, "reserved_peak_bytes": None}
    if device.type == "cuda":
        memory = {"allocated_peak_bytes": torch.cuda.max_memory_allocated(device),
                  "reserved_peak_bytes": torch.cuda.max_memory_reserved(device)}
    profile_message = None
    if a.profile:
        # After the peaks are read: the profiled iterations are in no reported figure.
        if status != "ok":
            profile_message = f"no profile written: the run ended with status {status}"
        else:
            profiling = True
            profile_message = record_profile(a, torch, device, one_iteration)
    return status, message, iterations, window, memory, profile_message


def record_profile(a, torch, device, one_iteration):
    """--profile: a.profile_iters more iterations under torch.profiler; what became of the trace."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    try:
        with torch.profiler.profile(activities=activities, record_shapes=True, profile_memory=True) as profiler:
            for _ in range(a.profile_iters):
                loss = one_iteration()
                if loss is None:
                    return "no profile written: stopped by a signal"
                loss.item()
                if device.type == "cuda":
                    torch.cuda.synchronize()
        profiler.export_chrome_trace(a.profile)
    except Exception as e:
        return f"no profile written: {type(e).__name__}: {e}".splitlines()[0][:300]
    return (f"profile: Chrome trace of {a.profile_iters} iterations after the measured window "
            f"(not in the metrics) written to {a.profile}")


def main():
    a = parse_args()
    out = open_result_stream()
    stop = StopRequest()
    try:
        import torch
        import litgpt
        from litgpt.config import Config
        from litgpt.model import GPT
    except Exception as e:  # ImportError, or a broken install failing inside its import
        error = f"{type(e).__name__}: {e}".splitlines()[0]
        emit(out, "unavailable", python=sys.executable, error=error)
        sys.exit(2)
    from importlib.metadata import version as package_version
    versions = {"torch_version": torch.__version__, "litgpt_version": package_version("litgpt"),
                "python_version": sys.version.split()[0]}
    if a.num_threads > 0:
        torch.set_num_threads(a.num_threads)
    emit(out, "ready", num_threads=torch.get_num_threads(), **versions)

    status, message, iterations, window, memory, profile_message = "error", "", [], 0.0, {}, None
    try:
        status, message, iterations, window, memory, profile_message = train(a, torch, GPT, Config, out, stop)
    except torch.OutOfMemoryError as e:
        status, message = "oom", str(e).splitlines()[0]
    except Exception as e:
        status, message = "error", (f"{type(e).__name__}: {e}".splitlines() or [""])[0]
    profile = {} if profile_message is None else {"profile_message": profile_message}
    emit(out, "result", status=status, message=message, measured_window_seconds=window,
         peak_rss_bytes=peak_rss_bytes(), **memory, **profile)


if __name__ == "__main__":
    main()
