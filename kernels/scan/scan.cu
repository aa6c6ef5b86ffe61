// The scan ladder (scan.hpp). T is float or unsigned (wrapping). Every block kernel pads
// the tail of the last block with zeros (the identity), so any n >= 1 works; y is
// written only below n. Block kernels may run in place (x == y): each thread writes only
// the elements it loaded itself, after loading them (the recursion scans block totals in
// place), so x and y carry no __restrict__.
#include "scan/scan.hpp"

#include <cstdint>

#include "arch/warp_reduce.cuh"

namespace kernels::scan {
namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Rung 1: Kogge-Stone over one block of 1024 elements, one per thread. Step s (1, 2, 4,
// ... 512): buf[dst][t] = buf[src][t] + buf[src][t - s] for t >= s. Double buffering
// (reads from src, writes to dst, swap) removes the read-after-write race of the notes'
// single-buffer version without a second barrier per step. 10 steps, ~n log2 n adds.
template <class T>
__global__ void k_kogge_stone(const T* x, T* y, std::size_t n, T* totals) {
  __shared__ T buf[2][kKsThreads];
  const unsigned t = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kKsThreads + t;
  int src = 0;
  buf[0][t] = i < n ? x[i] : T(0);
  for (unsigned s = 1; s < kKsThreads; s *= 2) {
    __syncthreads();  // step s-1's writes to buf[src] are complete; its reads of buf[dst] too
    buf[src ^ 1][t] = t >= s ? buf[src][t] + buf[src][t - s] : buf[src][t];
    src ^= 1;
  }
  if (i < n) y[i] = buf[src][t];  // this thread's own last write
  if (totals != nullptr && t == kKsThreads - 1) totals[blockIdx.x] = buf[src][t];
}

// Rung 2: Brent-Kung over 2048 elements, 1024 threads with two each (coalesced loads at
// t and t + 1024). Up-sweep: at stride s, element (t+1)*2s - 1 adds element (t+1)*2s - 1
// - s (positions written, 2s-1 mod 2s, are never the ones read, s-1 mod 2s). Down-sweep
// from s = 512: element (t+1)*2s - 1 + s adds element (t+1)*2s - 1. 2*11 steps, ~2n adds.
template <class T>
__global__ void k_brent_kung(const T* x, T* y, std::size_t n, T* totals) {
  constexpr unsigned kE = 2 * kBkThreads;
  __shared__ T xy[kE];
  const unsigned t = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * kE;
  xy[t] = base + t < n ? x[base + t] : T(0);
  xy[t + kBkThreads] = base + t + kBkThreads < n ? x[base + t + kBkThreads] : T(0);
  for (unsigned s = 1; s <= kBkThreads; s *= 2) {
    __syncthreads();
    const unsigned idx = (t + 1) * 2 * s - 1;
    if (idx < kE) xy[idx] += xy[idx - s];
  }
  for (unsigned s = kBkThreads / 2; s > 0; s /= 2) {
    __syncthreads();
    const unsigned idx = (t + 1) * 2 * s - 1;
    if (idx + s < kE) xy[idx + s] += xy[idx];
  }
  __syncthreads();
  if (base + t < n) y[base + t] = xy[t];
  if (base + t + kBkThreads < n) y[base + t + kBkThreads] = xy[t + kBkThreads];
  if (totals != nullptr && t == kBkThreads - 1) totals[blockIdx.x] = xy[kE - 1];
}

template <class T>
__device__ T warp_inclusive_scan(T v) {
  const unsigned lane = threadIdx.x % 32;
  for (int o = 1; o < 32; o *= 2) {
    const T other = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= static_cast<unsigned>(o)) v += other;
  }
  return v;
}

// The coarsened block scan of rung 3 (and of the single-pass tile): 256 threads x 16
// elements = a 4096-element tile.
// Phase 1: the tile is loaded coalesced, as 16-byte vectors when x (and y) are 16-byte
// aligned (vector v = k*256 + t of the tile, k = 0..3: a warp instruction moves 512 B)
// or as scalars (element k*256 + t) otherwise, and stored to shared memory with one pad
// word per 32 (element e at e + e/32). Each thread then reads its 16 contiguous elements
// 16t .. 16t+15: with the padding the 32 lanes of a warp hit 32 different banks (lane t
// starts at 16t + t/2, i.e. bank 16 (t % 2) + t/2), and so do the stores of phase 1
// (4t + c + (4t + c)/32). Each thread scans its 16 elements serially in registers.
// Phase 2: the 256 thread totals are scanned with warp shuffles; the 8 warp totals by
// warp 0. Phase 3: warp 0 runs `between` (the look-back, or nothing) on the tile's
// aggregate; each element gets its thread's exclusive prefix, back through shared memory
// for coalesced (vector) stores. The last tile's elements past n load 0 and are not
// stored. Over the old 256 x 8 tile: 4x fewer load/store instructions, half as many
// tiles (half the look-backs and status words), no bank conflicts.
struct NoPrefix {
  template <class T>
  __device__ T operator()(T) const { return T(0); }
};

template <class T> struct Vec4Of;
template <> struct Vec4Of<float> { using type = float4; };
template <> struct Vec4Of<unsigned> { using type = uint4; };

__device__ __forceinline__ unsigned padded(unsigned e) { return e + e / 32; }

template <class T, bool kVec, class Between>
__device__ void block_scan_coarse(const T* x, T* y, std::size_t base, std::size_t n, T* total_out, Between between) {
  using V = typename Vec4Of<T>::type;
  constexpr unsigned kE = kCoarseThreads * kCoarseItems, kWarps = kCoarseThreads / 32;
  __shared__ T tile[kE + kE / 32];
  __shared__ T warp_totals[kWarps];
  __shared__ T tile_prefix;
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  if constexpr (kVec) {
#pragma unroll
    for (unsigned k = 0; k < kCoarseItems / 4; ++k) {
      const unsigned v = k * kCoarseThreads + t;
      const std::size_t g = base + 4 * v;
      V q;
      if (g + 4 <= n) {
        q = *reinterpret_cast<const V*>(x + g);
      } else {
        q.x = g < n ? x[g] : T(0);
        q.y = g + 1 < n ? x[g + 1] : T(0);
        q.z = g + 2 < n ? x[g + 2] : T(0);
        q.w = T(0);  // g + 3 >= n here
      }
      tile[padded(4 * v)] = q.x;
      tile[padded(4 * v + 1)] = q.y;
      tile[padded(4 * v + 2)] = q.z;
      tile[padded(4 * v + 3)] = q.w;
    }
  } else {
#pragma unroll
    for (unsigned k = 0; k < kCoarseItems; ++k) {
      const unsigned e = k * kCoarseThreads + t;
      tile[padded(e)] = base + e < n ? x[base + e] : T(0);
    }
  }
  __syncthreads();
  T v[kCoarseItems];
  T run = T(0);
#pragma unroll
  for (unsigned k = 0; k < kCoarseItems; ++k) {
    run += tile[padded(t * kCoarseItems + k)];
    v[k] = run;
  }
  const T incl = warp_inclusive_scan(run);
  T excl = __shfl_up_sync(0xffffffffu, incl, 1);
  if (lane == 0) excl = T(0);
  if (lane == 31) warp_totals[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    // Each lane reads and writes only its own word: no hazard within the warp.
    const T w = warp_inclusive_scan(lane < kWarps ? warp_totals[lane] : T(0));
    if (lane < kWarps) warp_totals[lane] = w;
    __syncwarp();
    const T aggregate = warp_totals[kWarps - 1];
    const T p = between(aggregate);  // the whole warp: the look-back, or zero
    if (lane == 0) tile_prefix = p;
  }
  __syncthreads();
  const T before = tile_prefix + (warp > 0 ? warp_totals[warp - 1] : T(0)) + excl;
#pragma unroll
  for (unsigned k = 0; k < kCoarseItems; ++k) tile[padded(t * kCoarseItems + k)] = before + v[k];  // own segment
  __syncthreads();
  if constexpr (kVec) {
#pragma unroll
    for (unsigned k = 0; k < kCoarseItems / 4; ++k) {
      const unsigned vi = k * kCoarseThreads + t;
      const std::size_t g = base + 4 * vi;
      V q;
      q.x = tile[padded(4 * vi)];
      q.y = tile[padded(4 * vi + 1)];
      q.z = tile[padded(4 * vi + 2)];
      q.w = tile[padded(4 * vi + 3)];
      if (g + 4 <= n) {
        *reinterpret_cast<V*>(y + g) = q;
      } else {
        if (g < n) y[g] = q.x;
        if (g + 1 < n) y[g + 1] = q.y;
        if (g + 2 < n) y[g + 2] = q.z;
      }
    }
  } else {
#pragma unroll
    for (unsigned k = 0; k < kCoarseItems; ++k) {
      const unsigned e = k * kCoarseThreads + t;
      if (base + e < n) y[base + e] = tile[padded(e)];
    }
  }
  if (total_out != nullptr && t == 0) *total_out = warp_totals[kWarps - 1];
}

// Vector loads and stores need every tile start (a multiple of 4096 elements) on a
// 16-byte boundary: x and y themselves aligned.
bool aligned16(const void* x, const void* y) {
  return ((reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) % 16) == 0;
}

// Rung 3's kernel 1: one coarsened block scan per block, block totals out.
template <class T, bool kVec>
__global__ void __launch_bounds__(kCoarseThreads) k_coarse(const T* x, T* y, std::size_t n, T* totals) {
  block_scan_coarse<T, kVec>(x, y, static_cast<std::size_t>(blockIdx.x) * kCoarseThreads * kCoarseItems, n,
                             totals != nullptr ? totals + blockIdx.x : nullptr, NoPrefix{});
}

// Kernel 3 of the hierarchy: y[i] += scanned_totals[i / E - 1] for i >= E. Scalar: one
// element per thread. Vector (y 16-byte aligned and E % 4 == 0, so a vector never
// straddles two blocks): one 16-byte load and store per thread, the scalar tail n % 4
// by the first threads.
template <class T>
__global__ void k_add_back(T* y, std::size_t n, const T* scanned_totals, std::size_t e) {
  const std::size_t i = e + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] += scanned_totals[i / e - 1];
}

template <class T>
__global__ void k_add_back_vec(T* y, std::size_t n, const T* scanned_totals, std::size_t e) {
  using V = typename Vec4Of<T>::type;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t i = e + 4 * tid;  // first element of this thread's vector
  if (i + 4 <= n) {
    V* p = reinterpret_cast<V*>(y + i);
    V q = *p;
    const T add = scanned_totals[i / e - 1];
    q.x += add;
    q.y += add;
    q.z += add;
    q.w += add;
    *p = q;
  } else {
    for (std::size_t j = i; j < n; ++j) y[j] += scanned_totals[j / e - 1];
  }
}

template <class T>
cudaError_t launch_block_scan(Algo algo, const T* x, T* y, std::size_t n, T* totals, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(ceil_div(n, block_elements(algo)));
  switch (algo) {
    case Algo::kogge_stone: k_kogge_stone<<<grid, kKsThreads, 0, stream>>>(x, y, n, totals); break;
    case Algo::brent_kung: k_brent_kung<<<grid, kBkThreads, 0, stream>>>(x, y, n, totals); break;
    default:
      if (aligned16(x, y)) k_coarse<T, true><<<grid, kCoarseThreads, 0, stream>>>(x, y, n, totals);
      else k_coarse<T, false><<<grid, kCoarseThreads, 0, stream>>>(x, y, n, totals);
      break;
  }
  return cudaGetLastError();
}

// The notes' three kernels, recursively: scan blocks (totals to scratch), scan the
// totals in place with the same scheme (their own totals further into scratch), add
// total b-1 to every element of block b.
template <class T>
cudaError_t hierarchical(Algo algo, const T* x, T* y, std::size_t n, T* scratch, cudaStream_t stream) {
  const std::size_t e = block_elements(algo), blocks = ceil_div(n, e);
  T* totals = blocks > 1 ? scratch : nullptr;
  if (cudaError_t err = launch_block_scan(algo, x, y, n, totals, stream); err != cudaSuccess) return err;
  if (blocks == 1) return cudaSuccess;
  if (cudaError_t err = hierarchical(algo, totals, totals, blocks, scratch + blocks, stream); err != cudaSuccess)
    return err;
  constexpr unsigned kAddThreads = 256;
  if (aligned16(y, y) && e % 4 == 0)
    k_add_back_vec<<<static_cast<unsigned>(ceil_div(ceil_div(n - e, 4), kAddThreads)), kAddThreads, 0, stream>>>(
        y, n, totals, e);
  else
    k_add_back<<<static_cast<unsigned>(ceil_div(n - e, kAddThreads)), kAddThreads, 0, stream>>>(y, n, totals, e);
  return cudaGetLastError();
}

// --- single pass: decoupled look-back ---
// Status word of tile j: flag (high 32 bits) and value bits (low 32), written with one
// 64-bit atomic store and read with one 64-bit volatile load: a reader sees a flag
// together with its value, so no fence is needed between them (and y is never read by
// another block). flag 0: nothing yet; 1: the tile's aggregate; 2: its inclusive prefix.
constexpr unsigned long long kAggregate = 1, kPrefix = 2;

__device__ unsigned to_bits(float v) { return __float_as_uint(v); }
__device__ unsigned to_bits(unsigned v) { return v; }
template <class T>
__device__ T from_bits(unsigned b) {
  if constexpr (sizeof(T) == 4 && T(0.5) != T(0)) return __uint_as_float(b);
  else return b;
}

template <class T>
__device__ void publish(unsigned long long* word, unsigned long long flag, T value) {
  atomicExch(word, (flag << 32) | to_bits(value));
}

template <class T>
struct LookBack {
  unsigned long long* status;
  unsigned tile;
  // All 32 lanes of warp 0. Tile 0 publishes its prefix at once. Tile j > 0 publishes its
  // aggregate first (so that its successors never wait on its look-back), then looks
  // back 32 predecessors at a time: lane l reads the status word of tile
  // w - 32 + l (w: the window's end, first j), one 8-byte load each, so the whole window
  // costs one round trip to L2 instead of 32 (the old rung-4 look-back walked one tile
  // per round trip with a single thread). The warp spins until no lane sees flag 0;
  // if some lane sees a prefix, the highest such lane h ends the walk: h's inclusive
  // prefix plus the aggregates of lanes h+1..31 (and of the windows walked before);
  // else all 32 aggregates are added and the window moves 32 tiles back. Tiles before 0
  // read as a prefix of 0. It waits only on tiles with a lower index, taken from the
  // counter before its own, so those blocks are running and publish their aggregate
  // without waiting on anyone: no deadlock whatever the order of block scheduling.
  __device__ T operator()(T aggregate) const {
    const unsigned lane = threadIdx.x % 32;
    if (tile == 0) {
      if (lane == 0) publish(&status[0], kPrefix, aggregate);
      return T(0);
    }
    if (lane == 0) publish(&status[tile], kAggregate, aggregate);
    T exclusive = T(0);
    for (long long end = tile;; end -= 32) {
      const long long j = end - 32 + static_cast<long long>(lane);
      unsigned long long w = kPrefix << 32;  // j < 0: prefix 0
      bool pending = j >= 0;
      while (__any_sync(0xffffffffu, pending)) {
        if (pending) {
          w = *reinterpret_cast<volatile unsigned long long*>(&status[j]);
          pending = (w >> 32) == 0;  // tile j has started; its aggregate is coming
        }
      }
      const unsigned prefixes = __ballot_sync(0xffffffffu, (w >> 32) == kPrefix);
      const T value = from_bits<T>(static_cast<unsigned>(w));
      if (prefixes == 0) {
        exclusive += arch::warp_sum(value);
        continue;
      }
      // The prefix enters last, once: its addition chain grows by 2 per hop (here and
      // + aggregate below), not by the 5 shuffle levels (scan_problem.cpp's bound).
      const unsigned first = 31u - __clz(prefixes);  // highest lane holding a prefix
      const T after = arch::warp_sum(lane > first ? value : T(0));
      exclusive = __shfl_sync(0xffffffffu, value, first) + (exclusive + after);
      break;
    }
    if (lane == 0) publish(&status[tile], kPrefix, exclusive + aggregate);
    return exclusive;
  }
};

template <class T, bool kVec>
__global__ void __launch_bounds__(kCoarseThreads, 2)
    k_lookback(const T* x, T* y, std::size_t n, unsigned long long* status, unsigned* counter) {
  __shared__ unsigned tile_index;
  if (threadIdx.x == 0) tile_index = atomicAdd(counter, 1u);  // dynamic index: launch order
  __syncthreads();
  const unsigned tile = tile_index;
  block_scan_coarse<T, kVec>(x, y, static_cast<std::size_t>(tile) * kCoarseThreads * kCoarseItems, n,
                             static_cast<T*>(nullptr),
                    LookBack<T>{status, tile});
}

template <class T>
cudaError_t single_pass(const T* x, T* y, std::size_t n, void* scratch, cudaStream_t stream) {
  const std::size_t tiles = ceil_div(n, block_elements(Algo::decoupled_lookback));
  // [counter (8 bytes)] [status words]: zeroed before every run.
  if (cudaError_t e = cudaMemsetAsync(scratch, 0, workspace_bytes(Algo::decoupled_lookback, n), stream);
      e != cudaSuccess)
    return e;
  auto* counter = static_cast<unsigned*>(scratch);
  auto* status = static_cast<unsigned long long*>(scratch) + 1;
  if (aligned16(x, y))
    k_lookback<T, true><<<static_cast<unsigned>(tiles), kCoarseThreads, 0, stream>>>(x, y, n, status, counter);
  else
    k_lookback<T, false><<<static_cast<unsigned>(tiles), kCoarseThreads, 0, stream>>>(x, y, n, status, counter);
  return cudaGetLastError();
}

template <class T>
cudaError_t run(Algo algo, const T* x, T* y, std::size_t n, void* scratch, cudaStream_t stream) {
  if (algo == Algo::decoupled_lookback) return single_pass(x, y, n, scratch, stream);
  return hierarchical(algo, x, y, n, static_cast<T*>(scratch), stream);
}

}  // namespace

std::size_t block_elements(Algo algo) {
  switch (algo) {
    case Algo::kogge_stone: return kKsThreads;
    case Algo::brent_kung: return 2 * kBkThreads;
    default: return static_cast<std::size_t>(kCoarseThreads) * kCoarseItems;
  }
}

std::size_t workspace_bytes(Algo algo, std::size_t n) {
  const std::size_t e = block_elements(algo);
  if (algo == Algo::decoupled_lookback) return 8 * (1 + ceil_div(n, e));
  std::size_t elements = 0;
  for (std::size_t m = n; m > e; m = ceil_div(m, e)) elements += ceil_div(m, e);
  return elements * 4;  // float and unsigned: 4 bytes
}

cudaError_t launch(Algo algo, Elem elem, const void* x, void* y, std::size_t n, void* scratch, cudaStream_t stream) {
  if (n == 0) return cudaErrorInvalidValue;
  if (elem == Elem::f32) return run(algo, static_cast<const float*>(x), static_cast<float*>(y), n, scratch, stream);
  return run(algo, static_cast<const unsigned*>(x), static_cast<unsigned*>(y), n, scratch, stream);
}

}  // namespace kernels::scan
