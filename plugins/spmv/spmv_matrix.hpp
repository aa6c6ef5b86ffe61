#pragma once
// The matrix of an spmv case, from its parameters: a generated structure
// (kernels/spmv/generators.hpp) or a Matrix Market file (`structure: file`, `matrix:
// path`, relative to the working directory). Facts that the work, the memory need and
// the variants' constraints depend on (rows, nnz, the longest row) are known from the
// parameters alone: computed once per parameter set and cached.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "harness/params.hpp"
#include "spmv/formats.hpp"

namespace spmv_plugin {

struct Shape {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::int64_t max_row = 0;        // the longest row
  std::int64_t hybrid_width = 0;   // the ELL width of the hybrid format (kernels::spmv::hybrid_threshold)
};

// Why these parameters do not make a usable matrix (a file that cannot be read, indices
// beyond 32 bits, ...), or nothing. A Matrix Market error is "path:line: what".
std::optional<std::string> matrix_problem(const harness::Params& p);
// The shape at these parameters (InputError when matrix_problem has a reason).
Shape shape_of(const harness::Params& p);
// The matrix itself: generated from the seed, or the file's (read once per process).
kernels::spmv::Csr build_matrix(const harness::Params& p, std::uint64_t seed);

}  // namespace spmv_plugin
