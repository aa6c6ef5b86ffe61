#pragma once
// The one table of our FP32 GEMM kernels (kernels/gemm): plugins/gemm registers a harness
// variant per entry and models/ picks its GEMM backend from it by name, so a new kernel
// is one launch function in gemm.hpp and one line in gemm_table.cpp.
#include <span>
#include <string_view>

#include <cuda_runtime_api.h>

namespace kernels::gemm {

// C = alpha A B + beta C, row-major (see gemm.hpp); asynchronous on `stream`.
using Fp32Launch = cudaError_t (*)(int M, int N, int K, float alpha, const float* A, const float* B,
                                   float beta, float* C, cudaStream_t stream);

struct Fp32Kernel {
  std::string_view name;         // "coarsened": the variant gemm/coarsened, the models backend
  Fp32Launch launch;
  std::string_view description;  // tile shapes and data path, one line
};

// In ladder order: naive, atomic, tiled, vectorized, coarsened, coarsened_k16.
std::span<const Fp32Kernel> fp32_kernels();
// The entry named `name`, or nullptr.
const Fp32Kernel* find_fp32_kernel(std::string_view name);

}  // namespace kernels::gemm
