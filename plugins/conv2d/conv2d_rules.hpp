#pragma once
// The conv2d problems' tolerance and limits, in a header so that the tests check against
// exactly the rules the harness uses.
#include <cmath>
#include <cstdint>

#include "harness/problem.hpp"

namespace plugins::conv2d {

inline constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // FP32: 2^-24

// Image sides and the element limits (int indexing in the kernels, 4 GiB per f32 tensor).
inline constexpr std::int64_t kMaxSide = 65536;
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 30;

// Products summed per output: S^2 (single channel) or C S^2 (layer), S = 2r + 1.
inline double products(std::int64_t channels, std::int64_t radius) {
  const double s = 2.0 * static_cast<double>(radius) + 1.0;
  return static_cast<double>(channels) * s * s;
}

// Inputs and mask/filters are uniform in [-1, 1], every kernel accumulates n products in
// FP32, the reference in double. This is the gemm family's bound with K -> n (derivation in
// plugins/gemm/gemm_tolerance.hpp): the partial sums are random walks, the FP32 error of a
// sum of n products has a standard deviation of about u n / 7.3, and abs = u (4n + 8 sqrt n)
// is > 7 sigma; rel = 4u covers the final rounding. A missed, doubled or shifted tap adds
// |m x| (typically 1/4, far above the bound), and TF32 rounding (2^-11 per operand) errs
// ~ 1.3e-4 sqrt(n) (std): ~100x the bound at n = 9, ~20x at n = 576.
// cudnn_algo: any allows cuDNN's FFT and Winograd algorithms, whose transforms round
// differently (errors grow with the transform size, not only with n); their cases get 16x
// the bound. The factor is a margin chosen, not derived: if an FFT/Winograd result
// fails by more, the check says so (and the cudnn line on stderr names the algorithm).
inline harness::Tolerance tolerance_for(double n, bool any_algo) {
  const double u = kUnitRoundoff, f = any_algo ? 16.0 : 1.0;
  return {f * u * (4.0 * n + 8.0 * std::sqrt(n)), f * 4.0 * u};
}

inline constexpr const char* kToleranceRule =
    "abs = u (4n + 8 sqrt n), rel = 4u, u = 2^-24, n = products per output (S^2, or C S^2 for the layer): "
    "an FP32 sum of n products of U[-1,1] values errs ~ u n / 7.3 (std), the gemm bound with K = n; "
    "16x that with cudnn_algo: any (FFT/Winograd transforms; a margin, not derived)";

}  // namespace plugins::conv2d
