#pragma once
// Global-memory loads with cache hints the CUDA intrinsics do not spell (sm_70+).
#include <cstdint>

namespace kernels::arch {

// 16 bytes read once, not kept in L1: a stream that would otherwise evict the data a kernel
// reuses from L1 (ld.global.nc: read-only for the kernel's lifetime; L1::no_allocate).
__device__ __forceinline__ uint4 ldg_stream_no_l1(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

}  // namespace kernels::arch
