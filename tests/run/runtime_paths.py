#!/usr/bin/env python3
"""The run paths of the binaries the build makes (cmake/runtime_paths.cmake, issue 38).

  dynamic_section BUILD_DIR ALLOWED every executable and shared object under BUILD_DIR (the
                                    build's program, tests, benchmarks and modules) has a RUNPATH of only ALLOWED's folders (':'-separated,
                                    as CMake chose them), each absolute and existing; no RPATH, no
                                    empty, relative or $ORIGIN entry; and the loader finds every
                                    library each needs (ldd: nothing "not found").
  planted_library TOKBENCH          `tokbench version` run from a folder holding a junk file named
                                    like every library it loads (libfmt.so.9, libtorch.so, ...)
                                    still works: the working directory is not searched.
Usage: runtime_paths.py SCENARIO ..."""
import os
import re
import subprocess
import sys
import tempfile


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def dynamic_entries(path):
    """(tag, value) of the dynamic section's NEEDED, RPATH and RUNPATH entries."""
    out = subprocess.run(["readelf", "-d", "-W", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\((NEEDED|RPATH|RUNPATH)\)\s+[^\[]*\[(.*)\]", out)


def is_linked_elf(path):
    """An ELF executable or shared object (e_type 2 or 3), not an object file (1)."""
    with open(path, "rb") as f:
        head = f.read(18)
    return len(head) == 18 and head[:4] == b"\x7fELF" and int.from_bytes(head[16:18], "little") in (2, 3)


def dynamic_section(build_dir, allowed_text):
    allowed = [d for d in allowed_text.split(":")]
    for d in allowed:
        if not d or not os.path.isabs(d) or not os.path.isdir(d):
            fail(f"the build's own run path entry {d!r} is not an existing absolute folder")
    binaries = []
    for folder, subfolders, files in os.walk(build_dir):
        subfolders[:] = [d for d in subfolders if d != "CMakeFiles"]  # compiler probes and objects
        binaries += [os.path.join(folder, f) for f in files
                     if not os.path.islink(os.path.join(folder, f)) and is_linked_elf(os.path.join(folder, f))]
    binaries.sort()
    if not any(os.path.basename(b) == "tokbench" for b in binaries):
        fail(f"no tokbench among {binaries}")
    problems = []
    for binary in binaries:
        entries = dynamic_entries(binary)
        name = os.path.basename(binary)
        if any(tag == "RPATH" for tag, _ in entries):
            problems.append(f"{name}: has an RPATH (searched before LD_LIBRARY_PATH); want RUNPATH only")
        for tag, value in entries:
            if tag not in ("RPATH", "RUNPATH"):
                continue
            for entry in value.split(":"):
                if entry not in allowed:
                    problems.append(f"{name}: run path entry {entry!r} is not one the build chose ({allowed})")
        ldd = subprocess.run(["ldd", binary], capture_output=True, text=True)
        missing = [line.strip() for line in ldd.stdout.splitlines() if "not found" in line]
        if missing:
            problems.append(f"{name}: the loader does not find {missing}")
        print(f"{name}: {[v for t, v in entries if t != 'NEEDED']}")
    if problems:
        fail("\n  ".join(problems))
    print(f"PASS dynamic_section: {len(binaries)} binaries")


def planted_library(tokbench):
    needed = [value for tag, value in dynamic_entries(tokbench) if tag == "NEEDED"]
    if "libfmt.so.9" not in needed and not any(n.startswith("libfmt.so") for n in needed):
        print(f"note: tokbench does not load libfmt directly ({needed})")
    with tempfile.TemporaryDirectory() as folder:
        for name in needed:  # junk: the loader refuses it ("file too short"), so loading one fails the run
            with open(os.path.join(folder, name), "wb") as f:
                f.write(b"not a library\n")
        env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
        proc = subprocess.run([os.path.abspath(tokbench), "version"], cwd=folder, capture_output=True, text=True,
                              env=env, timeout=120)
        if proc.returncode != 0 or "tokbench" not in proc.stdout:
            fail(f"tokbench version beside junk {needed}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}")
    print(f"PASS planted_library: {len(needed)} junk libraries in the working directory were not loaded")


if sys.argv[1] == "dynamic_section":
    dynamic_section(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "planted_library":
    planted_library(sys.argv[2])
else:
    fail(f"unknown scenario {sys.argv[1]}")
