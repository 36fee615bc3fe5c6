#!/usr/bin/env bash
# Install round trip for tokbench::throughput: `cmake --install` this build tree into a temporary
# prefix, then configure, build and run tests/throughput/consumer against it with
# find_package(tokbench), using the outer build's generator and compiler.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR [GENERATOR] [CXX_COMPILER] [CMAKE]
set -euo pipefail
build_dir=$1
source_dir=$2
generator=${3:-Ninja}
cxx=${4:-c++}
cmake_bin=${5:-cmake}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

"$cmake_bin" --install "$build_dir" --prefix "$prefix" >"$work/install.log" 2>&1 || {
  cat "$work/install.log"; exit 1; }
test -f "$prefix/include/tokbench/throughput.hpp"
# Only the throughput headers are installed, and the package has no other dependencies.
if find "$prefix/include" -type f ! -name 'throughput*.hpp' | grep -q .; then
  echo "unexpected headers installed:"; find "$prefix/include" -type f; exit 1
fi

"$cmake_bin" -S "$source_dir/tests/throughput/consumer" -B "$work/build" -G "$generator" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
"$cmake_bin" --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/build/throughput_consumer"
