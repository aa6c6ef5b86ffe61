#pragma once
// FP32 general matrix multiply, BLAS semantics, row-major storage:
//
//   C = alpha * A * B + beta * C
//   A (M, K) row-major, leading dimension K
//   B (K, N) row-major, leading dimension N
//   C (M, N) row-major, leading dimension N
//
// Any M, N, K >= 1: every kernel bounds-checks its tile edges.
// beta == 0 means C is written only, never read (it may hold NaN or poison), as in BLAS.
//
// Errors: every CUDA launch function returns a cudaError_t: cudaErrorInvalidValue for bad
// arguments (a dimension < 1, a null pointer) before launching anything, otherwise the
// status of cudaGetLastError() after its launches (so cudaSuccess means "enqueued"; errors
// that happen while the kernel runs surface at the next synchronization, as usual).
// Grid limits: the kernels put tiles of N on grid x and tiles of M on grid y, so M may not
// exceed 65535 tiles (65535 * 128 rows for `coarsened`); a larger M returns
// cudaErrorInvalidConfiguration from the launch.
// The host functions (gemm_cpu) throw std::invalid_argument for bad arguments.
//
// Every launch is asynchronous on `stream` and allocates nothing.
#include <cuda_runtime_api.h>

namespace kernels::gemm {

// One thread per element of C, dot product straight from global memory.
cudaError_t gemm_naive(int M, int N, int K, float alpha, const float* A, const float* B,
                       float beta, float* C, cudaStream_t stream);

// Split-K: C is first scaled by beta (set to 0 when beta == 0) by a small kernel, then
// blocks of the shared-memory tiled kernel each take a slice of K and atomicAdd their
// partial alpha * A[:, slice] * B[slice, :] into C. Slices are at most 512 long, and more
// slices are used when there are too few output tiles to fill the GPU (tall-skinny
// shapes). Summation order differs from the other kernels and between runs.
// `splits` > 0 forces that many K slices (tests use it); 0 chooses.
cudaError_t gemm_atomic(int M, int N, int K, float alpha, const float* A, const float* B,
                        float beta, float* C, cudaStream_t stream, int splits = 0);

// Shared-memory tiling: (Tile, Tile) thread blocks, each thread one element of C, A and B
// staged through shared memory in (Tile, Tile) tiles. Instantiated for Tile = 8, 16, 32.
template <int Tile>
cudaError_t gemm_tiled(int M, int N, int K, float alpha, const float* A, const float* B,
                       float beta, float* C, cudaStream_t stream);

// The default tile (32: a warp shares its row of A, reads a contiguous row of B).
inline cudaError_t gemm_tiled(int M, int N, int K, float alpha, const float* A,
                              const float* B, float beta, float* C, cudaStream_t stream) {
  return gemm_tiled<32>(M, N, K, alpha, A, B, beta, C, stream);
}

// Tiled (32 x 32 x 32 tiles, 256 threads) with 16-byte float4 global loads and stores,
// each thread computing a 1 x 4 strip of C. float4 accesses need gemm_vector_aligned();
// other shapes run the same tiling with scalar, bounds-checked loads (correct, slower).
cudaError_t gemm_vectorized(int M, int N, int K, float alpha, const float* A,
                            const float* B, float beta, float* C, cudaStream_t stream);

// 2D register blocking: (128, 128) C tiles per 256-thread block, each thread an 8 x 8
// block of C in registers (two 4x4 sub-blocks per direction, warp-tiled so that shared
// memory reads are broadcasts or contiguous 128-byte rows), A tile stored transposed in
// shared memory for float4 reads along M, shared memory double-buffered with global
// loads of the next K tile in flight during the FMAs. KTile is the K depth of a tile
// (8 or 16). float4 global accesses where gemm_vector_aligned(), else scalar.
template <int KTile>
cudaError_t gemm_coarsened(int M, int N, int K, float alpha, const float* A, const float* B,
                           float beta, float* C, cudaStream_t stream);

// The default configuration (KTile = 8: no register spills, see gemm_coarsened.cu).
cudaError_t gemm_coarsened(int M, int N, int K, float alpha, const float* A, const float* B,
                           float beta, float* C, cudaStream_t stream);

// True when every row of A, B and C starts on a 16-byte boundary (K % 4 == 0,
// N % 4 == 0, pointers 16-byte aligned), the condition for float4 global accesses.
bool gemm_vector_aligned(int N, int K, const float* A, const float* B, const float* C);

// Host reference: double accumulation in k order (each product of two floats is exact in
// double), one rounding to float at the end, blocked over panels of C and spread over
// `threads` std::threads (0: hardware_concurrency). Throws std::invalid_argument on bad
// arguments.
void gemm_cpu(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
              float* C, unsigned threads = 0);

}  // namespace kernels::gemm
