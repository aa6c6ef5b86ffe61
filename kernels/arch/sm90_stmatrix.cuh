#pragma once
// stmatrix (sm_90+): four 8x8 16-bit matrices from the mma fragment layout into shared memory,
// the inverse of ldmatrix (sm80_ldmatrix.cuh): register i of a thread holds row lane / 4,
// columns 2 (lane % 4), +1 of matrix i; lanes 8i..8i+7 give the row addresses of matrix i
// (16 bytes each). With the A fragment of a 16 x 16 k slice (a0 rows 0-7 / k 0-7, a1 rows
// 8-15 / k 0-7, a2 rows 0-7 / k 8-15, a3 rows 8-15 / k 8-15) one stsm_x4 stores the slice.
// A generic-proxy write: fence.proxy.async before the async proxy (wgmma, TMA) reads it.
#include <cstdint>

namespace kernels::arch {

__device__ __forceinline__ void stsm_x4(std::uint32_t smem_addr, const std::uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(smem_addr), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

}  // namespace kernels::arch
