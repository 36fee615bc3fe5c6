#!/usr/bin/env bash
# The installed programs: `cmake --install` this build tree into a temporary prefix; there,
# `tokbench` answers --help by itself, refuses a bad value (exit 2), and finds tokbench-engine
# beside it for work (`version` names LibTorch, which only the engine links).
# Usage: installed.sh BUILD_DIR [CMAKE]
set -euo pipefail
build_dir=$1
cmake_bin=${2:-cmake}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cmake_bin" --install "$build_dir" --prefix "$work/prefix" >"$work/install.log" 2>&1 || {
  cat "$work/install.log"; exit 1; }
tokbench=$work/prefix/bin/tokbench
test -x "$tokbench" || { echo "FAIL: no bin/tokbench installed"; exit 1; }
test -x "$work/prefix/bin/tokbench-engine" || { echo "FAIL: no bin/tokbench-engine beside bin/tokbench"; exit 1; }

"$tokbench" run --help | grep -q -- "--model-name" || { echo "FAIL: installed tokbench run --help"; exit 1; }
code=0
"$tokbench" run --model-name pythia-14m --beta1 -1 2>"$work/err" || code=$?
if [ "$code" -ne 2 ] || ! grep -q -- "--beta1" "$work/err"; then
  echo "FAIL: installed tokbench run --beta1 -1: exit $code, want 2: $(cat "$work/err")"; exit 1
fi
version=$("$tokbench" version)
case "$version" in
  "tokbench "*"LibTorch "*) echo "ok: $version" ;;
  *) echo "FAIL: installed tokbench version printed '$version', want the engine's line naming LibTorch"; exit 1 ;;
esac
