#!/usr/bin/env bash
# ncu counters of the tensor-core kernels (issues 14 and 15): tensor pipe utilization,
# shared-memory bank conflicts, achieved occupancy, registers, SM and DRAM throughput, for
# one launch of each kernel at the benchmark shapes:
#   gemm/mma and gemm/wgmma, bf16 8192^3 nn          (suites/gemm-tensor-cores.yaml)
#   attention flash_tc forward and backward, bf16, B=4 H=32 N=4096, d=64 and 128, at
#   the block shapes of suites/attention-tc-tiles.yaml
# Each target is one `harness run --filter <one result>` under `ncu -k <kernel> -c 1`: the
# first launch of the kernel (the check's) is profiled, the rest runs unprofiled.
# Usage (on the GPU machine, after a build):
#   bash scripts/ncu-tensor-cores.sh [out_dir]       # default ./out/ncu
# Prints one CSV block per target and writes <out_dir>/<target>.csv.
set -uo pipefail
cd "$(dirname "$0")/.."
exe=${HARNESS:-build/release/bin/harness}
out=${1:-out/ncu}
mkdir -p "$out"
command -v ncu >/dev/null || { echo "ncu not found (Nsight Compute)"; exit 1; }

# Metrics this ncu knows (names differ across GPU generations): keep the ones it lists.
wanted="gpu__time_duration.sum sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
sm__warps_active.avg.pct_of_peak_sustained_active launch__registers_per_thread launch__occupancy_limit_registers
sm__throughput.avg.pct_of_peak_sustained_elapsed dram__throughput.avg.pct_of_peak_sustained_elapsed"
known=$(ncu --query-metrics 2>/dev/null | awk '{print $1}')
metrics=""
for m in $wanted; do
  base=${m%%.*}
  if grep -qx "$base" <<<"$known" || [[ $base == launch__* ]]; then metrics+="${metrics:+,}$m"; else echo "(ncu lacks $m)"; fi
done

att="batch:4/heads:32/kv_heads:0/seq_len:4096"
targets=(
  "gemm-mma-bf16|gemm_mma_kernel|suites/gemm-tensor-cores.yaml|^gemm/mma/M:8192/N:8192/K:8192/alpha:1/beta:0/dtype:bf16/layout:nn$"
  "gemm-wgmma-bf16|gemm_wgmma|suites/gemm-tensor-cores.yaml|^gemm/wgmma/M:8192/N:8192/K:8192/alpha:1/beta:0/dtype:bf16/layout:nn$"
)
for d in 64 128; do
  for v in r64 r128 w8; do
    targets+=("fwd-d$d-$v|flash_tc_forward_kernel|suites/attention-tc-tiles.yaml|^attention/flash_tc_$v/$att/head_dim:$d/causal:false/scale:0/dtype:bf16$")
    targets+=("bwd-d$d-$v|flash_tc_backward_kernel|suites/attention-tc-tiles.yaml|^attention_backward/flash_tc_$v/$att/head_dim:$d/causal:false/scale:0/dtype:bf16$")
  done
done

status=0
for t in "${targets[@]}"; do
  IFS='|' read -r name kernel suite filter <<<"$t"
  echo "=== $name ($kernel; $filter)"
  ncu -k "regex:$kernel" -c 1 --csv --print-units base --metrics "$metrics" \
      "$exe" run "$suite" --filter "$filter" --no-profile --quiet --out "$out/$name.json" \
      >"$out/$name.log" 2>&1 || status=1
  # ncu's CSV rows start with "ID" (header) or a launch id in quotes.
  grep -E '^"(ID|[0-9]+)"' "$out/$name.log" | tee "$out/$name.csv" | cut -d, -f12- | head -20
  grep -qE '^"[0-9]+"' "$out/$name.log" || { echo "no kernel profiled:"; tail -5 "$out/$name.log"; }
done
exit $status
