#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "stream/stream.hpp"

namespace kernels::stream {

void run_cpu(Op op, std::size_t n, float q, const float* x, const float* y, float* out,
             unsigned threads) {
  threads = std::max(1u, threads);
  const std::size_t chunk = (n + threads - 1) / threads;
  auto body = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      switch (op) {
        case Op::copy: out[i] = x[i]; break;
        case Op::scale: out[i] = q * x[i]; break;
        case Op::add: out[i] = x[i] + y[i]; break;
        case Op::triad: out[i] = std::fma(q, y[i], x[i]); break;
      }
    }
  };
  if (threads == 1 || n < (1u << 16)) {
    body(0, n);
    return;
  }
  std::vector<std::jthread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(n, t * chunk);
    const std::size_t end = std::min(n, begin + chunk);
    if (begin < end) pool.emplace_back(body, begin, end);
  }
}

}  // namespace kernels::stream
