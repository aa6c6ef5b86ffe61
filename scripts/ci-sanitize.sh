#!/usr/bin/env bash
# CI's sanitizer stage: an AddressSanitizer + UndefinedBehaviorSanitizer build of the core
# targets and their CPU tests (ctest -LE gpu).
#
#   bash scripts/ci-sanitize.sh                     # preset fuzz (clang): also builds the fuzzers
#   SANITIZE_PRESET=asan bash scripts/ci-sanitize.sh  # preset asan (gcc)
#
# The default builds with clang (preset `fuzz`): the same objects then serve the libFuzzer
# targets (tests/fuzz/run.sh with FUZZ_BUILD=build/ci-fuzz), so CI pays for one sanitizer
# build instead of two (each is ~25 min on 2 cores). Only the core targets are built:
# the CLI, the plugins it loads in tests, and the test executables of the core, the CLI,
# reliability, compare/report/validate and hostile inputs; the kernel families' CPU tests
# run in the release stage (all of them also pass here: ctest --preset asan -LE gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${SANITIZE_PRESET:-fuzz}
build=${SANITIZE_BUILD:-build/ci-$preset}
jobs=${JOBS:-$(nproc)}
targets=(harness core_test cli_test reliability_test compare_test compare_cli_test hostile_test)
[ "$preset" != fuzz ] || targets+=(fuzz_suite fuzz_report)

t0=$(date +%s)
mkdir -p "$build"
cmake --preset "$preset" -B "$build" >"$build/configure.log" 2>&1 || { tail -30 "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
echo "sanitize: built ${targets[*]} in $(( $(date +%s) - t0 )) s"

# Only the tests of the built executables exist (gtest discovery runs at build time);
# the add_test ones (render_html, the fuzz seed runs) use executables built above.
t1=$(date +%s)
ctest --test-dir "$build" -LE gpu -j "$jobs" --output-on-failure --timeout 900 --no-tests=error
echo "sanitize: CPU tests passed under ASan + UBSan in $(( $(date +%s) - t1 )) s"
