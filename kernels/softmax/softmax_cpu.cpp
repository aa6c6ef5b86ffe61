// The softmax reference on the host: max, sum and exp in double, each output rounded to
// f32 once. An all -inf row has max -inf: its outputs are NaN (the contract of softmax.hpp).
#include <cmath>
#include <limits>
#include <vector>

#include "softmax/softmax.hpp"

namespace kernels::softmax {

void cpu(std::int64_t rows, std::int64_t cols, const float* x, float* y) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < cols; ++j) m = std::fmax(m, static_cast<double>(xr[j]));
    if (m == -std::numeric_limits<double>::infinity()) {
      for (std::int64_t j = 0; j < cols; ++j) yr[j] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    double s = 0;
    for (std::int64_t j = 0; j < cols; ++j) s += std::exp(static_cast<double>(xr[j]) - m);
    for (std::int64_t j = 0; j < cols; ++j) yr[j] = static_cast<float>(std::exp(static_cast<double>(xr[j]) - m) / s);
  }
}

void cpu_bf16(std::int64_t rows, std::int64_t cols, const __nv_bfloat16* x, __nv_bfloat16* y) {
  // Rounded once, from double to bf16 (double -> f32 -> bf16 could round twice).
  std::vector<float> xr(static_cast<std::size_t>(cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < cols; ++j) xr[static_cast<std::size_t>(j)] = __bfloat162float(x[r * cols + j]);
    const float* xs = xr.data();
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < cols; ++j) m = std::fmax(m, static_cast<double>(xs[j]));
    double s = 0;
    if (m != -std::numeric_limits<double>::infinity())
      for (std::int64_t j = 0; j < cols; ++j) s += std::exp(static_cast<double>(xs[j]) - m);
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = m == -std::numeric_limits<double>::infinity()
                           ? std::numeric_limits<double>::quiet_NaN()
                           : std::exp(static_cast<double>(xs[j]) - m) / s;
      y[r * cols + j] = __double2bfloat16(v);
    }
  }
}

}  // namespace kernels::softmax
