#pragma once
// SpMV kernels, y = A x (f32 values, x and y; i32 indices), one launch function per
// format. Pointers are device pointers; the arrays are those of formats.hpp, uploaded.
// Every launch function checks its arguments, allocates nothing (scratch comes from the
// caller) and returns the launch's cudaError_t. Any row count, any row lengths (empty
// rows included).
#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

namespace kernels::spmv {

struct CsrView {
  std::int32_t rows = 0, cols = 0, nnz = 0;
  const std::int32_t* row_ptr = nullptr;  // rows + 1
  const std::int32_t* col = nullptr;      // nnz
  const float* val = nullptr;             // nnz
};

// COO: a thread per non-zero, atomicAdd into y (zeroed first, inside the launch).
// `coo_row` holds each non-zero's row; col and val are CSR's.
cudaError_t coo_atomic(const CsrView& a, const std::int32_t* coo_row, const float* x, float* y, cudaStream_t stream);
// CSR, a thread per row.
cudaError_t csr_scalar(const CsrView& a, const float* x, float* y, cudaStream_t stream);
// CSR, a group of `lanes` threads per row (a power of two, 1..32; the group is part of a
// warp), shuffle reduction inside the group.
cudaError_t csr_vector(const CsrView& a, int lanes, const float* x, float* y, cudaStream_t stream);
// The group width csr_vector picks: the power of two at or above the mean row length,
// within 2..32 (a group's lanes read a row's elements side by side).
int csr_vector_lanes(std::int64_t rows, std::int64_t nnz);
// CSR, merge-path (spmv_merge.cu): equal shares of (rows + nnz) per thread, so a long row
// is split over many threads; a tile's non-zero products and row ends are staged through
// shared memory, carries between threads resolved by a segmented scan, carries between
// blocks by a second small kernel (deterministic: no atomics). `workspace` of
// csr_merge_workspace_bytes(rows, nnz), 256-byte aligned.
std::size_t csr_merge_workspace_bytes(std::int64_t rows, std::int64_t nnz);
cudaError_t csr_merge(const CsrView& a, void* workspace, const float* x, float* y, cudaStream_t stream);

struct EllView {
  std::int32_t rows = 0, width = 0;
  const std::int32_t* col = nullptr;  // width * rows, column-major, -1 = padding
  const float* val = nullptr;
};
cudaError_t ell(const EllView& e, const float* x, float* y, cudaStream_t stream);
// ELL part (writes every y), then the COO tail (atomicAdd): two launches.
cudaError_t ell_coo(const EllView& e, std::int32_t tail_nnz, const std::int32_t* tail_row,
                    const std::int32_t* tail_col, const float* tail_val, const float* x, float* y,
                    cudaStream_t stream);

struct JdsView {
  std::int32_t rows = 0, diagonals = 0;
  const std::int32_t* perm = nullptr;     // rows
  const std::int32_t* row_len = nullptr;  // rows, non-increasing
  const std::int32_t* jd_ptr = nullptr;   // diagonals + 1
  const std::int32_t* col = nullptr;
  const float* val = nullptr;
};
cudaError_t jds(const JdsView& j, const float* x, float* y, cudaStream_t stream);

// cusparseSpMV (CUSPARSE_SPMV_ALG_DEFAULT, f32 compute) on CSR. One cuSPARSE handle per
// process, created on first use and kept, bound to `stream` per call; descriptors are
// kept for the last matrix/vector pointers. Empty string on success, else the error.
std::string cusparse_buffer_bytes(const CsrView& a, const float* x, float* y, std::size_t& bytes);
std::string cusparse_csr(const CsrView& a, const float* x, float* y, void* buffer, cudaStream_t stream);

}  // namespace kernels::spmv
