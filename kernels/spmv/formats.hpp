#pragma once
// Sparse matrix formats of the SpMV family (y = A x, A of rows x cols, f32 values, i32
// indices) and their host-side conversions, all derived from CSR:
//
//   CSR  row_ptr (rows + 1), col (nnz), val (nnz): row r holds [row_ptr[r], row_ptr[r+1]).
//   COO  row (nnz) beside CSR's col and val (a non-zero's row, for a thread per non-zero).
//   ELL  width = longest row; col and val of rows x width stored column-major
//        (element k of row r at k * rows + r) so that consecutive threads (rows) read
//        consecutive words; padding has col = -1, val = 0 and sits at the end of a row.
//   HYB  ELL of width `threshold` + COO of the elements of longer rows beyond it.
//   JDS  rows sorted by length (longest first, stable), perm[i] = original row of sorted
//        row i; stored transposed by "jagged diagonal": diagonal d holds element d of
//        every sorted row with more than d elements, contiguous, starting at jd_ptr[d].
//        No padding; the price is the permutation (perm, 4 bytes per row) and jd_ptr.
// No CUDA here: the plugin uploads these arrays; kernels get raw device pointers.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kernels::spmv {

struct Csr {
  std::int32_t rows = 0, cols = 0;
  std::vector<std::int32_t> row_ptr{0};
  std::vector<std::int32_t> col;
  std::vector<float> val;
  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
  std::int32_t row_length(std::int32_t r) const { return row_ptr[r + 1] - row_ptr[r]; }
  std::int32_t max_row_length() const;
};

// A non-zero (row, col, val), 0-based; the unit of COO input.
struct Entry {
  std::int32_t row, col;
  float val;
};

// CSR from COO entries in any order: sorted by (row, col), duplicates summed (as Matrix
// Market readers conventionally do). Entries must be in range (checked by the caller).
Csr csr_from_coo(std::int32_t rows, std::int32_t cols, std::vector<Entry> entries);
// The entries of a CSR matrix, row-major (the inverse of csr_from_coo for a matrix
// without duplicates).
std::vector<Entry> coo_from_csr(const Csr& a);

// COO row index of every non-zero of `a` (col and val are CSR's).
std::vector<std::int32_t> coo_rows(const Csr& a);

struct Ell {
  std::int32_t rows = 0, width = 0;
  std::vector<std::int32_t> col;   // width * rows, column-major, -1 = padding
  std::vector<float> val;          // width * rows, column-major, 0 = padding
  std::int64_t stored() const { return static_cast<std::int64_t>(rows) * width; }
};
// ELL of the first `width` elements of every row (width >= longest row: all of them).
Ell ell_from_csr(const Csr& a, std::int32_t width);

struct Hybrid {
  Ell ell;
  std::vector<std::int32_t> coo_row, coo_col;  // the elements beyond ell.width
  std::vector<float> coo_val;
};
// The threshold of the hybrid format: the smallest width that holds every element of at
// least `coverage` of the rows (rows sorted by length; coverage 0.9 keeps the ELL part
// narrow when a few rows are very long, and equal to the longest row on a stencil).
std::int32_t hybrid_threshold(const Csr& a, double coverage = 0.9);
Hybrid hybrid_from_csr(const Csr& a, std::int32_t threshold);

struct Jds {
  std::int32_t rows = 0;
  std::vector<std::int32_t> perm;      // rows: original row of sorted row i
  std::vector<std::int32_t> row_len;   // rows: length of sorted row i (non-increasing)
  std::vector<std::int32_t> jd_ptr;    // diagonals + 1
  std::vector<std::int32_t> col;       // nnz
  std::vector<float> val;              // nnz
  std::int32_t diagonals() const { return static_cast<std::int32_t>(jd_ptr.size()) - 1; }
};
Jds jds_from_csr(const Csr& a);
// Back to CSR (tests: the conversions lose nothing).
Csr csr_from_ell(const Ell& e, std::int32_t cols);
Csr csr_from_hybrid(const Hybrid& h, std::int32_t cols);
Csr csr_from_jds(const Jds& j, std::int32_t cols);

// y = A x with a double accumulator per row, rounded to float once.
void cpu(const Csr& a, const float* x, float* y);

}  // namespace kernels::spmv
