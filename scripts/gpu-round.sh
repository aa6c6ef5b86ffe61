#!/usr/bin/env bash
# The whole GPU round in one command, for a machine with a CUDA GPU (the device machine):
# build, every test (GPU tests included), then the suites. Logs and reports go to $OUT
# (default ./out). Stages can be chosen: bash scripts/gpu-round.sh build test smoke gemm
#   stages: build test smoke gemm attention memory broken
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
stages=${*:-build test smoke gemm}
exe=build/release/bin/harness
status=0
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm --format=csv
  echo "commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)  date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} 2>&1 | tee "$OUT/env.txt"

for s in $stages; do
  case $s in
    build)
      step build
      cmake --preset release >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
      cmake --build --preset release -j "$(nproc)" >"$OUT/build.log" 2>&1 || { grep -E "error|Error" -A3 "$OUT/build.log" | head -60; exit 1; }
      grep -c "warning" "$OUT/build.log" | xargs echo "build warnings:" ;;
    test)
      step "ctest (all labels)"
      ctest --preset release -j 4 --timeout 300 >"$OUT/ctest.log" 2>&1 || status=1
      grep -E "tests passed|FAILED|Failed|Not Run|\*\*\*" "$OUT/ctest.log" | head -40 ;;
    smoke)
      step "harness run suites/smoke.yaml"
      $exe run suites/smoke.yaml --out "$OUT/smoke.json" --quiet 2>&1 | tee "$OUT/smoke.log" | tail -30 || status=1 ;;
    gemm)
      step "harness run suites/gemm.yaml"
      $exe run suites/gemm.yaml --out "$OUT/gemm.json" --quiet 2>&1 | tee "$OUT/gemm.log" | tail -60 || status=1 ;;
    attention)
      step "harness run suites/attention.yaml"
      $exe run suites/attention.yaml --out "$OUT/attention.json" --quiet 2>&1 | tee "$OUT/attention.log" | tail -60 || status=1 ;;
    memory)
      step "harness run suites/attention-memory.yaml"
      $exe run suites/attention-memory.yaml --out "$OUT/attention-memory.json" --quiet 2>&1 | tee "$OUT/memory.log" | tail -40 || status=1 ;;
    broken)
      step "harness run --isolate tests/data/suites/broken_gpu.yaml"
      $exe run --isolate --plugin build/release/plugins/broken_plugin.so tests/data/suites/broken_gpu.yaml \
        --out "$OUT/broken.json" 2>&1 | tee "$OUT/broken.log" | tail -20
      step "the same without --isolate (must end cleanly, suggesting --isolate)"
      $exe run --plugin build/release/plugins/broken_plugin.so tests/data/suites/broken_gpu.yaml \
        --out "$OUT/broken-inproc.json" 2>&1 | tail -8 ;;
    *) echo "unknown stage '$s'"; exit 2 ;;
  esac
done
exit $status
