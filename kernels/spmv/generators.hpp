#pragma once
// Matrices with a named structure, deterministic. The row lengths (and so nnz, the work
// and the memory need) are a function of the parameters alone, so that they are known
// before any matrix is built; the column positions of the random structures and every
// value come from the seed.
//
//   laplace2d  the 5-point stencil on an n x n grid (n^2 rows): 4 on the diagonal, -1 for
//              each neighbour inside the grid (banded: offsets 0, +-1, +-n).
//   laplace3d  the 7-point stencil on an n x n x n grid (n^3 rows): 6 and -1.
//   random     n x n, row lengths uniform in [0, 2 d n] (mean d n, d = density; some
//              rows empty), columns uniform: one per stratum of n / length columns.
//   powerlaw   n x n, row of rank k (a fixed permutation of the rows) has
//              1..4 + floor(max_row / (k + 1)^1.5) elements: a few very long rows (the
//              longest max_row), most of 1 to 5.
//   blockdiag  n x n, dense blocks of block x block on the diagonal (the last one cut).
// Values of random, powerlaw and blockdiag are uniform in [-1, 1) from the seed.
#include <cstdint>
#include <string>
#include <vector>

#include "spmv/formats.hpp"

namespace kernels::spmv {

enum class Structure { laplace2d, laplace3d, random, powerlaw, blockdiag };

struct GenSpec {
  Structure structure = Structure::laplace2d;
  std::int64_t n = 0;          // grid side for the Laplacians, else rows (= cols)
  double density = 1e-3;       // random
  std::int64_t max_row = 1000; // powerlaw: the longest row (clamped to n)
  std::int64_t block = 16;     // blockdiag
};

std::int64_t rows_of(const GenSpec& s);
// Every row's length; rows_of(s) entries (call only when rows_of fits the int32 range).
std::vector<std::int32_t> row_lengths(const GenSpec& s);
// Sum of row_lengths without building them (int64: the caller checks the int32 range).
std::int64_t nnz_of(const GenSpec& s);
Csr generate(const GenSpec& s, std::uint64_t seed);

}  // namespace kernels::spmv
