#pragma once
// Shared by the conv2d kernels: argument checks, the radius dispatch (every kernel is
// instantiated for R = 1..4 so that its mask loops unroll), ceil division.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "conv2d/conv2d.hpp"

namespace kernels::conv2d::detail {

inline constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Sizes the single-channel kernels take: an image of at most INT_MAX elements (int indexing).
inline bool valid_single(int h, int w, int r, const void* x, const void* mask, const void* y) {
  return h >= 1 && w >= 1 && r >= 1 && r <= kMaxRadius && static_cast<std::int64_t>(h) * w <= INT_MAX && x != nullptr &&
         mask != nullptr && y != nullptr;
}

// Calls f(std::integral_constant<int, R>{}) for the runtime radius r (1..4).
template <class F>
cudaError_t dispatch_radius(int r, F&& f) {
  switch (r) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace kernels::conv2d::detail
