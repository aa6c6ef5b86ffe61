// Fused optimizer steps: Adam (bias-corrected, decoupled weight decay) and SGD (optional
// momentum), one grid-stride kernel each, 16-byte vectors where all buffers are aligned.
// The bias corrections 1 - b1^t, 1 - b2^t are computed once on the host in double.
// Multi-tensor Adam: the same per-element update over a list of tensors in one launch,
// with lr and the bias corrections read from device memory (graph-replayable); multi-tensor
// sum of squares and clip by global norm; and the loss log of the training step, whose slot
// index lives on the device.
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "nn/nn.hpp"
#include "nn/nn_common.cuh"

namespace kernels::nn {
namespace {
using namespace detail;

template <class T>
struct AdamParams {
  T lr, b1, b2, eps, wd;
  T bc1, bc2;  // 1 - b1^t, 1 - b2^t
};

template <class T>
__device__ __forceinline__ void adam_one(T& p, T g, T& m, T& v, const AdamParams<T>& a) {
  m = a.b1 * m + (T(1) - a.b1) * g;
  v = a.b2 * v + (T(1) - a.b2) * g * g;
  const T mhat = m / a.bc1;
  const T vhat = v / a.bc2;
  p -= a.lr * mhat / (sqrt(vhat) + a.eps) + a.lr * a.wd * p;
}

// adam_one on the W-wide vector i of p, g, m, v (all 16-byte aligned).
template <class T>
__device__ __forceinline__ void adam_vec(T* p, const T* g, T* m, T* v, std::size_t i, const AdamParams<T>& a) {
  Vec<T> pv = load_vec(p, i), mv = load_vec(m, i), vv = load_vec(v, i);
  const Vec<T> gv = load_vec(g, i);
#pragma unroll
  for (int e = 0; e < kWidth<T>; ++e) adam_one(pv.v[e], gv.v[e], mv.v[e], vv.v[e], a);
  store_vec(p, i, pv);
  store_vec(m, i, mv);
  store_vec(v, i, vv);
}

// adam_one on element i.
template <class T, class Index>
__device__ __forceinline__ void adam_at(T* p, const T* g, T* m, T* v, Index i, const AdamParams<T>& a) {
  T pi = p[i], mi = m[i], vi = v[i];
  adam_one(pi, g[i], mi, vi, a);
  p[i] = pi;
  m[i] = mi;
  v[i] = vi;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    adam_kernel(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ m, T* __restrict__ v,
                std::size_t n, AdamParams<T> a, bool vec) {
  constexpr int W = kWidth<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t head = 0;
  if (vec) {
    const std::size_t nv = n / W;
    for (std::size_t i = tid; i < nv; i += stride) adam_vec(p, g, m, v, i, a);
    head = nv * W;
  }
  for (std::size_t i = head + tid; i < n; i += stride) adam_at(p, g, m, v, i, a);
}

// kMomentum: buf = momentum buf + g, p -= lr buf; else p -= lr g.
template <class T, bool kMomentum>
__global__ void __launch_bounds__(kThreads)
    sgd_kernel(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ buf, std::size_t n,
               T lr, T momentum, bool vec) {
  constexpr int W = kWidth<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t head = 0;
  if (vec) {
    const std::size_t nv = n / W;
    for (std::size_t i = tid; i < nv; i += stride) {
      Vec<T> pv = load_vec(p, i);
      const Vec<T> gv = load_vec(g, i);
      if constexpr (kMomentum) {
        Vec<T> bv = load_vec(buf, i);
#pragma unroll
        for (int e = 0; e < W; ++e) {
          bv.v[e] = momentum * bv.v[e] + gv.v[e];
          pv.v[e] -= lr * bv.v[e];
        }
        store_vec(buf, i, bv);
      } else {
#pragma unroll
        for (int e = 0; e < W; ++e) pv.v[e] -= lr * gv.v[e];
      }
      store_vec(p, i, pv);
    }
    head = nv * W;
  }
  for (std::size_t i = head + tid; i < n; i += stride) {
    if constexpr (kMomentum) {
      const T b = momentum * buf[i] + g[i];
      buf[i] = b;
      p[i] -= lr * b;
    } else {
      p[i] -= lr * g[i];
    }
  }
}

// ---- multi-tensor Adam -------------------------------------------------------------------
constexpr std::int64_t kChunk = 4096;  // elements per block: 16 per thread of a 256-thread block

// A tensor list (AdamTensorList, TensorChunkList) and, per tensor, the index of its first
// block (ascending; a tensor of n elements owns ceil(n / kChunk) blocks). Travels as the
// kernel argument (< 4 KiB).
template <class List>
struct ChunkLaunch {
  List list;
  std::int64_t first_block[List::kMaxTensors];
};

template <class T>
__device__ __forceinline__ AdamParams<T> params_from(const AdamStepScalars& s, T b1, T b2, T eps, T wd) {
  if constexpr (sizeof(T) == sizeof(float)) return {s.lr_f, b1, b2, eps, wd, s.bc1_f, s.bc2_f};
  else return {s.lr, b1, b2, eps, wd, s.bc1, s.bc2};
}

// The tensor that owns block b: the last one whose first block is <= b (first_block
// ascending; empty tensors own no block and are passed over).
__device__ __forceinline__ int tensor_of_block(const std::int64_t* first_block, int count, std::int64_t b) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (first_block[mid] <= b) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// The chunk of this block: its tensor and the chunk's first element and length (kChunk, or
// less for a tensor's last chunk).
struct Chunk {
  int tensor;
  std::int64_t start, len;
};
template <class List>
__device__ __forceinline__ Chunk chunk_of_block(const ChunkLaunch<List>& L) {
  const std::int64_t b = blockIdx.x;
  const int i = tensor_of_block(L.first_block, L.list.count, b);
  const std::int64_t start = (b - L.first_block[i]) * kChunk;
  const std::int64_t rest = L.list.n[i] - start;
  return {i, start, rest < kChunk ? rest : kChunk};
}

// Visits a chunk of len elements with the block's kThreads threads: vec_fn(k) for each of the
// len / W whole W-wide vectors when vec (the chunk's pointers 16-byte aligned), then
// scalar_fn(k) for every element not covered (all of them without vec).
template <int W, class VecFn, class ScalarFn>
__device__ __forceinline__ void chunk_loop(std::int64_t len, bool vec, VecFn vec_fn, ScalarFn scalar_fn) {
  std::int64_t head = 0;
  if (vec) {
    const std::int64_t nv = len / W;
    for (std::int64_t k = threadIdx.x; k < nv; k += kThreads) vec_fn(static_cast<std::size_t>(k));
    head = nv * W;
  }
  for (std::int64_t k = head + threadIdx.x; k < len; k += kThreads) scalar_fn(k);
}

// Per tensor i of sizes n[0..count): first_block[i] = the blocks of the tensors before it;
// returns the total (the grid), or -1 for a bad argument (count out of range, n < 0, a null
// pointer where elements exist).
template <class HasNull>
std::int64_t chunk_blocks(int count, int max_count, const std::int64_t* n, HasNull has_null,
                          std::int64_t* first_block) {
  if (count < 0 || count > max_count) return -1;
  std::int64_t blocks = 0;
  for (int i = 0; i < count; ++i) {
    if (n[i] < 0 || (n[i] > 0 && has_null(i))) return -1;
    first_block[i] = blocks;
    blocks += (n[i] + kChunk - 1) / kChunk;
  }
  return blocks > INT_MAX ? -1 : blocks;
}

// Block b updates its chunk [start, start + len) of its tensor (tensor_of_block): W-wide vectors when the four pointers are 16-byte aligned (chunk
// starts are multiples of W elements), scalar otherwise and for the tail. adam_one is the
// per-tensor kernel's function: the same arithmetic per element.
template <class T>
__global__ void __launch_bounds__(kThreads)
    adam_multi_kernel(const ChunkLaunch<AdamTensorList<T>> L, const AdamStepScalars* __restrict__ scalars, T b1,
                      T b2, T eps, T wd) {
  constexpr int W = kWidth<T>;
  const Chunk c = chunk_of_block(L);
  const AdamParams<T> a = params_from<T>(*scalars, b1, b2, eps, wd);
  T* p = L.list.p[c.tensor] + c.start;
  const T* g = L.list.g[c.tensor] + c.start;
  T* m = L.list.m[c.tensor] + c.start;
  T* v = L.list.v[c.tensor] + c.start;
  const bool vec = ((reinterpret_cast<std::uintptr_t>(p) | reinterpret_cast<std::uintptr_t>(g) |
                     reinterpret_cast<std::uintptr_t>(m) | reinterpret_cast<std::uintptr_t>(v)) & 15) == 0;
  chunk_loop<W>(
      c.len, vec, [&](std::size_t i) { adam_vec(p, g, m, v, i, a); },
      [&](std::int64_t i) { adam_at(p, g, m, v, i, a); });
}

// out[0] += the sum of squares of block b's chunk (fixed order within the block, one
// atomicAdd per block).
template <class T>
__global__ void __launch_bounds__(kThreads)
    sum_squares_multi_kernel(const ChunkLaunch<TensorChunkList<T>> L, T* __restrict__ out) {
  __shared__ T sh[32];
  constexpr int W = kWidth<T>;
  const Chunk c = chunk_of_block(L);
  const T* x = L.list.x[c.tensor] + c.start;
  T acc = T(0);
  chunk_loop<W>(
      c.len, (reinterpret_cast<std::uintptr_t>(x) & 15) == 0,
      [&](std::size_t k) {
        const Vec<T> v = load_vec(x, k);
#pragma unroll
        for (int e = 0; e < W; ++e) acc += v.v[e] * v.v[e];
      },
      [&](std::int64_t k) { acc += x[k] * x[k]; });
  acc = block_sum(acc, sh);
  if (threadIdx.x == 0) atomicAdd(out, acc);
}

// x *= scale over block b's chunk, scale = max_norm / (sqrt(sumsq) + 1e-6) when below 1
// (clip_by_norm's rule; otherwise, and for a NaN scale, nothing is written).
template <class T>
__global__ void __launch_bounds__(kThreads)
    clip_multi_kernel(const ChunkLaunch<TensorChunkList<T>> L, const T* __restrict__ sumsq, T max_norm) {
  const T scale = max_norm / (sqrt(*sumsq) + T(1e-6));
  if (!(scale < T(1))) return;
  constexpr int W = kWidth<T>;
  const Chunk c = chunk_of_block(L);
  T* x = L.list.x[c.tensor] + c.start;
  chunk_loop<W>(
      c.len, (reinterpret_cast<std::uintptr_t>(x) & 15) == 0,
      [&](std::size_t k) {
        Vec<T> v = load_vec(x, k);
#pragma unroll
        for (int e = 0; e < W; ++e) v.v[e] *= scale;
        store_vec(x, k, v);
      },
      [&](std::int64_t k) { x[k] *= scale; });
}

// Plans a multi-tensor launch (chunk_blocks: one block per chunk of every tensor) and
// launches kernel(plan, args...) on it; no launch for an empty list.
template <class List, class HasNull, class... KernelArgs, class... Args>
cudaError_t launch_chunked(void (*kernel)(ChunkLaunch<List>, KernelArgs...), const List& list, HasNull has_null,
                           cudaStream_t s, Args... args) {
  ChunkLaunch<List> launch{};
  launch.list = list;
  const std::int64_t blocks = chunk_blocks(list.count, List::kMaxTensors, list.n, has_null, launch.first_block);
  if (blocks < 0) return cudaErrorInvalidValue;
  if (blocks == 0) return cudaSuccess;
  kernel<<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(launch, args...);
  return cudaGetLastError();
}

__global__ void adam_set_scalars_kernel(AdamStepScalars* dst, AdamStepScalars values) { *dst = values; }

template <class T>
__global__ void log_scalar_kernel(const T* value, float* log, std::int32_t* counter, std::int32_t capacity) {
  const std::int32_t c = ((*counter % capacity) + capacity) % capacity;
  log[c] = static_cast<float>(value[0]);
  *counter = (c + 1) % capacity;
}

}  // namespace

template <class T>
cudaError_t adam_step(T* p, const T* g, T* m, T* v, std::size_t n, T lr, T b1, T b2, T eps,
                      T wd, int t, cudaStream_t s) {
  if (t < 1) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!p || !g || !m || !v) return cudaErrorInvalidValue;
  const AdamParams<T> a{lr,
                        b1,
                        b2,
                        eps,
                        wd,
                        static_cast<T>(1.0 - std::pow(static_cast<double>(b1), t)),
                        static_cast<T>(1.0 - std::pow(static_cast<double>(b2), t))};
  const bool vec = aligned16(p) && aligned16(g) && aligned16(m) && aligned16(v);
  const std::size_t work = vec ? (n + kWidth<T> - 1) / kWidth<T> : n;
  adam_kernel<<<grid_for(work), kThreads, 0, s>>>(p, g, m, v, n, a, vec);
  return cudaGetLastError();
}

template <class T>
cudaError_t sgd_step(T* p, const T* g, T* momentum_buf, std::size_t n, T lr, T momentum,
                     cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  if (!p || !g) return cudaErrorInvalidValue;
  const bool vec = aligned16(p) && aligned16(g) && (!momentum_buf || aligned16(momentum_buf));
  const std::size_t work = vec ? (n + kWidth<T> - 1) / kWidth<T> : n;
  if (momentum_buf)
    sgd_kernel<T, true><<<grid_for(work), kThreads, 0, s>>>(p, g, momentum_buf, n, lr, momentum, vec);
  else
    sgd_kernel<T, false><<<grid_for(work), kThreads, 0, s>>>(p, g, nullptr, n, lr, momentum, vec);
  return cudaGetLastError();
}

AdamStepScalars adam_step_scalars(double lr, double b1, double b2, int t) {
  // Float tensors: adam_step<float> gets float betas and computes 1 - b^t in double from them.
  const double b1f = static_cast<float>(b1), b2f = static_cast<float>(b2);
  return {lr,
          1.0 - std::pow(b1, t),
          1.0 - std::pow(b2, t),
          static_cast<float>(lr),
          static_cast<float>(1.0 - std::pow(b1f, t)),
          static_cast<float>(1.0 - std::pow(b2f, t))};
}

cudaError_t adam_set_scalars(AdamStepScalars* dst, const AdamStepScalars& values, cudaStream_t s) {
  if (!dst) return cudaErrorInvalidValue;
  adam_set_scalars_kernel<<<1, 1, 0, s>>>(dst, values);
  return cudaGetLastError();
}

template <class T>
cudaError_t adam_multi_tensor(const AdamTensorList<T>& list, const AdamStepScalars* scalars, T b1, T b2, T eps,
                              T wd, cudaStream_t s) {
  if (!scalars) return cudaErrorInvalidValue;
  const auto has_null = [&](int i) { return !list.p[i] || !list.g[i] || !list.m[i] || !list.v[i]; };
  return launch_chunked(adam_multi_kernel<T>, list, has_null, s, scalars, b1, b2, eps, wd);
}

template <class T>
cudaError_t sum_squares_multi_tensor(const TensorChunkList<T>& list, T* out, cudaStream_t s) {
  if (!out) return cudaErrorInvalidValue;
  const auto has_null = [&](int i) { return list.x[i] == nullptr; };
  return launch_chunked(sum_squares_multi_kernel<T>, list, has_null, s, out);
}

template <class T>
cudaError_t clip_by_norm_multi_tensor(const TensorChunkList<T>& list, const T* sumsq, T max_norm, cudaStream_t s) {
  if (!sumsq) return cudaErrorInvalidValue;
  const auto has_null = [&](int i) { return list.x[i] == nullptr; };
  return launch_chunked(clip_multi_kernel<T>, list, has_null, s, sumsq, max_norm);
}

template <class T>
cudaError_t log_scalar(const T* value, float* log, std::int32_t* counter, std::int32_t capacity, cudaStream_t s) {
  if (!value || !log || !counter || capacity < 1) return cudaErrorInvalidValue;
  log_scalar_kernel<T><<<1, 1, 0, s>>>(value, log, counter, capacity);
  return cudaGetLastError();
}

#define KERNELS_NN_OPTIM(T)                                                                   \
  template cudaError_t adam_step<T>(T*, const T*, T*, T*, std::size_t, T, T, T, T, T, int,    \
                                    cudaStream_t);                                            \
  template cudaError_t sgd_step<T>(T*, const T*, T*, std::size_t, T, T, cudaStream_t);      \
  template cudaError_t adam_multi_tensor<T>(const AdamTensorList<T>&, const AdamStepScalars*, T, T, T, T,  \
                                            cudaStream_t);                                    \
  template cudaError_t log_scalar<T>(const T*, float*, std::int32_t*, std::int32_t, cudaStream_t); \
  template cudaError_t sum_squares_multi_tensor<T>(const TensorChunkList<T>&, T*, cudaStream_t);      \
  template cudaError_t clip_by_norm_multi_tensor<T>(const TensorChunkList<T>&, const T*, T, cudaStream_t);

KERNELS_NN_OPTIM(float)
KERNELS_NN_OPTIM(double)
#undef KERNELS_NN_OPTIM

}  // namespace kernels::nn
