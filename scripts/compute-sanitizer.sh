#!/usr/bin/env bash
# compute-sanitizer over every CUDA variant at small sizes (suites/sanitizer.yaml): the
# memcheck, racecheck, initcheck and synccheck tools, one harness run each, profiling off
# and one timed sample per result. Exits non-zero when any tool reports an error (or the
# harness itself fails a result, or a tool cannot run); every log is kept.
#
#   bash scripts/compute-sanitizer.sh                      # all four tools
#   bash scripts/compute-sanitizer.sh memcheck racecheck   # some of them
#   OUT=/tmp/cs BUILD=build/release bash scripts/compute-sanitizer.sh
#
# Logs: $OUT/compute-sanitizer/<tool>.log (tool + harness output) and <tool>.json (the
# harness report); $OUT defaults to ./out. Every result must pass (a skipped one, e.g. for
# want of a device, checked nothing). Runs in about 5 minutes on an H200; racecheck
# (slowest: it tracks every shared-memory access) takes a subset of the suite, chosen by
# RACECHECK_FILTER (a regular expression on result names; "." for everything). FILTER (a
# regular expression on result names) narrows every tool's run to those results instead, e.g.
#   FILTER='^attention/flash_wgmma/.*dtype:fp8_e4m3' bash scripts/compute-sanitizer.sh memcheck racecheck
# Where the tree has no .git, pass the commit: HARNESS_COMMIT=<sha> bash scripts/...
set -uo pipefail
# --help: the comment above, nothing run.
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,/^set -uo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}/compute-sanitizer
build=${BUILD:-build/release}
suite=${SUITE:-suites/sanitizer.yaml}
exe=$build/bin/harness
tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(memcheck racecheck initcheck synccheck)
# Racecheck: one configuration per kernel instantiation (each gemm kernel at both shapes,
# each flash head_dim causal + GQA (f32 SIMT and 3xTF32, and the bf16 tensor-core kernels), the naive-only head_dim, the Transformer step, the
# parallel patterns at odd sizes, every softmax, optimizer, conv2d and spmv case: they are small).
racecheck_filter=${RACECHECK_FILTER:-'^(stream/cuda/op:triad/n:4099|gemm/[a-z0-9_]+/M:[0-9]+/N:[0-9]+/K:[0-9]+/alpha:1/beta:0/dtype:[a-z0-9]+/layout:n[nt]$|attention(_backward)?/[a-z]+/batch:1/heads:2/kv_heads:1/seq_len:70/head_dim:[0-9]+/causal:true|attention(_backward)?/flash/batch:1/heads:4/kv_heads:2/seq_len:999/head_dim:[0-9]+/causal:true/scale:0/dtype:bf16|attention(_backward)?/flash_3xtf32(_k32)?/batch:1/heads:4/kv_heads:2/seq_len:999/head_dim:[0-9]+/causal:true/|attention/naive/batch:2/|train_transformer/|reduce/[a-z_]+/op:(sum/dtype:i32|max/dtype:f32)/n:4097$|scan/[a-z_]+/dtype:i32/n:4097$|histogram/[a-z_]+/bins:[a-z]+/data:skewed/n:8193$|softmax/|optimizer/|conv2d(_layer)?/|spmv/)'}
mkdir -p "$out"
# The training benchmark appends its per-variant figures here (not to the working folder).
export HARNESS_TRAIN_METRICS=${HARNESS_TRAIN_METRICS:-$out/train_transformer_metrics.jsonl}

sanitizer=$(command -v compute-sanitizer || true)
[ -n "$sanitizer" ] || [ ! -x /usr/local/cuda/bin/compute-sanitizer ] || sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [ -z "$sanitizer" ]; then
  echo "compute-sanitizer: not found (expected on PATH or /usr/local/cuda/bin)" >&2
  exit 2
fi
if [ ! -x "$exe" ]; then
  echo "== building $exe"
  { cmake --preset release -B "$build" && cmake --build "$build" --target harness; } >"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log" >&2; exit 2; }
fi

{
  "$sanitizer" --version | tail -1
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "nvidia-smi: unavailable"
  "$exe" --version
} | tee "$out/env.txt"

status=0
summary=()
for tool in "${tools[@]}"; do
  case "$tool" in
    memcheck) extra=(--check-device-heap yes) ; filter=() ;;
    racecheck) extra=() ; filter=(--filter "$racecheck_filter") ;;
    initcheck) extra=() ; filter=() ;;
    synccheck) extra=() ; filter=() ;;
    *) echo "compute-sanitizer: unknown tool '$tool' (memcheck racecheck initcheck synccheck)" >&2; exit 2 ;;
  esac
  [ -z "${FILTER:-}" ] || filter=(--filter "$FILTER")
  log="$out/$tool.log"
  echo "== compute-sanitizer --tool $tool ($(date -u +%H:%M:%S)) -> $log"
  t0=$(date +%s)
  # --error-exitcode: a nonzero exit when the tool reports anything; the harness's own exit
  # code (1: a result failed or errored) comes through otherwise.
  "$sanitizer" --tool "$tool" --error-exitcode 86 --print-limit 100 "${extra[@]}" \
    "$exe" run "$suite" --no-profile --out "$out/$tool.json" "${filter[@]}" >"$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  # memcheck/initcheck/synccheck end with "ERROR SUMMARY: N errors"; racecheck with
  # "RACECHECK SUMMARY: H hazards displayed (E errors, W warnings)".
  errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+ error' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
  [ -n "$errors" ] || errors=$(grep -Eo 'RACECHECK SUMMARY: .*\(([0-9]+) error' "$log" | tail -1 | grep -Eo '\(([0-9]+)' | tr -d '(' || true)
  hazards=$(grep -Eo 'RACECHECK SUMMARY: [0-9]+ hazard' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
  results=$(grep -E '^[0-9]+ results: ' "$log" | tail -1)
  line="$tool: exit $rc, ${errors:-?} errors${hazards:+, $hazards hazards}, ${secs}s; ${results:-no harness summary}"
  summary+=("$line")
  echo "   $line"
  # Every result must have run and passed: a skip (no device, out of memory) checks nothing.
  total=$(sed -E 's/^([0-9]+) results: ([0-9]+) passed.*/\1/' <<<"$results")
  passed=$(sed -E 's/^([0-9]+) results: ([0-9]+) passed.*/\2/' <<<"$results")
  if [ -z "$results" ] || [ "$total" != "$passed" ]; then
    status=1
    echo "   $tool: not every result ran and passed (see $log)"
  fi
  if [ "$rc" -ne 0 ] || [ "${errors:-x}" != "0" ] || [ "${hazards:-0}" != "0" ]; then
    status=1
    grep -E '^========= ' "$log" | grep -vE 'COMPUTE-SANITIZER|ERROR SUMMARY' | head -40
    grep -E '^(failed|error|crashed|timeout) ' "$log" | head -20
  fi
done

echo
echo "== summary (logs in $out)"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
if [ "$status" -eq 0 ]; then echo "compute-sanitizer: zero errors under ${tools[*]}"; else echo "compute-sanitizer: FAILED (see above)"; fi
exit "$status"
