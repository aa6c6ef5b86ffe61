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
//   cudnn          cudnnSoftmaxForward (ACCURATE, INSTANCE), where cuDNN was found
// Every launch function returns the launch status (cudaGetLastError after the launch).
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace kernels::softmax {

// naive needs two scratch arrays of `rows` floats (the row maxima and sums).
cudaError_t naive(std::int64_t rows, std::int64_t cols, const float* x, float* y, float* row_max,
                  float* row_sum, cudaStream_t stream);
cudaError_t smem_max(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream);
cudaError_t online(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream);
cudaError_t warp_per_row(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream);
cudaError_t block_per_row(std::int64_t rows, std::int64_t cols, const float* x, float* y, cudaStream_t stream);

// The reference on the host: every sum and exp in double, rounded to f32 once.
void cpu(std::int64_t rows, std::int64_t cols, const float* x, float* y);

}  // namespace kernels::softmax
