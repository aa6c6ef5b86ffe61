#!/usr/bin/env bash
# `harness gbench` output read by Google Benchmark's own tooling: two runs of the smoke
# suite (cpu variants on a machine without a GPU, every variant on one with a GPU) in
# Google Benchmark's JSON, compared by its tools/compare.py (Debian: libbenchmark-tools,
# /usr/share/benchmark/compare.py, which needs python3-scipy) and by `harness compare`.
# Usage: bash scripts/test-gbench.sh [BUILD_DIR]   (default build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
exe=$build/bin/harness
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
compare_py=/usr/share/benchmark/compare.py
# The distribution's python, where python3-scipy is installed (a pyenv python3 on PATH has none).
py=/usr/bin/python3; [ -x "$py" ] || py=python3
[ -f "$compare_py" ] || { echo "test-gbench: $compare_py missing (apt-get install libbenchmark-tools python3-scipy)" >&2; exit 1; }

for run in a b; do
  echo "--- harness gbench suites/smoke.yaml --benchmark_min_time=0.02 --benchmark_out=$run.json"
  "$exe" gbench suites/smoke.yaml --benchmark_min_time=0.02 --benchmark_repetitions=3 \
    --benchmark_out="$work/$run.json" --benchmark_out_format=json --benchmark_format=console 2>&1 | tail -6
done
echo "--- Google Benchmark's compare.py benchmarks a.json b.json"
"$py" "$compare_py" benchmarks "$work/a.json" "$work/b.json" | tee "$work/compare.txt" | tail -12
grep -q "stream/cpu/op:triad/n:1000" "$work/compare.txt" || { echo "test-gbench: compare.py did not list the smoke results" >&2; exit 1; }
echo "--- harness compare a.json b.json (reads Google Benchmark JSON)"
"$exe" compare "$work/a.json" "$work/b.json" --threshold 50 | tail -4 || true
echo "test-gbench: ok"
