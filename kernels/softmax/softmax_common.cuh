#pragma once
// Device helpers shared by the softmax kernels: the online (max, sum) statistic of
// Milakov & Gimelshein, "Online normalizer calculation for softmax" (2018).
//
// A MaxSum {m, s} summarizes a set of elements: m = their max, s = sum exp(x - m).
// The empty set (or one holding only -inf) is {-inf, 0}. Whenever m is finite, s >= 1
// (the max element contributes exp(0) = 1), so s == 0 exactly when m == -inf; the guards
// below keep (-inf) - (-inf) = NaN out of s, so a row with some -inf elements is fine and
// only a row of nothing but -inf ends with m = -inf, whose outputs exp(x - m) / s are NaN.
#include <cmath>
#include <cstdint>

namespace kernels::softmax::detail {

struct MaxSum {
  float m;
  float s;
};

__device__ __forceinline__ MaxSum empty_stat() { return {-INFINITY, 0.0f}; }

// Adds one element: one exp per element. A larger x rescales the old sum by exp(m - x).
__device__ __forceinline__ void push(MaxSum& a, float x) {
  if (x > a.m) {
    a.s = a.s * expf(a.m - x) + 1.0f;  // a.m = -inf: 0 * 0 + 1
    a.m = x;
  } else if (a.m != -INFINITY) {       // else x = a.m = -inf: contributes nothing
    a.s += expf(x - a.m);
  }
}

// Merges two summaries: both sums rescaled to the larger max.
__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return empty_stat();
  const float sa = a.s == 0.0f ? 0.0f : a.s * expf(a.m - m);
  const float sb = b.s == 0.0f ? 0.0f : b.s * expf(b.m - m);
  return {m, sa + sb};
}

// Butterfly over the 32 lanes of a warp (every lane must be active): every lane ends
// with the summary of the whole warp.
__device__ __forceinline__ MaxSum warp_combine(MaxSum a) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    MaxSum b;
    b.m = __shfl_xor_sync(0xFFFFFFFFu, a.m, offset);
    b.s = __shfl_xor_sync(0xFFFFFFFFu, a.s, offset);
    a = combine(a, b);
  }
  return a;
}

// The output of one element given its row's summary (NaN when the row is all -inf).
__device__ __forceinline__ float normalize(float x, MaxSum row) { return expf(x - row.m) / row.s; }

__host__ __device__ constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace kernels::softmax::detail
