// The CSR and COO SpMV kernels (see spmv.hpp). Data path: every kernel reads A once from
// global memory, x through the read-only cache (__ldg; x is gathered by column index, so
// its locality is the matrix's), and writes y once (atomics for COO). Merge-path CSR is in spmv_merge.cu.
#include <algorithm>

#include "spmv/spmv.hpp"

namespace kernels::spmv {
namespace {

constexpr int kBlock = 256;

bool valid(const CsrView& a) {
  return a.rows >= 0 && a.cols >= 0 && a.nnz >= 0 && (a.rows == 0 || a.row_ptr != nullptr) &&
         (a.nnz == 0 || (a.col != nullptr && a.val != nullptr));
}

unsigned blocks_for(std::int64_t threads) { return static_cast<unsigned>((threads + kBlock - 1) / kBlock); }

// COO: thread k does y[row[k]] += val[k] * x[col[k]]. Coalesced reads of row/col/val;
// contended atomics on long rows.
__global__ void coo_kernel(std::int32_t nnz, const std::int32_t* __restrict__ row, const std::int32_t* __restrict__ col,
                           const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // nnz near 2^31: no wrap
  if (k < nnz) atomicAdd(&y[row[k]], val[k] * __ldg(&x[col[k]]));
}

// CSR scalar: thread r walks row r. Neighbouring threads read different rows: strided,
// uncoalesced loads of col/val, and a warp waits for its longest row (divergence).
__global__ void csr_scalar_kernel(std::int32_t rows, const std::int32_t* __restrict__ row_ptr,
                                  const std::int32_t* __restrict__ col, const float* __restrict__ val,
                                  const float* __restrict__ x, float* __restrict__ y) {
  const std::int32_t r = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= rows) return;
  float sum = 0;
  for (std::int32_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += val[k] * __ldg(&x[col[k]]);
  y[r] = sum;
}

// CSR vector: a group of LANES consecutive lanes per row; lane l sums elements l, l +
// LANES, ... (coalesced within the group), then a shuffle tree reduces the group (width
// LANES). Every lane reaches the shuffles (no early return): the mask is the full warp.
template <int LANES>
__global__ void csr_vector_kernel(std::int32_t rows, const std::int32_t* __restrict__ row_ptr,
                                  const std::int32_t* __restrict__ col, const float* __restrict__ val,
                                  const float* __restrict__ x, float* __restrict__ y) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t r = t / LANES;
  const int lane = static_cast<int>(t % LANES);
  float sum = 0;
  if (r < rows) {
    const std::int32_t end = row_ptr[r + 1];
    for (std::int32_t k = row_ptr[r] + lane; k < end; k += LANES) sum += val[k] * __ldg(&x[col[k]]);
  }
#pragma unroll
  for (int off = LANES / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, LANES);
  if (r < rows && lane == 0) y[r] = sum;
}

}  // namespace

cudaError_t coo_atomic(const CsrView& a, const std::int32_t* coo_row, const float* x, float* y, cudaStream_t stream) {
  if (!valid(a) || (a.nnz > 0 && coo_row == nullptr)) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  if (const cudaError_t e = cudaMemsetAsync(y, 0, static_cast<std::size_t>(a.rows) * sizeof(float), stream); e != cudaSuccess)
    return e;
  if (a.nnz == 0) return cudaSuccess;
  coo_kernel<<<blocks_for(a.nnz), kBlock, 0, stream>>>(a.nnz, coo_row, a.col, a.val, x, y);
  return cudaGetLastError();
}

cudaError_t csr_scalar(const CsrView& a, const float* x, float* y, cudaStream_t stream) {
  if (!valid(a)) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  csr_scalar_kernel<<<blocks_for(a.rows), kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y);
  return cudaGetLastError();
}

int csr_vector_lanes(std::int64_t rows, std::int64_t nnz) {
  const double mean = rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0;
  int lanes = 2;
  while (lanes < 32 && lanes < mean) lanes *= 2;
  return lanes;
}

cudaError_t csr_vector(const CsrView& a, int lanes, const float* x, float* y, cudaStream_t stream) {
  if (!valid(a)) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  const unsigned grid = blocks_for(static_cast<std::int64_t>(a.rows) * lanes);
  switch (lanes) {
    case 1: csr_vector_kernel<1><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    case 2: csr_vector_kernel<2><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    case 4: csr_vector_kernel<4><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    case 8: csr_vector_kernel<8><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    case 16: csr_vector_kernel<16><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    case 32: csr_vector_kernel<32><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace kernels::spmv
