#pragma once
// The element-wise passes around the bf16/f16 flash backward kernels (flash_tc_backward.cu),
// shared by the FlashAttention-2 and the Hopper backward (flash_hopper_backward.cu).
#include <cstdint>

#include <cuda_runtime_api.h>

#include "attention.hpp"

namespace kernels::attention::detail {

// D[row] = rowsum(dO[row] * O[row]) in f32 for `rows` rows of `head_dim` elements (T =
// precision), and dq_acc (rows x head_dim floats) = 0.
cudaError_t tc_backward_preprocess(Precision precision, const void* d_o, const void* o, float* delta, float* dq_acc,
                                   std::int64_t rows, int head_dim, cudaStream_t stream);
// to = factor * from, rounded to T (`elements` even). slices > 1: `from` holds that many
// partial sums of `elements` each, back to back, added in the order 0, 1, ... first.
cudaError_t tc_round(Precision precision, const float* from, void* to, std::int64_t elements, float factor,
                     cudaStream_t stream, int slices = 1);

}  // namespace kernels::attention::detail
