// Every CUDA softmax variant (cudnn too, where built with cuDNN) against the double CPU
// reference at odd shapes, row lengths 1 to 2^16, the seed configuration's shapes, and the
// hostile inputs (huge values, rows of -inf). Label gpu; skips without a device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "family_gpu_check.hpp"
#include "test_support.hpp"

namespace {

harness::Params softmax_params(std::int64_t rows, std::int64_t cols, const char* inputs) {
  harness::Params p;
  p.set("rows", rows);
  p.set("cols", cols);
  p.set("inputs", std::string(inputs));
  return harness::test::params_of(harness::test::problem_named("softmax"), p);
}

TEST(SoftmaxGpu, EveryVariantMatchesTheReferenceAtOddShapes) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 1},    {3, 2},     {37, 13},   {9, 31},  {5, 33},
                                                          {11, 1023}, {3, 1024},  {7, 4097},  {2, 6880}, {2, 65535},
                                                          {1, 65536}, {10400, 13}, {13, 6880}};
  for (const auto& [rows, cols] : shapes)
    EXPECT_GE(harness::test::check_cuda_variants_against_cpu("softmax", softmax_params(rows, cols, "uniform")), 5);
}

TEST(SoftmaxGpu, HugeValuesAndNegInfRows) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  // cuDNN's result for a row of only -inf is not documented; measured on an H200
  // (cuDNN 9, 2026-11-23) it writes 0 where ours and PyTorch give NaN, so cudnn is left
  // out of the neg_inf rows here (suites/softmax.yaml runs it in its own case).
  for (const char* inputs : {"huge", "neg_inf"}) {
    const std::vector<std::string> except = std::string(inputs) == "neg_inf" ? std::vector<std::string>{"cudnn"}
                                                                                : std::vector<std::string>{};
    for (const std::int64_t cols : {1, 2, 13, 64, 4097, 65536})
      EXPECT_GE(harness::test::check_cuda_variants_against_cpu("softmax", softmax_params(9, cols, inputs), except), 5);
  }
}

// bf16 (register_row; the f32-only rungs skip with their reason): every path of the
// dispatch (cols <= 32 groups, warp per row with 8-element packs and scalar, block per
// row, the long-row kernel), odd row counts, and the hostile inputs. cuDNN's bf16 softmax
// has its own test below.
harness::Params bf16_params(std::int64_t rows, std::int64_t cols, const char* inputs) {
  harness::Params p = softmax_params(rows, cols, inputs);
  p.set("dtype", std::string("bf16"));
  return harness::test::params_of(harness::test::problem_named("softmax"), p);
}

TEST(SoftmaxGpu, Bf16RegisterRowMatchesTheReference) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 1},    {37, 3},   {33, 13},   {9, 31},   {5, 33},
                                                          {7, 120},  {11, 1023}, {3, 1024}, {3, 1032}, {7, 4097},
                                                          {2, 6880}, {5, 8192}, {2, 16384}, {2, 16385}, {1, 65536}};
  for (const auto& [rows, cols] : shapes)
    EXPECT_EQ(harness::test::check_cuda_variants_against_cpu("softmax", bf16_params(rows, cols, "uniform"), {"cudnn"}),
              1);
  for (const char* inputs : {"huge", "neg_inf"})
    for (const std::int64_t cols : {1, 13, 64, 4097, 8192, 20000})
      EXPECT_EQ(harness::test::check_cuda_variants_against_cpu("softmax", bf16_params(9, cols, inputs), {"cudnn"}), 1);
}

// f32 register_row at the boundaries of its dispatch (group widths, packs per lane,
// block-per-row sizes, the long-row fallback), at aligned and odd lengths.
TEST(SoftmaxGpu, RegisterRowAtEveryDispatchBoundary) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  for (const std::int64_t cols : {2, 4, 5, 8, 9, 16, 17, 32, 33, 128, 129, 256, 257, 512, 513, 1024, 1025, 2048, 2049,
                                  4096, 8192, 8193, 16384, 16385})
    EXPECT_GE(harness::test::check_cuda_variants_against_cpu("softmax", softmax_params(13, cols, "uniform")), 6);
}

// cuDNN's legacy softmax with CUDNN_DATA_BFLOAT16: documented support for bf16 there is
// not something this repository has verified; an unsupported status is a skip with the
// reason, a wrong answer a failure.
TEST(SoftmaxGpu, Bf16CudnnWhereSupported) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  const harness::Variant* v = harness::Registry::instance().find_variant("softmax", "cudnn");
  ASSERT_NE(v, nullptr);
  if (v->constraint && v->constraint(bf16_params(1, 1, "uniform"))) GTEST_SKIP() << "no cuDNN in this build";
  for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{37, 13}, {7, 4097}, {3, 8192}}) {
    try {
      harness::test::check_cuda_variants_against_cpu("softmax", bf16_params(rows, cols, "uniform"),
                                                     {"register_row"});
    } catch (const std::exception& e) {
      GTEST_SKIP() << "cuDNN bf16 softmax: " << e.what();
    }
  }
}

}  // namespace
