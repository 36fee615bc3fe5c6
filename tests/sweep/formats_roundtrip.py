#!/usr/bin/env python3
"""Every sweep output format, written by write_report (through sweep_report_tool) from a small
sweep of realistic run documents (docs/run.md's keys; two executors, 1 and 2 ranks, two sequence
lengths, an out-of-memory run and a configuration the sweep refused), and read back with a reader
that shares nothing with the writer: Python's csv, json and html.parser modules, a Markdown pipe
table reader, and an xlsx reader built on zipfile + xml.etree. Every run must come back, the
failed ones with their status.

With --screenshot: the HTML report is rendered by headless Chromium and the screenshot must show
the charts (bars in each executor's color, the failure marks); fails without chromium (the bootstrap installs it).

Usage: formats_roundtrip.py /path/to/sweep_report_tool OUT_DIR [--screenshot]"""
import csv
import html.parser
import io
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib
import xml.etree.ElementTree as ET

TOOL, OUT = sys.argv[1], sys.argv[2]
SCREENSHOT = "--screenshot" in sys.argv[3:]
os.makedirs(OUT, exist_ok=True)

TITLES = ["AVERAGE ITERATION TIME (ms)", "THROUGHPUT (tokens/s)", "NORMALIZED THROUGHPUT (tokens/s/GPU)",
          "MEMORY ALLOCATED (GB)", "TFLOP/s PER DEVICE", "MFU (%)", "STATUS"]
METRICS = ["average_iter_time", "tokens_per_sec", "tokens_per_sec_per_device", "memory_used_GB",
           "model_TFLOP_per_s_per_device", "mfu", "status"]
INDEX = ["model_name", "Num GPUS", "Seq Len", "Micro BS", "Global BS", "GA", "Distributed Mode", "Sharding Size"]
SHEETS = ["AVERAGE ITERATION TIME (ms)", "THROUGHPUT (tokens per s)", "NORMALIZED THROUGHPUT (per GPU)",
          "MEMORY ALLOCATED (GB)", "TFLOP per s PER DEVICE", "MFU (%)", "STATUS", "runs"]
EXECUTORS = ["eager", "fused"]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


# --- the sweep: run documents as `tokbench run --json-path` writes them, plus the sweep's keys ---
# pythia-1b in bf16 on H100s, micro-batch 4: the figures are consistent with one another
# (tokens/s x iter time = G x T, TFLOP/s = FLOPs / iter time, MFU against the datasheet peak).
PARAMS = 1_011_781_632       # litgpt's count
PEAK = 989.4                 # H100 SXM dense bf16, TFLOP/s per device


def ok_run(config_id, compiler, ranks, seq_len, mfu_target):
    micro, ga = 4, 1
    global_bs = micro * ga * ranks
    flops = 6 * PARAMS * seq_len * micro + 12 * 16 * 2048 * seq_len * seq_len * micro  # one micro-batch
    iter_ms = round(flops * ga / (mfu_target * PEAK * 1e12) * 1e3, 6)
    mem_gb = round(18.2 + 5.1 * seq_len / 1024, 6)
    measured, warmup = 20, 25
    window = measured * iter_ms / 1e3
    tokens = measured * global_bs * seq_len / window
    times = [iter_ms * (1 + 0.01 * ((i * 7) % 5 - 2)) for i in range(warmup + measured)]
    tflops_dev = flops * ga / (iter_ms / 1e3) / 1e12
    mode = "ddp" if ranks > 1 else "none"
    return {
        "average_iter_time": iter_ms, "model_flops": flops, "model_flop_per_sec": flops * ga * ranks / (iter_ms / 1e3),
        "tokens_per_sec": tokens, "memory_used_GB": mem_gb, "model_name": "pythia-1b", "Num GPUS": ranks,
        "Seq Len": seq_len, "Micro BS": micro, "Global BS": global_bs, "GA": ga, "Distributed Mode": mode,
        "Sharding Size": None, "compiler": compiler, "schema_version": 2, "status": "ok", "message": "",
        "tokens_per_sec_per_device": tokens / ranks, "model_flops_per_iter_per_device": flops * ga,
        "model_flops_per_iter_total": flops * ga * ranks, "model_TFLOP_per_s_per_device": tflops_dev,
        "model_TFLOP_per_s_total": tflops_dev * ranks, "mfu": tflops_dev / PEAK, "mfu_peak_TFLOP_per_s": PEAK,
        "mfu_peak_chip": "NVIDIA H100 SXM", "mfu_peak_source": "datasheet", "mfu_peak_is_estimate": False,
        "mfu_precision": "bf16", "flops_convention": "matmul", "warmup_iters": warmup, "max_iters": warmup + measured,
        "measured_iters": measured, "measured_window_s": window,
        "iter_time_ms": {"mean": iter_ms, "median": iter_ms, "p10": iter_ms * 0.98, "p90": iter_ms * 1.02,
                         "min": iter_ms * 0.97, "max": iter_ms * 1.03, "stddev": iter_ms * 0.014, "cv": 0.014},
        "iterations": [{"index": i, "warmup": i < warmup, "time_ms": t, "loss": 10.8 - 0.1 * i}
                       for i, t in enumerate(times)],
        "loss_first": 10.8 - 0.1 * warmup, "loss_last": 10.8 - 0.1 * (warmup + measured - 1),
        "parameters": PARAMS, "n_layer": 16, "memory_allocated_peak_GB": mem_gb,
        "memory_reserved_peak_GB": mem_gb + 1.9, "peak_rss_GB": 3.2, "memory_estimate_GB": mem_gb * 1.1,
        "harness_overhead_percent": 0.031, "device": "cuda:0", "device_name": "NVIDIA H100 80GB HBM3",
        "dtype": "bf16-true", "tf32": True, "world_size": ranks,
        "ranks": [] if ranks == 1 else [
            {"rank": r, "status": "ok", "message": "", "host": "gpu-node-07", "measured_iters": measured,
             "average_iter_time": iter_ms * (1 - 0.01 * r), "exposed_comm_ms_per_iter": 4.2 + r,
             "memory_allocated_peak_GB": mem_gb, "memory_reserved_peak_GB": mem_gb + 1.9, "peak_rss_GB": 3.2}
            for r in range(ranks)],
        "config": {"seed": 1337, "lr": 0.0005, "data": "random", "dist_launcher": "none",
                   "shard_mode": None, "bucketing_mode": "none", "zero_grad": "none"},
        "environment": {"tokbench_version": "0.1.0", "git_revision": "078c76c1a2b3", "libtorch_version": "2.11.0",
                        "build_type": "Release", "host": "gpu-node-07", "time": "2026-03-02T10:15:00Z",
                        "devices": [{"index": i, "name": "NVIDIA H100 80GB HBM3"} for i in range(ranks)]},
        "sweep_config_id": config_id,
    }


def make_runs():
    runs = []
    for ranks in (1, 2):
        for seq_len in (1024, 2048):
            for compiler in EXECUTORS:
                config_id = f"c{len(runs) // 2 + 1}"
                mfu = (0.41 if compiler == "eager" else 0.52) * (0.93 if ranks > 1 else 1.0) * (1.03 if seq_len > 1024 else 1)
                run = ok_run(config_id, compiler, ranks, seq_len, mfu)
                if ranks == 2 and seq_len == 2048 and compiler == "fused":
                    # Out of memory on rank 1: the JSON of a failed run, metrics unknown.
                    for key in ("average_iter_time", "tokens_per_sec", "tokens_per_sec_per_device", "model_flop_per_sec",
                                "model_TFLOP_per_s_per_device", "model_TFLOP_per_s_total", "mfu", "measured_window_s",
                                "iter_time_ms", "loss_first", "loss_last", "harness_overhead_percent"):
                        run[key] = None
                    run["status"] = "oom"
                    run["message"] = ("rank 1: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.11 GiB total, "
                                      "\"expandable_segments\" off)\nduring backward")
                    run["measured_iters"] = 0
                    run["iterations"] = run["iterations"][:3]
                runs.append(run)
    # A configuration the sweep refused before running it: only the keys the sweep knows.
    runs.append({"sweep_config_id": "c5", "model_name": "pythia-1b", "Num GPUS": 2, "Seq Len": 2048, "Micro BS": 4,
                 "Global BS": 8, "GA": 1, "Distributed Mode": "fsdp_hybrid_zero2_none_bucketing", "Sharding Size": 3,
                 "compiler": "eager", "status": "invalid",
                 "message": "--sharding-size 3 must divide the 2 ranks <W=2> & the \"hybrid\" mode; not run"})
    return runs


RUNS = make_runs()
CONTEXT = {"matrix": {"model_name": ["pythia-1b"], "nproc_per_node": [1, 2], "seq_len": [1024, 2048],
                      "micro_batch_size": [4], "executor": EXECUTORS}, "host": "gpu-node-07", "started": "2026-03-02T10:00:00Z",
           "tokbench_version": "0.1.0", "note": "<sweep> & \"friends\""}
runs_path = os.path.join(OUT, "runs.json")
with open(runs_path, "w") as f:
    json.dump({"context": CONTEXT, "runs": RUNS}, f, indent=1)

FAILED = {(r["Num GPUS"], r["Seq Len"], r["Distributed Mode"], r["compiler"]): r["status"]
          for r in RUNS if r["status"] != "ok"}
CONFIGS = []  # (ranks, seq len, mode, sharding) in order of first appearance
for r in RUNS:
    key = (r["Num GPUS"], r["Seq Len"], r["Distributed Mode"], r["Sharding Size"])
    if key not in CONFIGS:
        CONFIGS.append(key)


def expected_cell(config, compiler, metric):
    """What a table holds for this configuration and executor: a number, a status, or None (no run)."""
    for r in RUNS:
        if (r["Num GPUS"], r["Seq Len"], r["Distributed Mode"], r["Sharding Size"]) == config and r["compiler"] == compiler:
            if r["status"] != "ok" or metric == "status":
                return r["status"]
            return r[metric] * (100 if metric == "mfu" else 1)
    return None


def write(fmt, name, *extra):
    path = os.path.join(OUT, name)
    proc = subprocess.run([TOOL, runs_path, fmt, path, *extra], capture_output=True, text=True)
    check(proc.returncode == 0, f"{fmt}: exit {proc.returncode}: {proc.stderr.strip()}")
    return path


def config_of_index(cells, columns=INDEX):
    row = dict(zip(columns, cells))
    shard = row["Sharding Size"]
    return (int(row["Num GPUS"]), int(row["Seq Len"]), row["Distributed Mode"], None if shard == "none" else int(shard))


def close(text, value, decimals):
    """A number shown in the table's precision."""
    return abs(float(text.replace(",", "")) - value) <= 0.5 * 10 ** -decimals + 1e-9 * abs(value)


DECIMALS = {"average_iter_time": 2, "tokens_per_sec": 1, "tokens_per_sec_per_device": 1, "memory_used_GB": 3,
            "model_TFLOP_per_s_per_device": 3, "mfu": 2}


def check_pivot(fmt, metric, header, rows, exact=False):
    """A pivot read back: index columns then the executors, one row per configuration."""
    check(header == INDEX + EXECUTORS, f"{fmt} {metric}: header {header}")
    check(len(rows) == len(CONFIGS), f"{fmt} {metric}: {len(rows)} rows, expected {len(CONFIGS)}")
    seen = []
    for cells in rows:
        config = config_of_index(cells[:len(INDEX)])
        seen.append(config)
        check(cells[0] == "pythia-1b", f"{fmt} {metric}: model {cells[0]}")
        for e, compiler in enumerate(EXECUTORS):
            got, want = cells[len(INDEX) + e], expected_cell(config, compiler, metric)
            if want is None:
                check(got in ("", "—", None), f"{fmt} {metric} {config} {compiler}: {got!r} where no run")
            elif isinstance(want, str):
                check(got == want, f"{fmt} {metric} {config} {compiler}: {got!r}, expected status {want!r}")
            elif exact:
                check(isinstance(got, float) and math.isclose(got, want, rel_tol=1e-15),
                      f"{fmt} {metric} {config} {compiler}: {got!r}, expected {want!r}")
            else:
                check(close(got, want, DECIMALS[metric]), f"{fmt} {metric} {config} {compiler}: {got!r} vs {want}")
    check(seen == CONFIGS, f"{fmt} {metric}: rows {seen}, expected {CONFIGS}")


# --- CSV: Python's csv module ---
def unformula(text):
    """What the CSV holds for a text: a leading ' before what a spreadsheet would evaluate."""
    return "'" + text if isinstance(text, str) and text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def test_csv():
    path = write("csv", "sweep.csv")
    with open(path, newline="") as f:
        raw = f.read()
    check("\r\n" in raw, "csv: RFC 4180 CRLF line ends")
    rows = list(csv.reader(io.StringIO(raw)))
    header, body = rows[0], rows[1:]
    all_keys = set().union(*(r.keys() for r in RUNS))
    check(set(header) == all_keys and len(header) == len(all_keys), "csv: header = every key of any run, once")
    check(header[:3] == ["sweep_config_id", "model_name", "Num GPUS"], f"csv: header starts {header[:3]}")
    check(header.index("status") < header.index("average_iter_time") < header.index("iterations"),
          "csv: the result columns first (tabular order), then the other keys")
    check(len(body) == len(RUNS), f"csv: {len(body)} rows for {len(RUNS)} runs")
    for run, row in zip(RUNS, body):
        got = dict(zip(header, row))
        check(len(row) == len(header), f"csv: row of {len(row)} fields")
        check(got["status"] == run["status"], f"csv: status {got['status']}")
        check(got["message"] == unformula(run["message"]), f"csv: message {got['message']!r}")
        for key in header:
            value = run.get(key)
            if value is None:
                check(got[key] == "", f"csv: {key} of a run without it: {got[key]!r}")
            elif isinstance(value, (dict, list)):
                check(json.loads(got[key]) == value, f"csv: nested {key} as JSON")
            elif isinstance(value, bool):
                check(got[key] == ("true" if value else "false"), f"csv: {key} {got[key]}")
            elif isinstance(value, (int, float)):
                check(float(got[key]) == value, f"csv: {key} {got[key]} != {value!r}")
            else:
                check(got[key] == unformula(value), f"csv: {key} {got[key]!r}")


# --- JSON: the json module ---
def test_json():
    path = write("json", "sweep.json")
    with open(path) as f:
        doc = json.load(f)
    check(set(doc) == {"context", "runs"}, f"json: keys {sorted(doc)}")
    check(doc["context"] == CONTEXT, "json: context as given")
    check(doc["runs"] == RUNS, "json: every run as given, numbers exact")


# --- Markdown: a pipe-table reader ---
def split_row(line):
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def read_markdown(text):
    sections = {}
    for block in text.split("### ")[1:]:
        title, _, rest = block.partition("\n")
        lines = [l for l in rest.strip().split("\n") if l.startswith("|")]
        check(re.fullmatch(r"\|( :?-{3,}:? \|)+", lines[1]) is not None, f"markdown {title}: delimiter row {lines[1]}")
        sections[title] = (split_row(lines[0]), [split_row(l) for l in lines[2:]])
    return sections


def test_markdown():
    with open(write("markdown", "sweep.md")) as f:
        text = f.read()
    sections = read_markdown(text)
    check(list(sections) == TITLES, f"markdown: titles {list(sections)}")
    for title, metric in zip(TITLES, METRICS):
        header, rows = sections.get(title, ([], []))
        check_pivot("markdown", metric, header, rows)
    # Only the index columns that vary.
    with open(write("md", "sweep_varying.md", "--only-varying")) as f:
        header, rows = read_markdown(f.read())["STATUS"]
    check(header == ["Num GPUS", "Seq Len", "Global BS", "Distributed Mode", "Sharding Size"] + EXECUTORS,
          f"markdown --only-varying: header {header}")
    check(len(rows) == len(CONFIGS), "markdown --only-varying: every row")


# --- print: the reference's pandas look ---
def test_print():
    with open(write("print", "sweep.txt")) as f:
        text = f.read()
    blocks = text.rstrip("\n").split("\n\n")
    check([b.split("\n")[0] for b in blocks] == TITLES, "print: titles in order, a blank line between tables")
    for block, metric in zip(blocks, METRICS):
        lines = block.split("\n")
        check(lines[1].split()[:2] == ["compiler", "model_name"], f"print {metric}: header {lines[1]!r}")
        check(lines[1].endswith("eager    fused") or lines[1].endswith("eager  fused") or
              re.search(r"eager +fused$", lines[1]) is not None, f"print {metric}: executors {lines[1]!r}")
        widths = {len(l) for l in lines[1:]}
        check(len(widths) == 1, f"print {metric}: right-aligned columns of one width {widths}")
        check(len(lines) == 2 + len(CONFIGS), f"print {metric}: {len(lines) - 2} rows")
        for i, (line, config) in enumerate(zip(lines[2:], CONFIGS)):
            check(line.startswith(str(i) + " "), f"print {metric}: row number {line!r}")
            for e, compiler in enumerate(EXECUTORS):
                want = expected_cell(config, compiler, metric)
                got = line.split()[-2 + e]
                if isinstance(want, str):
                    check(got == want, f"print {metric} row {i}: {got} for status {want}")
                elif want is None:
                    check(got == "NaN", f"print {metric} row {i}: {got} where no run")
                else:
                    check(abs(float(got) - want) <= 5e-7 * max(1, abs(want)), f"print {metric} row {i}: {got} vs {want}")


# --- HTML: html.parser ---
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.tags, self.svg_elements, self.texts = [], [], [], []
        self.table = self.row = self.cell = None
        self.caption = None
        self.svg = None
        self.svg_text = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table":
            self.table = {"class": a.get("class"), "metric": a.get("data-metric"), "caption": "", "head": [], "rows": []}
        elif tag == "caption":
            self.caption = ""
        elif tag == "tr" and self.table is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = {"text": "", "class": a.get("class", "")}
        elif tag == "svg" and "chart" in (a.get("class") or ""):
            self.svg = a.get("id")
        if self.svg:
            self.svg_elements.append((self.svg, tag, a))
            if tag == "text":
                self.svg_text = ""

    def handle_endtag(self, tag):
        if tag == "caption":
            self.table["caption"], self.caption = self.caption, None
        elif tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            (self.table["head"] if not self.table["head"] else self.table["rows"]).append(self.row) \
                if self.row and self.row[0]["text"] is not None else None
            self.row = None
        elif tag == "table":
            self.table["head"] = [c["text"] for c in self.table["head"][0]] if self.table["head"] else []
            self.tables.append(self.table)
            self.table = None
        elif tag == "text" and self.svg_text is not None:
            self.texts.append((self.svg, self.svg_text))
            self.svg_text = None
        elif tag == "svg" and self.svg:
            self.svg = None

    def handle_data(self, data):
        if self.caption is not None:
            self.caption += data
        if self.cell is not None:
            self.cell["text"] += data
        if self.svg_text is not None:
            self.svg_text += data


def read_html(path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    page = Page()
    page.feed(source)
    page.close()
    return source, page


def test_html():
    path = write("html", "sweep.html")
    source, page = read_html(path)
    for bad in ("<script", "<link", "@import", "http://", "https://", "src="):
        check(bad not in source, f"html: self-contained (found {bad!r})")
    pivots = [t for t in page.tables if t["class"] == "pivot"]
    check([t["caption"] for t in pivots] == TITLES, f"html: table captions {[t['caption'] for t in pivots]}")
    for t, metric in zip(pivots, METRICS):
        check(t["metric"] == metric, f"html: data-metric {t['metric']}")
        rows = [[c["text"] for c in r] for r in t["rows"]]
        check_pivot("html", metric, t["head"], rows)
        for r in t["rows"]:
            for c in r[len(INDEX):]:
                if metric != "status" and not re.fullmatch(r"[-0-9.,]+|—|N/A", c["text"]):
                    check("fail" in c["class"], f"html {metric}: status {c['text']} marked as a failure")
    runs = [t for t in page.tables if t["class"] == "runs"]
    check(len(runs) == 1 and len(runs[0]["rows"]) == len(RUNS), "html: the runs table, one row per run")
    if runs:
        head = runs[0]["head"]
        status_col = next(i for i, h in enumerate(head) if h.lower().startswith("status"))
        message_col = next(i for i, h in enumerate(head) if h.lower().startswith("message"))
        for run, row in zip(RUNS, runs[0]["rows"]):
            check(row[status_col]["text"] == run["status"], f"html runs: status {row[status_col]['text']}")
            check(row[message_col]["text"] == run["message"], f"html runs: message escaped and back {row[message_col]['text']!r}")
    # The charts: both SVGs, a bar per finished run, a failure mark per failed one.
    ids = {s for s, tag, a in page.svg_elements if tag == "svg"}
    check(ids == {"chart-throughput", "chart-scaling"}, f"html: chart svgs {ids}")
    ok = sum(1 for r in RUNS if r["status"] == "ok")
    bars = [a for s, tag, a in page.svg_elements if s == "chart-throughput" and tag == "rect" and a.get("class") == "bar"]
    check(len(bars) == ok, f"html: {len(bars)} bars for {ok} finished runs")
    check(all(float(a["height"]) > 0 for a in bars), "html: bars have height")
    colors = {a["fill"] for a in bars}
    check(colors == {"#4e79a7", "#f28e2b"}, f"html: bar colors {colors}")
    failed_marks = [a for s, tag, a in page.svg_elements if s == "chart-throughput" and tag == "g" and a.get("class") == "failed"]
    check(len(failed_marks) == len(FAILED), f"html: {len(failed_marks)} failure marks in the bar chart")
    statuses = sorted(t for s, t in page.texts if s == "chart-throughput" and t in FAILED.values())
    check(statuses == sorted(FAILED.values()), f"html: bar chart failure labels {statuses}")
    series = [a for s, tag, a in page.svg_elements if s == "chart-scaling" and tag == "path" and a.get("class") == "series"]
    points = [a for s, tag, a in page.svg_elements if s == "chart-scaling" and tag == "circle"]
    check(len(series) >= 2, f"html: {len(series)} scaling lines")
    check(len(points) >= ok, f"html: {len(points)} scaling points")
    scaling_labels = " ".join(t for s, t in page.texts if s == "chart-scaling")
    check("oom" in scaling_labels and "invalid" in scaling_labels, f"html: scaling chart failure labels {scaling_labels!r}")
    check("&lt;sweep&gt; &amp; &quot;friends&quot;" in source, "html: the context escaped")
    return path


# --- xlsx: zipfile + xml.etree ---
NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
      "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
      "rel": "http://schemas.openxmlformats.org/package/2006/relationships"}


def column_number(ref):
    letters = re.match(r"[A-Z]+", ref).group(0)
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n - 1


def read_xlsx(path):
    """{sheet name: (rows as lists of (kind, value)), pane attributes}; kinds: 'n' number, 's' string, 'b' boolean."""
    with zipfile.ZipFile(path) as z:
        strings = []
        if "xl/sharedStrings.xml" in z.namelist():
            for si in ET.fromstring(z.read("xl/sharedStrings.xml")).findall("m:si", NS):
                strings.append("".join(t.text or "" for t in si.iter(f"{{{NS['m']}}}t")))
        book = ET.fromstring(z.read("xl/workbook.xml"))
        rels = {r.get("Id"): r.get("Target") for r in ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))}
        sheets = {}
        for s in book.find("m:sheets", NS):
            target = rels[s.get(f"{{{NS['r']}}}id")]
            sheet = ET.fromstring(z.read("xl/" + target.lstrip("/").removeprefix("xl/")))
            rows = []
            for row in sheet.find("m:sheetData", NS):
                cells = {}
                for c in row:
                    kind, v = c.get("t"), c.find("m:v", NS)
                    if kind == "s":
                        cells[column_number(c.get("r"))] = ("s", strings[int(v.text)])
                    elif kind in ("str", "inlineStr"):
                        text = v.text if v is not None else "".join(t.text or "" for t in c.iter(f"{{{NS['m']}}}t"))
                        cells[column_number(c.get("r"))] = ("s", text)
                    elif kind == "b":
                        cells[column_number(c.get("r"))] = ("b", v.text == "1")
                    elif v is not None:
                        cells[column_number(c.get("r"))] = ("n", float(v.text))
                width = max(cells) + 1 if cells else 0
                rows.append([cells.get(i, ("", None)) for i in range(width)])
            pane = sheet.find("m:sheetViews/m:sheetView/m:pane", NS)
            sheets[s.get("name")] = (rows, pane.attrib if pane is not None else None)
        return sheets


def test_xlsx():
    path = os.path.join(OUT, "sweep.xlsx")
    proc = subprocess.run([TOOL, runs_path, "xlsx", path], capture_output=True, text=True)
    if proc.returncode == 2 and "libxlsxwriter" in proc.stderr:
        print("xlsx: built without libxlsxwriter, the format is refused as it should be:", proc.stderr.strip())
        return
    check(proc.returncode == 0, f"xlsx: exit {proc.returncode}: {proc.stderr.strip()}")
    check(not os.path.exists(path + ".tmp"), "xlsx: no temporary file left")
    sheets = read_xlsx(path)
    check(list(sheets) == SHEETS, f"xlsx: sheet names {list(sheets)}")
    for name in sheets:
        check(len(name) <= 31 and not set(name) & set("[]:*?/\\"), f"xlsx: sheet name {name!r} valid")
    for name, metric in zip(SHEETS, METRICS):
        rows, pane = sheets.get(name, ([], None))
        check(pane is not None and pane.get("state") == "frozen" and pane.get("ySplit") == "1",
              f"xlsx {name}: header row frozen ({pane})")
        header = [v for kind, v in rows[0]]
        check(all(kind == "s" for kind, v in rows[0]), f"xlsx {name}: header strings")
        body = []
        for row in rows[1:]:
            row = row + [("", None)] * (len(header) - len(row))
            for i, (kind, v) in enumerate(row[:len(INDEX)]):
                numeric = INDEX[i] in ("Num GPUS", "Seq Len", "Micro BS", "Global BS", "GA")
                check(kind == ("n" if numeric else "s") or (INDEX[i] == "Sharding Size" and kind in "ns"),
                      f"xlsx {name}: index {INDEX[i]} cell kind {kind}")
            for kind, v in row[len(INDEX):]:
                if isinstance(v, str):
                    check(kind == "s", f"xlsx {name}: status {v} as a string")
                elif v is not None:
                    check(kind == "n", f"xlsx {name}: number cell")
            body.append([str(int(v)) if kind == "n" and i < len(INDEX) else v
                         for i, (kind, v) in enumerate(row)])
        check_pivot("xlsx", metric, header, [[("none" if c is None and i < len(INDEX) else c) for i, c in enumerate(r)]
                                             for r in body], exact=metric != "status")
    rows, pane = sheets.get("runs", ([], None))
    check(pane is not None and pane.get("ySplit") == "1", "xlsx runs: header frozen")
    header = [v for kind, v in rows[0]]
    check(len(rows) == 1 + len(RUNS), f"xlsx runs: {len(rows) - 1} rows for {len(RUNS)} runs")
    for run, row in zip(RUNS, rows[1:]):
        got = dict(zip(header, row))
        check(got["status"] == ("s", run["status"]), f"xlsx runs: status {got['status']}")
        value = run.get("tokens_per_sec")
        if value is not None:
            check(got["tokens_per_sec"][0] == "n" and math.isclose(got["tokens_per_sec"][1], value, rel_tol=1e-15),
                  f"xlsx runs: tokens_per_sec {got['tokens_per_sec']}")


# --- the screenshot: headless Chromium renders the page; the charts must be on it ---
def read_png(path):
    """(width, height, rows of RGB tuples) from an 8-bit non-interlaced RGB/RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, f"PNG kind {depth}/{color}/{interlace}"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    bpp = 4 if color == 6 else 3
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ftype == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ftype == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def test_screenshot(html_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not browser:
        print("FAIL: no chromium to render the report (apt-get install chromium; scripts/bootstrap installs it)")
        sys.exit(1)
    png = os.path.join(OUT, "sweep_report.png")
    if os.path.exists(png):
        os.remove(png)
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               "--force-color-profile=srgb", "--force-device-scale-factor=1", "--no-first-run",
                               f"--user-data-dir={profile}", f"--screenshot={png}", "--window-size=1200,1600",
                               "file://" + os.path.abspath(html_path)],
                              capture_output=True, text=True, timeout=240)
    check(proc.returncode == 0 and os.path.exists(png), f"chromium: exit {proc.returncode}: {proc.stderr[-500:]}")
    if not os.path.exists(png):
        return
    print("screenshot:", png)
    width, height, rows = read_png(png)
    check((width, height) == (1200, 1600), f"screenshot size {width}x{height}")

    def near(p, q, tol=12):
        return all(abs(a - b) <= tol for a, b in zip(p, q))

    def count(y_range, color):
        return sum(1 for y in y_range for p in rows[y] if near(p, color))

    # The bar chart: rows crossed by bars of each executor's color (a legend swatch is 12 rows).
    eager, fused = (0x4e, 0x79, 0xa7), (0xf2, 0x8e, 0x2b)
    bar_rows = {name: [y for y in range(height) if count([y], color) >= 40] for name, color in
                (("eager", eager), ("fused", fused))}
    for name, found in bar_rows.items():
        print(f"screenshot: {len(found)} rows cross {name} bars")
        check(len(found) >= 100, f"screenshot: {len(found)} rows cross {name} bars (bar chart drawn?)")
    if not all(bar_rows.values()):
        return
    top, bottom = min(min(r) for r in bar_rows.values()), max(max(r) for r in bar_rows.values())
    # Its failure stubs: the hatch's own pink, between the bars' top and the axis.
    hatch = count(range(top, bottom + 1), (0xfb, 0xd5, 0xd0))
    print(f"screenshot: {hatch} pixels of the failure hatch in the bar chart")
    check(hatch >= 500, f"screenshot: {hatch} pixels of failure hatch (failed runs marked?)")
    # The scaling chart below it: lines and points of both executors, and the failure crosses.
    below = range(bottom + 1, min(height, bottom + 560))  # down to its axis, above the failed-runs list
    for name, color, least in (("eager", eager, 800), ("fused", fused, 800), ("failure", (0xc0, 0x39, 0x2b), 60)):
        n = count(below, color)
        print(f"screenshot: {n} pixels of the {name} color below the bar chart")
        check(n >= least, f"screenshot: {n} pixels of the {name} color below the bar chart (scaling chart drawn?)")

if SCREENSHOT:
    page = test_html()
    test_screenshot(page)
else:
    test_csv()
    test_json()
    test_markdown()
    test_print()
    test_html()
    test_xlsx()

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
