#pragma once
// Loads and stores between the storage type S and the accumulation type P of the fused
// kernels (nn_fused.hpp): bf16 widens to float exactly and rounds to nearest even once on
// the store; float and double are themselves. (Internal to kernels/nn.)
#include <cuda_bf16.h>

namespace kernels::nn::detail {

template <class P, class S>
__device__ __forceinline__ P widen(S v) {
  return static_cast<P>(v);
}
template <>
__device__ __forceinline__ float widen<float, __nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <class S, class P>
__device__ __forceinline__ S narrow(P v) {
  return static_cast<S>(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 narrow<__nv_bfloat16, float>(float v) {
  return __float2bfloat16_rn(v);
}

}  // namespace kernels::nn::detail
