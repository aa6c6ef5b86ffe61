#pragma once
// bf16 kernels of the engine's mixed-precision path (models/, docs/models.md "Mixed
// precision"): activations are __nv_bfloat16 tensors, parameters and their gradients stay
// float. Every kernel loads bf16, computes in float and rounds once when it stores bf16
// (round to nearest even, __float2bfloat16_rn). Conventions as nn.hpp: contiguous
// row-major, asynchronous on `s`, nothing allocated, cudaErrorInvalidValue for bad
// arguments before any launch, else cudaGetLastError(); n == 0 / rows == 0 launch nothing
// (column sums with rows == 0 still write zeros). Deterministic: the column reductions
// use a fixed summation order, no atomics.
#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace kernels::nn {

using bf16 = __nv_bfloat16;

// ---- casts -------------------------------------------------------------------------------
// y = bf16(x) (round to nearest even) / y = float(x) (exact).
cudaError_t cast_f32_to_bf16(const float* x, bf16* y, std::size_t n, cudaStream_t s);
cudaError_t cast_bf16_to_f32(const bf16* x, float* y, std::size_t n, cudaStream_t s);

// Many tensors in few launches (the per-step bf16 copy of every weight matrix):
// dst[i][j] = bf16(src[i][j]) for j < n[i], i < count. The host arrays are read during
// the call (packed into kernel arguments, up to kMultiCastTensors tensors per launch).
inline constexpr int kMultiCastTensors = 48;
cudaError_t cast_f32_to_bf16_multi(const float* const* src, bf16* const* dst, const std::size_t* n,
                                   int count, cudaStream_t s);

// ---- elementwise (in float) --------------------------------------------------------------
// c = a + b (residual; c may alias a or b).
cudaError_t add_bf16(const bf16* a, const bf16* b, bf16* c, std::size_t n, cudaStream_t s);
// y[r, c] = x[r, c] + bias[c], bias float (the master bias); y may alias x.
cudaError_t bias_add_bf16(const bf16* x, const float* bias, bf16* y, int rows, int cols,
                          cudaStream_t s);
// dbias[c] = sum_r dy[r, c] in float (written): the float gradient of a float bias.
cudaError_t column_sum_bf16(const bf16* dy, float* dbias, int rows, int cols, cudaStream_t s);

// act: 0 identity, 1 ReLU, 2 GeLU (tanh approximation, formulas of nn.hpp).
enum class Act { identity = 0, relu = 1, gelu = 2 };
cudaError_t activation_forward_bf16(Act act, const bf16* x, bf16* y, std::size_t n,
                                    cudaStream_t s);
// dx = dy * act'(x), x the forward input.
cudaError_t activation_backward_bf16(Act act, const bf16* x, const bf16* dy, bf16* dx,
                                     std::size_t n, cudaStream_t s);

// ---- LayerNorm: bf16 x / y, float gamma, beta, statistics and parameter gradients -------
// Same math as layernorm_forward / layernorm_backward (nn.hpp), mean and variance in
// float (two passes over the row: mean, then the centred sum of squares). One warp per
// row. mean, rstd (rows) float, may be null in the forward (nothing saved).
cudaError_t layernorm_forward_bf16(const bf16* x, const float* gamma, const float* beta, bf16* y,
                                   float* mean, float* rstd, int rows, int cols, float eps,
                                   cudaStream_t s);
// dx bf16 (rows, cols); dgamma, dbeta float (cols), written.
cudaError_t layernorm_backward_bf16(const bf16* x, const float* gamma, const float* mean,
                                    const float* rstd, const bf16* dy, bf16* dx, float* dgamma,
                                    float* dbeta, int rows, int cols, cudaStream_t s);
// Its dx kernel alone (nn_fused.hpp has the row-parallel dgamma / dbeta).
cudaError_t layernorm_backward_dx_bf16(const bf16* x, const float* gamma, const float* mean,
                                       const float* rstd, const bf16* dy, bf16* dx, int rows,
                                       int cols, cudaStream_t s);

}  // namespace kernels::nn
