#pragma once
// The gemm problem's tolerance and reference rules, in a header so that the tests check
// kernels against exactly the bound the harness uses.
#include <cmath>
#include <cstdint>

#include "gemm/gemm_types.hpp"
#include "harness/problem.hpp"

namespace plugins::gemm {

// FP32 unit roundoff.
inline constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24

// Why this bound (inputs uniform in [-1, 1], every kernel accumulating in FP32):
// a kernel that sums the K products in k order (naive, tiled, vectorized, coarsened;
// the worst order we have) rounds each partial sum s_i with a relative error of at most
// u = 2^-24, so its error is sum_i d_i * s_i. The partial sums of products of two
// U[-1, 1] values (each of standard deviation 1/3) are random walks, |s_i| ~ sqrt(i) / 3,
// so the error's standard deviation is about u * K / 7.3 for a typical element and up to
// about u * K / 1.8 for the rare elements whose sums run 5 sigma high. The bound
// 4 * u * K * |alpha| is 7 of those "5-sigma" deviations, so a correct kernel passes even
// at 8192^3 against a reference that has its own FP32 error (cuBLAS above the cpu limit).
// The other terms cover the epilogue's roundings (alpha * acc, + beta * C, with
// |acc| ~ sqrt(K) / 3 and |C| <= 1), and rel = 4u the final rounding of large results.
//
// It still catches real bugs: a missed or doubled product adds |a * b|, which is below
// t = 4uK (9.8e-4 at K = 4096) with probability t * (1 - ln t) ~ 0.8%, so nearly every
// element it touches fails; TF32 tensor-core rounding (2^-11 per operand) gives errors
// of standard deviation ~ 1.3e-4 * sqrt(K): 6x the bound at K = 8192, 35x at K = 256.
inline harness::Tolerance tolerance_for(std::int64_t K, double alpha, double beta) {
  const double u = kUnitRoundoff;
  const double k = static_cast<double>(K);
  return {u * (std::abs(alpha) * (4.0 * k + 8.0 * std::sqrt(k)) + 4.0 * std::abs(beta)),
          4.0 * u};
}

// Per dtype (kernels::gemm::TcDType), with u = 2^-24 (FP32 accumulation, as above):
//
//   f32:  the bound above.
//   tf32: abs += |alpha| 4 u_t sqrt(K), u_t = 2^-11 (TF32 unit roundoff). The cpu
//         reference and `mma` round the inputs alike (nearest, ties away), so their
//         products agree exactly and the f32 bound would do; the extra term is for an
//         implementation that rounds the inputs differently (cuBLAS's TF32 path may
//         truncate; `wgmma` does: the tensor core reads the upper 19 bits of each float),
//         whose products then differ by up to 2^-10 relative per operand:
//         errors of standard deviation <= 2^-10 / sqrt(3) * sqrt(2) * sqrt(K) / 3
//         ~ 2.7e-4 sqrt(K), and 4 u_t sqrt K ~ 2e-3 sqrt K is 7 of those.
//         Truncation is also biased (each product shrinks by ~ln2 2^-10 on average), an
//         error of ~6.8e-4 |C|: at the largest |C| of an 8192^2 result (~5.8 sigma,
//         1.9 sqrt K) about 1.3e-3 sqrt K, still inside the term (measured: tf32 wgmma
//         passed against cuBLAS tf32 at 4096^3 and 8192^3, and against the cpu reference).
//   bf16, f16: C is rounded to the output type (u_o = 2^-8 bf16, 2^-11 f16) once on each
//         side: got = fl(x1), ref = fl(x2), |x1 - x2| <= e (the FP32 bound), so
//         |got - ref| <= u_o |x1| + e + u_o |x2| <= 2 u_o |ref| + (1 + 2 u_o) e:
//         rel = 2 u_o + 4 u, abs = 1.1 x the FP32 bound (beta's term: C is exact in
//         the type). A one-ulp difference (2 u_o relative) is the most two correct
//         roundings can differ by; a wrong layout, a missed k tile, a doubled tile or
//         an element off by more than 2 ulps fails (gemm_plugin_test checks such cases).
//   fp8_e4m3 (alpha = 1, beta = 0; inputs dequantized to ~U[-1, 1], see gemm_fp8.hpp): the
//         bf16 rule (C rounded to bf16 once on each side, FP32 sums) plus abs += 2^-11 sqrt K
//         for the tensor cores' fp8 accumulation inside each K step of 128: they keep ~14
//         significant bits (DeepSeek-V3 report), i.e. truncate the running block sum (|s| up
//         to ~4 after 128 products of std 1/3) by up to ~2^-13 |s| per k32 wgmma. Per block
//         4 such truncations of one sign, ~6e-4 (std); the K / 128 blocks' errors have random
//         signs: ~5.3e-5 sqrt K in all, and 2^-11 sqrt K (4.9e-4 sqrt K, 0.031 at K = 4096) is
//         ~9 of those. The double reference has none of it; cuBLASLt (reference above 2^30
//         multiply-adds) promotes likewise. Next to |C| ~ sqrt(K) / 3 (21 at K = 4096) the
//         rel term 2^-7 |C| still dominates for typical elements; a missed or doubled K step
//         (~sqrt(128) / 3 = 3.8) or a missing scale (x 172032) fails everywhere.
inline harness::Tolerance tolerance_for(kernels::gemm::TcDType dtype, std::int64_t K, double alpha, double beta) {
  using kernels::gemm::TcDType;
  harness::Tolerance t = tolerance_for(K, alpha, beta);
  const double k = static_cast<double>(K);
  switch (dtype) {
    case TcDType::f32: break;
    case TcDType::tf32: t.abs += std::abs(alpha) * 4.0 * (1.0 / 2048.0) * std::sqrt(k); break;
    case TcDType::bf16:
    case TcDType::f16: {
      const double uo = dtype == TcDType::bf16 ? 1.0 / 256.0 : 1.0 / 2048.0;
      t.abs *= 1.1;
      t.rel = 2.0 * uo + 4.0 * kUnitRoundoff;
      break;
    }
    case TcDType::fp8_e4m3:
      t.abs = 1.1 * t.abs + (1.0 / 2048.0) * std::sqrt(k);
      t.rel = 2.0 / 256.0 + 4.0 * kUnitRoundoff;
      break;
  }
  return t;
}

inline constexpr const char* kToleranceRule =
    "u = 2^-24. f32: abs = u (|alpha| (4K + 8 sqrt K) + 4 |beta|), rel = 4u: FP32 summation in k "
    "order errs ~ u K / 7.3 (std) on U[-1,1] inputs, so 4uK holds > 7 sigma; a single missed "
    "product or TF32 rounding still exceeds it. tf32: the f32 rule + |alpha| 4 2^-11 sqrt K (inputs "
    "rounded to TF32 differently by another implementation). bf16/f16: abs = 1.1 x the f32 abs, "
    "rel = 2 u_o + 4u (u_o = 2^-8 bf16, 2^-11 f16): both sides round C once to the type, at most "
    "one ulp apart. fp8_e4m3 (bf16 C, inputs dequantized to ~U[-1,1]): the bf16 rule + 2^-11 sqrt K "
    "(the tensor cores' ~14-bit sums inside each 128-long K step). Reference: double on the rounded "
    "(fp8: dequantized) inputs (tf32: inputs rounded to TF32, "
    "nearest/ties away) while M N K <= 2^30, cuBLAS in the same dtype above (derivation: "
    "gemm_tolerance.hpp)";

// The cpu reference (double accumulation) is used up to this many multiply-adds; above it
// cuBLAS (FP32, its own rounding, covered by the tolerance) is the reference.
inline constexpr double kCpuReferenceMaxMacs = 1073741824.0;  // 2^30, e.g. 1024^3

// The cpu variant is skipped above this (2^34 multiply-adds are ~10 s on 16 cores).
inline constexpr double kCpuVariantMaxMacs = 17179869184.0;  // 2^34

}  // namespace plugins::gemm
