#pragma once
// Element conversions and fast math shared by the tensor-core kernels.
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace kernels::arch {

// One element to float and back (rounded to nearest even), T = bf16, f16 or float (identity).
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(float x) { return x; }
template <class T>
__device__ __forceinline__ T from_float(float x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(x);
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(x);
  } else {
    static_assert(std::is_same_v<T, float>, "from_float: bf16, f16 or float");
    return x;
  }
}

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

// Four floats rounded to FP8 E4M3 (to nearest even, saturated to +-448: cvt.rn.satfinite),
// packed a in the lowest byte .. d in the highest: the byte order of an 8-bit mma / wgmma A
// fragment register (its element k, k + 1, k + 2, k + 3). sm_89+.
__device__ __forceinline__ std::uint32_t pack4_e4m3(float a, float b, float c, float d) {
  std::uint32_t out;
  // cvt ... f8x2 d, x, y puts x in the upper byte of the 16-bit result and y in the lower.
  asm("{\n.reg .b16 lo, hi;\n"
      "cvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n"
      "cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n"
      "mov.b32 %0, {lo, hi};\n}\n"
      : "=r"(out)
      : "f"(a), "f"(b), "f"(c), "f"(d));
  return out;
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
