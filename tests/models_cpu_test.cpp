// Host-only parts of the engine (label cpu): allocator size classes, the learning-rate
// schedule, the checked calls and their exceptions, the GEMM backends (the kernels/gemm
// table), and the train_transformer problem's registration, parameters and the
// translation of the engine's exceptions into the harness's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gemm/gemm_table.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "models/allocator.hpp"
#include "models/check.hpp"
#include "models/context.hpp"
#include "models/mfu.hpp"
#include "models/optim.hpp"
#include "models/trainer.hpp"
#include "nn/nn.hpp"
#include "nn/nn_fused.hpp"
#include "test_support.hpp"

namespace {

TEST(ModelsCpu, SizeClasses) {
  using models::CachingAllocator;
  EXPECT_EQ(CachingAllocator::size_class(1), 512u);
  EXPECT_EQ(CachingAllocator::size_class(512), 512u);
  EXPECT_EQ(CachingAllocator::size_class(513), 1024u);
  EXPECT_EQ(CachingAllocator::size_class(1 << 20), 1u << 20);
  EXPECT_EQ(CachingAllocator::size_class((1 << 20) + 1), 2u << 20);
  EXPECT_EQ(CachingAllocator::size_class(5'000'000), 5u << 20);
}

TEST(ModelsCpu, WarmupCosineSchedule) {
  models::WarmupCosine s{1.0, 10, 110, 0.1};
  EXPECT_DOUBLE_EQ(s.at(0), 0.1);
  EXPECT_DOUBLE_EQ(s.at(9), 1.0);
  EXPECT_NEAR(s.at(10), 1.0, 1e-12);
  EXPECT_NEAR(s.at(60), 0.55, 1e-12);  // half way: (1 + 0.1) / 2
  EXPECT_NEAR(s.at(110), 0.1, 1e-12);
  EXPECT_NEAR(s.at(1000), 0.1, 1e-12);
}

// The fused elementwise tails (issue 18) are on by default and can be switched off per
// case (fused: false), down to the trainer's Context.
TEST(ModelsCpu, TrainTransformerHasAFusedParameter) {
  const auto* p = harness::Registry::instance().find_problem("train_transformer");
  ASSERT_NE(p, nullptr);
  auto params = harness::with_defaults(p->params(), {});
  EXPECT_TRUE(params.get_bool("fused"));
  params.set("fused", false);
  EXPECT_EQ(p->reject(params), std::nullopt);
  EXPECT_NE(params.describe().find("fused=false"), std::string::npos) << params.describe();
  EXPECT_TRUE(models::TrainConfig{}.fused);
  models::Context c;
  EXPECT_TRUE(c.fused());
  c.set_fused(false);
  EXPECT_FALSE(c.fused());
}

// The batched bias gradient is on unless HARNESS_BIAS_GRAD_BATCH=0, and the setter
// overrides the environment (ModelsFused.BatchedBiasGradientAgreesBitwise uses it).
TEST(ModelsCpu, BiasGradientRowBatchFollowsTheEnvironmentAndTheSetter) {
  namespace nn = kernels::nn;
  const char* e = std::getenv("HARNESS_BIAS_GRAD_BATCH");
  const bool expected = e == nullptr || *e == '\0' || std::string(e) != "0";
  EXPECT_EQ(nn::bias_grad_row_batch(), expected);
  nn::set_bias_grad_row_batch(!expected);
  EXPECT_EQ(nn::bias_grad_row_batch(), !expected);
  nn::set_bias_grad_row_batch(expected);
  EXPECT_EQ(nn::bias_grad_row_batch(), expected);
}

// The fused kernels' host side: scratch sizes, and bad arguments refused before any launch
// (these calls touch no device).
TEST(ModelsCpu, FusedKernelsCheckArgumentsBeforeLaunching) {
  namespace nn = kernels::nn;
  constexpr auto bad = cudaErrorInvalidValue;
  EXPECT_EQ(nn::bias_act_backward_workspace(64, 10), 0u);  // one 64-row chunk: no partials
  EXPECT_EQ(nn::bias_act_backward_workspace(65, 10), 20u);
  EXPECT_EQ(nn::bias_act_backward_workspace(-1, 10), 0u);
  EXPECT_EQ(nn::layernorm_param_grads_workspace(130, 7), 2u * 3u * 7u);  // two sums, three chunks
  float f = 0;
  EXPECT_EQ((nn::bias_act_forward<float, float>(nn::Act::relu, &f, &f, &f, -1, 4, nullptr)), bad);
  EXPECT_EQ((nn::bias_act_forward<float, float>(nn::Act::relu, nullptr, &f, &f, 2, 4, nullptr)), bad);
  EXPECT_EQ((nn::bias_act_forward<float, float>(nn::Act::relu, nullptr, nullptr, nullptr, 0, 4, nullptr)), cudaSuccess);
  EXPECT_EQ((nn::bias_act_backward<float, float>(nn::Act::gelu, &f, &f, &f, &f, nullptr, &f, nullptr, 2, 3, nullptr)),
            bad);  // no dbias
  EXPECT_EQ((nn::bias_act_backward<float, float>(nn::Act::gelu, nullptr, &f, &f, &f, &f, &f, nullptr, 2, 3, nullptr)),
            bad);  // gelu needs x
  EXPECT_EQ((nn::bias_act_backward<float, float>(nn::Act::identity, nullptr, nullptr, &f, nullptr, &f, nullptr,
                                                  nullptr, 65, 3, nullptr)),
            bad);  // two chunks need the workspace
  EXPECT_EQ((nn::bias_act_backward<float, float>(nn::Act::relu, &f, &f, &f, &f, &f, &f, nullptr, 2, 0, nullptr)),
            cudaSuccess);  // no columns: nothing to do
  EXPECT_EQ((nn::layernorm_param_grads<float, float>(&f, &f, &f, &f, &f, nullptr, &f, nullptr, 2, 3, nullptr)), bad);
  EXPECT_EQ((nn::layernorm_param_grads<float, float>(&f, nullptr, &f, &f, &f, &f, &f, nullptr, 2, 3, nullptr)), bad);
  EXPECT_EQ((nn::add_layernorm_forward<float, float>(&f, &f, &f, &f, &f, &f, nullptr, nullptr, 3, 0, 1e-5f, nullptr)),
            bad);  // no columns
  EXPECT_EQ((nn::add_layernorm_forward<float, float>(&f, &f, &f, &f, &f, &f, &f, nullptr, 3, 4, 1e-5f, nullptr)),
            bad);  // mean without rstd
  EXPECT_EQ((nn::add_layernorm_forward<float, float>(&f, nullptr, &f, &f, &f, &f, nullptr, nullptr, 3, 4, 1e-5f,
                                                      nullptr)),
            bad);  // no residual
  EXPECT_EQ((nn::add_layernorm_forward<double, double>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                        nullptr, 0, 4, 1e-5, nullptr)),
            cudaSuccess);  // no rows
  EXPECT_EQ(nn::layernorm_backward_dx<float>(&f, &f, &f, &f, &f, nullptr, 2, 4, nullptr), bad);
  EXPECT_EQ(nn::layernorm_backward_dx<float>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 4, nullptr),
            cudaSuccess);
  EXPECT_EQ(nn::layernorm_backward_dx_bf16(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 2, 4, nullptr), bad);
}

TEST(ModelsCpu, TrainTransformerIsRegistered) {
  const auto& reg = harness::Registry::instance();
  const auto* p = reg.find_problem("train_transformer");
  ASSERT_NE(p, nullptr);
  for (const char* v : {"ours", "cublas_flash", "naive_attention"})
    EXPECT_NE(reg.find_variant("train_transformer", v), nullptr) << v;
  const auto params = harness::with_defaults(p->params(), {});
  EXPECT_EQ(params.get_int("batch"), 100);
  EXPECT_EQ(params.get_int("seq_len"), 13);
  EXPECT_EQ(params.get_int("vocab"), 6880);
  EXPECT_EQ(p->reference_variant(params), "cublas_flash");
  const auto w = p->work(params);
  EXPECT_GT(w.flops, 3e11);  // ~6 * tokens * parameters
  EXPECT_LT(w.flops, 6e11);
  harness::Params odd = params;
  odd.set("heads", std::int64_t{7});
  EXPECT_EQ(p->reject(odd).value_or(""), "d_model (512) must be a multiple of heads (7)");
}

// The dense bf16 peak of MFU (models/mfu.hpp; reports/harness_report.py dense_bf16_peak is
// the same formula, tests/reports_scripts_test.py checks the same figures).
TEST(ModelsCpu, DenseBf16PeakAndModelFlopsUtilization) {
  // An H200 / H100 SXM as the harness records them: 132 SMs, 1980 MHz maximum SM clock.
  const models::TensorPeak h200 = models::dense_bf16_peak(9, 0, 132, 1980000, "NVIDIA H200");
  ASSERT_TRUE(h200.known());
  EXPECT_DOUBLE_EQ(h200.tflops, 132.0 * 4096 * 1.98e9 * 1e-12);  // 1070.5
  EXPECT_EQ(h200.source, "sm_90 dense bf16 tensor cores: 132 SMs x 4096 FLOP/clk x 1980 MHz (cudaDevAttrClockRate, "
                         "the maximum SM clock)");
  // The datasheet's 989.4 TFLOP/s is the same formula at 1830 MHz.
  EXPECT_NEAR(models::dense_bf16_peak(9, 0, 132, 1830000).tflops, 989.4, 0.1);
  const auto mfu = models::model_flops_utilization(4.14e12, 0.0189, h200);
  ASSERT_TRUE(mfu.has_value());
  EXPECT_NEAR(*mfu, 4.14e12 / 0.0189 / 1070.5e12, 1e-4);
  for (const auto& [major, minor, name] : {std::tuple{8, 0, "NVIDIA A100-SXM4-80GB"}, std::tuple{8, 9, "NVIDIA L4"},
                                           std::tuple{10, 0, "NVIDIA B200"}, std::tuple{9, 0, "NVIDIA H20"}}) {
    const models::TensorPeak p = models::dense_bf16_peak(major, minor, 100, 1500000, name);
    EXPECT_FALSE(p.known()) << name;
    EXPECT_EQ(p.source.rfind("peak unknown: ", 0), 0u) << p.source;
    EXPECT_FALSE(models::model_flops_utilization(1e12, 0.01, p).has_value());
  }
  EXPECT_NE(models::dense_bf16_peak(8, 0, 108, 1410000).source.find("sm_80 is not in the table"), std::string::npos);
  EXPECT_FALSE(models::dense_bf16_peak(9, 0, 0, 1980000).known());
  EXPECT_FALSE(models::model_flops_utilization(1e12, 0.0, h200).has_value());
  // Without a device the query says why instead of throwing.
  const models::TensorPeak none = models::dense_bf16_peak_of_device(0);
  if (!none.known()) {
    EXPECT_EQ(none.source.rfind("peak unknown: ", 0), 0u) << none.source;
  }
}

TEST(ModelsCpu, CheckedCudaCallThrowsWithCallSiteAndStickiness) {
  const int line = __LINE__ + 2;
  try {
    MODELS_CUDA(cudaErrorIllegalAddress);
    FAIL() << "no exception";
  } catch (const models::CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("models_cpu_test.cpp:" + std::to_string(line) + ": cudaErrorIllegalAddress failed: "),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("(cudaErrorIllegalAddress)"), std::string::npos) << what;
    EXPECT_EQ(e.code(), static_cast<int>(cudaErrorIllegalAddress));
    EXPECT_TRUE(e.sticky());
    EXPECT_FALSE(e.cublas());
  }
  try {
    MODELS_CUDA(cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const models::CudaError& e) {
    EXPECT_FALSE(e.sticky());
    EXPECT_NE(std::string(e.what()).find("(cudaErrorInvalidValue)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(MODELS_CUDA(cudaErrorMemoryAllocation), models::OutOfMemory);
  EXPECT_NO_THROW(MODELS_CUDA(cudaSuccess));
  EXPECT_TRUE(models::is_sticky(cudaErrorLaunchFailure));
  EXPECT_FALSE(models::is_sticky(cudaErrorNoDevice));
}

TEST(ModelsCpu, CheckedCublasCallThrows) {
  try {
    MODELS_CUBLAS(CUBLAS_STATUS_INVALID_VALUE);
    FAIL() << "no exception";
  } catch (const models::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_INVALID_VALUE failed: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(CUBLAS_STATUS_INVALID_VALUE)"), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), static_cast<int>(CUBLAS_STATUS_INVALID_VALUE));
    EXPECT_TRUE(e.cublas());
    EXPECT_FALSE(e.sticky());
  }
  EXPECT_THROW(MODELS_CUBLAS(CUBLAS_STATUS_ALLOC_FAILED), models::OutOfMemory);
  EXPECT_NO_THROW(MODELS_CUBLAS(CUBLAS_STATUS_SUCCESS));
}

// The backends are cuBLAS, every kernel of the kernels/gemm table in its order, and the
// simple nn GEMM.
TEST(ModelsCpu, GemmBackendsComeFromTheKernelTable) {
  std::vector<std::string> expected = {"cublas"};
  for (const auto& k : kernels::gemm::fp32_kernels()) expected.emplace_back(k.name);
  expected.emplace_back("simple");
  expected.emplace_back("auto");
  EXPECT_EQ(models::gemm_backends(), expected);
  for (const char* name : {"cublas", "naive", "atomic", "tiled", "vectorized", "coarsened", "simple", "auto"})
    EXPECT_NE(std::find(expected.begin(), expected.end(), name), expected.end()) << name;
}

// Without a device the engine's first cudaMalloc fails with a models::CudaError; what
// leaves the variant's launch must be the harness's exception (the runner classifies
// those), non-sticky here.
TEST(ModelsCpu, TrainTransformerLaunchThrowsHarnessErrors) {
  if (harness::test::have_device()) GTEST_SKIP() << "a CUDA device is present (the no-device path is not taken)";
  const auto& reg = harness::Registry::instance();
  const auto* p = reg.find_problem("train_transformer");
  const auto* v = reg.find_variant("train_transformer", "ours");
  ASSERT_NE(p, nullptr);
  ASSERT_NE(v, nullptr);
  const auto params = harness::with_defaults(p->params(), {});
  auto instance = p->make_instance(params, 1);
  harness::LaunchContext ctx;
  ctx.params = &params;
  try {
    harness::launch_on(*v, *instance, ctx);
    FAIL() << "the launch ran without a device";
  } catch (const harness::CudaError& e) {
    EXPECT_FALSE(e.sticky());
    EXPECT_NE(std::string(e.what()).find("failed: "), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    FAIL() << "not translated into harness::CudaError: " << e.what();
  }
}

}  // namespace
