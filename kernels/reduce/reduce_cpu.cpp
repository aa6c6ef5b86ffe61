// Host references of the reduction (reduce.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "reduce/reduce.hpp"

namespace kernels::reduce {
namespace {

// Pairwise summation in double: error <= ceil(log2 n) * 2^-53 * sum|x|, which for
// n <= 2^31 is below 2^-47 * sum|x|: far under the single rounding to float.
double pairwise(const float* x, std::size_t n) {
  if (n <= 8) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += x[i];
    return s;
  }
  const std::size_t h = n / 2;
  return pairwise(x, h) + pairwise(x + h, n - h);
}

}  // namespace

float reduce_cpu_f32(Op op, const float* x, std::size_t n) {
  if (op == Op::sum) return static_cast<float>(pairwise(x, n));
  float m = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

unsigned reduce_cpu_u32_sum(const unsigned* x, std::size_t n) {
  unsigned s = 0;
  for (std::size_t i = 0; i < n; ++i) s += x[i];  // modulo 2^32, as the device does
  return s;
}

}  // namespace kernels::reduce
