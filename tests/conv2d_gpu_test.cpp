// Every CUDA conv2d variant (cudnn too, where built with cuDNN) against the double CPU
// reference: the single-channel ladder at odd image sizes (1x1, smaller than the mask, not
// multiples of the tiles, wider than tall and the reverse; W % 4 != 0 and W % 4 == 0, the
// tiled kernels' scalar and 16-byte paths) and every radius;
// the layer form at odd channel counts (C, K not multiples of the chunk or of the 32
// filters per block) and every radius. Label gpu; skips without a device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "family_gpu_check.hpp"
#include "test_support.hpp"

namespace {

harness::Params single_params(std::int64_t h, std::int64_t w, std::int64_t r, const char* algos = "summation") {
  harness::Params p;
  p.set("H", h);
  p.set("W", w);
  p.set("radius", r);
  p.set("cudnn_algo", std::string(algos));
  return harness::test::params_of(harness::test::problem_named("conv2d"), p);
}

harness::Params layer_params(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t k,
                             std::int64_t r, const char* algos = "summation") {
  harness::Params p;
  p.set("N", n);
  p.set("C", c);
  p.set("H", h);
  p.set("W", w);
  p.set("K", k);
  p.set("radius", r);
  p.set("cudnn_algo", std::string(algos));
  return harness::test::params_of(harness::test::problem_named("conv2d_layer"), p);
}

TEST(Conv2dGpu, EverySingleChannelVariantAtOddSizesAndEveryRadius) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  // The first row: W % 4 != 0 (the tiled kernels' scalar path); the second: W % 4 == 0 (their
  // 16-byte path), W not a multiple of the 128 / 120 output columns of a tile, H not of 32.
  const std::pair<std::int64_t, std::int64_t> sizes[] = {
      {1, 1},   {2, 3},  {5, 7},  {9, 33},  {33, 9},  {31, 65},  {67, 35}, {257, 129}, {1001, 999},
      {1, 4},   {3, 8},  {7, 12}, {37, 132}, {70, 244}, {33, 260}, {129, 124}, {95, 1028}};
  for (std::int64_t r = 1; r <= 4; ++r)
    for (const auto& [h, w] : sizes)
      EXPECT_GE(harness::test::check_cuda_variants_against_cpu("conv2d", single_params(h, w, r)), 5)
          << h << "x" << w << " r=" << r;
}

TEST(Conv2dGpu, EveryLayerVariantAtOddShapesAndEveryRadius) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  struct Shape {
    std::int64_t n, c, h, w, k;
  };
  const Shape shapes[] = {
      {1, 1, 1, 1, 1}, {1, 3, 5, 7, 5}, {2, 9, 17, 13, 33}, {3, 5, 23, 31, 65}, {2, 64, 14, 14, 64}};
  for (std::int64_t r = 1; r <= 4; ++r)
    for (const Shape& s : shapes)
      EXPECT_GE(
          harness::test::check_cuda_variants_against_cpu("conv2d_layer", layer_params(s.n, s.c, s.h, s.w, s.k, r)), 2)
          << "N=" << s.n << " C=" << s.c << " H=" << s.h << " W=" << s.w << " K=" << s.k << " r=" << r;
}

// cuDNN free to pick FFT / Winograd (cudnn_algo: any, 16x tolerance): the suite's main layer
// shape and a 5x5 one. The line on stderr names the algorithm it picked.
TEST(Conv2dGpu, CudnnAnyAlgorithmWithinItsTolerance) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  EXPECT_GE(harness::test::check_cuda_variants_against_cpu("conv2d_layer", layer_params(8, 64, 56, 56, 64, 1, "any")),
            2);
  EXPECT_GE(harness::test::check_cuda_variants_against_cpu("conv2d_layer", layer_params(2, 32, 28, 28, 48, 2, "any")),
            2);
  EXPECT_GE(harness::test::check_cuda_variants_against_cpu("conv2d", single_params(1001, 999, 1, "any")), 5);
}

}  // namespace
