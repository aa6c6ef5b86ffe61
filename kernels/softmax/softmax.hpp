#pragma once
// Row-wise softmax of a row-major (rows, cols) f32 matrix:
//   y[r][j] = exp(x[r][j] - m_r) / s_r,   m_r = max_j x[r][j],   s_r = sum_j exp(x[r][j] - m_r)
// Subtracting the row max ("safe softmax") keeps every exp <= 1, so huge inputs (1e38)
// never overflow. A row whose elements are all -inf has m_r = -inf and x - m_r = NaN:
// its outputs are NaN (as in PyTorch); elements equal to -inf in other rows give 0.
//
// The ladder (each rung's comments say what it fixes over the previous one):
//   naive          three kernels (row max, row sum of exp, normalize), a thread per row
//   smem_max       the A100 slides' shared-memory max reduction: 32 threads per row
//   online         running (max, sum) in one pass over the row, then normalize
//   warp_per_row   a warp per row, (max, sum) combined with warp shuffles, float4 loads
//   block_per_row  a block per row (long rows): shuffles within warps, shared memory across
//   register_row   the top rung: the row read once into registers (16-byte loads), max
//                  and sum by shuffle/block reductions, written once: 2 passes of global
//                  traffic instead of 3; several rows per warp for cols <= 32, a warp per
//                  row up to 1024, a block per row up to 16384, beyond that an online
//                  two-read block kernel. f32 and bf16 (f32 statistics, bf16 in and out)
//   cudnn          cudnnSoftmaxForward (ACCURATE, INSTANCE), where cuDNN was found
// Every launch function returns the launch status (cudaGetLastError after the launch).
#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace kernels::softmax {

// naive needs two scratch arrays of `rows` floats (the row maxima and sums).
cudaError_t naive(std::int64_t rows, std::int64_t cols, const float* x, float* y, float* row_max,
                  float* row_sum, cudaStream_t stream);
cudaError_t smem_max(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream);
cudaError_t online(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream);
cudaError_t warp_per_row(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream);
cudaError_t block_per_row(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream);

cudaError_t register_row(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream);
cudaError_t register_row_bf16(std::int64_t rows, std::int64_t cols, const __nv_bfloat16* x, __nv_bfloat16* y,
                              cudaStream_t stream);

// The reference on the host: every sum and exp in double, rounded to f32 once.
void cpu(std::int64_t rows, std::int64_t cols, const float* x, float* y);
// bf16: the inputs widened exactly, the same double computation, each output rounded
// once to bf16 (round to nearest even).
void cpu_bf16(std::int64_t rows, std::int64_t cols, const __nv_bfloat16* x, __nv_bfloat16* y);

}  // namespace kernels::softmax
