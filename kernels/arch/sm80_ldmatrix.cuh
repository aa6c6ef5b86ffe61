#pragma once
// ldmatrix (sm_75+): four 8x8 16-bit matrices from shared memory into the mma.sync
// fragment layout; lanes 8i..8i+7 give the row addresses of matrix i. Each takes the
// address as a generic pointer into shared memory or as a 32-bit shared address
// (smem_u32, smem.cuh).
#include <cstdint>

#include "arch/smem.cuh"

namespace kernels::arch {

__device__ __forceinline__ void ldsm_x4(std::uint32_t (&r)[4], std::uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}
__device__ __forceinline__ void ldsm_x4(std::uint32_t (&r)[4], const void* p) { ldsm_x4(r, smem_u32(p)); }
// The same, each 8x8 matrix transposed (B operands stored K-major-by-rows, e.g. V).
__device__ __forceinline__ void ldsm_x4_t(std::uint32_t (&r)[4], std::uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}
__device__ __forceinline__ void ldsm_x4_t(std::uint32_t (&r)[4], const void* p) { ldsm_x4_t(r, smem_u32(p)); }

}  // namespace kernels::arch
