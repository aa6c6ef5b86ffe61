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

}  // namespace kernels::arch
