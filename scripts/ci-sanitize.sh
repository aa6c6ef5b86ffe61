#!/usr/bin/env bash
# CI's sanitizer stage: an AddressSanitizer + UndefinedBehaviorSanitizer build and every
# CPU test under it (ctest -LE gpu; GPU tests are built too and would skip without a GPU).
#
#   bash scripts/ci-sanitize.sh                       # preset fuzz (clang): also the fuzzers
#   SANITIZE_PRESET=asan bash scripts/ci-sanitize.sh  # preset asan (gcc)
#   SANITIZE_BUILD=build/x JOBS=2 ...                 # build folder (default build/ci-<preset>), jobs
#
# The default builds with clang (preset `fuzz`: ASan + UBSan + libFuzzer coverage), so the
# same objects serve the libFuzzer targets next (tests/fuzz/run.sh with FUZZ_BUILD set to
# this folder) and CI pays for one sanitizer build, not two. Measured on the 2-core
# machine: the whole clang build in 4-8 min (more when the machine is shared), the CPU tests
# in ~1 min; gcc (preset asan) builds the same several times slower. Both pass every CPU test.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${SANITIZE_PRESET:-fuzz}
build=${SANITIZE_BUILD:-build/ci-$preset}
jobs=${JOBS:-$(nproc)}

t0=$(date +%s)
mkdir -p "$build"
cmake --preset "$preset" -B "$build" >"$build/configure.log" 2>&1 || { tail -30 "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$jobs"
echo "sanitize: $preset build in $(( $(date +%s) - t0 )) s"

t1=$(date +%s)
ctest --test-dir "$build" -LE gpu -j "$jobs" --output-on-failure --timeout 900 --no-tests=error
echo "sanitize: every CPU test passed under ASan + UBSan ($preset) in $(( $(date +%s) - t1 )) s"
