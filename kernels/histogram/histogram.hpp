#pragma once
// Histogram of n bytes into u32 counts (the ECE 408 notes, section 2.3). Two bin maps:
//   bytes:   256 bins, bin = the byte value
//   letters: 7 bins of 4 lowercase letters, a-d, e-h, i-l, m-p, q-t, u-x, y-z (the text
//            example of Kirk & Hwu's PMPP, which the notes follow; the notes themselves
//            show only the byte version); every other byte is not counted
//
// The ladder (each rung fixes something of the previous one):
//   global_atomics         one thread per element, atomicAdd on the global bins: every
//                          update is a round trip to L2, serialized on hot bins    (rung 1)
//   privatized             a block's private copy in shared memory, merged into the
//                          global bins once per block (notes' privatization)       (rung 2)
//   coarsened_contiguous   privatized, kCoarse elements per thread from a contiguous
//                          chunk: fewer merges, but a warp's loads are 32 chunks
//                          apart (uncoalesced)                                     (rung 3)
//   coarsened_interleaved  privatized, the grid strides over the input: same work per
//                          thread, coalesced loads                                 (rung 4)
//   aggregated             rung 4 plus run-length aggregation: a thread counts a run of
//                          equal bins in a register and issues one atomic per run (fewer
//                          atomics on skewed data)                                 (rung 5)
// And the top variant (beyond the notes):
//   privatized_vectorized  privatized with per-lane sub-histograms (bin * 32 + lane: a
//                          warp's 32 atomics never share a bank or a word), 16-byte
//                          loads, grid = kHistBlocksPerSm x SM count, grid-stride, one
//                          global atomic per nonzero bin per block              (rung 6)
#include <cstddef>

#include <cuda_runtime_api.h>

namespace kernels::histogram {

enum class Algo { global_atomics, privatized, coarsened_contiguous, coarsened_interleaved, aggregated, privatized_vectorized };
enum class Bins { bytes, letters };

inline constexpr int kThreads = 256;
inline constexpr int kCoarse = 32;  // rungs 3-5: elements per thread (grid = n / (256 * 32))
inline constexpr int kHistBlocksPerSm = 6;  // rung 6: grid = 6 x SM count (33 KiB shared each: 198 KiB/SM)

int bin_count(Bins bins);  // 256 or 7

// counts[bin_count(bins)] = histogram of x[0..n), n >= 1 (counts is zeroed first).
cudaError_t launch(Algo algo, Bins bins, const unsigned char* x, std::size_t n, unsigned* counts,
                   cudaStream_t stream);

// cub::DeviceHistogram: HistogramEven for bytes (257 levels 0..256); HistogramRange for
// letters (levels a, e, i, m, q, u, y, z+1: the last bin is 2 letters wide, which even
// levels cannot express). With scratch == nullptr, *scratch_bytes gets the size.
cudaError_t launch_cub(Bins bins, const unsigned char* x, std::size_t n, unsigned* counts, void* scratch,
                       std::size_t* scratch_bytes, cudaStream_t stream);

// Host reference.
void histogram_cpu(Bins bins, const unsigned char* x, std::size_t n, unsigned* counts);

}  // namespace kernels::histogram
