#pragma once
// Element conversions and fast math shared by the tensor-core kernels.
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace kernels::arch {

// Two floats rounded to a packed pair of T (x in the low half), T = bf16 or f16.
template <class T>
__device__ __forceinline__ std::uint32_t pack2(float x, float y) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<std::uint32_t*>(&v);
  } else {
    __half2 v = __floats2half2_rn(x, y);
    return *reinterpret_cast<std::uint32_t*>(&v);
  }
}
template <class T>
__device__ __forceinline__ float2 unpack2(std::uint32_t u) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&u));
  } else {
    return __half22float2(*reinterpret_cast<__half2*>(&u));
  }
}

// f32 -> tf32, rounded to nearest with ties away from zero (cvt.rna), on bit patterns as
// mma_m16n8k8_tf32 takes them: the result's low 13 bits are zero.
__device__ __forceinline__ std::uint32_t to_tf32(std::uint32_t f32_bits) {
  std::uint32_t out;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(out) : "f"(__uint_as_float(f32_bits)));
  return out;
}

// 2^x with one MUFU.EX2 (no denormal fix-up: a result below 2^-126 flushes to 0; -inf
// gives +0).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace kernels::arch
