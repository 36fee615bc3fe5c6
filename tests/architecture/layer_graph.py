#!/usr/bin/env python3
"""The code keeps to the layer graph that docs/architecture.md draws.

The page's `layers` block lists each folder of src/ with the folders it may use. This test
fails when:
  - a folder of src/ is missing from the block, or the block names one that does not exist;
  - the block's graph has a cycle;
  - a file of src/FOLDER/ includes "OTHER/..." (a project header) where OTHER is not FOLDER
    and not a folder FOLDER may use (include/tokbench/ is the throughput layer's);
  - a CMakeLists.txt of src/FOLDER/ links a tokbench target defined in a folder FOLDER may not
    use (interface targets of the top-level CMakeLists.txt, such as tokbench::options and
    tokbench_git_revision, belong to no layer);
  - the block declares an edge FOLDER -> OTHER that no include of src/FOLDER/ and no link of its
    CMakeLists.txt uses (a declared edge nobody needs makes the map lie about the heights);
  - the page's height table differs from the heights the block's graph gives (a layer's height
    is one more than the tallest layer it uses; 0 when it uses none).
Each finding is one line naming the file; the exit code is the number of findings (0: ok).
Usage: layer_graph.py CHECKOUT"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
SRC = os.path.join(ROOT, "src")


def read_graph():
    text = open(os.path.join(ROOT, "docs", "architecture.md")).read()
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    if not block:
        sys.exit("docs/architecture.md has no ```layers block")
    graph = {}
    for line in block.group(1).splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        folder, _, uses = line.partition(":")
        graph[folder.strip()] = set(uses.split())
    return graph


def cycles(graph):
    seen, stack, found = set(), [], []

    def visit(node):
        if node in stack:
            found.append(" -> ".join(stack[stack.index(node):] + [node]))
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for n in sorted(graph.get(node, ())):
            visit(n)
        stack.pop()

    for node in sorted(graph):
        visit(node)
    return found


def targets_by_folder():
    """tokbench targets -> the src/ folder whose CMakeLists.txt defines them."""
    owner = {}
    for folder in os.listdir(SRC):
        path = os.path.join(SRC, folder, "CMakeLists.txt")
        if os.path.isfile(path):
            for name in re.findall(r"add_library\(\s*(tokbench[\w:]*)", open(path).read()):
                owner[name] = folder
                owner[name.replace("tokbench_", "tokbench::", 1)] = folder
    return owner


def heights(graph):
    memo = {}

    def height(node):
        if node not in memo:
            memo[node] = 1 + max((height(n) for n in graph[node] if n in graph), default=-1)
        return memo[node]

    return {node: height(node) for node in graph}


def read_height_table():
    """The page's `| height | layers |` table: {layer: height}."""
    text = open(os.path.join(ROOT, "docs", "architecture.md")).read()
    table = {}
    for h, layers in re.findall(r"^\|\s*(\d+)\s*\|\s*([\w, ]+?)\s*\|\s*$", text, re.M):
        for layer in layers.split(","):
            table[layer.strip()] = int(h)
    return table


def main():
    graph = read_graph()
    findings = []
    folders = {f for f in os.listdir(SRC) if os.path.isdir(os.path.join(SRC, f))}
    for f in sorted(folders - set(graph)):
        findings.append(f"src/{f}/ is not in docs/architecture.md's layers block")
    for f in sorted(set(graph) - folders):
        findings.append(f"docs/architecture.md names src/{f}/, which does not exist")
    for f, uses in graph.items():
        for u in sorted(uses - set(graph)):
            findings.append(f"docs/architecture.md: {f} uses {u}, which is not a layer")
    findings += [f"docs/architecture.md: a cycle {c}" for c in cycles(graph)]

    used = set()  # (folder, other) edges some include or link needs
    include = re.compile(r'^\s*#\s*include\s*"([\w.]+)/', re.M)
    for folder in sorted(folders & set(graph)):
        allowed = graph[folder] | {folder}
        for dirpath, _, files in os.walk(os.path.join(SRC, folder)):
            for name in sorted(files):
                if not re.search(r"\.(c|h)(pp|xx)?$|\.cu$|\.in$", name):
                    continue
                path = os.path.join(dirpath, name)
                for other in include.findall(open(path, errors="replace").read()):
                    other = "throughput" if other == "tokbench" else other
                    if other in folders and other != folder:
                        used.add((folder, other))
                    if other in folders and other not in allowed:
                        findings.append(f"{os.path.relpath(path, ROOT)} includes {other}/, which {folder} may not use")

    owner = targets_by_folder()
    for folder in sorted(folders & set(graph)):
        path = os.path.join(SRC, folder, "CMakeLists.txt")
        if not os.path.isfile(path):
            continue
        allowed = graph[folder] | {folder}
        for call in re.findall(r"target_link_libraries\((.*?)\)", open(path).read(), re.S):
            for target in re.findall(r"tokbench[\w:]*", call)[1:]:  # the first word is the linking target
                other = owner.get(target)
                if other is not None and other != folder:
                    used.add((folder, other))
                if other is not None and other not in allowed:
                    findings.append(f"src/{folder}/CMakeLists.txt links {target} ({other}), which {folder} may not use")
    for folder in sorted(folders & set(graph)):
        for other in sorted(graph[folder] & folders):
            if (folder, other) not in used:
                findings.append(f"docs/architecture.md: {folder} declares {other}, which no file of src/{folder}/ includes or links")
    if not cycles(graph):
        table = read_height_table()
        for layer, h in sorted(heights(graph).items()):
            if layer not in table:
                findings.append(f"docs/architecture.md: the height table does not list {layer} (height {h})")
            elif table[layer] != h:
                findings.append(f"docs/architecture.md: the height table puts {layer} at {table[layer]}; its uses put it at {h}")
        for layer in sorted(set(table) - set(graph)):
            findings.append(f"docs/architecture.md: the height table lists {layer}, which is not a layer")
    for line in findings:
        print(line)
    print(f"{len(findings)} finding(s) against the layer graph of docs/architecture.md")
    sys.exit(min(len(findings), 100))


if __name__ == "__main__":
    main()
