// The scan ladder (scan.hpp). T is float or unsigned (wrapping). Every block kernel pads
// the tail of the last block with zeros (the identity), so any n >= 1 works; y is
// written only below n. Block kernels may run in place (x == y): each thread writes only
// the elements it loaded itself, after loading them (the recursion scans block totals in
// place), so x and y carry no __restrict__.
#include "scan/scan.hpp"

#include <cstdint>

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

// The coarsened block scan of rung 3 (and of the single-pass tile): 256 threads x 8
// elements. Phase 1: the 2048-element tile is loaded coalesced (element k*256 + t) into
// shared memory, and each thread scans its 8 contiguous elements serially in registers
// (reading tile[8t + k]: 8-word stride, a 4-way bank conflict on these 8 loads). Phase 2:
// the 256 thread totals are scanned with warp shuffles; the 8 warp totals by warp 0.
// Phase 3 (after `between`, which may add a tile prefix): each element gets its
// thread's exclusive prefix, back through shared memory for coalesced stores.
struct NoPrefix {
  template <class T>
  __device__ T operator()(T) const { return T(0); }
};

template <class T, class Between>
__device__ void block_scan_coarse(const T* x, T* y, std::size_t base, std::size_t n, T* total_out, Between between) {
  constexpr unsigned kE = kCoarseThreads * kCoarseItems, kWarps = kCoarseThreads / 32;
  __shared__ T tile[kE];
  __shared__ T warp_totals[kWarps];
  __shared__ T tile_prefix;
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  for (unsigned k = 0; k < kCoarseItems; ++k) {
    const std::size_t g = base + k * kCoarseThreads + t;
    tile[k * kCoarseThreads + t] = g < n ? x[g] : T(0);
  }
  __syncthreads();
  T v[kCoarseItems];
  T run = T(0);
  for (unsigned k = 0; k < kCoarseItems; ++k) {
    run += tile[t * kCoarseItems + k];
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
  }
  __syncthreads();
  const T aggregate = warp_totals[kWarps - 1];
  if (t == 0) tile_prefix = between(aggregate);  // the look-back, or zero
  __syncthreads();
  const T before = tile_prefix + (warp > 0 ? warp_totals[warp - 1] : T(0)) + excl;
  for (unsigned k = 0; k < kCoarseItems; ++k) tile[t * kCoarseItems + k] = before + v[k];  // own segment
  __syncthreads();
  for (unsigned k = 0; k < kCoarseItems; ++k) {
    const std::size_t g = base + k * kCoarseThreads + t;
    if (g < n) y[g] = tile[k * kCoarseThreads + t];
  }
  if (total_out != nullptr && t == 0) *total_out = aggregate;
}

// Rung 3's kernel 1: one coarsened block scan per block, block totals out.
template <class T>
__global__ void k_coarse(const T* x, T* y, std::size_t n, T* totals) {
  block_scan_coarse(x, y, static_cast<std::size_t>(blockIdx.x) * kCoarseThreads * kCoarseItems, n,
                    totals != nullptr ? totals + blockIdx.x : nullptr, NoPrefix{});
}

// Kernel 3 of the hierarchy: y[i] += scanned_totals[i / E - 1] for i >= E.
template <class T>
__global__ void k_add_back(T* y, std::size_t n, const T* scanned_totals, std::size_t e) {
  const std::size_t i = e + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] += scanned_totals[i / e - 1];
}

template <class T>
cudaError_t launch_block_scan(Algo algo, const T* x, T* y, std::size_t n, T* totals, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(ceil_div(n, block_elements(algo)));
  switch (algo) {
    case Algo::kogge_stone: k_kogge_stone<<<grid, kKsThreads, 0, stream>>>(x, y, n, totals); break;
    case Algo::brent_kung: k_brent_kung<<<grid, kBkThreads, 0, stream>>>(x, y, n, totals); break;
    default: k_coarse<<<grid, kCoarseThreads, 0, stream>>>(x, y, n, totals); break;
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
  // Thread 0 only. Tile 0 publishes its prefix at once. Tile j > 0 publishes its
  // aggregate first (so that its successors never wait on its look-back), then walks
  // back: it adds each predecessor's value until one has a prefix. It waits only on
  // tiles with a lower index, taken from the counter before its own, so those blocks are
  // running and publish their aggregate without waiting on anyone: no deadlock whatever
  // the order in which the hardware schedules blocks.
  __device__ T operator()(T aggregate) const {
    if (tile == 0) {
      publish(&status[0], kPrefix, aggregate);
      return T(0);
    }
    publish(&status[tile], kAggregate, aggregate);
    T exclusive = T(0);
    for (long long j = static_cast<long long>(tile) - 1;;) {
      const unsigned long long w = *reinterpret_cast<volatile unsigned long long*>(&status[j]);
      const unsigned long long flag = w >> 32;
      if (flag == 0) continue;  // tile j has started; its aggregate is coming
      exclusive = from_bits<T>(static_cast<unsigned>(w)) + exclusive;
      if (flag == kPrefix) break;
      --j;
    }
    publish(&status[tile], kPrefix, exclusive + aggregate);
    return exclusive;
  }
};

template <class T>
__global__ void k_lookback(const T* x, T* y, std::size_t n, unsigned long long* status, unsigned* counter) {
  __shared__ unsigned tile_index;
  if (threadIdx.x == 0) tile_index = atomicAdd(counter, 1u);  // dynamic index: launch order
  __syncthreads();
  const unsigned tile = tile_index;
  block_scan_coarse(x, y, static_cast<std::size_t>(tile) * kCoarseThreads * kCoarseItems, n, static_cast<T*>(nullptr),
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
  k_lookback<<<static_cast<unsigned>(tiles), kCoarseThreads, 0, stream>>>(x, y, n, status, counter);
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
