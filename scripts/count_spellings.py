#!/usr/bin/env python3
"""How many times each fact is spelled in the C++ sources (src/): a fact declared once is spelled once.

A fact is one key of one document, or one of a few words that have one home:
  - every constant `NAME[] = "text"` of every src/**/*_keys.hpp header (comments left out), its
    document the namespace it is declared in (tokbench:: left off): config::record_key (the run
    record's top-level keys the option rows name), config::config_key and config::resolved_key (the
    record's `config` block), machine::environment_key (the `environment` block), and every other
    document's header;
  - every record key of src/results/record_keys.hpp's list, X(member, "text", type) (document
    "record", with config::record_key's constants, which that list names);
  - every constant `name[] = "text"` of src/results/record_blocks.{hpp,cpp} (document
    "record_blocks": the keys inside the record's nested blocks);
  - every key an option row names in src/config/*.cpp, `.record = {"text", place}` (document
    "record.config", with config::config_key's and config::resolved_key's constants), and every
    compare heading a row gives where it differs from its key, `.label = "text"` ("compare heading");
  - the distributed-mode and shard-mode words (document "mode words") and the executor names
    ("executor names"), each counted at every string literal that spells it;
  - PyTorch DDP's 25 MB bucket default, counted at every code line that spells 25 (25, 25.0, 25e6)
    beside a word about buckets or MB.
The same text declared in two documents is two facts. A key's count is its declarations within its
own document plus every stray: a string literal of src/ (raw strings included, adjacent literals
joined as the compiler joins them, comments left out)
whose whole text equals a declared key's and that is not at a declaration site. Declaration sites:
the *_keys.hpp headers, the literals of record_keys.hpp's list, of record_blocks' constants and of
the rows' `.record`, and the table files of TABLES below (a table that IS the declaration of its
words, each with its reason). A stray counts towards every key of its text, whatever its document.
Prints one line per fact, "COUNT  DOCUMENT  FACT  FILE:LINE ...", the facts spelled more than once
first, then a summary line: facts, spelled once, more than once, and the stray literals in all;
with --strays, then every stray literal, "FILE:LINE  TEXT  DOCUMENTS" (the worklist). docs/
architecture.md keeps its latest output and says why a fact remains spelled more than once.
Exit code 0 (a report, not a check).
Usage: scripts/count_spellings.py [--strays] [CHECKOUT]"""
import os
import re
import sys

ARGS = [a for a in sys.argv[1:] if a != "--strays"]
SHOW_STRAYS = "--strays" in sys.argv[1:]
ROOT = os.path.abspath(ARGS[0] if ARGS else os.path.join(os.path.dirname(__file__), ".."))
SRC = os.path.join(ROOT, "src")

# Table files whose literals declare their own words (another document's, or no document's): a
# literal there is not a stray. A file is listed only when it IS the table that declares the words.
TABLES = {
    # Each category's JSON name and label ("loss", "attention", ...): the category words' one home.
    "src/account/category.cpp": "the time account's category table",
    # Parts of PyTorch's operator and CUDA libraries' kernel names ("mean", "index", ...): words of
    # those names, matched in them, not keys of a document.
    "src/account/op_rules.cpp": "the time account's classification tables",
    # Lightning's precision names and their aliases ("tf32", "bf16-mixed", ...): the words' one home.
    "src/throughput/precision.cpp": "the precision names' table",
    # Each record key's label, unit and format (by key:: constant): the words the reports print.
    "src/results/result_columns.cpp": "the record's column table",
}

MODE_WORDS = ["ddp", "fsdp", "zero2", "zero3", "hybrid_zero2", "hybrid_zero3"]
EXECUTOR_NAMES = ["eager", "fused", "python-eager", "python-inductor", "python-thunder", "inductor", "thunder"]
# Documents whose keys several namespaces (or a list and a namespace) declare.
DOCUMENT_OF_NAMESPACE = {
    "config::record_key": "record",
    "config::config_key": "record.config",
    "config::resolved_key": "record.config",
}


def scan(path):
    """A C++ file's string literals, (line, text), raw strings included, and its code lines with
    comments left out (strings kept), {line: code}."""
    text = open(path, encoding="utf-8", errors="replace").read()
    literals, code, line, i, n = [], {}, 1, 0, len(text)
    current = []

    ends = []  # where each literal ends in the text

    def add(number, body, begin, end):
        # Adjacent literals ("a" "b", across lines too) are one literal, as the compiler joins them.
        if literals and text[ends[-1]:begin].strip() == "":
            literals[-1] = (literals[-1][0], literals[-1][1] + body)
            ends[-1] = end
        else:
            literals.append((number, body))
            ends.append(end)

    def emit(ch):
        current.append(ch)

    def newline():
        nonlocal line, current
        code[line] = "".join(current)
        current = []
        line += 1

    while i < n:
        c = text[i]
        if c == "\n":
            newline()
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for _ in range(text.count("\n", i, end)):
                newline()
            i = end
        elif c == "R" and text.startswith('"', i + 1) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            close = text.find(")" + delim + '"', open_paren)
            close = n if close < 0 else close
            body = text[open_paren + 1:close]
            add(line, body, i, close + len(delim) + 2)
            chunk = text[i:close + len(delim) + 2]
            parts = chunk.split("\n")
            for k, part in enumerate(parts):
                current.append(part)
                if k + 1 < len(parts):
                    newline()
            i = close + len(delim) + 2
        elif c == "'" and i > 0 and text[i - 1].isalnum():
            emit(c)  # a digit separator (1'000'000), not a character literal
            i += 1
        elif c in "\"'":
            j, start = i + 1, line
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            body = text[i + 1:j]
            if c == '"':
                add(start, body, i, j + 1)
            current.append(text[i:j + 1])
            i = j + 1
        else:
            emit(c)
            i += 1
    code[line] = "".join(current)
    return literals, code


def sources():
    for folder, _, files in sorted(os.walk(SRC)):
        for name in sorted(files):
            if name.endswith((".cpp", ".hpp", ".h", ".cu", ".cuh", ".in")):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, ROOT), scan(path)


CONSTANT = re.compile(r'(\w+)\[\]\s*=\s*"([^"\\]*)"')


def declarations(files):
    """{(document, text): [FILE:LINE, ...]} and the declaration sites, {(file, line, text)}, and
    the files that are declaration sites whole."""
    facts, sites, whole = {}, set(), set()

    def declare(document, text, path, number):
        facts.setdefault((document, text), []).append(f"{path}:{number}")
        sites.add((path, number, text))

    rows = {}  # config::record_key's constants by name, for record_keys.hpp's list
    for path, (_, code) in files.items():
        if not path.endswith("_keys.hpp"):
            continue
        whole.add(path)
        namespace = None
        for number in sorted(code):
            opened = re.search(r"namespace\s+([\w:]+)\s*\{", code[number])
            if opened:
                namespace = opened.group(1).replace("tokbench::", "")
            for name, text in CONSTANT.findall(code[number]):
                declare(DOCUMENT_OF_NAMESPACE.get(namespace, namespace), text, path, number)
                if namespace == "config::record_key":
                    rows[name] = text
    record_list = "src/results/record_keys.hpp"
    for number, line in sorted(files[record_list][1].items()):
        for text in re.findall(r'X\(\s*\w+\s*,\s*"([^"]+)"', line):
            declare("record", text, record_list, number)
        for name in re.findall(r"X\(\s*\w+\s*,\s*config::record_key::(\w+)", line):
            if name not in rows:
                raise SystemExit(f"{record_list}:{number}: config::record_key::{name} is not declared")
    for path in ("src/results/record_blocks.hpp", "src/results/record_blocks.cpp"):
        for number, line in sorted(files.get(path, (None, {}))[1].items()):
            for _, text in CONSTANT.findall(line):
                declare("record_blocks", text, path, number)
    for path, (_, code) in files.items():
        if path.startswith("src/config/") and path.endswith(".cpp"):
            for number, line in sorted(code.items()):
                for text in re.findall(r'\.record\s*=\s*\{\s*"([^"]+)"', line):
                    declare("record.config", text, path, number)
                # A row's compare heading, where it differs from its record key (IterationKey::label):
                # the row is where that heading is declared.
                for text in re.findall(r'\.label\s*=\s*"([^"]+)"', line):
                    declare("compare heading", text, path, number)
    for path in TABLES:
        whole.add(path)
    return facts, sites, whole


INCLUDE = re.compile(r'#\s*include\s+"([^"]+)"')


def includes(files, path):
    """The project headers a file includes, and those its own header includes (foo.cpp: foo.hpp's)."""
    found = set()
    for own in (path, re.sub(r"\.(cpp|cu)$", ".hpp", path)):
        if own in files:
            found.update("src/" + h for h in INCLUDE.findall("\n".join(files[own][1].values())))
    return found


def main():
    files = dict(sources())
    facts, sites, whole = declarations(files)
    texts = {}
    for document, text in facts:
        texts.setdefault(text, []).append(document)
    # The headers each document's keys are declared in: a file that includes one of them uses the
    # document, and a literal of one of its keys there is that key spelled again.
    headers = {}
    for (document, _), where in facts.items():
        headers.setdefault(document, set()).update(w.rsplit(":", 1)[0] for w in where if w.split(":")[0].endswith(".hpp"))
    headers.setdefault("record", set()).update({"src/results/record_keys.hpp", "src/config/row_record_keys.hpp"})
    strays, elsewhere = [], []  # (file, line, text, documents)
    for path, (literals, _) in files.items():
        if path in whole:
            continue
        used = includes(files, path) | {path}
        for number, text in literals:
            if text not in texts or (path, number, text) in sites:
                continue
            mine = sorted(d for d in texts[text] if headers.get(d, set()) & used)
            if mine:
                strays.append((path, number, text, mine))
            else:
                elsewhere.append((path, number, text, sorted(texts[text])))
    places = {}
    for (document, text), where in facts.items():
        places[(document, f'"{text}"')] = list(where) + [f"{p}:{n}" for p, n, t, ds in strays
                                                         if t == text and document in ds]
    # The words of one home: every literal that spells them, wherever it is, but another document's
    # key declared with the same text (AdamW's "fused" implementation in train/adamw_keys.hpp).
    for document, words in (("mode words", MODE_WORDS), ("executor names", EXECUTOR_NAMES)):
        for word in words:
            places[(document, f'"{word}"')] = [f"{p}:{n}" for p, (lits, _) in files.items()
                                               if not p.endswith("_keys.hpp") for n, t in lits if t == word]
    # 25 MB as a number in code: 25, 25.0, 25e6, 25 * 1024 * 1024, 25 << 20 near a bucket.
    bucket = re.compile(r"(?<![\w.])25(\.0*)?(e6)?(?![\w.])")
    number_places = []
    for path, (_, code) in files.items():
        for number, line in sorted(code.items()):
            if bucket.search(line) and re.search(r"bucket|Bucket|_mb|Mb|MB", line):
                number_places.append(f"{path}:{number}")
    places[("bucket default", "the 25 MB DDP bucket default")] = number_places
    order = sorted(places, key=lambda f: (-(len(places[f]) > 1), f[0], f[1]))
    for fact in order:
        print(f"{len(places[fact]):3d}  {fact[0]}  {fact[1]}  {' '.join(places[fact])}")
    more = [f for f in places if len(places[f]) > 1]
    once = [f for f in places if len(places[f]) == 1]
    print(f"# {len(places)} facts, {len(once)} spelled once, {len(more)} more than once "
          f"({len(places) - len(once) - len(more)} spelled nowhere); {len(strays)} stray literals in files "
          f"that use the key's document, {len(elsewhere)} literals of a key's text in files that do not")
    if SHOW_STRAYS:
        for kind, found in (("stray", strays), ("elsewhere", elsewhere)):
            for path, number, text, documents in sorted(found):
                print(f"{kind}  {path}:{number}  \"{text}\"  {' '.join(documents)}")


if __name__ == "__main__":
    main()
