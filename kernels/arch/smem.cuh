#pragma once
// Shared-memory addresses in the form the PTX instructions take them: 32-bit offsets in
// the shared window. Kernels that step through a tile compute one such address and add
// byte offsets to it (one 32-bit add per access instead of a 64-bit generic pointer and
// a conversion), hence the arch wrappers that take a std::uint32_t address.
#include <cstdint>

namespace kernels::arch {

// 32-bit shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Plain shared-memory accesses at such an address (one instruction each).
__device__ __forceinline__ void st_shared_b32(std::uint32_t addr, std::uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void st_shared_v2_f32(std::uint32_t addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}
__device__ __forceinline__ void ld_shared_v2_f32(std::uint32_t addr, float& x, float& y) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(x), "=f"(y) : "r"(addr) : "memory");
}

}  // namespace kernels::arch
