#pragma once
// The gemm problem's tolerance and reference rules, in a header so that the tests check
// kernels against exactly the bound the harness uses.
#include <cmath>
#include <cstdint>

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

inline constexpr const char* kToleranceRule =
    "abs = u (|alpha| (4K + 8 sqrt K) + 4 |beta|), rel = 4u, u = 2^-24: FP32 summation in k "
    "order errs ~ u K / 7.3 (std) on U[-1,1] inputs, so 4uK holds > 7 sigma; a single "
    "missed product or TF32 rounding still exceeds it (derivation: gemm_tolerance.hpp)";

// The cpu reference (double accumulation) is used up to this many multiply-adds; above it
// cuBLAS (FP32, its own rounding, covered by the tolerance) is the reference.
inline constexpr double kCpuReferenceMaxMacs = 1073741824.0;  // 2^30, e.g. 1024^3

// The cpu variant is skipped above this (2^34 multiply-adds are ~10 s on 16 cores).
inline constexpr double kCpuVariantMaxMacs = 17179869184.0;  // 2^34

}  // namespace plugins::gemm
