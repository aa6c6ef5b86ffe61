#pragma once
// Device helpers shared by the kernels/nn kernels (internal to kernels/nn).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "arch/warp_reduce.cuh"

namespace kernels::nn::detail {

constexpr int kThreads = 256;  // block size of the grid-stride kernels

// W elements of T in one aligned struct: a 16-byte Pack compiles to one 128-bit access.
template <class T, int W>
struct alignas(sizeof(T) * W) Pack {
  T v[W];
};
template <class T>
constexpr int kWidth = static_cast<int>(16 / sizeof(T));  // 4 floats, 2 doubles
template <class T>
using Vec = Pack<T, kWidth<T>>;

template <class T>
__device__ __forceinline__ Vec<T> load_vec(const T* p, std::size_t i) {
  return reinterpret_cast<const Vec<T>*>(p)[i];
}
template <class T>
__device__ __forceinline__ void store_vec(T* p, std::size_t i, const Vec<T>& v) {
  reinterpret_cast<Vec<T>*>(p)[i] = v;
}

inline bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & std::uintptr_t{15}) == 0;
}

// Multiprocessors of the current device, cached per device (a failed query gives 132).
inline int sm_count() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0) {
    (void)cudaGetLastError();
    return 132;
  }
  if (device < kMaxDevices) {
    const int cached = cache[device].load(std::memory_order_relaxed);
    if (cached > 0) return cached;
  }
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      sms <= 0) {
    (void)cudaGetLastError();
    sms = 132;
  }
  if (device < kMaxDevices) cache[device].store(sms, std::memory_order_relaxed);
  return sms;
}

// Blocks for a grid-stride loop over `work` items: enough to cover them, at most
// `per_sm` resident blocks per multiprocessor (8 x 256 threads fills an SM).
inline unsigned grid_for(std::size_t work, int threads = kThreads, int per_sm = 8) {
  const std::size_t need = (work + static_cast<std::size_t>(threads) - 1) / threads;
  const std::size_t cap = static_cast<std::size_t>(sm_count()) * per_sm;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(need, cap)));
}

// ---- reductions (fixed order: deterministic for a given launch configuration) ----------
// Over a warp: arch::warp_sum / arch::warp_max (the same butterfly in every lane).

// Sum (or max) over the block, returned to every thread. blockDim.x is a multiple of 32;
// sh holds 32 elements. Every warp reduces the same per-warp partials in the same order,
// so no broadcast step is needed. Safe to call repeatedly with the same sh.
template <class T>
__device__ __forceinline__ T block_sum(T v, T* sh) {
  v = arch::warp_sum(v);
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  __syncthreads();  // sh may still be read by a previous call
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  T r = lane < static_cast<int>(blockDim.x >> 5) ? sh[lane] : T(0);
  return arch::warp_sum(r);
}
template <class T>
__device__ __forceinline__ T block_max(T v, T* sh) {
  v = arch::warp_max(v);
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  __syncthreads();
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  T r = lane < static_cast<int>(blockDim.x >> 5) ? sh[lane] : T(-INFINITY);
  return arch::warp_max(r);
}

}  // namespace kernels::nn::detail
