// The reduction ladder (reduce.hpp). Every block has kThreads = 256 threads; a block's
// shared tree reduces 256 values to one in log2(256) = 8 levels. Out-of-range elements
// (the tail of the last block) load the operator's identity (0, or -inf for max), so
// every n >= 1 works without special cases.
#include "reduce/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace kernels::reduce {
namespace {

template <class T>
struct SumOp {
  __host__ __device__ static T identity() { return T(0); }
  __device__ static T apply(T a, T b) { return a + b; }  // unsigned: wraps modulo 2^32
};
struct MaxOp {
  __host__ __device__ static float identity() { return -INFINITY; }
  __device__ static float apply(float a, float b) { return fmaxf(a, b); }
};

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Rung 1 (the notes' naive kernel): block b reduces x[b*256, b*256+256). At level s
// (1, 2, 4, ...) thread t with t % 2s == 0 adds sh[t + s]: the active threads are spread
// over every warp, so all warps stay busy with ever fewer active lanes (divergence), and
// the strided sh[t] accesses hit the same banks.
template <class Op, class T>
__global__ void k_interleaved(const T* __restrict__ x, T* __restrict__ out, std::size_t n) {
  __shared__ T sh[kThreads];
  const unsigned t = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + t;
  sh[t] = i < n ? x[i] : Op::identity();
  for (unsigned s = 1; s < kThreads; s *= 2) {
    __syncthreads();
    if (t % (2 * s) == 0) sh[t] = Op::apply(sh[t], sh[t + s]);  // sh[t+s] is no writer at this level
  }
  if (t == 0) out[blockIdx.x] = sh[0];
}

// Shared tree with contiguous halving: at level s (128, 64, ..., 1) threads t < s add
// sh[t + s]. Active threads are the first s: whole warps retire (no divergence above
// s = 32) and consecutive threads touch consecutive words (no bank conflicts).
template <class Op, class T>
__device__ T tree_sequential(T* sh, T v) {
  const unsigned t = threadIdx.x;
  sh[t] = v;
  for (unsigned s = kThreads / 2; s > 0; s /= 2) {
    __syncthreads();
    if (t < s) sh[t] = Op::apply(sh[t], sh[t + s]);  // readers of sh[t+s] (t+s >= s) write nothing
  }
  return sh[0];  // valid in thread 0 (it wrote sh[0] last)
}

// Rung 2: rung 1 with the contiguous tree (fixes divergence and bank conflicts).
template <class Op, class T>
__global__ void k_sequential(const T* __restrict__ x, T* __restrict__ out, std::size_t n) {
  __shared__ T sh[kThreads];
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  const T r = tree_sequential<Op>(sh, i < n ? x[i] : Op::identity());
  if (threadIdx.x == 0) out[blockIdx.x] = r;
}

// Rung 3: a block covers 512 elements, each thread adds x[i] and x[i + 256] while
// loading (rung 2's first level had half the threads idle; now half as many blocks).
template <class Op, class T>
__global__ void k_first_add(const T* __restrict__ x, T* __restrict__ out, std::size_t n) {
  __shared__ T sh[kThreads];
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * (2 * kThreads) + threadIdx.x;
  const T a = i < n ? x[i] : Op::identity();
  const T b = i + kThreads < n ? x[i + kThreads] : Op::identity();
  const T r = tree_sequential<Op>(sh, Op::apply(a, b));
  if (threadIdx.x == 0) out[blockIdx.x] = r;
}

template <class Op, class T>
__device__ T warp_reduce(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v = Op::apply(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;  // lane 0 holds the warp's result
}

__device__ void atomic_combine(float* out, float v, SumOp<float>) { atomicAdd(out, v); }
__device__ void atomic_combine(unsigned* out, unsigned v, SumOp<unsigned>) { atomicAdd(out, v); }
__device__ void atomic_combine(float* out, float v, MaxOp) {
  // No float atomicMax: compare-and-swap until out >= v.
  int* bits = reinterpret_cast<int*>(out);
  int old = *bits;
  while (__int_as_float(old) < v) {
    const int assumed = old;
    old = atomicCAS(bits, assumed, __float_as_int(v));
    if (old == assumed) break;
  }
}

enum class Combine { store, atomic };

// Rungs 4 and 5 and the two combiners. Thread t of block b sums x[b*256 + t + k*G*256]
// for k = 0, 1, ... (G = gridDim.x): block-strided, so each load instruction of a warp
// reads 128 contiguous bytes (coalesced). Rung 4 (kShuffle false): the block's 256
// partial values go through the shared tree. Rung 5 (kShuffle true): each warp reduces
// its 32 values with shuffles (no shared memory, no barriers), warp totals go through
// 8 shared words, and warp 0 reduces those with shuffles: one barrier instead of eight.
// Combine::store writes out[blockIdx.x]; Combine::atomic folds into out[0].
template <class Op, class T, bool kShuffle, Combine kCombine>
__global__ void k_strided(const T* __restrict__ x, T* __restrict__ out, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  T v = Op::identity();
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride)
    v = Op::apply(v, x[i]);
  T r;
  if constexpr (kShuffle) {
    __shared__ T warps[kThreads / 32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_reduce<Op>(v);
    if (lane == 0) warps[warp] = v;
    __syncthreads();
    r = Op::identity();
    if (warp == 0) r = warp_reduce<Op>(lane < kThreads / 32 ? warps[lane] : Op::identity());
  } else {
    __shared__ T sh[kThreads];
    r = tree_sequential<Op>(sh, v);
  }
  if (threadIdx.x == 0) {
    if constexpr (kCombine == Combine::store) out[blockIdx.x] = r;
    else atomic_combine(out, r, Op{});
  }
}

template <class T>
__global__ void k_fill_one(T* out, T value) { *out = value; }

// ---- Rung 6, vectorized (the top variant; not in the notes) --------------------------
// What rung 5 + two_pass still leave on the table at n >= 2^26 (measured 60% of the copy
// roof): 4-byte loads (a warp's load instruction moves 128 B, so many instructions per
// byte and few bytes in flight per thread) and a grid capped at 1024 blocks whatever the
// GPU. Here:
//   - 16-byte loads (float4 / uint4): 512 B per warp instruction;
//   - 4 independent float4 loads issued before any is used (kUnroll): 64 B in flight per
//     thread, 8 x 256 x 64 B = 128 KiB per SM at 8 blocks/SM (32 registers per thread:
//     a full SM), well above what DRAM latency needs (about 22 KiB per SM at
//     4.8 TB/s x ~600 ns / 132 SMs);
//   - grid = kBlocksPerSm x (SM count read from the device), grid-stride, so every SM is
//     busy exactly once (no tail wave) and there are few partials;
//   - a scalar head (elements before the first 16-byte boundary of x) and tail (the n % 4
//     elements after the last whole vector), so any pointer and any n work;
//   - block: warp shuffles, 8 warp totals through shared memory, shuffles in warp 0;
//   - the <= grid partials reduced by a second one-block kernel (same code, fixed order:
//     deterministic, no atomics; CUB's DeviceReduce does the same two launches).
// Addition chains: a thread's accumulator a[k] takes one (x+y)+(z+w) per kUnroll vectors;
// at 2^28 elements on 132 SMs (grid 1056, 270336 threads) that is ~62 additions deep.
template <class T> struct Vec4Of;
template <> struct Vec4Of<float> { using type = float4; };
template <> struct Vec4Of<unsigned> { using type = uint4; };

template <class Op, class V>
__device__ __forceinline__ auto fold4(V v) { return Op::apply(Op::apply(v.x, v.y), Op::apply(v.z, v.w)); }

template <class Op, class T>
__device__ T block_reduce_shuffle(T v) {
  __shared__ T warps[kThreads / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_reduce<Op>(v);
  if (lane == 0) warps[warp] = v;
  __syncthreads();
  T r = Op::identity();
  if (warp == 0) r = warp_reduce<Op>(lane < kThreads / 32 ? warps[lane] : Op::identity());
  return r;  // valid in thread 0
}

template <class Op, class T>
__global__ void __launch_bounds__(kThreads) k_vectorized(const T* __restrict__ x, T* __restrict__ out, std::size_t n) {
  using V = typename Vec4Of<T>::type;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  // head: elements before x's first 16-byte boundary (0..3); then n4 whole vectors.
  const std::size_t mis = (reinterpret_cast<std::uintptr_t>(x) / sizeof(T)) % 4;
  const std::size_t want = mis == 0 ? 0 : 4 - mis, head = want < n ? want : n;
  const std::size_t n4 = (n - head) / 4;
  const V* x4 = reinterpret_cast<const V*>(x + head);
  T a[kUnroll];
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) a[k] = Op::identity();
  std::size_t i = tid;
  for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
    V v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) v[k] = x4[i + k * stride];  // all loads issued first
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) a[k] = Op::apply(a[k], fold4<Op>(v[k]));
  }
  for (; i < n4; i += stride) a[0] = Op::apply(a[0], fold4<Op>(x4[i]));
  // Scalar head and tail: at most 3 + 3 elements, one per thread of the first threads.
  if (tid < head) a[1] = Op::apply(a[1], x[tid]);
  const std::size_t tail = head + 4 * n4 + tid;
  if (tail < n) a[2] = Op::apply(a[2], x[tail]);
  T v = Op::apply(Op::apply(a[0], a[1]), Op::apply(a[2], a[3]));
  const T r = block_reduce_shuffle<Op>(v);
  if (threadIdx.x == 0) out[blockIdx.x] = r;
}

// Pass 2 of rung 6: one block folds the partials (thread t: partials t, t+256, ...).
template <class Op, class T>
__global__ void __launch_bounds__(kThreads) k_fold_partials(const T* __restrict__ partials, T* __restrict__ out,
                                                            unsigned m) {
  T v = Op::identity();
  for (unsigned i = threadIdx.x; i < m; i += kThreads) v = Op::apply(v, partials[i]);
  const T r = block_reduce_shuffle<Op>(v);
  if (threadIdx.x == 0) *out = r;
}

// Rung 6's grid: kBlocksPerSm per SM, but no more blocks than give each thread kUnroll
// vectors (small n: fewer, fuller blocks). Never more than vector_max_blocks().
unsigned vector_grid(std::size_t n) {
  const std::size_t per_block = static_cast<std::size_t>(kThreads) * 4 * kUnroll;
  return static_cast<unsigned>(std::min<std::size_t>(ceil_div(n, per_block), vector_max_blocks()));
}

// Elements one block of a recursive rung reduces.
std::size_t per_block(Algo algo) {
  switch (algo) {
    case Algo::interleaved:
    case Algo::sequential: return kThreads;
    case Algo::first_add: return 2 * kThreads;
    default: return static_cast<std::size_t>(kThreads) * kCoarse;
  }
}

// Rungs 1-5: level after level, each launch reducing `m` values to ceil(m / per) block
// results, until one is left (written to out). Levels ping-pong between two buffers of
// scratch: level 1 writes buf0 (ceil(n/per) values), level 2 buf1, level 3 buf0, ...
template <class Op, class T>
cudaError_t levels(Algo algo, const T* x, T* out, std::size_t n, T* scratch, cudaStream_t stream) {
  const std::size_t per = per_block(algo);
  T* bufs[2] = {scratch, scratch + ceil_div(n, per)};
  const T* in = x;
  std::size_t m = n;
  for (int level = 0;; ++level) {
    const std::size_t blocks = ceil_div(m, per);
    T* dst = blocks == 1 ? out : bufs[level % 2];
    const unsigned grid = static_cast<unsigned>(blocks);
    switch (algo) {
      case Algo::interleaved: k_interleaved<Op><<<grid, kThreads, 0, stream>>>(in, dst, m); break;
      case Algo::sequential: k_sequential<Op><<<grid, kThreads, 0, stream>>>(in, dst, m); break;
      case Algo::first_add: k_first_add<Op><<<grid, kThreads, 0, stream>>>(in, dst, m); break;
      case Algo::coarsened:
        k_strided<Op, T, false, Combine::store><<<grid, kThreads, 0, stream>>>(in, dst, m);
        break;
      default: k_strided<Op, T, true, Combine::store><<<grid, kThreads, 0, stream>>>(in, dst, m); break;
    }
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    if (blocks == 1) return cudaSuccess;
    in = dst;
    m = blocks;
  }
}

template <class Op, class T>
cudaError_t run(Algo algo, const T* x, T* out, std::size_t n, void* scratch, cudaStream_t stream) {
  if (algo == Algo::vectorized) {
    const unsigned grid = vector_grid(n);
    if (grid == 0) return cudaErrorInvalidValue;  // no device attribute
    if (grid == 1) {  // one block: its result is the answer, no second pass
      k_vectorized<Op><<<1, kThreads, 0, stream>>>(x, out, n);
      return cudaGetLastError();
    }
    T* partials = static_cast<T*>(scratch);
    k_vectorized<Op><<<grid, kThreads, 0, stream>>>(x, partials, n);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    k_fold_partials<Op><<<1, kThreads, 0, stream>>>(partials, out, grid);
    return cudaGetLastError();
  }
  const auto grid = static_cast<unsigned>(
      std::min<std::size_t>(ceil_div(n, static_cast<std::size_t>(kThreads) * kCoarse), kMaxBlocks));
  if (algo == Algo::atomic_blocks) {
    // out starts at the identity (it arrives poisoned), then every block folds into it.
    k_fill_one<<<1, 1, 0, stream>>>(out, Op::identity());
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    k_strided<Op, T, true, Combine::atomic><<<grid, kThreads, 0, stream>>>(x, out, n);
    return cudaGetLastError();
  }
  if (algo == Algo::two_pass) {
    // Pass 1: <= 1024 block partials; pass 2: one block strides over them.
    T* partials = static_cast<T*>(scratch);
    k_strided<Op, T, true, Combine::store><<<grid, kThreads, 0, stream>>>(x, partials, n);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    k_strided<Op, T, true, Combine::store><<<1, kThreads, 0, stream>>>(partials, out, grid);
    return cudaGetLastError();
  }
  return levels<Op>(algo, x, out, n, static_cast<T*>(scratch), stream);
}

}  // namespace

unsigned vector_max_blocks() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0)
    return 0;
  return static_cast<unsigned>(sms) * kBlocksPerSm;
}

std::size_t workspace_bytes(Algo algo, std::size_t n, Elem) {
  if (algo == Algo::atomic_blocks) return 0;
  if (algo == Algo::vectorized) return std::max<std::size_t>(1, vector_grid(n)) * sizeof(float);
  if (algo == Algo::two_pass) return kMaxBlocks * sizeof(float);
  const std::size_t per = per_block(algo);
  const std::size_t level1 = ceil_div(n, per);
  return (level1 + ceil_div(level1, per)) * sizeof(float);  // both elements are 4 bytes
}

cudaError_t launch(Algo algo, Op op, Elem elem, const void* x, void* out, std::size_t n, void* scratch,
                   cudaStream_t stream) {
  if (n == 0) return cudaErrorInvalidValue;
  if (elem == Elem::f32 && op == Op::sum)
    return run<SumOp<float>>(algo, static_cast<const float*>(x), static_cast<float*>(out), n, scratch, stream);
  if (elem == Elem::f32 && op == Op::max)
    return run<MaxOp>(algo, static_cast<const float*>(x), static_cast<float*>(out), n, scratch, stream);
  if (elem == Elem::u32 && op == Op::sum)
    return run<SumOp<unsigned>>(algo, static_cast<const unsigned*>(x), static_cast<unsigned*>(out), n, scratch,
                                stream);
  return cudaErrorInvalidValue;  // max over integers is not offered
}

}  // namespace kernels::reduce
