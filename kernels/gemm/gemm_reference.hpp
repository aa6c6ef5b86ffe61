#pragma once
// Host reference GEMM in every dtype and layout of gemm_types.hpp (the `cpu` variant):
//
//   C (M, N) = alpha * op(A) * op(B) + beta * C, C row-major, in the dtype's storage.
//
// The inputs are read exactly as stored (bf16 / f16 widen exactly to float), for tf32
// first rounded to TF32 as the tensor cores see them (round to nearest, ties away from
// zero: cvt.rna.tf32.f32), then multiplied and summed in double in k order (products of
// <= 24-bit significands are exact in double) and rounded once to the output type
// (round to nearest even; bf16 / f16 straight from double, no intermediate float).
// So it is the exactly rounded result of the rounded inputs, up to ~K 2^-53 relative.
// Same blocking and threads as gemm_cpu (gemm.hpp); op(A), op(B) are first copied to
// row-major (M, K) and (K, N) float panels (extra host memory: 4 (M K + K N) bytes,
// none for f32 nn). Throws std::invalid_argument for bad arguments.
#include "gemm/gemm_types.hpp"

namespace kernels::gemm {

void gemm_cpu_ex(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A, const void* B,
                 float beta, void* C, unsigned threads = 0);

// x rounded to TF32 (10 explicit mantissa bits), nearest with ties away from zero, as
// cvt.rna.tf32.f32 does; Inf and NaN unchanged.
float round_to_tf32(float x);

}  // namespace kernels::gemm
