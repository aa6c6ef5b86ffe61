#pragma once
// Asynchronous 16-byte global -> shared copies (cp.async, sm_80+).
#include <cstdint>

namespace kernels::arch {

// 16-byte copy that bypasses registers (cp.async.cg: cached in L2 only). With `valid`
// false nothing is read and the 16 bytes are zero-filled (src-size 0), so tails past the
// end of a matrix become zeros.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid = true) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int src_size = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_size) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

}  // namespace kernels::arch
