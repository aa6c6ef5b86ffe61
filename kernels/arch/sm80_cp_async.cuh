#pragma once
// Asynchronous 16-byte global -> shared copies (cp.async, sm_80+).
#include <cstdint>

#include "arch/smem.cuh"

namespace kernels::arch {

// 16-byte copy that bypasses registers (cp.async.cg: cached in L2 only). With `valid`
// false nothing is read and the 16 bytes are zero-filled (src-size 0), so tails past the
// end of a matrix become zeros (gmem must still be a valid address). The destination is a
// 32-bit shared address (smem_u32, smem.cuh) or a generic pointer into shared memory.
__device__ __forceinline__ void cp_async16(std::uint32_t smem_addr, const void* gmem, bool valid = true) {
  const int src_size = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(gmem), "r"(src_size)
               : "memory");
}
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid = true) {
  cp_async16(smem_u32(smem), gmem, valid);
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

}  // namespace kernels::arch
