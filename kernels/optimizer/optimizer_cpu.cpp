// Host side of the optimizer family: the constants, the descriptors of a fused launch,
// and the double-precision references.
#include <cmath>

#include "optimizer/optimizer.hpp"

namespace kernels::optimizer {

AdamConfig make_adam_config(double lr, double b1, double b2, double eps, std::int64_t step, bool bias_correction) {
  const double c1 = bias_correction ? 1.0 - std::pow(b1, static_cast<double>(step)) : 1.0;
  const double c2 = bias_correction ? 1.0 - std::pow(b2, static_cast<double>(step)) : 1.0;
  return {static_cast<float>(lr), static_cast<float>(b1), static_cast<float>(1.0 - b1), static_cast<float>(b2),
          static_cast<float>(1.0 - b2), static_cast<float>(eps), static_cast<float>(c1), static_cast<float>(c2)};
}

std::vector<TensorDesc> fused_descriptors(const std::vector<std::int64_t>& sizes, float* w, const float* g, float* m,
                                          float* v, std::int64_t& chunks) {
  std::vector<TensorDesc> d;
  d.reserve(sizes.size());
  std::int64_t offset = 0;
  chunks = 0;
  for (const std::int64_t n : sizes) {
    if (n <= 0) continue;  // an empty tensor has no chunk (and must not own a block)
    d.push_back({w + offset, g + offset, m + offset, v + offset, n, chunks});
    chunks += (n + kFusedChunk - 1) / kFusedChunk;
    offset += n;
  }
  return d;
}

void cpu_sgd(float* w, const float* g, std::size_t n, double lr) {
  for (std::size_t i = 0; i < n; ++i) w[i] = static_cast<float>(static_cast<double>(w[i]) - lr * g[i]);
}

void cpu_adam(float* w, const float* g, float* m, float* v, std::size_t n, double lr, double b1, double b2,
              double eps, std::int64_t step, bool bias_correction) {
  const double c1 = bias_correction ? 1.0 - std::pow(b1, static_cast<double>(step)) : 1.0;
  const double c2 = bias_correction ? 1.0 - std::pow(b2, static_cast<double>(step)) : 1.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double gi = g[i];
    const double mi = b1 * m[i] + (1.0 - b1) * gi;
    const double vi = b2 * v[i] + (1.0 - b2) * gi * gi;
    w[i] = static_cast<float>(w[i] - lr * (mi / c1) / (std::sqrt(vi / c2) + eps));
    m[i] = static_cast<float>(mi);
    v[i] = static_cast<float>(vi);
  }
}

}  // namespace kernels::optimizer
