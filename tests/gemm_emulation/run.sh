#!/usr/bin/env bash
# Host emulation of the FP32 GEMM kernels behind `auto` (kernels/gemm: gemm_tile.cuh,
# gemm_coarsened.cu, gemm_splitk.cu, gemm_gemv.cu) for machines without a GPU: the kernel
# sources are copied with their launches (<<<grid, block, 0, stream>>>) rewritten to
# emu_launch (emu.hpp: one block at a time, one std::thread per CUDA thread, __syncthreads
# as a std::barrier, __shared__ as static, warp shuffles through a per-warp barrier) and
# cp.async replaced by a synchronous copy, compiled with g++ and checked against gemm_cpu
# (every tile plain and split 2/3/7 ways, GEMV with 1/5/64 slices, rank-1, auto's choices;
# aligned and misaligned operands; NaN in C and the workspace so that reads of a beta = 0 C
# and unwritten panel entries show).
# What it cannot show: the float4 / cp.async hardware paths, memory-model or timing
# behaviour, register or shared-memory limits; a GPU run (tests/gemm_auto_gpu_test.cpp)
# stays the check. Takes ~5 minutes on 2 cores (thread creation dominates).
#   bash tests/gemm_emulation/run.sh [skip]   # skip: GEMV, rank-1 and auto only
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/gemm" "$work/arch"
python3 - "$root/kernels/gemm" "$work/gemm" <<'PY'
import re, sys
src, dst = sys.argv[1] + "/", sys.argv[2] + "/"
launch = re.compile(r'(\w+(?:<[^<>;]*>)?)<<<([^,]+),\s*([^,]+),\s*0,\s*stream>>>\(([^;]*)\);')
for f in ["gemm_tile.cuh", "gemm_gemv.cu", "gemm_splitk.cu", "gemm_coarsened.cu", "common.cuh",
          "gemm_shapes.hpp", "gemm_types.hpp", "gemm_reference.hpp", "gemm.hpp", "gemm_auto.hpp", "gemm_auto.cpp",
          "gemm_cpu.cpp"]:
    s = open(src + f).read()
    s, n = launch.subn(lambda m: f"emu_launch(dim3({m.group(2)}), dim3({m.group(3)}), [&] {{ {m.group(1)}({m.group(4)}); }});", s)
    if f.endswith(".cu") and "<<<" in s:
        sys.exit(f"{f}: a launch the rewrite does not understand")
    if f == "common.cuh":
        s = s.replace("#include <cuda_runtime.h>", '#include "emu.hpp"')
    open(dst + f, "w").write(s)
# kernels/arch: the warp reductions as they are (emu.hpp's __shfl_xor_sync), cp.async as a
# synchronous copy.
arch_src, arch_dst = src + "../arch/", dst + "../arch/"
open(arch_dst + "warp_reduce.cuh", "w").write(open(arch_src + "warp_reduce.cuh").read())
open(arch_dst + "sm80_cp_async.cuh", "w").write("""#pragma once
#include <cstring>
namespace kernels::arch {
inline void cp_async16(void* smem, const void* gmem, bool valid = true) {
  if (valid) std::memcpy(smem, gmem, 16); else std::memset(smem, 0, 16);
}
inline void cp_async_commit() {}
template <int kPending>
inline void cp_async_wait() {}
}  // namespace kernels::arch
""")
PY
cp "$here/emu.hpp" "$here/main.cpp" "$work/"
flags="-std=c++20 -O1 -w -I$work -I/usr/local/cuda/include -include $work/emu.hpp"
cd "$work"
for f in gemm_coarsened gemm_splitk gemm_gemv; do g++ $flags -x c++ -c gemm/$f.cu -o $f.o & done
g++ $flags -c gemm/gemm_auto.cpp -o auto.o
g++ $flags -c gemm/gemm_cpu.cpp -o cpu.o
g++ $flags -c main.cpp -o main.o
wait
g++ ./*.o -o emu -lpthread -L/usr/local/cuda/lib64 -lcudart
LD_LIBRARY_PATH=/usr/local/cuda/lib64 ./emu "$@"
