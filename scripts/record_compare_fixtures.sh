#!/usr/bin/env bash
# Records the real iteration times that `tokbench compare`'s calibration test resamples
# (tests/sweep/test_compare_stats.cpp): separate `tokbench run`s of one small configuration,
# each kept as its run JSON in tests/fixtures/compare/.
#
#   scripts/record_compare_fixtures.sh [TOKBENCH] [RUNS]
#
# TOKBENCH defaults to build/bin/tokbench, RUNS to 3. Separate processes, a pause apart, so the
# recordings differ as separate runs do (a fresh process, allocator and cache state).
#
# Each run waits for a quiet machine (1-minute load average below QUIET_LOAD, default 0.8, for
# at most QUIET_WAIT_S, default 1800 s) and is recorded again (up to 5 tries) when the load
# average after it is 1.5 or more (the run's own thread adds about 1): a benchmark's iteration
# times are recorded on a quiet machine, and on
# a shared one a neighbour's build makes the times its own (on the 2-core VM, a load of 6
# turned a 0.2 s iteration into a 1 s one with a 60% spread).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tokbench="${1:-$here/build/bin/tokbench}"
runs="${2:-3}"
quiet_load="${QUIET_LOAD:-0.8}"
quiet_wait_s="${QUIET_WAIT_S:-1800}"
out="$here/tests/fixtures/compare"

if [[ ! -x "$tokbench" ]]; then
  echo "record_compare_fixtures: '$tokbench' is not an executable; valid: a built tokbench binary (cmake --build build)" >&2
  exit 2
fi
if ! [[ "$runs" =~ ^[0-9]+$ ]] || (( runs < 2 || runs > 10 )); then
  echo "record_compare_fixtures: RUNS '$runs' is not valid; valid: a whole number from 2 to 10" >&2
  exit 2
fi
if ! [[ "$quiet_load" =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! [[ "$quiet_wait_s" =~ ^[0-9]+$ ]]; then
  echo "record_compare_fixtures: QUIET_LOAD '$quiet_load' / QUIET_WAIT_S '$quiet_wait_s' not valid; valid: a load like 0.8 and whole seconds" >&2
  exit 2
fi

load() { cut -d' ' -f1 /proc/loadavg; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

wait_for_quiet() {
  local waited=0
  until below "$(load)" "$quiet_load"; do
    if (( waited >= quiet_wait_s )); then
      echo "record_compare_fixtures: the load average stayed at or above $quiet_load for ${quiet_wait_s} s (now $(load)); valid: a quiet machine, or a higher QUIET_LOAD" >&2
      exit 1
    fi
    sleep 10
    waited=$((waited + 10))
  done
}

mkdir -p "$out"
for i in $(seq 1 "$runs"); do
  for try in 1 2 3 4 5; do
    wait_for_quiet
    before="$(load)"
    # pythia-14m with 2 blocks at T=128 on the CPU, fp32, one thread (~0.1 s an iteration on
    # the 2-core VM; one thread leaves the other core to whatever else runs). 600 measured
    # iterations: at this machine's ~10% iteration-to-iteration spread and autocorrelation
    # (n_eff a tenth to a quarter of n), 60 give a 95% interval on the ratio about ±7% wide, too
    # wide for a 10% gate to catch a 15% slowdown reliably (docs/sweep.md, compare).
    "$tokbench" run --model-name pythia-14m --n-layers 2 --seq-len 128 --micro-batch-size 1 \
      --max-iters 610 --warmup-iters 10 --device cpu --dtype fp32 --num-threads 1 --quiet \
      --json-path "$out/run-$i.json.tmp" >/dev/null
    after="$(load)"
    if below "$after" 1.5; then break; fi
    echo "run $i try $try: the load rose to $after while it ran; recording it again"
    if (( try == 5 )); then
      echo "record_compare_fixtures: the machine did not stay quiet for run $i in 5 tries" >&2
      rm -f "$out/run-$i.json.tmp"
      exit 1
    fi
  done
  mv "$out/run-$i.json.tmp" "$out/run-$i.json"
  echo "recorded $out/run-$i.json (load average $before before, $after after)"
  if (( i < runs )); then sleep 5; fi
done
