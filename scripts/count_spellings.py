#!/usr/bin/env python3
"""How many times each fact is spelled in the C++ sources (src/): a fact declared once is spelled once.

Counts the string literals (comments left out) of:
  - every record key of src/results/record_keys.hpp ("Seq Len", "status", ...; the keys the option rows
    name take their text from src/config/row_record_keys.hpp) and every key of the
    record's nested blocks in src/results/record_blocks.{hpp,cpp}, src/config/resolved_keys.hpp and
    src/machine/environment_keys.hpp ("time_ms", "host", "dist_backend", "cpu_cores", ...), their own
    definitions included: 1 means only the constant spells it;
  - every key of the record's `config` block an option row names (src/config/*.cpp, .record = {"key",
    place}, and src/config/row_record_keys.hpp's config_key constants) that is not counted above;
  - the distributed-mode and shard-mode words (--distributed-mode, --shard-mode);
  - the executor names (--compile / --executor);
and the code lines (comments left out) that spell PyTorch DDP's 25 MB bucket default.
Prints one line per fact, "COUNT  FACT  FILE:LINE ...", the facts spelled more than once first,
then a summary line. docs/architecture.md keeps its latest output and says why a fact remains
spelled more than once. Exit code 0 (a report, not a check).
Usage: scripts/count_spellings.py [CHECKOUT]"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
SRC = os.path.join(ROOT, "src")


def code_of(line, in_block):
    """The line without its comments (// and /* */), strings kept; and whether a /* block is still open."""
    out, i, quote = [], 0, None
    while i < len(line):
        c = line[i]
        if in_block:
            if line.startswith("*/", i):
                in_block, i = False, i + 2
            else:
                i += 1
            continue
        if quote:
            out.append(c)
            if c == "\\" and i + 1 < len(line):
                out.append(line[i + 1])
                i += 2
                continue
            if c == quote:
                quote = None
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_block, i = True, i + 2
            continue
        elif c in "\"'":
            quote = c
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out), in_block


def sources():
    for folder, _, files in os.walk(SRC):
        for name in sorted(files):
            if name.endswith((".cpp", ".hpp", ".h", ".cu", ".cuh", ".in")):
                path = os.path.join(folder, name)
                in_block = False
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        code, in_block = code_of(line, in_block)
                        yield os.path.relpath(path, ROOT), number, code


def record_keys():
    """The record's keys: record_keys.hpp's list, X(member, "key", type), where a key the option
    rows name is X(member, config::record_key::NAME, type) and its text is config/row_record_keys.hpp's
    NAME[] = "key"."""
    text = open(os.path.join(SRC, "results", "record_keys.hpp")).read()
    rows = open(os.path.join(SRC, "config", "row_record_keys.hpp")).read()
    # Only the record_key namespace (config_key's names may repeat a member's name).
    section = re.search(r"namespace tokbench::config::record_key \{(.*?)\}", rows, re.S).group(1)
    row_text = dict(re.findall(r'(\w+)\[\]\s*=\s*"([^"]+)"', section))
    keys = set(re.findall(r'X\(\s*\w+\s*,\s*"([^"]+)"', text))
    for name in re.findall(r'X\(\s*\w+\s*,\s*config::record_key::(\w+)', text):
        keys.add(row_text[name])
    return sorted(keys)


def block_keys():
    """The keys of the record's nested blocks (iterations, iter_time_ms, ranks, unit_timings, the
    config's resolved values, the environment): the constants of results/record_blocks.hpp and
    .cpp, of config/resolved_keys.hpp (the config block's keys resolution fills) and of
    machine/environment_keys.hpp (the environment block's), name[] = "key"."""
    keys = set()
    for folder, name in (("results", "record_blocks.hpp"), ("results", "record_blocks.cpp"),
                         ("config", "resolved_keys.hpp"), ("machine", "environment_keys.hpp")):
        path = os.path.join(SRC, folder, name)
        if os.path.exists(path):
            keys |= set(re.findall(r'\w+\[\]\s*=\s*"([^"]+)"', open(path).read()))
    return sorted(keys - set(record_keys()))


def config_keys():
    """The keys of the record's `config` block that the option rows name (the options as given):
    each row's .record = {"key", place} in src/config/*.cpp, and config/row_record_keys.hpp's
    config_key constants (the keys another layer reads, which the rows name by constant); those
    that are also a record key or a block key are counted there."""
    keys = set()
    folder = os.path.join(SRC, "config")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".cpp"):
            keys |= set(re.findall(r'\.record\s*=\s*\{\s*"([^"]+)"', open(os.path.join(folder, name)).read()))
    rows = open(os.path.join(folder, "row_record_keys.hpp")).read()
    section = rows.split("namespace tokbench::config::config_key", 1)
    if len(section) == 2:
        keys |= set(re.findall(r'\w+\[\]\s*=\s*"([^"]+)"', section[1]))
    return sorted(keys - set(record_keys()) - set(block_keys()))


def main():
    lines = list(sources())
    facts = {}
    for key in record_keys():
        facts[f'record key "{key}"'] = re.compile(re.escape(f'"{key}"'))
    for key in block_keys():
        facts[f'block key "{key}"'] = re.compile(re.escape(f'"{key}"'))
    for key in config_keys():
        facts[f'config key "{key}"'] = re.compile(re.escape(f'"{key}"'))
    for word in ["ddp", "fsdp", "zero2", "zero3", "hybrid_zero2", "hybrid_zero3"]:
        facts[f'mode word "{word}"'] = re.compile(re.escape(f'"{word}"'))
    for name in ["eager", "fused", "python-eager", "python-inductor", "python-thunder", "inductor", "thunder"]:
        facts[f'executor name "{name}"'] = re.compile(re.escape(f'"{name}"'))
    # 25 MB as a number in code: 25, 25.0, 25e6, 25 * 1024 * 1024, 25 << 20 near a bucket.
    bucket = re.compile(r"(?<![\w.])25(\.0*)?(e6)?(?![\w.])")
    places = {fact: [] for fact in facts}
    places["the 25 MB DDP bucket default"] = []
    for path, number, code in lines:
        where = f"{path}:{number}"
        for fact, pattern in facts.items():
            places[fact].extend([where] * len(pattern.findall(code)))
        if bucket.search(code) and re.search(r"bucket|Bucket|_mb|Mb|MB", code):
            places["the 25 MB DDP bucket default"].append(where)
    order = sorted(places, key=lambda f: (-(len(places[f]) > 1), f))
    for fact in order:
        print(f"{len(places[fact]):3d}  {fact}  {' '.join(places[fact])}")
    more = [f for f in places if len(places[f]) > 1]
    print(f"# {len(places)} facts, {len(places) - len(more)} spelled at most once, {len(more)} more than once")


if __name__ == "__main__":
    main()
