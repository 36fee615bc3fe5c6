#!/usr/bin/env python3
"""--cpu-allocator system vs caching, same configuration, alternating, on this machine.

Runs `tokbench run` with each allocator --repeats times (alternating which goes first, so a
burst of load on a shared machine moves one sample, not the verdict) and prints each run's
tokens/s, the allocated/reserved peaks and the process peak RSS, then the median tokens/s of
each and the ratio caching / system. A benchmark, not a test: nothing is asserted.

Usage: bench/cpu_allocator_ab.py [--tokbench build/bin/tokbench] [--repeats 3] [--threads 0]
                                 [--model-name tiny-llama-1.1b] [--n-layers 2] [--seq-len 256]
                                 [--micro-batch-size 2] [--warmup-iters 3] [--max-iters 8]
"""
import argparse
import statistics
import sys

from bench_common import DEFAULT_TOKBENCH, cpu_model, rotated, run_record


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokbench", default=DEFAULT_TOKBENCH)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--model-name", default="tiny-llama-1.1b")
    p.add_argument("--n-layers", type=int, default=2)
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--micro-batch-size", type=int, default=2)
    p.add_argument("--warmup-iters", type=int, default=3)
    p.add_argument("--max-iters", type=int, default=8)
    a = p.parse_args()
    config = ["--model-name", a.model_name, "--n-layers", str(a.n_layers), "--seq-len", str(a.seq_len),
              "--micro-batch-size", str(a.micro_batch_size), "--warmup-iters", str(a.warmup_iters),
              "--max-iters", str(a.max_iters), "--device", "cpu", "--dtype", "fp32",
              "--num-threads", str(a.threads), "--quiet"]
    print(f"machine: {cpu_model()}; config:", " ".join(config))
    rates = {"system": [], "caching": []}
    for r in range(a.repeats):
        for allocator in rotated(["system", "caching"], r):
            j, proc = run_record(a.tokbench, [*config, "--cpu-allocator", allocator])
            if proc.returncode != 0 or j is None:
                sys.exit(f"tokbench exit {proc.returncode} ({allocator}):\n{proc.stderr}")
            rates[allocator].append(j["tokens_per_sec"])
            print(f"repeat {r} {allocator:>7}: {j['tokens_per_sec']:8.2f} tok/s, iter median "
                  f"{j['iter_time_ms']['median']:8.1f} ms, allocated peak {j['memory_allocated_peak_GB']:.3f} GB, "
                  f"reserved peak {j['memory_reserved_peak_GB']:.3f} GB, peak RSS {j['peak_rss_GB']:.3f} GB",
                  flush=True)
    system, caching = statistics.median(rates["system"]), statistics.median(rates["caching"])
    print(f"median tokens/s: system {system:.2f} (range {min(rates['system']):.2f}-{max(rates['system']):.2f}), "
          f"caching {caching:.2f} (range {min(rates['caching']):.2f}-{max(rates['caching']):.2f})")
    print(f"ratio caching/system: {caching / system:.3f}")


if __name__ == "__main__":
    main()
