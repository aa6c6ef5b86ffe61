#pragma once
// Inclusive prefix sum y[i] = x[0] + ... + x[i] over f32 or 32-bit integers (uint32,
// wrapping modulo 2^32: the bits of an int32 scan with two's-complement wrap-around).
// The ECE 408 notes, section 2.2.
//
//   kogge_stone   block scan, 1024 threads, one element each, double-buffered shared
//                 arrays (no read-after-write race within a step): log2(1024) = 10 steps,
//                 O(n log n) additions. Multi-block: the hierarchical scheme below.
//   brent_kung    block scan, 1024 threads, two elements each (2048 per block): an
//                 up-sweep reduction tree and a down-sweep, 2 log2(2048) steps, O(n)
//                 additions (work efficient). Multi-block: the hierarchical scheme.
//   hierarchical  the notes' three kernels with a coarsened block scan (256 threads x 16
//                 elements, 4096 per block, 16-byte loads and stores where x and y are
//                 aligned): each thread scans its 16 elements serially, the 256 thread
//                 totals are scanned with warp shuffles, and added back. Its traffic is
//                 x read + y written (kernel 1) + y read and written again (kernel 3):
//                 16 bytes per element against a single pass's 8, so 0.5x a single-pass
//                 scan at the same bandwidth is its ceiling.
//                 Kernel 1 scans blocks and writes block totals, kernel 2 scans the totals
//                 (recursively, the same scheme), kernel 3 adds total[b-1] to block b.
//   decoupled_lookback  single pass (Merrill & Garland): tiles take a dynamic index from
//                 an atomic counter, scan like `hierarchical`'s block scan, publish their
//                 aggregate, look back over lower tiles' status words for their exclusive
//                 prefix, publish their inclusive prefix. Reads x once, writes y once.
//                 The look-back is warp-parallel: 32 predecessors' status words (flag and
//                 value packed in one 64-bit word) read at once, reduced with shuffles.
//
// Hierarchical multi-block (kogge_stone, brent_kung, hierarchical): with E elements per
// block, block totals of level k are scanned as level k+1 until one block holds them.
#include <cstddef>

#include <cuda_runtime_api.h>

namespace kernels::scan {

enum class Algo { kogge_stone, brent_kung, hierarchical, decoupled_lookback };
enum class Elem { f32, u32 };

inline constexpr int kKsThreads = 1024;            // kogge_stone: elements per block
inline constexpr int kBkThreads = 1024;            // brent_kung: 2 * 1024 elements per block
inline constexpr int kCoarseThreads = 256;         // hierarchical, decoupled_lookback
inline constexpr int kCoarseItems = 16;            //   4096 elements per block / tile

// Elements one block scans.
std::size_t block_elements(Algo algo);
// Scratch bytes for n elements (block totals of every level; look-back status words).
std::size_t workspace_bytes(Algo algo, std::size_t n);

// y = inclusive scan of x (device pointers of `elem`), n >= 1; y may not alias x.
cudaError_t launch(Algo algo, Elem elem, const void* x, void* y, std::size_t n, void* scratch,
                   cudaStream_t stream);

// cub::DeviceScan::InclusiveSum. With scratch == nullptr, *scratch_bytes gets the size.
cudaError_t launch_cub(Elem elem, const void* x, void* y, std::size_t n, void* scratch,
                       std::size_t* scratch_bytes, cudaStream_t stream);

// Host references: float prefix sums accumulated in double and rounded once per output
// (error of each y[i] <= u |y[i]| plus a double rounding far below it); uint32 wraps.
void scan_cpu_f32(const float* x, float* y, std::size_t n);
void scan_cpu_u32(const unsigned* x, unsigned* y, std::size_t n);

}  // namespace kernels::scan
