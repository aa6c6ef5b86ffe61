#include "gemm/gemm_table.hpp"

#include <array>

#include "gemm/gemm.hpp"

namespace kernels::gemm {
namespace {

// Overloads and default arguments cannot be stored as plain function pointers directly.
cudaError_t atomic_auto(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                        cudaStream_t stream) {
  return gemm_atomic(M, N, K, alpha, A, B, beta, C, stream);
}
cudaError_t coarsened_default(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                              float* C, cudaStream_t stream) {
  return gemm_coarsened(M, N, K, alpha, A, B, beta, C, stream);
}

constexpr std::array kKernels = {
    Fp32Kernel{"naive", &gemm_naive, "one thread per element of C, operands from global memory"},
    Fp32Kernel{"atomic", &atomic_auto, "split-K over 32x32 smem tiles, partial sums atomicAdd'ed into beta*C"},
    Fp32Kernel{"tiled", &gemm_tiled<32>, "32x32 shared-memory tiles, one element of C per thread"},
    Fp32Kernel{"vectorized", &gemm_vectorized,
               "32x32x32 tiles, float4 loads/stores, 1x4 outputs per thread (scalar loads unless K%4 == N%4 == 0)"},
    Fp32Kernel{"coarsened", &coarsened_default,
               "128x128x8 tiles, 8x8 outputs per thread, warp-tiled, double-buffered smem, cp.async"},
    Fp32Kernel{"coarsened_k16", &gemm_coarsened<16>,
               "coarsened with 128x128x16 tiles (fewer barriers, ~64 B register spills)"},
};

}  // namespace

std::span<const Fp32Kernel> fp32_kernels() { return kKernels; }

const Fp32Kernel* find_fp32_kernel(std::string_view name) {
  for (const auto& k : kKernels)
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace kernels::gemm
