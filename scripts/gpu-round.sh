#!/usr/bin/env bash
# The whole GPU round in one command, for a machine with a CUDA GPU (the device machine):
# build, every test (GPU tests included), then the suites. Logs and reports go to
# $WORK (default /tmp/gpu-round), packed at the end into $OUT/round.tgz (default ./out).
# Stages can be chosen: bash scripts/gpu-round.sh build test smoke gemm
# Where the tree has no .git, pass the commit: HARNESS_COMMIT=<sha> bash scripts/gpu-round.sh
# CTEST_ARGS is added to the `test` stage's ctest: the whole ctest takes more than one device
# call (the GPU label alone: 333 tests, about 9 minutes with -j 4 on an H100), so split it, e.g.
#   CTEST_ARGS='-L gpu -I 1,170' ... test, then CTEST_ARGS='-L gpu -I 171,400' ... test
# (-I numbers the tests that the label leaves, in order).
#   stages: build test smoke gemm attention target memory pytorch broken ncu models
#           transformer pytorch-transformer kernels-transformer tasks slowdown sanitizer tables trace
#           patterns-a (reduce, scan, histogram suites and their GPU tests)
#           patterns-b (softmax, optimizer suites and their GPU tests)
#           spmv (the spmv GPU test, then suites/spmv.yaml)
#           template measure
#           conv2d (the conv2d suite, cuDNN in the same run, and its GPU tests)
#           gemm-tc (tensor-core GEMM suite: mma/wgmma vs cuBLAS in tf32/bf16/f16 and fp8_e4m3 (cuBLASLt), and its GPU tests)
#           attention-compare (flash vs PyTorch SDPA at B=4, H=16/32, N=1K-16K, f32 and bf16;
#           SDPA's flash and cuDNN backends at bf16, table-attention-sdpa.md against the faster;
#           ATTN_COMPARE_FILTER narrows it: the whole suite takes tens of minutes)
#           nccl (suites/nccl.yaml with torch.distributed's collectives as `torch` variants
#           (examples/python/torch_distributed.py; NCCL_TORCH_VARIANTS=0: without), and
#           reports/torch_allreduce.py's all_reduce, timed alike, at every rank count of NCCL_RANKS
#           (default: every GPU); tables ours vs torch per size (table-nccl-<ranks>.md against the
#           script, table-nccl-torch-<ranks>.md against the variants), then the NCCL GPU tests;
#           NCCL_FILTER narrows the suite)
#           nccl-torch-ab (tests/data/python/torch_distributed_ab.py on every GPU: the torch
#           variant, torch_set_stream and torch_timed (host time per phase, from the workers'
#           stderr) beside nccl, all_reduce in place up to 2 MiB)
#           devices (a suite with --devices all vs --devices 0: both wall times)
#           gemm-fp32 (the FP32 shape table: auto and coarsened as % of cuBLAS per shape,
#           geometric means, auto's config)
#           attention-hopper (flash_wgmma / flash_fa2 forward and backward, bf16, d = 64/128/256,
#           and PyTorch SDPA's FA2 and cuDNN backends on the same shapes; table-attention-hopper.md)
#           gemm-zoo (suites/gemm-shapes.yaml, about 30 minutes whole: ZOO_FILTER narrows it (e.g.
#           'dtype:bf16'); ZOO_RESUME=<journal in the tree> completes an earlier call's journal
#           (it comes back in $OUT as gemm-shapes.json.journal.jsonl); table-gemm-zoo.md from
#           the report, or from the journal when the call's time ran out first)
#           attention-fp8 (the FP8 forward: its GPU tests, suites/attention-fp8.yaml (fp8 beside
#           bf16, table-attention-fp8.md with fp8 / bf16 per shape), SASS counts of the kernel,
#           memcheck and racecheck on its odd sizes)
#           attention-same-process (flash_wgmma beside PyTorch's cuDNN SDPA as a Python variant in
#           one harness process, both settled (steady) and timed in rounds (interleave): forward
#           and backward shapes of suites/attention-hopper.yaml, table-attention-same-process.md
#           by tables.py attention-pair; SAME_PROCESS_FILTER narrows it (default: every shape);
#           about 6 minutes on an H100)
#           python-sdpa (PyTorch SDPA's flash and cuDNN backends as harness variants, bf16
#           forward and backward (suites/attention-sdpa.yaml, settled), against the same calls
#           timed by reports/pytorch_attention.py --as-variants --steady --noise 0.03;
#           table-python-sdpa.md: harness / script per shape, within 2% or not)
#           attention-lazy-rescale (the Hopper forward's lazy rescaling, the default at d = 128 and
#           256, forced at every size by HARNESS_FWD_LAZY_RESCALE=1 and off by =0: its GPU tests,
#           memcheck and racecheck over the flash_wgmma sanitizer sizes with it forced on, then
#           off, on, on, off beside cuDNN in one process, as attention-same-process;
#           LAZY_FILTER chooses the shapes (default d = 64 N = 8192 and d = 256 N = 2048);
#           table-attention-lazy<0|1>-run<i>.md per run)
#           attention-d64-check (a d = 64 forward kernel that no default takes, named by D64_NEW:
#           environment assignments NAME=VALUE separated by spaces, as 'HARNESS_FWD_D64_CONSUMERS=3
#           HARNESS_FWD_D64_KEYS=160'; default HARNESS_FWD_D64_CONSUMERS=3: three consumer warpgroups,
#           192 x 192 tiles, P through shared memory): the Hopper GPU tests, memcheck
#           and racecheck over the d = 64 flash_wgmma sanitizer sizes, SASS counts of the object)
#           attention-d64-ab (D64_OLD (NAME=VALUE assignments as D64_NEW's; default HARNESS_FWD_D64_KEYS=192) against D64_NEW, one process
#           each in the order old / new / new / old: suites/attention-hopper-d64-keys.yaml
#           (D64_FILTER, default causal:false) with harness compare of each pair, and each beside
#           cuDNN in one process (D64_SAME_FILTER, default d = 64 N = 8192 non-causal))
#           attention-fwd-ab (a Hopper forward kernel named by FWD_NEW (NAME=VALUE assignments
#           separated by spaces; default HARNESS_FWD_D256_KEYS=80) against FWD_OLD (default
#           HARNESS_FWD_D256_KEYS=64: session 21's A/B of d = 256's widths): the Hopper forward GPU
#           tests, memcheck and racecheck over the flash_wgmma sanitizer sizes of FWD_HEAD_DIM
#           (default 256) under FWD_NEW, SASS counts, then one process each in the order old / new /
#           new / old over suites/attention-hopper.yaml (FWD_FILTER, default the d = 256 shapes) with
#           harness compare of each pair, and each beside cuDNN in one process (FWD_SAME_FILTER,
#           default the d = 256 shapes))
#           attention-d64-ncu (ncu of the d = 64 forward at B=2 H=16 N=8192 non-causal for D64_OLD, D64_NEW
#           and PyTorch's cuDNN SDPA, --clock-control none, WarpStateStats and NCU_METRICS; side by side in
#           ncu-d64-summary.md by reports/ncu_summary.py: time, clock, tensor pipe, L2 bytes, stalls;
#           then D64_NEW's source counters by opcode, ncu-d64-source.md by reports/ncu_source.py)
#           attention-bwd-ab (a Hopper backward kernel named by BWD_NEW (NAME=VALUE assignments
#           separated by spaces; default HARNESS_BWD_LEAN=15, the default kernel), against BWD_OLD
#           (default HARNESS_BWD_LEAN=0, the session-15 kernel): the Hopper backward GPU tests, memcheck
#           and racecheck over the backward flash_wgmma sanitizer sizes under BWD_NEW; then one
#           process each in the order old / new / new / old over suites/attention-hopper.yaml's
#           backward shapes (BWD_FILTER, default the non-deterministic ones at N = 8192) with
#           harness compare of each pair, and each beside cuDNN in one process (BWD_SAME_FILTER,
#           default d = 64 N = 8192 non-causal))
#           gemm-skinny-ab (the skinny 16-bit GEMM under SKINNY_NEW (NAME=VALUE assignments separated
#           by spaces; default HARNESS_SKINNY_3CTAS=1, the 8-row default) against SKINNY_OLD (default
#           HARNESS_SKINNY_3CTAS=0: no minimum of CTAs an SM): the skinny GPU tests under SKINNY_NEW,
#           then one process each in the order old / new / new / old over suites/gemm-shapes.yaml's
#           8-row decode shapes (SKINNY_FILTER) with cuBLAS, and harness compare of each pair)
#           attention-bwd-deterministic (the backward's deterministic mode against the default at
#           DET_FILTER's shapes (default the issue's d = 128 B = 4 N = 4096, causal and not),
#           flash_wgmma alone (cuDNN is not asked for determinism), steady, two processes;
#           table-bwd-deterministic.md: reports/tables.py attention-deterministic, time and cycles)
#           attention-tc-tiles (bf16 flash at every tensor-core block shape, B=4 H=32 N=4096,
#           and odd sizes; picks flash_tc_{forward,backward}_tiles' defaults)
#           ddp (data-parallel train_transformer over every GPU, world_size 1, 2 and 4 (those
#           the GPUs allow), FP32 and ours_bf16 (its gradients exchanged in f32 and in bf16), the
#           DataParallelGpu tests, PyTorch DDP (FP32, bf16 autocast, and bf16 with
#           bf16_compress_hook) under torchrun on the same GPUs; table-ddp.md: reports/tables.py ddp)
set -uo pipefail
# --help: the comment above (usage and stages), nothing run.
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,/^set -uo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
cd "$(dirname "$0")/.."
# Every stage name is checked before anything runs: a typo fails at once (exit 2), not after
# the build and the stages before it (tests/gpu_round_stages.py keeps this list equal to the
# stages below and to --help).
known_stages="build test smoke gemm gemm-tc attention attention-compare attention-hopper attention-same-process python-sdpa attention-lazy-rescale attention-d64-check attention-d64-ab attention-fwd-ab attention-d64-ncu attention-bwd-ab gemm-skinny-ab attention-bwd-deterministic attention-tc-tiles memory trace broken pytorch ncu target models transformer pytorch-transformer kernels-transformer tasks slowdown patterns-a patterns-b conv2d spmv gemm-zoo attention-fp8 sanitizer template measure tables nccl nccl-torch-ab devices gemm-fp32 ddp"
for s in ${*:-}; do
  case " $known_stages " in
    *" $s "*) ;;
    *) echo "gpu-round.sh: unknown stage '$s' (stages: $known_stages; --help says what each does)" >&2; exit 2 ;;
  esac
done
PACK=${OUT:-$PWD/out}
OUT=${WORK:-/tmp/gpu-round}
mkdir -p "$OUT" "$PACK"
# -dirty where the tree differs from the commit: the device machine's copy carries the
# session's first .git, so a later tree would otherwise be labelled with that commit.
commit=${HARNESS_COMMIT:-$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)}
export HARNESS_COMMIT=$commit
stages=${*:-build test smoke gemm}
exe=build/release/bin/harness
status=0
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
# same_process OUT.json FILTER: flash_wgmma beside PyTorch's cuDNN SDPA (a Python variant) in
# forward_sass OP...: the Hopper forward object's SASS into $OUT/flash_hopper_forward.sass,
# the count of each OP in it, and its local memory (LDL/STL) per kernel, so that a spill is
# named by its instantiation; nothing where cuobjdump or the object is missing.
forward_sass() {
  local obj
  obj=$(find build/release -name 'flash_hopper_forward.cu.o' | head -1)
  [ -n "$obj" ] && command -v cuobjdump >/dev/null || return 0
  cuobjdump -sass "$obj" >"$OUT/flash_hopper_forward.sass" 2>&1
  for op in "$@"; do echo "$op $(grep -c "$op" "$OUT/flash_hopper_forward.sass")"; done
  awk '/Function :/ {f = $3} /LDL|STL/ {n[f]++} END {for (k in n) print "  local memory: " n[k] " LDL/STL in " k}' \
    "$OUT/flash_hopper_forward.sass"
}

# forward_check CFG HEAD_DIM: the Hopper forward GPU tests under CFG (NAME=VALUE assignments
# separated by spaces), memcheck and racecheck over the flash_wgmma sanitizer results of that
# head size under it (logs in $OUT/<CFG as a tag>), then the object's SASS counts.
forward_check() {
  local cfg=$1 hd=$2 tag
  local -a assign
  tag=$(echo "$cfg" | tr -c 'A-Za-z0-9\n' '-')
  read -ra assign <<<"$cfg"
  env "${assign[@]}" build/release/tests/attention_gpu_test --gtest_filter='AttentionGpuHopper.*' >"$OUT/$tag-tests.log" 2>&1 || status=1
  grep -E "PASSED|FAILED|SKIPPED" "$OUT/$tag-tests.log" | tail -5
  env "${assign[@]}" FILTER="^attention/flash_wgmma/.*head_dim:$hd/.*dtype:(bf16|f16)" OUT="$OUT/$tag" \
    bash scripts/compute-sanitizer.sh memcheck racecheck 2>&1 | tail -4 || status=1
  forward_sass HGMMA UTMALDG UTMASTG LDL STL
}

# one harness process over suites/attention-hopper.yaml's results matching FILTER, both
# settled (steady) and sampled in rounds (interleave); the output is left in OUT.log.
same_process() {
  timeout "${SUITE_TIMEOUT:-600}" $exe run suites/attention-hopper.yaml --filter "$2" \
    --python examples/python/torch_sdpa.py --variants flash_wgmma,sdpa_cudnn --steady on --interleave on \
    --no-profile --out "$1" >"${1%.json}.log" 2>&1
}
# ab_runs PREFIX OLD NEW AFTER RUN_ARG...: harness run RUN_ARG... once per setting in the order
# OLD / NEW / NEW / OLD (each NAME=VALUE assignments separated by spaces), one process each,
# into $OUT/PREFIX-run<i>.json (its output in $log); after each, the function AFTER with i, cfg,
# assign and log in scope; then harness compare of runs 1 / 2 and 4 / 3.
ab_runs() {
  local prefix=$1 old=$2 new=$3 after=$4 i=0 cfg tag a b log
  shift 4
  local -a assign
  for cfg in "$old" "$new" "$new" "$old"; do
    i=$((i + 1))
    tag=$(echo "$cfg" | tr -c 'A-Za-z0-9\n' '-')
    read -ra assign <<<"$cfg"
    log=$OUT/$prefix-run$i-$tag.log
    env "${assign[@]}" timeout "${SUITE_TIMEOUT:-300}" $exe run "$@" --no-profile --out "$OUT/$prefix-run$i.json" \
      >"$log" 2>&1 || status=1
    "$after"
  done
  for pair in "1 2" "4 3"; do
    read -r a b <<<"$pair"
    echo "harness compare $prefix-run$a ($old) $prefix-run$b ($new):"
    $exe compare "$OUT/$prefix-run$a.json" "$OUT/$prefix-run$b.json" 2>&1 | tee "$OUT/compare-$prefix-run$a-run$b.txt" | tail -16
  done
}
# ab_runs's AFTER for ab_four: the run's setting beside cuDNN in one process (same_process over
# $same_filter, table-PREFIX-vs-cudnn-run<i>.md).
ab_beside_cudnn() {
  export "${assign[@]}"
  same_process "$OUT/$prefix-vs-cudnn-run$i.json" "$same_filter" || status=1
  for a in "${assign[@]}"; do unset "${a%%=*}"; done
  python3 reports/tables.py attention-pair "$OUT/$prefix-vs-cudnn-run$i.json" >"$OUT/table-$prefix-vs-cudnn-run$i.md" || status=1
  echo "run $i ($cfg): $(grep -m1 "^geometric mean" "$OUT/table-$prefix-vs-cudnn-run$i.md")"
  grep '^| attention' "$OUT/table-$prefix-vs-cudnn-run$i.md" | cut -d'|' -f3,6,7
}
# ab_runs's AFTER that prints the run's last line (its result counts).
ab_last_line() { echo "run $i ($cfg): $(tail -1 "$log")"; }
# ab_four PREFIX OLD NEW SAME_FILTER RUN_ARG...: ab_runs with each setting also beside cuDNN.
ab_four() {
  local prefix=$1 old=$2 new=$3 same_filter=$4
  shift 4
  ab_runs "$prefix" "$old" "$new" ab_beside_cudnn "$@"
}

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm --format=csv
  echo "commit $commit  date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} 2>&1 | tee "$OUT/env.txt"

for s in $stages; do
  case $s in
    build)
      step build
      cmake --preset release >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
      # Keep going past a broken target so that the rest can still be tested.
      cmake --build --preset release -j "$(nproc)" -- -k 0 >"$OUT/build.log" 2>&1 || { status=1; grep -E "error:|FAILED" "$OUT/build.log" | head -20; }
      [ -x "$exe" ] || exit 1
      grep -c "warning" "$OUT/build.log" | xargs echo "build warnings:" ;;
    test)
      step "ctest ${CTEST_ARGS:-(all labels)}"
      # shellcheck disable=SC2086 # CTEST_ARGS is a list of ctest arguments
      ctest --preset release -j 4 --timeout 300 ${CTEST_ARGS:-} >"$OUT/ctest.log" 2>&1 || status=1
      grep -E "tests passed|FAILED|Failed|Not Run|\*\*\*" "$OUT/ctest.log" | head -40 ;;
    smoke)
      step "harness run suites/smoke.yaml"
      $exe run suites/smoke.yaml --out "$OUT/smoke.json" --quiet 2>&1 | tee "$OUT/smoke.log" | tail -30 || status=1 ;;
    gemm)
      step "harness run suites/gemm.yaml"
      $exe run suites/gemm.yaml --out "$OUT/gemm.json" --quiet 2>&1 | tee "$OUT/gemm.log" | tail -60 || status=1 ;;
    gemm-tc)
      step "gemm_tc_gpu_test + harness run suites/gemm-tensor-cores.yaml"
      build/release/tests/gemm_tc_gpu_test 2>&1 | tail -5 || status=1
      build/release/tests/gemm_wgmma_fp8_gpu_test 2>&1 | grep -E "\[timing\]|FAILED|PASSED|SKIPPED" || status=1
      timeout "${SUITE_TIMEOUT:-600}" $exe run suites/gemm-tensor-cores.yaml --out "$OUT/gemm-tc.json" --quiet 2>&1 | tee "$OUT/gemm-tc.log" | tail -60 || status=1 ;;
    attention)
      step "harness run suites/attention.yaml"
      timeout "${SUITE_TIMEOUT:-400}" $exe run suites/attention.yaml --out "$OUT/attention.json" --quiet 2>&1 | tee "$OUT/attention.log" | tail -60 || status=1 ;;
    attention-compare)
      step "harness run suites/attention-compare.yaml, then PyTorch SDPA on the same shapes (bf16: flash and cuDNN backends)"
      timeout "${SUITE_TIMEOUT:-1800}" $exe run suites/attention-compare.yaml ${ATTN_COMPARE_FILTER:+--filter "$ATTN_COMPARE_FILTER"} \
        --no-profile --out "$OUT/attention-compare.json" --quiet 2>&1 | tee "$OUT/attention-compare.log" | tail -40 || status=1
      PYTHONUNBUFFERED=1 timeout "${SUITE_TIMEOUT:-1800}" python3 reports/pytorch_attention.py suites/attention-compare.yaml \
        --harness $exe ${ATTN_COMPARE_FILTER:+--filter "$ATTN_COMPARE_FILTER"} \
        --out "$OUT/pytorch-attention-compare.json" >"$OUT/pytorch-compare.log" 2>&1 || status=1
      tail -5 "$OUT/pytorch-compare.log"
      # ours / SDPA per shape, the reference being the faster of SDPA's backends at the dtype
      python3 reports/tables.py attention-sdpa "$OUT/attention-compare.json" "$OUT/pytorch-attention-compare.json" \
        >"$OUT/table-attention-sdpa.md" || status=1 ;;
    attention-hopper)
      step "harness run suites/attention-hopper.yaml, then PyTorch SDPA (FA2 and cuDNN) on the same shapes"
      timeout "${SUITE_TIMEOUT:-600}" $exe run suites/attention-hopper.yaml --no-profile --out "$OUT/attention-hopper.json" \
        2>&1 | tee "$OUT/attention-hopper.log" | tail -60 || status=1
      PYTHONUNBUFFERED=1 timeout "${SUITE_TIMEOUT:-600}" python3 reports/pytorch_attention.py suites/attention-hopper.yaml \
        --harness $exe --out "$OUT/pytorch-attention-hopper.json" >"$OUT/pytorch-hopper.log" 2>&1 || status=1
      python3 reports/tables.py attention-sdpa "$OUT/attention-hopper.json" "$OUT/pytorch-attention-hopper.json" \
        | tee "$OUT/table-attention-hopper.md" | tail -60 || status=1 ;;
    attention-same-process)
      step "flash_wgmma and sdpa_cudnn in one process, steady, in rounds (suites/attention-hopper.yaml)"
      same_process "$OUT/attention-same-process.json" "${SAME_PROCESS_FILTER:-.}" || status=1
      tail -8 "$OUT/attention-same-process.log"
      python3 reports/tables.py attention-pair "$OUT/attention-same-process.json" \
        | tee "$OUT/table-attention-same-process.md" | tail -4 || status=1 ;;
    python-sdpa)
      step "PyTorch SDPA as harness variants against pytorch_attention.py --as-variants, both settled (issue 35)"
      timeout "${SUITE_TIMEOUT:-600}" $exe run suites/attention-sdpa.yaml --python examples/python/torch_sdpa.py \
        --variants sdpa_flash,sdpa_cudnn --no-profile --out "$OUT/python-sdpa-variants.json" \
        >"$OUT/python-sdpa-variants.log" 2>&1 || status=1
      tail -3 "$OUT/python-sdpa-variants.log"
      timeout "${SUITE_TIMEOUT:-600}" python3 reports/pytorch_attention.py suites/attention-sdpa.yaml --as-variants \
        --steady --noise 0.03 --variants sdpa_cudnn_bf16,sdpa_flash_bf16 --out "$OUT/python-sdpa-script.json" \
        >"$OUT/python-sdpa-script.log" 2>&1 || status=1
      python3 reports/tables.py sdpa-agreement "$OUT/python-sdpa-variants.json" "$OUT/python-sdpa-script.json" \
        | tee "$OUT/table-python-sdpa.md" | tail -20 || status=1 ;;
    attention-d64-check)
      # Issue 30: a d = 64 forward kernel that no default takes, chosen by D64_NEW (an
      # environment assignment, or several separated by spaces; default HARNESS_FWD_D64_CONSUMERS=3),
      # checked before it is timed.
      cfg=${D64_NEW:-HARNESS_FWD_D64_CONSUMERS=3}
      step "d = 64 forward with $cfg: Hopper GPU tests, memcheck, racecheck, SASS"
      forward_check "$cfg" 64 ;;
    attention-d64-ab)
      # D64_OLD (default HARNESS_FWD_D64_KEYS=192, today's default at long N) against D64_NEW,
      # one process each in the order old / new / new / old.
      old=${D64_OLD:-HARNESS_FWD_D64_KEYS=192} new=${D64_NEW:-HARNESS_FWD_D64_CONSUMERS=3}
      step "d = 64 forward: $old against $new, one process each ($old / $new / $new / $old)"
      ab_four d64 "$old" "$new" "${D64_SAME_FILTER:-^attention/.*seq_len:8192/head_dim:64/.*causal:false}" \
        suites/attention-hopper-d64-keys.yaml --filter "${D64_FILTER:-causal:false}" ;;
    attention-fwd-ab)
      # Issue 30: FWD_NEW against FWD_OLD (defaults: d = 256's widths 80 and 64), checked
      # under FWD_NEW first.
      old=${FWD_OLD:-HARNESS_FWD_D256_KEYS=64} new=${FWD_NEW:-HARNESS_FWD_D256_KEYS=80} hd=${FWD_HEAD_DIM:-256}
      step "Hopper forward: $new checked (d = $hd), then against $old, one process each ($old / $new / $new / $old)"
      forward_check "$new" "$hd"
      ab_four fwd "$old" "$new" "${FWD_SAME_FILTER:-^attention/.*head_dim:256/}" \
        suites/attention-hopper.yaml --filter "${FWD_FILTER:-^attention/flash_wgmma/.*head_dim:256/}" ;;
    attention-d64-ncu)
      # Issue 30: the counters that name the d = 64 forward's limiter, for D64_OLD, D64_NEW and
      # cuDNN, each in its own harness process under ncu (the second matching launch: the
      # first may be a warm-up); reports/ncu_summary.py puts them side by side.
      metrics=${NCU_METRICS:-gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_local_ld.sum,smsp__inst_executed_op_local_st.sum}
      shape='kv_heads:0/seq_len:8192/head_dim:64/causal:false'
      step "ncu of the d = 64 forward ($shape): ${D64_OLD:-HARNESS_FWD_D64_KEYS=192}, ${D64_NEW:-HARNESS_FWD_D64_CONSUMERS=3}, cuDNN"
      csvs=()
      command -v ncu >/dev/null || { echo "attention-d64-ncu: ncu not found"; status=1; continue; }
      for who in old new cudnn; do
        case $who in
          old) cfg=${D64_OLD:-HARNESS_FWD_D64_KEYS=192} kernel=flash_hopper_forward_kernel variant=flash_wgmma py= ;;
          new) cfg=${D64_NEW:-HARNESS_FWD_D64_CONSUMERS=3} kernel=flash_hopper_forward_kernel variant=flash_wgmma py= ;;
          cudnn) cfg=HARNESS_NCU_D64=cudnn kernel=flash_fprop variant=sdpa_cudnn py=examples/python/torch_sdpa.py
                 python3 -c 'import torch' 2>/dev/null || { echo "cuDNN column skipped: PyTorch does not load"; continue; } ;;
        esac
        tag=ncu-d64-$who-$(echo "$cfg" | tr -c 'A-Za-z0-9\n' '-')
        read -ra assign <<<"$cfg"
        if env "${assign[@]}" timeout "${SUITE_TIMEOUT:-300}" ncu -k "regex:$kernel" -c 2 --clock-control none --section WarpStateStats \
          --metrics "$metrics" --csv --page raw --print-units base $exe run suites/attention-hopper.yaml \
          --filter "^attention/.*$shape" --variants "$variant" ${py:+--python $py} --steady off --interleave off \
          --no-profile --out "$OUT/$tag.json" >"$OUT/$tag.csv" 2>"$OUT/$tag.err"; then
          csvs+=("$OUT/$tag.csv")
        else
          status=1
          echo "$who ($cfg): ncu failed, left out of the table:"
          tail -3 "$OUT/$tag.err"
        fi
      done
      [ ${#csvs[@]} -gt 0 ] && { python3 reports/ncu_summary.py --markdown "${csvs[@]}" | tee "$OUT/ncu-d64-summary.md" || status=1; }
      # Where D64_NEW's warps wait: the SourceCounters section of one launch, its SASS page by opcode.
      cfg=${D64_NEW:-HARNESS_FWD_D64_CONSUMERS=3}
      read -ra assign <<<"$cfg"
      if env "${assign[@]}" timeout "${SUITE_TIMEOUT:-300}" ncu -k regex:flash_hopper_forward_kernel -s 1 -c 1 --clock-control none \
        --section SourceCounters --import-source no -f -o "$OUT/ncu-d64-source" $exe run suites/attention-hopper.yaml \
        --filter "^attention/.*batch:2/.*$shape" --variants flash_wgmma --steady off --interleave off --no-profile \
        --out "$OUT/ncu-d64-source.json" >"$OUT/ncu-d64-source.log" 2>&1 &&
        ncu -i "$OUT/ncu-d64-source.ncu-rep" --page source --csv --print-source sass >"$OUT/ncu-d64-source.csv"; then
        python3 reports/ncu_source.py --markdown --top 15 "$OUT/ncu-d64-source.csv" | tee "$OUT/ncu-d64-source.md" | head -30 || status=1
        gzip -f "$OUT/ncu-d64-source.csv"
        rm -f "$OUT/ncu-d64-source.ncu-rep"  # tens of MB; the page above is what the docs read
      else
        status=1
        echo "source counters ($cfg): ncu failed:"
        tail -3 "$OUT/ncu-d64-source.log"
      fi ;;
    attention-bwd-ab)
      # Issue 31: a Hopper backward kernel (BWD_NEW), checked, then timed
      # against BWD_OLD one process each in the order old / new / new / old.
      old=${BWD_OLD:-HARNESS_BWD_LEAN=0} new=${BWD_NEW:-HARNESS_BWD_LEAN=15}
      step "Hopper backward: $new checked, then against $old ($old / $new / $new / $old)"
      read -ra assign <<<"$new"
      env "${assign[@]}" build/release/tests/attention_gpu_test --gtest_filter='AttentionGpuHopper.Backward*' \
        >"$OUT/bwd-new-tests.log" 2>&1 || status=1
      grep -E "PASSED|FAILED|SKIPPED" "$OUT/bwd-new-tests.log" | tail -5
      env "${assign[@]}" FILTER='^attention_backward/flash_wgmma/' OUT="$OUT/bwd-new" \
        bash scripts/compute-sanitizer.sh memcheck racecheck 2>&1 | tail -4 || status=1
      ab_four bwd "$old" "$new" "${BWD_SAME_FILTER:-^attention_backward/.*seq_len:8192/head_dim:64/causal:false/}" \
        suites/attention-hopper.yaml --variants flash_wgmma \
        --filter "${BWD_FILTER:-^attention_backward/flash_wgmma/.*seq_len:8192/.*deterministic:false}" ;;
    gemm-skinny-ab)
      # Issue 32: the skinny kernel's two 8-row compilations (a minimum of 3 CTAs an SM or none),
      # or any other switch, old / new / new / old, one process each, cuBLAS in each.
      old=${SKINNY_OLD:-HARNESS_SKINNY_3CTAS=0} new=${SKINNY_NEW:-HARNESS_SKINNY_3CTAS=1}
      step "skinny GEMM: $new checked, then against $old ($old / $new / $new / $old)"
      read -ra assign <<<"$new"
      env "${assign[@]}" build/release/tests/gemm_auto_gpu_test --gtest_filter='*Skinny*' \
        >"$OUT/skinny-new-tests.log" 2>&1 || status=1
      grep -E "PASSED|FAILED|SKIPPED" "$OUT/skinny-new-tests.log" | tail -3
      ab_runs skinny "$old" "$new" ab_last_line suites/gemm-shapes.yaml --variants skinny,cublas \
        --filter "${SKINNY_FILTER:-^gemm/[a-z]+/M:8/N:(4096|14336)/K:4096/.*dtype:(bf16|f16)/layout:nt$}" ;;
    attention-bwd-deterministic)
      # Issue 31 item 2: what determinism costs. Each process times the default and the
      # deterministic result of each shape back to back, steady; two processes.
      step "Hopper backward: deterministic mode against the default, two processes"
      for i in 1 2; do
        timeout "${SUITE_TIMEOUT:-300}" $exe run suites/attention-hopper.yaml --variants flash_wgmma --steady on --no-profile \
          --filter "${DET_FILTER:-^attention_backward/flash_wgmma/batch:4/heads:16/kv_heads:0/seq_len:4096/head_dim:128/}" \
          --out "$OUT/bwd-deterministic-run$i.json" >"$OUT/bwd-deterministic-run$i.log" 2>&1 || status=1
        tail -1 "$OUT/bwd-deterministic-run$i.log"
      done
      python3 reports/tables.py attention-deterministic "$OUT/bwd-deterministic-run1.json" "$OUT/bwd-deterministic-run2.json" \
        | tee "$OUT/table-bwd-deterministic.md" | grep "^| [12] " || status=1 ;;
    attention-lazy-rescale)
      step "lazy rescaling: its GPU tests, compute-sanitizer, then off / on beside cuDNN"
      ctest --test-dir build/release -R 'AttentionGpuHopperLazyRescale' --output-on-failure >"$OUT/lazy-tests.log" 2>&1 || status=1
      grep -E "tests passed|Failed|Skipped" "$OUT/lazy-tests.log" | head -3
      HARNESS_FWD_LAZY_RESCALE=1 FILTER='^attention/flash_wgmma/.*dtype:(bf16|f16)' OUT="$OUT/lazy" \
        bash scripts/compute-sanitizer.sh memcheck racecheck 2>&1 | tail -4 || status=1
      i=0
      for lazy in 0 1 1 0; do
        i=$((i + 1))
        HARNESS_FWD_LAZY_RESCALE=$lazy same_process "$OUT/lazy$lazy-run$i.json" \
          "${LAZY_FILTER:-^attention/.*(seq_len:8192/head_dim:64|seq_len:2048/head_dim:256)/}" || status=1
        python3 reports/tables.py attention-pair "$OUT/lazy$lazy-run$i.json" >"$OUT/table-attention-lazy$lazy-run$i.md" || status=1
        echo "lazy=$lazy run $i: $(grep -m1 "^geometric mean" "$OUT/table-attention-lazy$lazy-run$i.md")"
      done ;;
    attention-tc-tiles)
      step "harness run suites/attention-tc-tiles.yaml"
      timeout "${SUITE_TIMEOUT:-400}" $exe run suites/attention-tc-tiles.yaml --no-profile --out "$OUT/attention-tc-tiles.json" \
        2>&1 | tee "$OUT/attention-tc-tiles.log" | tail -40 || status=1 ;;
    memory)
      step "harness run suites/attention-memory.yaml"
      timeout "${SUITE_TIMEOUT:-400}" $exe run suites/attention-memory.yaml --no-profile --out "$OUT/attention-memory.json" --quiet 2>&1 | tee "$OUT/memory.log" | tail -40 || status=1 ;;
    trace)
      # Timeline of a small GEMM + attention run (issue 20): the trace checked against its
      # report (trace_gpu_test does the same in ctest), drawn as a page, screenshotted.
      step "harness run suites/trace.yaml --trace"
      $exe run suites/trace.yaml --out "$OUT/trace-report.json" --trace "$OUT/trace.json" --quiet 2>&1 \
        | tee "$OUT/trace.log" | tail -20 || status=1
      ctest --test-dir build/release -R 'TraceGpu' --output-on-failure >"$OUT/trace-check.log" 2>&1 || status=1
      tail -5 "$OUT/trace-check.log"
      $exe report "$OUT/trace.json" --format trace-html --out "$OUT/trace.html" || status=1
      $exe report "$OUT/trace-report.json" --format html --out "$OUT/trace-report.html" || status=1
      for page in trace trace-report; do
        tests/render_html.sh "$exe" "$OUT/$page.html" "$OUT/$page-check.png" || status=1
        if command -v chromium >/dev/null 2>&1; then
          d=$(mktemp -d)
          HOME=$d timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$d/p" \
            --screenshot="$OUT/$page.png" --window-size=1200,2400 "file://$OUT/$page.html" >/dev/null 2>&1
          rm -rf "$d"
        fi
      done ;;
    broken)
      step "harness run --isolate tests/data/suites/broken_gpu.yaml"
      $exe run --isolate --plugin build/release/plugins/broken_plugin.so tests/data/suites/broken_gpu.yaml \
        --out "$OUT/broken.json" 2>&1 | tee "$OUT/broken.log" | tail -20
      step "the same without --isolate (must end cleanly, suggesting --isolate)"
      $exe run --plugin build/release/plugins/broken_plugin.so tests/data/suites/broken_gpu.yaml \
        --out "$OUT/broken-inproc.json" 2>&1 | tail -8 ;;
    pytorch)
      step "PyTorch SDPA on the attention suite's shapes"
      PYTHONUNBUFFERED=1 timeout "${SUITE_TIMEOUT:-400}" python3 reports/pytorch_attention.py suites/attention.yaml --harness $exe \
        --variants sdpa_fp32,sdpa_flash_fp16,sdpa_flash_bf16 \
        ${PYTORCH_FILTER:+--filter "$PYTORCH_FILTER"} --out "$OUT/pytorch-attention.json" >"$OUT/pytorch.log" 2>&1 || status=1
      tail -5 "$OUT/pytorch.log" ;;
    ncu)
      step "ncu with an NVTX filter on a harness run (docs/profiling.md)"
      # Only kernels launched inside the variant range of gemm/tiled are profiled; the
      # harness sees ncu holding CUPTI and skips its own collection. Range names carry
      # every parameter; ncu matches push/pop ranges from the outermost one (suite), '*'
      # standing for any ranges in between.
      for expr in "harness@ncu-demo/*/gemm.tiled M=512 N=512 K=512 alpha=1 beta=0 dtype=f32 layout=nn/" \
                  "harness@gemm.tiled M=512 N=512 K=512 alpha=1 beta=0 dtype=f32 layout=nn/"; do
        echo "--- ncu --nvtx --nvtx-include \"$expr\""
        ncu --nvtx --nvtx-include "$expr" --launch-count 3 \
            --metrics smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,dram__bytes_read.sum,gpu__time_duration.sum \
            $exe run tests/data/suites/ncu_demo.yaml --out "$OUT/ncu-demo.json" >"$OUT/ncu.log" 2>&1 || status=1
        grep -vE "^==PROF== (Connected|Disconnected)" "$OUT/ncu.log" | grep -E "==PROF==|==WARNING==|note:|kernel|Kernel|ffma|dram__|gpu__time|passed|results:" | head -40
      done ;;
    target)
      TARGET='^attention(_backward)?/[a-z]+/batch:1/heads:32/kv_heads:0/seq_len:4096/head_dim:64/'
      step "the attention comparison point, ours and PyTorch in the same run"
      $exe run suites/attention.yaml --filter "$TARGET" --variants flash,naive --quiet \
        --out "$OUT/attention-target.json" 2>&1 | tail -12 || status=1
      PYTHONUNBUFFERED=1 python3 reports/pytorch_attention.py suites/attention.yaml --harness $exe \
        --filter "$TARGET" --variants sdpa_fp32,sdpa_flash_fp16 \
        --out "$OUT/pytorch-target.json" 2>&1 | tail -12 || status=1 ;;
    models)
      step "engine and nn kernels: GPU tests (gradient checks, tasks)"
      ctest --preset release -L gpu -R 'Nn|Models|models' --timeout 400 --output-on-failure >"$OUT/ctest-models.log" 2>&1 || status=1
      grep -E "tests passed|Failed|\*\*\*|reached|loss|accuracy|mallocs" "$OUT/ctest-models.log" | head -60 ;;
    transformer)
      step "harness run suites/transformer.yaml"
      HARNESS_TRAIN_METRICS="$OUT/train_metrics.jsonl" timeout "${SUITE_TIMEOUT:-900}" $exe run suites/transformer.yaml \
        --no-profile ${TRANSFORMER_FILTER:+--filter "$TRANSFORMER_FILTER"} --out "$OUT/transformer.json" 2>&1 \
        | tee "$OUT/transformer.log" | tail -40 || status=1 ;;
    pytorch-transformer)
      step "the same model in PyTorch"
      # Every PyTorch mode (FP32 / bf16 autocast, eager / torch.compile): ~30 s of compilation
      # per compiled mode and configuration. TRANSFORMER_FILTER narrows the configurations;
      # PYTORCH_COMPILE_MODES (e.g. all: default, reduce-overhead, max-autotune-no-cudagraphs)
      # runs each compiled mode once per torch.compile mode, each compile limited to
      # PYTORCH_COMPILE_TIMEOUT s (a skipped result past it); raise SUITE_TIMEOUT to match.
      PYTHONUNBUFFERED=1 timeout "${SUITE_TIMEOUT:-900}" python3 reports/pytorch_transformer.py suites/transformer.yaml \
        --harness $exe --modes "${PYTORCH_MODES:-all}" ${TRANSFORMER_FILTER:+--filter "$TRANSFORMER_FILTER"} \
        --compile-modes "${PYTORCH_COMPILE_MODES:-default}" --compile-timeout "${PYTORCH_COMPILE_TIMEOUT:-600}" \
        --out "$OUT/pytorch-transformer.json" 2>&1 | tee "$OUT/pytorch-transformer.log" | tail -20 || status=1 ;;
    kernels-transformer)
      # KT_FILTER / KT_VARIANTS choose the configuration and variants (default: the seed
      # config, cublas_flash and ours); KT_PYTORCH_MODES (e.g. bf16-compile) adds PyTorch's
      # breakdown of the same configuration (torch.profiler, reports/pytorch_transformer.py --kernels;
      # KT_COMPILE_MODES, e.g. all, its torch.compile modes)
      # and the table by kernel class of both (reports/tables.py breakdown).
      kt_filter=${KT_FILTER:-seq_len:13/}
      step "the training step's kernel breakdown ($kt_filter: ${KT_VARIANTS:-cublas_flash,ours})"
      HARNESS_TRAIN_METRICS="$OUT/train_metrics_kernels.jsonl" timeout "${SUITE_TIMEOUT:-400}" $exe run suites/transformer.yaml \
        --filter "$kt_filter" --variants "${KT_VARIANTS:-cublas_flash,ours}" --metrics none --out "$OUT/transformer-kernels.json" --quiet 2>&1 | tail -4
      python3 - "$OUT/transformer-kernels.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["results"]:
    k = (x.get("profile") or {}).get("kernels") or {}
    ks = k.get("kernels", [])
    print(f"{x['variant']}: {len(ks)} kernel names, kernel time {k.get('kernel_time_s', 0) * 1e3:.2f} ms per step "
          f"(event-timed {x['stats']['median_s'] * 1e3:.2f} ms)")
    for e in sorted(ks, key=lambda e: -e["time_s"])[:8]:
        print(f"  {e['time_s'] * 1e3:8.3f} ms  {e['calls']:6.0f} calls  {e['name'][:90]}")
PY
      if [ -n "${KT_PYTORCH_MODES:-}" ]; then
        PYTHONUNBUFFERED=1 timeout "${SUITE_TIMEOUT:-400}" python3 reports/pytorch_transformer.py suites/transformer.yaml \
          --harness $exe --filter "$kt_filter" --modes "$KT_PYTORCH_MODES" ${KT_COMPILE_MODES:+--compile-modes "$KT_COMPILE_MODES"} --kernels 5 \
          --out "$OUT/pytorch-transformer-kernels.json" 2>&1 | tee "$OUT/pytorch-kernels.log" | tail -30 || status=1
        # The step by kernel class, ours beside PyTorch's fastest mode (issue 36).
        python3 reports/tables.py breakdown "$OUT/transformer-kernels.json" "$OUT/pytorch-transformer-kernels.json" \
          | tee "$OUT/table-transformer-breakdown.md" || status=1
      fi
      ;;
    tasks)
      step "engine tasks, with what they reach"
      build/release/tests/models_tasks_gpu_test 2>&1 | tee "$OUT/tasks.log" | grep -vE "^\[ *(RUN|OK) *\]|^$" | tail -40 ;;
    slowdown)
      step "compare: the same suite twice, then with a deliberately slowed variant"
      run="$exe run --plugin build/release/plugins/broken_plugin.so tests/data/suites/slowdown.yaml --quiet --no-profile"
      $run --out "$OUT/slow-a.json" >/dev/null 2>&1
      $run --out "$OUT/slow-b.json" >/dev/null 2>&1
      HARNESS_BROKEN_SLOWDOWN=3 $run --out "$OUT/slow-c.json" >/dev/null 2>&1
      echo "--- harness compare slow-a.json slow-b.json (two runs of one build)"
      $exe compare "$OUT/slow-a.json" "$OUT/slow-b.json" --filter 'cuda'; echo "exit code $?"
      echo "--- harness compare slow-a.json slow-c.json (HARNESS_BROKEN_SLOWDOWN=3)"
      $exe compare "$OUT/slow-a.json" "$OUT/slow-c.json" --filter 'cuda'; echo "exit code $?" ;;
    patterns-a)
      step "reduce, scan, histogram: GPU tests, then the suites (cub in the same run)"
      ctest --preset release -L gpu -R 'PatternsGpu' --timeout 400 --output-on-failure >"$OUT/ctest-patterns-a.log" 2>&1 || status=1
      grep -E "tests passed|Failed|\*\*\*|Failure|Skipped" "$OUT/ctest-patterns-a.log" | head -20
      for fam in reduce scan histogram; do
        step "harness run suites/$fam.yaml"
        timeout "${SUITE_TIMEOUT:-400}" $exe run suites/$fam.yaml --out "$OUT/$fam.json" --quiet 2>&1 | tee "$OUT/$fam.log" | tail -40 || status=1
      done ;;
    patterns-b)
      # The softmax and optimizer families (issue 16): their GPU tests, then both suites.
      step "softmax and optimizer GPU tests"
      ctest --preset release -L gpu -R 'SoftmaxGpu|OptimizerGpu' --timeout 400 --output-on-failure \
        >"$OUT/ctest-patterns-b.log" 2>&1 || status=1
      grep -E "tests passed|Failed|\*\*\*|skipped:" "$OUT/ctest-patterns-b.log" | head -20
      step "harness run suites/softmax.yaml"
      timeout "${SUITE_TIMEOUT:-400}" $exe run suites/softmax.yaml --out "$OUT/softmax.json" --quiet 2>&1 \
        | tee "$OUT/softmax.log" | tail -80 || status=1
      step "harness run suites/optimizer.yaml"
      timeout "${SUITE_TIMEOUT:-400}" $exe run suites/optimizer.yaml --out "$OUT/optimizer.json" --quiet 2>&1 \
        | tee "$OUT/optimizer.log" | tail -80 || status=1 ;;
    conv2d)
      # 2D convolution (issue 17): GPU tests (every variant against the CPU reference at odd
      # sizes, cuDNN's pick printed), then the suite; cuDNN's algorithm lines are in the log.
      step "conv2d GPU tests"
      ctest --preset release -L gpu -R 'Conv2dGpu' --timeout 400 -V >"$OUT/ctest-conv2d.log" 2>&1 || status=1
      grep -E "tests passed|Failed|\*\*\*|skipped:|conv2d cudnn:" "$OUT/ctest-conv2d.log" | head -30
      step "harness run suites/conv2d.yaml"
      timeout "${SUITE_TIMEOUT:-400}" $exe run suites/conv2d.yaml --out "$OUT/conv2d.json" --quiet 2>&1 \
        | tee "$OUT/conv2d.log" | tail -120 || status=1 ;;
    spmv)
      # The spmv family (issue 17): its GPU test, then the suite (formats against cuSPARSE).
      step "spmv GPU test"
      ctest --preset release -L gpu -R 'SpmvGpu' --timeout 400 --output-on-failure >"$OUT/ctest-spmv.log" 2>&1 || status=1
      grep -E "tests passed|Failed|\*\*\*|skipped:" "$OUT/ctest-spmv.log" | head -20
      step "harness run suites/spmv.yaml"
      timeout "${SUITE_TIMEOUT:-400}" $exe run suites/spmv.yaml --out "$OUT/spmv.json" --quiet 2>&1 \
        | tee "$OUT/spmv.log" | tail -80 || status=1 ;;
    gemm-zoo)
      step "harness run suites/gemm-shapes.yaml ${ZOO_FILTER:+--filter $ZOO_FILTER }${ZOO_RESUME:+--resume $ZOO_RESUME}"
      zoo="$OUT/gemm-shapes.json"
      [ -n "${ZOO_RESUME:-}" ] && cp "$ZOO_RESUME" "$zoo.journal.jsonl"
      timeout "${SUITE_TIMEOUT:-540}" $exe run suites/gemm-shapes.yaml --no-profile --quiet ${ZOO_FILTER:+--filter "$ZOO_FILTER"} \
        ${ZOO_RESUME:+--resume "$zoo.journal.jsonl"} --out "$zoo" 2>&1 | tail -3 || status=1
      cp "$zoo.journal.jsonl" "$PACK/" 2>/dev/null
      if [ -f "$zoo" ]; then python3 reports/tables.py gemm-zoo "$zoo"; else python3 reports/tables.py gemm-zoo "$zoo.journal.jsonl"; fi \
        | tee "$OUT/table-gemm-zoo.md" | tail -8 || status=1 ;;
    attention-fp8)
      step "attention_fp8_gpu_test + harness run suites/attention-fp8.yaml + SASS + memcheck/racecheck (fp8 forward)"
      build/release/tests/attention_fp8_gpu_test 2>&1 | grep -E "O rel L2|skipped|OK|FAILED|PASSED|SKIPPED" | tail -30 || status=1
      timeout "${SUITE_TIMEOUT:-300}" $exe run suites/attention-fp8.yaml --out "$OUT/attention-fp8.json" --quiet 2>&1 | tee "$OUT/attention-fp8.log" | tail -40 || status=1
      python3 reports/tables.py attention-fp8 "$OUT/attention-fp8.json" | tee "$OUT/table-attention-fp8.md" || status=1
      forward_sass HGMMA QGMMA UTMALDG UTMASTG LDL STL
      FILTER='^attention/flash_wgmma/.*dtype:fp8_e4m3' OUT="$OUT/fp8" bash scripts/compute-sanitizer.sh memcheck racecheck \
        2>&1 | tail -4 || status=1 ;;
    sanitizer)
      step "compute-sanitizer over every CUDA variant (scripts/compute-sanitizer.sh)"
      OUT="$OUT/sanitizer" timeout "${SUITE_TIMEOUT:-400}" bash scripts/compute-sanitizer.sh 2>&1 | tail -30 || status=1 ;;
    template)
      step "a plugin from another repository: install, build templates/plugin out of tree, run it (both variants must pass)"
      REPORT_OUT="$OUT/template.json" REQUIRE_GPU=1 bash scripts/test-template.sh 2>&1 | tee "$OUT/template.log" | tail -40
      [ "${PIPESTATUS[0]}" = 0 ] || status=1 ;;
    measure)
      # Issue 13: gbench on the GEMM suite (two runs, compared), event vs graph vs CUPTI
      # time for tiny kernels, a forced throttle check, and the trust figures.
      step "harness gbench suites/gemm.yaml --benchmark_filter=4096 (twice)"
      for run in a b; do
        $exe gbench suites/gemm.yaml --benchmark_filter=4096 --benchmark_format=json --benchmark_out="$OUT/gb-$run.json" \
          >"$OUT/gb-$run.stdout" 2>"$OUT/gb-$run.log" || status=1
        tail -3 "$OUT/gb-$run.log"
      done
      $exe gbench suites/gemm.yaml --benchmark_filter='4096/K:4096/alpha:1/beta:0/dtype:f32/layout:nn$' --benchmark_min_time=0.2 2>&1 | tail -12
      step "harness compare gb-a.json gb-b.json"
      $exe compare "$OUT/gb-a.json" "$OUT/gb-b.json" 2>&1 | tail -6
      [ -f /usr/share/benchmark/compare.py ] && python3 /usr/share/benchmark/compare.py benchmarks "$OUT/gb-a.json" "$OUT/gb-b.json" 2>&1 | tail -8
      step "tiny kernels: --timing events and --timing graph"
      $exe run tests/data/suites/tiny_kernels.yaml --timing events --out "$OUT/tiny-events.json" --quiet 2>&1 | tail -3
      $exe run tests/data/suites/tiny_kernels.yaml --timing graph --out "$OUT/tiny-graph.json" --quiet 2>&1 | tail -3
      python3 reports/trust.py --tiny "$OUT/tiny-events.json" "$OUT/tiny-graph.json"
      step "throttle threshold 1.0 (flags every batch under the maximum clock)"
      $exe run tests/data/suites/tiny.yaml --variants cuda --throttle 1.0 --out "$OUT/throttle.json" 2>&1 | grep -E "warning|passed|results" | head -8
      step "trust: event median vs CUPTI kernel time, two GEMM runs compared"
      $exe run suites/gemm.yaml --filter "${TRUST_FILTER:-/M:(1024|2048|4096)/}" --out "$OUT/trust-a.json" --quiet 2>&1 | tail -2
      $exe run suites/gemm.yaml --filter "${TRUST_FILTER:-/M:(1024|2048|4096)/}" --out "$OUT/trust-b.json" --quiet 2>&1 | tail -2
      python3 reports/trust.py "$OUT/trust-a.json"
      $exe compare "$OUT/trust-a.json" "$OUT/trust-b.json" 2>&1 | tail -4 ;;
    tables)
      step "tables for docs/PERFORMANCE.md"
      for k in smoke:stream gemm:gemm attention:attention attention-memory:memory; do
        f="$OUT/${k%%:*}.json"
        [ -f "$f" ] || continue
        extra=""
        [ "${k##*:}" = attention ] && [ -f "$OUT/pytorch-attention.json" ] && extra="$OUT/pytorch-attention.json"
        python3 reports/tables.py "${k##*:}" "$f" $extra >"$OUT/table-${k%%:*}.md"
        cat "$OUT/table-${k%%:*}.md"
      done ;;
    nccl)
      # Issue 33: NCCL collectives as nccl-tests measures them (per sample a barrier, then K
      # ops back to back between one event pair, / K) and torch.distributed's all_reduce
      # timed the same way on the same GPUs, at every rank count of NCCL_RANKS (default:
      # every visible GPU; "2 4" on a 4-GPU host gives both), then the table ours vs torch per
      # size: table-nccl-<ranks>.md. NCCL_FILTER narrows the harness suite (e.g.
      # '^nccl_all_reduce/': the table needs only all_reduce); NCCL_CTEST=0 skips the GPU
      # tests; NCCL_NONBLOCKING_AB=1 adds four all_reduce sizes on the old non-blocking
      # communicator (HARNESS_NCCL_NONBLOCKING=1) for comparison. NVLink multicast off.
      export NCCL_NVLS_ENABLE=0
      if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then IFS=, read -ra visible <<<"$CUDA_VISIBLE_DEVICES"
      else mapfile -t visible < <(seq 0 $(($(nvidia-smi -L | wc -l) - 1))); fi
      for n in ${NCCL_RANKS:-${#visible[@]}}; do
        if [ "$n" -lt 2 ] || [ "$n" -gt "${#visible[@]}" ]; then
          echo "NCCL_RANKS: $n ranks needs 2 to ${#visible[@]} GPUs"; status=1; continue
        fi
        devs=$(seq -s, 0 $((n - 1)))                               # the harness's device indices
        cvd=$(IFS=,; echo "${visible[*]:0:$n}")                     # the same GPUs for torchrun
        step "harness run --devices $devs suites/nccl.yaml ($n ranks)"
        # torch.distributed's collectives as the `torch` variants of the same run (issue 35;
        # NCCL_TORCH_VARIANTS=0 leaves them out): table-nccl-torch-<ranks>.md.
        # Only where this build has Python and its interpreter imports torch (harness list
        # loads the file): else without them, saying why, so the nccl rows still come.
        torch_variants=()
        if [ "${NCCL_TORCH_VARIANTS:-1}" != 0 ]; then
          if $exe list nccl_all_reduce --python examples/python/torch_distributed.py >"$OUT/nccl-torch-list.log" 2>&1; then
            torch_variants=(--python examples/python/torch_distributed.py)
          else
            echo "no torch variants: $(tail -1 "$OUT/nccl-torch-list.log")"
          fi
        fi
        timeout "${SUITE_TIMEOUT:-500}" $exe run suites/nccl.yaml --devices "$devs" ${NCCL_FILTER:+--filter "$NCCL_FILTER"} \
          ${torch_variants[@]+"${torch_variants[@]}"} --out "$OUT/nccl-$n.json" --quiet 2>&1 | tee "$OUT/nccl-$n.log" | tail -30 || status=1
        if [ ${#torch_variants[@]} -gt 0 ] && [ -f "$OUT/nccl-$n.json" ]; then
          python3 reports/tables.py nccl-torch "$OUT/nccl-$n.json" | tee "$OUT/table-nccl-torch-$n.md" || status=1
        fi
        python3 - "$OUT/nccl-$n.json" <<'PY' || true
import json, sys
rep = json.load(open(sys.argv[1]))
print(f"{'problem':<20} {'variant':<7} {'bytes':>11} {'dtype':>5} {'inpl':>5} {'K':>4} {'time/op':>11} {'slowest':>11} {'algbw':>8} {'busbw':>8}  per rank busbw")
for r in rep["results"]:
    x = r.get("extra") or {}
    if r["status"] != "passed" or "busbw_gbps" not in x: continue
    p = r["params"]
    ranks = " ".join(f"{k.get('busbw_gbps', 0):.1f}" for k in x.get("ranks", []))
    print(f"{r['problem']:<20} {r['variant']:<7} {p['bytes']:>11} {p['dtype']:>5} {str(p.get('in_place', '-')):>5} {x.get('ops_per_sample', 0):>4} "
          f"{x['time_s']*1e6:>9.2f}us {x.get('time_max_s', 0)*1e6:>9.2f}us {x['algbw_gbps']:>8.2f} {x['busbw_gbps']:>8.2f}  {ranks}")
PY
        step "torch.distributed all_reduce ($n ranks, CUDA_VISIBLE_DEVICES=$cvd)"
        CUDA_VISIBLE_DEVICES=$cvd PYTHONUNBUFFERED=1 timeout 300 python3 -m torch.distributed.run --nproc_per_node "$n" \
          reports/torch_allreduce.py --out "$OUT/torch-allreduce-$n.json" >"$OUT/torch-allreduce-$n.log" 2>&1 || status=1
        tail -22 "$OUT/torch-allreduce-$n.log"
        step "table: ours vs torch.distributed, $n ranks ($OUT/table-nccl-$n.md)"
        if [ -f "$OUT/nccl-$n.json" ] && [ -f "$OUT/torch-allreduce-$n.json" ]; then
          python3 reports/tables.py nccl "$OUT/nccl-$n.json" "$OUT/torch-allreduce-$n.json" | tee "$OUT/table-nccl-$n.md" || status=1
        else
          echo "no table: a side is missing"; status=1
        fi
        if [ "${NCCL_NONBLOCKING_AB:-0}" = 1 ]; then
          # The same batches on the old non-blocking communicator: what its enqueue costs.
          step "A/B: HARNESS_NCCL_NONBLOCKING=1 (the old non-blocking communicator), all_reduce f32 ($n ranks)"
          HARNESS_NCCL_NONBLOCKING=1 timeout 300 $exe run suites/nccl.yaml --devices "$devs" --quiet \
            --filter '^nccl_all_reduce/nccl/bytes:(8|4096|2097152|16777216)/dtype:f32/' --out "$OUT/nccl-$n-nonblocking.json" \
            >"$OUT/nccl-$n-nonblocking.log" 2>&1 || status=1
          python3 -c "
import json, sys
for r in json.load(open(sys.argv[1]))['results']:
    x = r.get('extra') or {}
    print(r['name'], r['status'], f\"{x.get('time_s', 0) * 1e6:.2f} us/op (non-blocking)\")" "$OUT/nccl-$n-nonblocking.json" || true
        fi
        tar czf "$PACK/round.tgz" -C "$OUT" .
      done
      if [ "${NCCL_CTEST:-1}" != 0 ]; then
        step "ctest NcclGpu DevicesGpu CollectiveTimingGpu TorchDistributed (every visible GPU)"
        ctest --test-dir build/release -R 'NcclGpu|DevicesGpu|CollectiveTimingGpu|TorchDistributed' --output-on-failure >"$OUT/nccl-gpu-test.log" 2>&1 || status=1
        grep -E "tests passed|Failed|Skipped|Passed" "$OUT/nccl-gpu-test.log" | head -10
      fi ;;
    nccl-torch-ab)
      # Issue 35: why the torch.distributed variant reads 25-75 us per op above torch's own
      # loop (docs/python.md): tests/data/python/torch_distributed_ab.py's torch,
      # torch_set_stream and torch_timed beside nccl on all_reduce up to 2 MiB, every GPU.
      export NCCL_NVLS_ENABLE=0
      step "torch.distributed variants A/B (all_reduce, 8 B .. 2 MiB, every GPU)"
      rm -f "$OUT/torch-timed-phases.txt"
      TORCH_AB_PHASES="$OUT/torch-timed-phases.txt" timeout "${SUITE_TIMEOUT:-300}" $exe run suites/nccl.yaml --devices all \
        --filter '^nccl_all_reduce/.*bytes:(8|4096|262144|2097152)/.*in_place:true' \
        --python tests/data/python/torch_distributed_ab.py --out "$OUT/nccl-torch-ab.json" \
        >"$OUT/nccl-torch-ab.log" 2>&1 || status=1
      tail -3 "$OUT/nccl-torch-ab.log"
      for v in torch torch_set_stream torch_timed; do
        python3 reports/tables.py nccl-torch "$OUT/nccl-torch-ab.json" --theirs "$v" | grep -E "^\| all_reduce" || status=1
      done
      tail -8 "$OUT/torch-timed-phases.txt" 2>/dev/null ;;
    devices)
      # Issue 19: one suite sharded over every GPU vs one GPU (target: <= 0.55x on two).
      suite=${DEVICES_SUITE:-suites/softmax.yaml}
      step "$suite: --devices all vs --devices 0"
      t0=$(date +%s.%N)
      $exe run "$suite" --devices all --no-profile --out "$OUT/devices-all.json" --quiet >"$OUT/devices-all.log" 2>&1 || status=1
      t1=$(date +%s.%N)
      $exe run "$suite" --devices 0 --no-profile --out "$OUT/devices-0.json" --quiet >"$OUT/devices-0.log" 2>&1 || status=1
      t2=$(date +%s.%N)
      tail -2 "$OUT/devices-all.log" "$OUT/devices-0.log"
      python3 -c "a=$t1-$t0; b=$t2-$t1; print(f'wall time --devices all: {a:.1f} s, --devices 0: {b:.1f} s, ratio {a/b:.2f}')" ;;
    gemm-fp32)
      step "FP32 shape table: auto, coarsened vs cublas over suites/gemm.yaml"
      $exe run suites/gemm.yaml --variants auto,coarsened,cublas --out "$OUT/gemm-fp32.json" --quiet 2>&1 | tail -4 || status=1
      python3 - "$OUT/gemm-fp32.json" <<'PY' | tee "$OUT/table-gemm-fp32.md"
import json, math, sys
rep = json.load(open(sys.argv[1]))
t = {}
for r in rep["results"]:
    p = r["params"]
    key = (p["M"], p["N"], p["K"], p.get("alpha", 1), p.get("beta", 0))
    med = (r.get("stats") or {}).get("median_s")
    if r["status"] == "passed" and med:
        t.setdefault(key, {})[r["variant"]] = (med, r.get("config", ""))
print("| M | N | K | alpha | beta | cublas ms | auto % | coarsened % | auto config |")
print("|---|---|---|---|---|---|---|---|---|")
g = {"auto": [], "coarsened": []}
for k, v in t.items():
    if "cublas" not in v:
        continue
    base = v["cublas"][0]
    cells = []
    for name in ("auto", "coarsened"):
        if name in v:
            g[name].append(base / v[name][0])
            cells.append(f"{100 * base / v[name][0]:.0f}%")
        else:
            cells.append("-")
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {base * 1e3:.4f} | {cells[0]} | {cells[1]} | {v.get('auto', (0, ''))[1]} |")
for name, xs in g.items():
    if xs:
        print(f"\n{name}: geometric mean {math.exp(sum(map(math.log, xs)) / len(xs)):.3f}x of cuBLAS over {len(xs)} shapes, min {min(xs):.3f}x")
PY
      ;;
    ddp)
      # Issue 19: data-parallel training (suites/transformer-ddp.yaml) over every GPU, its GPU
      # tests, and PyTorch DDP on the same GPUs (1 and all ranks). NVLink multicast off.
      export NCCL_NVLS_ENABLE=0
      ngpu=$(nvidia-smi -L | wc -l)
      step "harness run --devices all suites/transformer-ddp.yaml ($ngpu GPUs)"
      HARNESS_TRAIN_METRICS="$OUT/ddp-metrics.jsonl" timeout "${SUITE_TIMEOUT:-500}" $exe run suites/transformer-ddp.yaml \
        --devices all --no-profile --out "$OUT/ddp.json" 2>&1 | tee "$OUT/ddp.log" | tail -12 || status=1
      python3 - "$OUT/ddp.json" <<'PY' || true
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    x, p = r.get("extra") or {}, r["params"]
    dp = x.get("data_parallel", {})
    print(f"{r['name']} [{r.get('device', '')}] {r['status']} {r.get('reason', '')[:120]}: "
          f"{x.get('tokens_per_s', 0):.0f} tokens/s (job), {x.get('tokens_per_s_per_gpu', 0):.0f} per GPU"
          + (f", one GPU alone {dp['tokens_per_s_one_gpu']:.0f}, scaling efficiency {dp['scaling_efficiency']:.3f}, "
             f"{dp['buckets']} buckets, {dp['weight_checks']} weight checks, exchange {dp.get('grad_reduce', 'f32')}, "
             f"backward {x['phase_ms']['backward']:.2f} ms of which exposed exchange "
             f"{x['phase_ms'].get('exchange_wait', float('nan')):.2f}" if dp else ""))
PY
      step "ctest DataParallel"
      ctest --test-dir build/release -R 'DataParallel|LeafGradHook' --output-on-failure >"$OUT/ddp-gpu-test.log" 2>&1 || status=1
      grep -E "tests passed|Failed|Skipped|Passed" "$OUT/ddp-gpu-test.log" | head -10
      for n in 1 "$ngpu"; do
        for precision in fp32 bf16; do
          step "PyTorch DDP ($precision), torchrun --nproc_per_node $n"
          PYTHONUNBUFFERED=1 timeout 300 python3 -m torch.distributed.run --nproc_per_node "$n" reports/pytorch_ddp.py \
            suites/transformer-ddp.yaml --params batch=4,seq_len=2048 --precision "$precision" \
            --out "$OUT/pytorch-ddp-$precision-$n.json" >"$OUT/pytorch-ddp-$precision-$n.log" 2>&1 || status=1
          tail -3 "$OUT/pytorch-ddp-$precision-$n.log"
        done
      done
      # bf16 with the gradients exchanged in bf16 (bf16_compress_hook), beside grad_reduce: bf16.
      step "PyTorch DDP (bf16, bf16 all-reduce), torchrun --nproc_per_node $ngpu"
      PYTHONUNBUFFERED=1 timeout 300 python3 -m torch.distributed.run --nproc_per_node "$ngpu" reports/pytorch_ddp.py \
        suites/transformer-ddp.yaml --params batch=4,seq_len=2048 --precision bf16 --grad-reduce bf16 \
        --out "$OUT/pytorch-ddp-bf16-bf16reduce-$ngpu.json" >"$OUT/pytorch-ddp-bf16-bf16reduce-$ngpu.log" 2>&1 || status=1
      tail -3 "$OUT/pytorch-ddp-bf16-bf16reduce-$ngpu.log"
      step "the table: ours beside PyTorch DDP (reports/tables.py ddp)"
      ptargs=()
      for f in "$OUT"/pytorch-ddp-*.json; do [ -f "$f" ] && ptargs+=(--pytorch-ddp "$f"); done
      python3 reports/tables.py ddp "$OUT/ddp.json" "${ptargs[@]}" | tee "$OUT/table-ddp.md" | tail -12 || status=1 ;;
    *) echo "unknown stage '$s'"; exit 2 ;;
  esac
  # Pack after every stage: whatever a later stage or a time limit cuts, this stays.
  tar czf "$PACK/round.tgz" -C "$OUT" .
done
exit $status
