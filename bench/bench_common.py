"""What the benchmark scripts share: where tokbench is, the machine's name for the results, and
one `tokbench run` whose JSON record is the measurement."""
import json
import os
import platform
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TOKBENCH = os.path.join(ROOT, "build", "bin", "tokbench")


def cpu_model():
    """The CPU's model name, recorded with every result: the machine can change between days."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def run_record(tokbench, args):
    """`tokbench run ARGS --json-path TMP`: (the run's JSON record, or None when it wrote none,
    the process). A failed run's record (status oom, error, ...) is returned like any other."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "run.json")
        proc = subprocess.run([tokbench, "run", *args, "--json-path", out], capture_output=True, text=True)
        if not os.path.exists(out):
            return None, proc
        with open(out) as f:
            return json.load(f), proc


# A one-rank run as short as the reference probe allows (docs/run.md, "The reference probe"): its
# figure is the probe's median GEMM, the machine's speed at that moment.
REFERENCE_PROBE_RUN = ["--model-name", "pythia-14m", "--n-layers", "1", "--seq-len", "16", "--max-iters", "2",
                       "--warmup-iters", "1", "--num-threads", "1"]


def reference_probe_ms(tokbench):
    """(the reference GEMM's median milliseconds now, or None where the run gave none; the process)."""
    record, proc = run_record(tokbench, REFERENCE_PROBE_RUN)
    probe = (record or {}).get("reference_probe") or {}
    return (probe.get("median_ms") if proc.returncode == 0 else None), proc


def spread(values):
    """(largest - smallest) / median of positive figures; None for fewer than two."""
    return (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else None


def side_record(tokbench, args, label):
    """`tokbench run ARGS`'s record when the run succeeded; otherwise None, after printing why (a
    failed side is a gap in the table, not the end of the script)."""
    record, proc = run_record(tokbench, args)
    if proc.returncode != 0 or record is None:
        print(f"# {label} failed ({proc.returncode}): tokbench run {' '.join(args)}\n{proc.stderr[-2000:]}",
              flush=True)
        return None
    return record


def rotated(sides, repeat):
    """The order of `sides` in repeat `repeat`: rotating, so no side always runs first on a
    warming or busy machine."""
    shift = repeat % len(sides)
    return sides[shift:] + sides[:shift]


def write_result(stem, today, text):
    """docs/results/<stem>-<today>.md, or -2, -3, ... when the day has one already: a later run
    of the same day keeps the earlier one. Returns the path written."""
    path = os.path.join(ROOT, "docs", "results", f"{stem}-{today}.md")
    run = 2
    while os.path.exists(path):
        path = os.path.join(ROOT, "docs", "results", f"{stem}-{today}-{run}.md")
        run += 1
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")
    return path


def write_side_by_side_page(stem, title, started, machine, command, each_run, table):
    """A side-by-side script's results page, docs/results/<stem>-<day>.md (write_result): its title
    and day, the machine (the CPU model and what else the script says of it) and start time, the
    command that made it, what one run was, and the table. Returns the path written."""
    today = started.date().isoformat()
    text = (f"# {title}, CPU, {today}\n\n"
            f"- Machine: {machine}; started {started:%H:%M} UTC\n"
            f"- Command: `{command}`\n"
            f"- {each_run}\n\n{table}\n")
    return write_result(stem, today, text)
