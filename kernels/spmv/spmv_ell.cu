// The ELL, hybrid ELL + COO and JDS SpMV kernels (see spmv.hpp and formats.hpp).
#include "spmv/spmv.hpp"

namespace kernels::spmv {
namespace {

constexpr int kBlock = 256;
unsigned blocks_for(std::int64_t threads) { return static_cast<unsigned>((threads + kBlock - 1) / kBlock); }

// ELL: thread r reads element k of row r at k * rows + r: consecutive threads read
// consecutive words (coalesced), every thread of a warp runs `width` steps (padding is
// work: a row stops early at its first padding entry, col = -1, but its warp does not).
__global__ void ell_kernel(std::int32_t rows, std::int32_t width, const std::int32_t* __restrict__ col,
                           const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y) {
  const std::int32_t r = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= rows) return;
  float sum = 0;
  for (std::int32_t k = 0; k < width; ++k) {
    const std::size_t at = static_cast<std::size_t>(k) * rows + r;
    const std::int32_t c = col[at];
    if (c < 0) break;  // padding sits at the end of a row
    sum += val[at] * __ldg(&x[c]);
  }
  y[r] = sum;
}

// The hybrid's COO tail: a thread per spilled element, atomicAdd onto the ELL result.
__global__ void coo_tail_kernel(std::int32_t nnz, const std::int32_t* __restrict__ row,
                                const std::int32_t* __restrict__ col, const float* __restrict__ val,
                                const float* __restrict__ x, float* __restrict__ y) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // nnz near 2^31: no wrap
  if (k < nnz) atomicAdd(&y[row[k]], val[k] * __ldg(&x[col[k]]));
}

// JDS: thread i takes sorted row i; its element d is at jd_ptr[d] + i, so consecutive
// threads read consecutive words on every diagonal (coalesced) and, rows being sorted by
// length, a warp's rows have nearly equal lengths (little divergence, no padding).
__global__ void jds_kernel(std::int32_t rows, const std::int32_t* __restrict__ perm, const std::int32_t* __restrict__ row_len,
                           const std::int32_t* __restrict__ jd_ptr, const std::int32_t* __restrict__ col,
                           const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y) {
  const std::int32_t i = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= rows) return;
  const std::int32_t len = row_len[i];
  float sum = 0;
  for (std::int32_t d = 0; d < len; ++d) {
    const std::int32_t at = __ldg(&jd_ptr[d]) + i;
    sum += val[at] * __ldg(&x[col[at]]);
  }
  y[perm[i]] = sum;
}

bool valid(const EllView& e) {
  return e.rows >= 0 && e.width >= 0 && (e.rows == 0 || e.width == 0 || (e.col != nullptr && e.val != nullptr));
}

}  // namespace

cudaError_t ell(const EllView& e, const float* x, float* y, cudaStream_t stream) {
  if (!valid(e)) return cudaErrorInvalidValue;
  if (e.rows == 0) return cudaSuccess;
  ell_kernel<<<blocks_for(e.rows), kBlock, 0, stream>>>(e.rows, e.width, e.col, e.val, x, y);
  return cudaGetLastError();
}

cudaError_t ell_coo(const EllView& e, std::int32_t tail_nnz, const std::int32_t* tail_row, const std::int32_t* tail_col,
                    const float* tail_val, const float* x, float* y, cudaStream_t stream) {
  if (!valid(e) || tail_nnz < 0 || (tail_nnz > 0 && (!tail_row || !tail_col || !tail_val))) return cudaErrorInvalidValue;
  if (e.rows == 0) return cudaSuccess;
  ell_kernel<<<blocks_for(e.rows), kBlock, 0, stream>>>(e.rows, e.width, e.col, e.val, x, y);
  if (tail_nnz > 0) coo_tail_kernel<<<blocks_for(tail_nnz), kBlock, 0, stream>>>(tail_nnz, tail_row, tail_col, tail_val, x, y);
  return cudaGetLastError();
}

cudaError_t jds(const JdsView& j, const float* x, float* y, cudaStream_t stream) {
  if (j.rows < 0 || j.diagonals < 0 || (j.rows > 0 && (!j.perm || !j.row_len || !j.jd_ptr))) return cudaErrorInvalidValue;
  if (j.rows == 0) return cudaSuccess;
  jds_kernel<<<blocks_for(j.rows), kBlock, 0, stream>>>(j.rows, j.perm, j.row_len, j.jd_ptr, j.col, j.val, x, y);
  return cudaGetLastError();
}

}  // namespace kernels::spmv
