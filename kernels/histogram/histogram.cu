// The histogram ladder (histogram.hpp). Counts are unsigned 32-bit: n < 2^32 cannot
// overflow them. Every kernel adds into counts, which the launcher zeroes first.
#include "histogram/histogram.hpp"

#include <algorithm>
#include <cstdint>

namespace kernels::histogram {
namespace {

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// The bin of byte c, or -1 when it is not counted.
template <Bins kBins>
__device__ __forceinline__ int bin_of(unsigned char c) {
  if constexpr (kBins == Bins::bytes) return c;
  else return (c >= 'a' && c <= 'z') ? (c - 'a') / 4 : -1;
}

template <Bins kBins>
constexpr int kBinCount = kBins == Bins::bytes ? 256 : 7;

// Rung 1: x[i] -> atomicAdd(counts[bin]) straight to global memory.
template <Bins kBins>
__global__ void k_global(const unsigned char* __restrict__ x, std::size_t n, unsigned* counts) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  const int b = bin_of<kBins>(x[i]);
  if (b >= 0) atomicAdd(&counts[b], 1u);
}

// The private copy: zeroed by the block, filled by `body` with shared-memory atomics,
// then each nonzero bin merged into the global counts with one atomic.
template <Bins kBins, class Body>
__device__ void privatized(unsigned* counts, Body body) {
  __shared__ unsigned local[kBinCount<kBins>];
  for (int b = threadIdx.x; b < kBinCount<kBins>; b += kThreads) local[b] = 0;
  __syncthreads();
  body(local);
  __syncthreads();
  for (int b = threadIdx.x; b < kBinCount<kBins>; b += kThreads)
    if (local[b] != 0) atomicAdd(&counts[b], local[b]);
}

// Rung 2: one element per thread into the block's private copy.
template <Bins kBins>
__global__ void k_privatized(const unsigned char* __restrict__ x, std::size_t n, unsigned* counts) {
  privatized<kBins>(counts, [&](unsigned* local) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
    if (i < n) {
      const int b = bin_of<kBins>(x[i]);
      if (b >= 0) atomicAdd(&local[b], 1u);
    }
  });
}

// Rung 3: thread g takes x[g*kCoarse, g*kCoarse + kCoarse) (clipped to n).
template <Bins kBins>
__global__ void k_contiguous(const unsigned char* __restrict__ x, std::size_t n, unsigned* counts) {
  privatized<kBins>(counts, [&](unsigned* local) {
    const std::size_t g = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
    const std::size_t begin = g * kCoarse, end = begin + kCoarse < n ? begin + kCoarse : n;
    for (std::size_t i = begin; i < end; ++i) {
      const int b = bin_of<kBins>(x[i]);
      if (b >= 0) atomicAdd(&local[b], 1u);
    }
  });
}

// Rung 4: thread g takes x[g], x[g + G], x[g + 2G], ... (G = all threads of the grid).
// Rung 5 (kAggregate): a run of equal bins is counted in a register; one shared atomic
// per run (a run ends at a different bin; uncounted bytes do not end it).
template <Bins kBins, bool kAggregate>
__global__ void k_interleaved(const unsigned char* __restrict__ x, std::size_t n, unsigned* counts) {
  privatized<kBins>(counts, [&](unsigned* local) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
    int prev = -1;
    unsigned run = 0;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
      const int b = bin_of<kBins>(x[i]);
      if (b < 0) continue;
      if constexpr (kAggregate) {
        if (b == prev) {
          ++run;
        } else {
          if (run > 0) atomicAdd(&local[prev], run);
          prev = b;
          run = 1;
        }
      } else {
        atomicAdd(&local[b], 1u);
      }
    }
    if (kAggregate && run > 0) atomicAdd(&local[prev], run);
  });
}

// ---- Rung 6, privatized_vectorized (the top variant; not in the notes) ----------------
// What limits rungs 2-5 (measured 0.02x-0.35x CUB on uniform bytes): rung 2 has one
// thread per byte, so every block zeroes and merges 256 bins for 256 bytes (as many
// global atomics as bytes on uniform data); rungs 3-5 load one byte per thread per
// instruction (a warp instruction moves 32 B) and their one shared copy per block has
// bank conflicts: bin b sits in bank b % 32, so the 32 lanes of a warp updating random
// bins collide (several ways) and lanes updating the SAME bin serialize completely.
//
// Skewed data (90% one byte), the slowdown mechanism of rungs 1-5: the hot bin's
// atomics are same-address updates. Within a warp instruction, k lanes on one address
// are executed one after another (k-way serialization: ~29 of 32 lanes on skewed data);
// in rung 1 the same happens at the one L2 slice holding the global bin, for every warp
// of the GPU. Privatization moves the serialization from L2 to shared memory; it does
// not remove it.
//
// This rung:
//   - per-LANE sub-histograms: local[bin * 32 + lane] (32 copies x 256 bins x 4 B =
//     32 KiB of shared memory per block). Lane l always hits bank l, so one warp
//     instruction's 32 atomics never share a bank or an address, whatever the data:
//     no intra-warp conflicts on uniform data and none on the hot bin of skewed data
//     (the 8 warps of a block still update the same words one instruction after another,
//     which the shared-memory atomic unit pipelines);
//   - 16-byte loads (uint4 = 16 bytes per thread per load, 2 loads in flight), the grid
//     = kHistBlocksPerSm x SM count, grid-stride: every block covers n / grid bytes, so
//     its fixed cost (zeroing 8192 words, merging them) is amortized over ~2^16 bytes at
//     n = 2^26 on 132 SMs (grid 792);
//   - scalar head (bytes before x's first 16-byte boundary) and tail (after the last
//     whole uint4): any pointer, any n;
//   - merge: thread b sums bin b's 32 copies (read rotated, (b + k) % 32, so the 32
//     threads of a warp read 32 different banks) and adds a nonzero sum to the global
//     bin with one atomic: <= 256 global atomics per block.
constexpr int kLanes = 32;

template <Bins kBins>
__device__ __forceinline__ void count_byte(unsigned* local, unsigned lane, unsigned c) {
  const int b = bin_of<kBins>(static_cast<unsigned char>(c));
  if (b >= 0) atomicAdd(&local[b * kLanes + lane], 1u);
}

template <Bins kBins>
__device__ __forceinline__ void count_word(unsigned* local, unsigned lane, unsigned w) {
#pragma unroll
  for (int k = 0; k < 4; ++k) count_byte<kBins>(local, lane, (w >> (8 * k)) & 0xFFu);
}

template <Bins kBins>
__device__ __forceinline__ void count_vec(unsigned* local, unsigned lane, uint4 v) {
  count_word<kBins>(local, lane, v.x);
  count_word<kBins>(local, lane, v.y);
  count_word<kBins>(local, lane, v.z);
  count_word<kBins>(local, lane, v.w);
}

template <Bins kBins>
__global__ void __launch_bounds__(kThreads) k_vectorized(const unsigned char* __restrict__ x, std::size_t n,
                                                         unsigned* counts) {
  constexpr int kWords = kBinCount<kBins> * kLanes;
  __shared__ unsigned local[kWords];
  for (int i = threadIdx.x; i < kWords; i += kThreads) local[i] = 0;
  __syncthreads();
  const unsigned lane = threadIdx.x % kLanes;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  const std::size_t mis = reinterpret_cast<std::uintptr_t>(x) % 16;
  const std::size_t want = mis == 0 ? 0 : 16 - mis, head = want < n ? want : n;
  const std::size_t n16 = (n - head) / 16;
  const uint4* x16 = reinterpret_cast<const uint4*>(x + head);
  std::size_t i = tid;
  for (; i + stride < n16; i += 2 * stride) {
    const uint4 a = x16[i], b = x16[i + stride];  // both loads issued before counting
    count_vec<kBins>(local, lane, a);
    count_vec<kBins>(local, lane, b);
  }
  if (i < n16) count_vec<kBins>(local, lane, x16[i]);
  if (tid < head) count_byte<kBins>(local, lane, x[tid]);
  const std::size_t tail = head + 16 * n16 + tid;
  if (tail < n) count_byte<kBins>(local, lane, x[tail]);
  __syncthreads();
  for (int b = threadIdx.x; b < kBinCount<kBins>; b += kThreads) {
    unsigned sum = 0;
    for (int k = 0; k < kLanes; ++k) sum += local[b * kLanes + (b + k) % kLanes];
    if (sum != 0) atomicAdd(&counts[b], sum);
  }
}

unsigned vector_grid(std::size_t n) {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0)
    return 0;
  // No more blocks than give each thread two uint4 loads (small n: fewer blocks to merge).
  const std::size_t fill = ceil_div(n, static_cast<std::size_t>(kThreads) * 32);
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(fill, std::size_t(sms) * kHistBlocksPerSm)));
}

template <Bins kBins>
cudaError_t run(Algo algo, const unsigned char* x, std::size_t n, unsigned* counts, cudaStream_t stream) {
  if (cudaError_t e = cudaMemsetAsync(counts, 0, sizeof(unsigned) * kBinCount<kBins>, stream); e != cudaSuccess)
    return e;
  const auto one_each = static_cast<unsigned>(ceil_div(n, kThreads));
  const auto coarse = static_cast<unsigned>(ceil_div(n, static_cast<std::size_t>(kThreads) * kCoarse));
  switch (algo) {
    case Algo::global_atomics: k_global<kBins><<<one_each, kThreads, 0, stream>>>(x, n, counts); break;
    case Algo::privatized: k_privatized<kBins><<<one_each, kThreads, 0, stream>>>(x, n, counts); break;
    case Algo::coarsened_contiguous: k_contiguous<kBins><<<coarse, kThreads, 0, stream>>>(x, n, counts); break;
    case Algo::coarsened_interleaved:
      k_interleaved<kBins, false><<<coarse, kThreads, 0, stream>>>(x, n, counts);
      break;
    case Algo::aggregated: k_interleaved<kBins, true><<<coarse, kThreads, 0, stream>>>(x, n, counts); break;
    case Algo::privatized_vectorized: {
      const unsigned grid = vector_grid(n);
      if (grid == 0) return cudaErrorInvalidDevice;
      k_vectorized<kBins><<<grid, kThreads, 0, stream>>>(x, n, counts);
      break;
    }
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch(Algo algo, Bins bins, const unsigned char* x, std::size_t n, unsigned* counts,
                   cudaStream_t stream) {
  if (n == 0) return cudaErrorInvalidValue;
  return bins == Bins::bytes ? run<Bins::bytes>(algo, x, n, counts, stream)
                             : run<Bins::letters>(algo, x, n, counts, stream);
}

}  // namespace kernels::histogram
