#!/usr/bin/env python3
"""Runs the real `tokbench comm` on this CPU (Gloo) and reads back everything it writes.

Scenarios:
  formats  two ranks under the built-in launcher over a small size range, once per format: the
           JSON document's keys and figures (sizes, counts, positive times, min <= mean <= max,
           algbw = size / time, busbw / algbw = each collective's factor at W = 2, every result
           correct), the store (read back with sqlite3, and listed by `tokbench history`), and
           print, CSV, Markdown, HTML and xlsx each parsed by an independent reader (these with
           --compute-sharing off); then three ranks, bfloat16, where all_gather and
           reduce_scatter round a size down to a whole number of elements per rank (factor 2/3),
           and the document's compute_sharing null as asked
  usage    bad options each give one line on stderr and exit 2 before any rank starts
  torchrun two ranks started by `torchrun --no-python` (the checkout's .venv, else PATH's; skipped
           without one): the same document, each rank's place read from torchrun's variables
Usage: cli_comm.py /path/to/tokbench SCENARIO [/path/to/source]"""
import csv
import html.parser
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile

TOKBENCH, SCENARIO = sys.argv[1], sys.argv[2]
SOURCE = sys.argv[3] if len(sys.argv) > 3 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIVES = ["all_gather", "all_reduce", "broadcast", "reduce_scatter"]  # the document's order: by name
COLUMNS = ["collective", "size_bytes", "count", "dtype", "time_us", "min_time_us", "max_time_us", "algbw_GBps",
           "busbw_GBps", "correct"]
SMALL = ["--min-bytes", "1K", "--max-bytes", "16K", "--iters", "3", "--warmup-iters", "1", "--dist-timeout", "60"]
SIZES = [1024, 2048, 4096, 8192, 16384]


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + (proc.stdout or "") + "\n--- stderr ---\n" + (proc.stderr or ""))
    sys.exit(1)


def clean_env():
    env = dict(os.environ)
    for name in ["WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                 "TOKBENCH_LAUNCHED", "SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"]:
        env.pop(name, None)
    return env


def comm(*args, expect=0):
    proc = subprocess.run([TOKBENCH, "comm", *args], capture_output=True, text=True, env=clean_env(), timeout=600)
    if expect is not None and proc.returncode != expect:
        fail(f"`tokbench comm {' '.join(args)}` exited {proc.returncode}, expected {expect}", proc)
    return proc


def factor(collective, n):
    return {"all_reduce": 2 * (n - 1) / n, "all_gather": (n - 1) / n, "reduce_scatter": (n - 1) / n,
            "broadcast": 1.0}[collective]


def check_document(doc, world, dtype, sizes_of, proc, sharing=True):
    for key, want in [("schema", "tokbench-comm"), ("schema_version", 1), ("backend", "gloo"), ("device", "cpu"),
                      ("world_size", world), ("nnodes", 1), ("nproc_per_node", world), ("dtype", dtype),
                      ("iters", 3), ("warmup_iters", 1)]:
        if doc.get(key) != want:
            fail(f"document {key} = {doc.get(key)!r}, expected {want!r}", proc)
    if not isinstance(doc.get("threads_per_rank"), int) or doc["threads_per_rank"] < 1:
        fail(f"threads_per_rank {doc.get('threads_per_rank')!r}", proc)
    env = doc.get("environment", {})
    for key in ["tokbench_version", "git_revision", "libtorch_version", "build_type", "host", "time", "devices"]:
        if key not in env:
            fail(f"environment has no {key}: {env}", proc)
    if not env["devices"] or not env["devices"][0]:
        fail("environment names no device", proc)
    element = 4 if dtype == "float32" else 2
    results = doc["results"]
    order = [(r["collective"], r["size_bytes"]) for r in results]
    if order != sorted(order):
        fail(f"results not sorted by collective then size: {order}", proc)
    for collective, sizes in sizes_of.items():
        got = [r["size_bytes"] for r in results if r["collective"] == collective]
        if got != sizes:
            fail(f"{collective} sizes {got}, expected {sizes}", proc)
    if {r["collective"] for r in results} != set(sizes_of):
        fail(f"collectives {sorted({r['collective'] for r in results})}, expected {sorted(sizes_of)}", proc)
    # CPU ranks also measure how busy their collectives keep a core (docs/comm.md, gloo_cpu_busy).
    cpu = doc["device"] == "cpu"
    for r in results:
        if list(r) != [c for c in COLUMNS if c != "dtype"] + (["cpu_busy"] if cpu else []):
            fail(f"result keys {list(r)}", proc)
        if cpu and not 0 < r["cpu_busy"] < 64:
            fail(f"cpu_busy {r['cpu_busy']} is not a positive number of cores: {r}", proc)
        if r["count"] * element != r["size_bytes"]:
            fail(f"count {r['count']} x {element} bytes != size {r['size_bytes']}", proc)
        if not 0 < r["min_time_us"] <= r["time_us"] <= r["max_time_us"]:
            fail(f"times not 0 < min <= mean <= max: {r}", proc)
        algbw = r["size_bytes"] / (r["time_us"] * 1e-6) / 1e9
        if abs(r["algbw_GBps"] - algbw) > 1e-9 * algbw:
            fail(f"algbw {r['algbw_GBps']} is not size / time = {algbw}: {r}", proc)
        want = factor(r["collective"], world)
        if abs(r["busbw_GBps"] - want * r["algbw_GBps"]) > 1e-9 * r["algbw_GBps"]:
            fail(f"busbw / algbw = {r['busbw_GBps'] / r['algbw_GBps']}, expected {want} for {r['collective']}", proc)
        if r["correct"] is not True:
            fail(f"a wrong result: {r}", proc)
    busy = doc.get("gloo_cpu_busy")
    if cpu and not (isinstance(busy, dict) and 0 < busy["fraction"] < 64 and busy["ranks_per_node"] == doc["nproc_per_node"]):
        fail(f"gloo_cpu_busy {busy} is not a positive fraction for the document's ranks per node", proc)
    if not cpu and busy is not None:
        fail(f"gloo_cpu_busy {busy} on {doc['device']}: only CPU ranks measure it", proc)
    # And the GEMM beside a running all-reduce (docs/comm.md, compute_sharing.beside_collective):
    # the figures follow from the times the document records beside them.
    if not sharing:  # --compute-sharing off
        if doc.get("compute_sharing", "absent") is not None:
            fail(f"--compute-sharing off: compute_sharing {doc.get('compute_sharing', 'absent')!r}, want null", proc)
        if "# compute sharing" in proc.stderr:
            fail("--compute-sharing off: the probe's lines were printed", proc)
    elif cpu:
        b = doc["compute_sharing"]["beside_collective"]
        if not (0 <= b["steal"] < 1 and 0 < b["collective_rate"] <= 1 and 0 <= b["covered_repeats"] <= b["repeats"]
                and b["repeats"] >= 1 and b["collective_bytes"] >= 2**20 and b["gemm_ms"] > 0
                and b["collective_alone_ms"] > 0 and b["collective_beside_ms"] > 0):
            fail(f"compute_sharing.beside_collective {b} is not a measurement", proc)
        # The together half is a sustained computation, several products per rank, not one the OS's
        # time slices decide (docs/comm.md, compute_sharing), and the document says how many.
        products = doc["compute_sharing"].get("together_gemms")
        if not (isinstance(products, int) and products >= 2
                and f"{products} back to back" in doc["compute_sharing"]["gemm"]):
            fail(f"compute_sharing.together_gemms {products!r}: not several products, or not what its gemm text says",
                 proc)
        together = doc["compute_sharing"]["together_ms"]
        if b["gemm_ms"] < 0.5 * together:
            fail(f"the GEMM beside a collective ({b['gemm_ms']} ms) is far below it alone on every rank ({together} ms)",
                 proc)


class Tables(html.parser.HTMLParser):
    """The cells of every <table>, row by row."""

    def __init__(self):
        super().__init__()
        self.tables, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def formats(work):
    base = ["--nproc-per-node", "2", *SMALL]
    expected_sizes = {c: SIZES for c in COLLECTIVES}
    rows = len(COLLECTIVES) * len(SIZES)

    # JSON, and the store.
    store = os.path.join(work, "results.sqlite")
    json_path = os.path.join(work, "comm.json")
    proc = comm(*base, "--format", "json", "--output", json_path, "--store", store)
    if proc.stdout.strip():
        fail("with --output the report must not go to stdout", proc)
    if "[rank 1]" in proc.stdout:
        fail("rank 1 wrote to stdout", proc)
    with open(json_path) as f:
        doc = json.load(f)
    check_document(doc, 2, "float32", expected_sizes, proc)
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    stored = db.execute("SELECT backend, device, world_size, nnodes, nproc_per_node, dtype, document FROM comm_runs").fetchall()
    if len(stored) != 1 or stored[0][:6] != ("gloo", "cpu", 2, 1, 2, "float32"):
        fail(f"stored comm runs: {[s[:6] for s in stored]}", proc)
    if json.loads(stored[0][6])["results"] != doc["results"]:
        fail("the stored document's results differ from the JSON file's", proc)
    table = db.execute("SELECT collective, size_bytes, count, time_us, busbw_GBps, correct FROM comm_results "
                       "ORDER BY collective, size_bytes").fetchall()
    if [(c, s, n, t, b, 1) for c, s, n, t, b, _ in table] != \
            [(r["collective"], r["size_bytes"], r["count"], r["time_us"], r["busbw_GBps"], 1) for r in doc["results"]]:
        fail(f"comm_results rows differ from the document: {table[:3]}...", proc)
    db.close()
    if os.path.exists(store + "-journal") or os.path.exists(store + "-wal"):
        fail("the store left a journal beside it", proc)
    history = subprocess.run([TOKBENCH, "history", "--store", store], capture_output=True, text=True,
                             env=clean_env(), timeout=120)
    if history.returncode != 0 or not re.search(r"^\s+1\s+\S+\s+20\s+gloo\s+cpu\s+2\s+float32", history.stdout, re.M):
        fail("`tokbench history` does not list the comm benchmark", history)
    if set(os.listdir(work)) != {"comm.json", "results.sqlite"}:
        fail(f"files beside the outputs: {sorted(os.listdir(work))}", proc)

    # The other formats print what the JSON document holds; each skips the compute-sharing probe
    # (about 10 s a run here), which only the document carries (docs/comm.md).
    base = base + ["--compute-sharing", "off"]

    # print, on stdout.
    proc = comm(*base)
    lines = [l for l in proc.stdout.splitlines() if l.strip()]
    if not lines or not lines[0].startswith("COLLECTIVES: gloo over 2 ranks"):
        fail("print: no title line", proc)
    if lines[1].split() != COLUMNS or len(lines) != 2 + rows:
        fail(f"print: header {lines[1].split() if len(lines) > 1 else None}, {len(lines) - 2} rows", proc)
    for line in lines[2:]:
        cells = line.split()
        if cells[0] not in COLLECTIVES or cells[3] != "float32" or cells[9] != "yes" or float(cells[4]) <= 0:
            fail(f"print: row {line!r}", proc)

    # CSV.
    csv_path = os.path.join(work, "comm.csv")
    proc = comm(*base, "--format", "csv", "--output", csv_path)
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != COLUMNS:
            fail(f"csv columns {reader.fieldnames}", proc)
        records = list(reader)
    if len(records) != rows or any(r["dtype"] != "float32" or r["correct"] != "true" for r in records):
        fail(f"csv rows: {records[:2]}", proc)
    if any(float(r["time_us"]) <= 0 or int(r["size_bytes"]) != 4 * int(r["count"]) for r in records):
        fail("csv: a time or a count is wrong", proc)

    # Markdown.
    md_path = os.path.join(work, "comm.md")
    proc = comm(*base, "--format", "markdown", "--output", md_path)
    with open(md_path) as f:
        md = f.read().splitlines()
    pipe = [l for l in md if l.startswith("|")]
    if not md[0].startswith("### COLLECTIVES") or len(pipe) != 2 + rows:
        fail(f"markdown: {len(pipe)} table lines", proc)
    if [c.strip() for c in pipe[0].strip("|").split("|")] != COLUMNS:
        fail(f"markdown header {pipe[0]}", proc)
    if not re.fullmatch(r"\|( -{3,}:? \|)+", pipe[1]) or pipe[1].count("---: |") != 7:
        fail(f"markdown alignment row {pipe[1]}", proc)

    # HTML.
    html_path = os.path.join(work, "comm.html")
    proc = comm(*base, "--format", "html", "--output", html_path)
    parser = Tables()
    with open(html_path) as f:
        page = f.read()
    parser.feed(page)
    if len(parser.tables) != 1 or parser.tables[0][0] != COLUMNS or len(parser.tables[0]) != 1 + rows:
        fail(f"html: tables {[len(t) for t in parser.tables]}", proc)
    if "<title>COLLECTIVES: gloo" not in page or "libtorch_version" not in page:
        fail("html: no title or no context", proc)

    # xlsx: a zip of sheet XML.
    xlsx_path = os.path.join(work, "comm.xlsx")
    proc = comm(*base, "--format", "xlsx", "--output", xlsx_path)
    with zipfile.ZipFile(xlsx_path) as z:
        names = z.namelist()
        workbook = z.read("xl/workbook.xml").decode()
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
        strings = z.read("xl/sharedStrings.xml").decode() if "xl/sharedStrings.xml" in names else ""
    sheets = re.findall(r'<sheet name="([^"]+)"', workbook)
    if sheets != ["results", "context"]:
        fail(f"xlsx sheets: {sheets}", proc)
    sheet_rows = len(re.findall(r"<row ", sheet))
    if sheet_rows != 1 + rows or any(c not in strings for c in COLUMNS):
        fail(f"xlsx: {sheet_rows} rows", proc)

    # Three ranks, bfloat16: all_gather and reduce_scatter move whole elements per rank (1000
    # bytes -> 996 = 3 x 166 x 2), all_reduce and broadcast the whole 1000; without the
    # compute-sharing probe, whose document says so with a null.
    proc = comm("--nproc-per-node", "3", "--min-bytes", "1000", "--max-bytes", "1000", "--dtype", "bfloat16",
                "--iters", "3", "--warmup-iters", "1", "--dist-timeout", "60", "--format", "json",
                "--compute-sharing", "off")
    doc = json.loads(proc.stdout)
    check_document(doc, 3, "bfloat16", {"all_gather": [996], "all_reduce": [1000], "broadcast": [1000],
                                        "reduce_scatter": [996]}, proc, sharing=False)


def usage(work):
    text_file = os.path.join(work, "not-a-store.sqlite")
    with open(text_file, "w") as f:
        f.write("hello\n")
    cases = [
        (["--min-bytes", "64K", "--max-bytes", "1K"], "--min-bytes"),
        (["--collectives", "all_reduce,alltoall"], "alltoall"),
        (["--collectives", "all_reduce,all_reduce"], "twice"),
        (["--min-bytes", "1X"], "--min-bytes"),
        (["--max-bytes", "2T"], "--max-bytes"),
        (["--step-factor", "1"], "--step-factor"),
        (["--iters", "0"], "--iters"),
        (["--dtype", "fp8"], "--dtype"),
        (["--compute-sharing", "maybe"], "--compute-sharing"),
        (["--backend", "nccl"], "--backend nccl"),
        (["--device", "tpu"], "--device"),
        (["--format", "pdf"], "--format"),
        (["--format", "xlsx"], "--output"),
        (["--output", os.path.join(work, "missing", "comm.json")], "--output"),
        (["--store", text_file], "--store"),
        (["--nnodes", "2"], "--master-port"),
        (["--dist-timeout", "0"], "--dist-timeout"),
    ]
    has_gpu = shutil.which("nvidia-smi") is not None and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip() != ""
    if not has_gpu:
        cases.append((["--device", "cuda"], "--device cuda"))
    for extra, named in cases:
        start = time.monotonic()
        proc = comm("--nproc-per-node", "2", *extra, expect=2)
        lines = proc.stderr.strip().splitlines()
        if len(lines) != 1 or named not in lines[0] or "valid" not in lines[0]:
            fail(f"{extra}: expected one line naming {named!r} and what is valid", proc)
        if "[rank" in proc.stderr or proc.stdout:
            fail(f"{extra}: a rank started or something was printed", proc)
        if time.monotonic() - start > 30:
            fail(f"{extra}: took {time.monotonic() - start:.0f} s to refuse", proc)
    with open(text_file) as f:
        if f.read() != "hello\n":
            fail("the refused --store file was changed")
    if sorted(os.listdir(work)) != ["not-a-store.sqlite"]:
        fail(f"a refused command left files: {sorted(os.listdir(work))}")


def torchrun(work):
    program = os.path.join(SOURCE, ".venv", "bin", "torchrun")
    program = program if os.access(program, os.X_OK) else shutil.which("torchrun")
    if program is None:
        print("skipped: no torchrun")
        return
    json_path = os.path.join(work, "comm.json")
    proc = subprocess.run([program, "--nproc_per_node=2", "--no-python", TOKBENCH, "comm", *SMALL, "--format", "json",
                           "--output", json_path], capture_output=True, text=True, env=clean_env(), timeout=600)
    if proc.returncode != 0:
        fail(f"torchrun exited {proc.returncode}", proc)
    with open(json_path) as f:
        check_document(json.load(f), 2, "float32", {c: SIZES for c in COLLECTIVES}, proc)


with tempfile.TemporaryDirectory() as work:
    {"formats": formats, "usage": usage, "torchrun": torchrun}[SCENARIO](work)
print("ok")
