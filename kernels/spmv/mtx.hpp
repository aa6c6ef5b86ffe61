#pragma once
// A Matrix Market reader for sparse matrices: `%%MatrixMarket matrix coordinate
// real|integer|pattern general|symmetric`, 1-based indices, `%` comment lines. Symmetric
// files store one triangle: every off-diagonal entry is mirrored. Pattern entries are 1.
// Duplicates are summed. Anything malformed or truncated throws MtxError whose message is
// located: "path:line: what" (line 1-based; a truncated file names the line after its end).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "spmv/formats.hpp"

namespace kernels::spmv {

class MtxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Csr read_matrix_market(const std::string& path);

}  // namespace kernels::spmv
