#pragma once
// Out-of-place FP32 transpose, the re-layout pass of the tf32 wgmma path (gemm_wgmma.cu:
// wgmma reads tf32 operands only K-major).
//
//   out (cols, rows), leading dimension ld_out >= rows  =  in (rows, cols)^T, leading
//   dimension ld_in >= cols; both row-major.
//
// Asynchronous on `stream`, allocates nothing; cudaErrorInvalidValue for a dimension < 1, a
// leading dimension too small or a null pointer, else the launch status.
#include <cuda_runtime_api.h>

namespace kernels::gemm {

cudaError_t gemm_transpose_f32(int rows, int cols, const float* in, int ld_in, float* out, int ld_out,
                               cudaStream_t stream);

}  // namespace kernels::gemm
