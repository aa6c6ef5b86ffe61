// The histogram ladder (histogram.hpp). Counts are unsigned 32-bit: n < 2^32 cannot
// overflow them. Every kernel adds into counts, which the launcher zeroes first.
#include "histogram/histogram.hpp"

#include <algorithm>

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
