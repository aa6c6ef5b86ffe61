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
#include <cstdint>

#include <cuda_bf16.h>

#include "gemm/gemm_types.hpp"

namespace kernels::gemm {

// dtype fp8_e4m3 is not taken here (it has scales): gemm_cpu_fp8_e4m3.
void gemm_cpu_ex(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A, const void* B,
                 float beta, void* C, unsigned threads = 0);

// dtype fp8_e4m3: C (M, N) bf16 = scale_a scale_b op(A) op(B), A and B e4m3 bytes stored as
// `layout` says (gemm_types.hpp; nt: A (M, K), B (N, K), the layout the GPU kernels take). The fp8 values are exact in float, their products
// (4-bit significands) exact in double, summed in double in k order and scaled in double
// (scale_a, scale_b as given), rounded once to bf16: the exactly rounded result on the
// dequantized inputs up to ~K 2^-53 relative. Same blocking and threads as gemm_cpu.
// Throws std::invalid_argument on bad arguments.
void gemm_cpu_fp8_e4m3(Layout layout, int M, int N, int K, float scale_a, float scale_b, const std::uint8_t* A,
                       const std::uint8_t* B, __nv_bfloat16* C, unsigned threads = 0);

// The value of an FP8 E4M3 byte (1 sign, 4 exponent bits with bias 7, 3 mantissa bits;
// exponent 0: subnormal m/8 2^-6; 0x7F and 0xFF: NaN; no infinities). Exact.
float fp8_e4m3_to_float(std::uint8_t x);

// x rounded to TF32 (10 explicit mantissa bits), nearest with ties away from zero, as
// cvt.rna.tf32.f32 does; Inf and NaN unchanged.
float round_to_tf32(float x);

}  // namespace kernels::gemm
