#pragma once
// Warp-level tensor-core products (mma.sync, sm_80+): m16n8k16 with bf16 / f16 inputs and
// m16n8k8 with tf32 inputs, f32 accumulation. Fragments, lane = 4 g + t:
//   m16n8k16: A a0 (row g, k 2t..2t+1) a1 (row g+8) a2 (row g, k 2t+8..) a3 (row g+8, k 2t+8..)
//             B b0 (k 2t..2t+1, col g) b1 (k 2t+8.., col g)
//             C c0, c1 (row g, cols 2t, 2t+1) c2, c3 (row g+8)
//   m16n8k8 (tf32): A a0 (row g, k t) a1 (row g+8, k t) a2 (row g, k t+4) a3 (row g+8, k t+4)
//             B b0 (k t, col g) b1 (k t+4, col g); C as above.
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace kernels::arch {

// The mma wrappers are not volatile: a pure register operation, so the compiler may
// interleave the mmas of one k-step with the ldmatrix of the next (which stay volatile:
// they read shared memory).

// c += a * b, one m16n8k16 tile, T = __nv_bfloat16 or __half.
template <class T>
__device__ __forceinline__ void mma_m16n8k16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                             std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    static_assert(std::is_same_v<T, __half>, "mma_m16n8k16: bf16 or f16");
    asm(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// c += a * b, one m16n8k8 tile in tf32 (the registers hold f32 bit patterns; the tensor
// core reads their upper 19 bits).
__device__ __forceinline__ void mma_m16n8k8_tf32(float (&c)[4], std::uint32_t a0, std::uint32_t a1,
                                                 std::uint32_t a2, std::uint32_t a3, std::uint32_t b0,
                                                 std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

}  // namespace kernels::arch
