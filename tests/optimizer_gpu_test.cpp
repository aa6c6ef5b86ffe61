// Every CUDA optimizer variant against the double CPU reference: single tensors of odd
// lengths (float4 tails), the odd_tensors list (misaligned tensor starts, chunks ending
// mid-tensor), the seed Transformer's 260 tensors, both updates, with and without bias
// correction. Label gpu; skips without a device.
#include <gtest/gtest.h>

#include "family_gpu_check.hpp"
#include "test_support.hpp"

namespace {

harness::Params optimizer_params(const char* update, const char* layout, std::int64_t n, bool bias_correction) {
  harness::Params p;
  p.set("update", std::string(update));
  p.set("layout", std::string(layout));
  p.set("n", n);
  p.set("bias_correction", bias_correction);
  return harness::test::params_of(harness::test::problem_named("optimizer"), p);
}

TEST(OptimizerGpu, EveryVariantMatchesTheReference) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  for (const std::int64_t n : {1, 2, 3, 5, 4097, 8191, 8193, 1000003}) {
    EXPECT_EQ(harness::test::check_cuda_variants_against_cpu("optimizer", optimizer_params("adam", "single", n, true)), 3);
    EXPECT_EQ(harness::test::check_cuda_variants_against_cpu("optimizer", optimizer_params("sgd", "single", n, true)), 1);
  }
  EXPECT_EQ(harness::test::check_cuda_variants_against_cpu("optimizer", optimizer_params("adam", "single", 4099, false)), 3);
  EXPECT_EQ(harness::test::check_cuda_variants_against_cpu("optimizer", optimizer_params("adam", "odd_tensors", 1, true)), 3);
  EXPECT_EQ(harness::test::check_cuda_variants_against_cpu("optimizer", optimizer_params("sgd", "odd_tensors", 1, true)), 1);
  EXPECT_EQ(harness::test::check_cuda_variants_against_cpu("optimizer", optimizer_params("adam", "seed_transformer", 1, true)), 3);
}

}  // namespace
