// The host references: every product and sum in double, each output rounded to f32 once.
// Work is split into bands of 64 output rows of one (n, k) plane, shared by a pool of
// threads (each band summed by one thread in a fixed order: results do not depend on the
// thread count).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "conv2d/conv2d.hpp"

namespace kernels::conv2d {

namespace {

constexpr int kBand = 64;

// One band of rows [i0, i1) of output plane (n, k): sum over c of x[n][c] (*) f[k][c].
void band(const LayerShape& s, int n, int k, int i0, int i1, const float* x, const float* f, float* y,
          std::vector<double>& acc) {
  const int r = s.r, side = 2 * r + 1;
  const std::size_t hw = static_cast<std::size_t>(s.h) * static_cast<std::size_t>(s.w);
  acc.assign(static_cast<std::size_t>(i1 - i0) * static_cast<std::size_t>(s.w), 0.0);
  for (int c = 0; c < s.c; ++c) {
    const float* xc =
        x + (static_cast<std::size_t>(n) * static_cast<std::size_t>(s.c) + static_cast<std::size_t>(c)) * hw;
    const float* fc = f + (static_cast<std::size_t>(k) * static_cast<std::size_t>(s.c) + static_cast<std::size_t>(c)) *
                              static_cast<std::size_t>(side * side);
    for (int a = 0; a < side; ++a)
      for (int b = 0; b < side; ++b) {
        const double m = fc[a * side + b];
        // Output columns j whose tap j + b - r is inside the image: zero padding elsewhere.
        const int jlo = std::max(0, r - b), jhi = std::min(s.w, s.w + r - b);
        for (int i = i0; i < i1; ++i) {
          const int ii = i + a - r;
          if (ii < 0 || ii >= s.h) continue;
          const float* xrow = xc + static_cast<std::size_t>(ii) * static_cast<std::size_t>(s.w);
          double* arow = acc.data() + static_cast<std::size_t>(i - i0) * static_cast<std::size_t>(s.w);
          for (int j = jlo; j < jhi; ++j) arow[j] += m * static_cast<double>(xrow[j + b - r]);
        }
      }
  }
  float* out = y + (static_cast<std::size_t>(n) * static_cast<std::size_t>(s.k) + static_cast<std::size_t>(k)) * hw +
               static_cast<std::size_t>(i0) * static_cast<std::size_t>(s.w);
  for (std::size_t e = 0; e < acc.size(); ++e) out[e] = static_cast<float>(acc[e]);
}

void check(const LayerShape& s, const float* x, const float* f, const float* y) {
  if (s.n < 1 || s.c < 1 || s.h < 1 || s.w < 1 || s.k < 1)
    throw std::invalid_argument("conv2d cpu: sizes must be >= 1 (got N=" + std::to_string(s.n) +
                                " C=" + std::to_string(s.c) + " H=" + std::to_string(s.h) +
                                " W=" + std::to_string(s.w) + " K=" + std::to_string(s.k) + ")");
  if (s.r < 1 || s.r > kMaxRadius)
    throw std::invalid_argument("conv2d cpu: radius must be in 1.." + std::to_string(kMaxRadius) + " (got " +
                                std::to_string(s.r) + ")");
  if (x == nullptr || f == nullptr || y == nullptr) throw std::invalid_argument("conv2d cpu: null pointer");
}

}  // namespace

void layer_cpu(const LayerShape& s, const float* x, const float* filters, float* y) {
  check(s, x, filters, y);
  const int bands = (s.h + kBand - 1) / kBand;
  const std::int64_t tasks = static_cast<std::int64_t>(s.n) * s.k * bands;
  const double macs = static_cast<double>(s.n) * s.k * s.c * s.h * s.w * (2 * s.r + 1) * (2 * s.r + 1);
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (macs < (1 << 20)) threads = 1;  // below ~1M multiply-adds a thread costs more than it saves
  threads = static_cast<unsigned>(std::min<std::int64_t>(threads, tasks));
  std::atomic<std::int64_t> next{0};
  auto worker = [&] {
    std::vector<double> acc;
    for (std::int64_t t = next.fetch_add(1); t < tasks; t = next.fetch_add(1)) {
      const int b = static_cast<int>(t % bands);
      const std::int64_t nk = t / bands;
      const int i0 = b * kBand;
      band(s, static_cast<int>(nk / s.k), static_cast<int>(nk % s.k), i0, std::min(s.h, i0 + kBand), x, filters, y,
           acc);
    }
  };
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
}

void cpu(int h, int w, int r, const float* x, const float* mask, float* y) {
  layer_cpu(LayerShape{1, 1, h, w, 1, r}, x, mask, y);
}

}  // namespace kernels::conv2d
