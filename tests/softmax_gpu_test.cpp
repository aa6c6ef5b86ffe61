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

}  // namespace
