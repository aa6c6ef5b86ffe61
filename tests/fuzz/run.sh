#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang++, ASan + UBSan, coverage) and runs
# each for a bounded time from its seed corpus. Fails on any crash, sanitizer report,
# uncaught exception, leak, timeout or out-of-memory; the input that did it is saved and
# the command to replay it is printed.
#
#   bash tests/fuzz/run.sh                        # both targets, 60 s each
#   FUZZ_SECONDS=600 bash tests/fuzz/run.sh fuzz_report
#   FUZZ_BUILD=build/fuzz8 bash tests/fuzz/run.sh  # another build folder (default build/fuzz)
#   FUZZ_NO_BUILD=1 ...                           # use the targets as built
#
# Needs clang and libclang-rt-14-dev (Debian: apt-get install clang libclang-rt-14-dev).
# Outputs under $FUZZ_OUT (default <build>/fuzz-out): <target>.log, the grown corpus and
# crash-*/leak-*/timeout-*/oom-* artifacts.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD:-build/fuzz}
out=${FUZZ_OUT:-$build/fuzz-out}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_suite fuzz_report)

if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake --preset fuzz -B "$build" >/dev/null
  fi
  cmake --build "$build" --target "${targets[@]}"
fi

# Sanitizer settings: every report is fatal (the build has -fno-sanitize-recover), leaks
# too; the targets' compiled-in defaults (tests/support/sanitizer_support.cpp) add
# protect_shadow_gap=0 for CUDA and UBSan stack traces.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The suite loader checks metric names offline against this chip (no GPU needed).
export HARNESS_METRICS_CHIP=${HARNESS_METRICS_CHIP:-GH100}

status=0
for t in "${targets[@]}"; do
  case "$t" in
    fuzz_suite) seeds=(suites tests/data/suites tests/data/hostile/suites); dict=tests/fuzz/suite.dict; max_len=4096 ;;
    fuzz_report) seeds=(tests/data/reports tests/data/hostile/reports); dict=tests/fuzz/report.dict; max_len=16384 ;;
    *) echo "fuzz: unknown target '$t' (fuzz_suite, fuzz_report)" >&2; exit 2 ;;
  esac
  corpus="$out/corpus/$t"
  artifacts="$out/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  echo "== fuzz: $t for ${seconds}s (seeds: ${seeds[*]}; log: $out/$t.log)"
  rc=0
  # A fixed seed (FUZZ_SEED, default 1) makes a CI run repeatable up to the machine's speed.
  "$build/tests/fuzz/$t" -seed="${FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -max_len="$max_len" \
    -dict="$dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$corpus" "${seeds[@]}" >"$out/$t.log" 2>&1 || rc=$?
  grep -E '^(#[0-9]+ +DONE|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' "$out/$t.log" | tail -3 || true
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "fuzz: $t FAILED (exit $rc); the end of its log:" >&2
    tail -n 60 "$out/$t.log" >&2
    for a in "$artifacts"/*; do
      [ -e "$a" ] || continue
      echo "fuzz: replay with: $build/tests/fuzz/$t $a" >&2
    done
  else
    echo "fuzz: $t passed ($(find "$corpus" -type f | wc -l) inputs in its grown corpus)"
  fi
done
exit "$status"
