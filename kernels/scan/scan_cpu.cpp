// Host references of the inclusive scan (scan.hpp).
#include "scan/scan.hpp"

namespace kernels::scan {

void scan_cpu_f32(const float* x, float* y, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    s += x[i];
    y[i] = static_cast<float>(s);
  }
}

void scan_cpu_u32(const unsigned* x, unsigned* y, std::size_t n) {
  unsigned s = 0;
  for (std::size_t i = 0; i < n; ++i) y[i] = s += x[i];  // modulo 2^32
}

}  // namespace kernels::scan
