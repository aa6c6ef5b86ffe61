// Mixed precision (issue 18), host-only parts (label cpu): precision names and parsing,
// the bf16 dtype, the bf16 kernels' argument checks (they return before launching, so no
// device is needed), and the train_transformer bf16 variants: registered, described, and
// skipped with a reason where flash_tc has no kernel for the head size.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "harness/registry.hpp"
#include "models/precision.hpp"
#include "models/tensor.hpp"
#include "nn/nn_bf16.hpp"

namespace {

using models::DType;
using models::Precision;

TEST(ModelsBf16Cpu, PrecisionNamesRoundTrip) {
  for (Precision p : {Precision::f32, Precision::bf16}) EXPECT_EQ(models::parse_precision(models::precision_name(p)), p);
  EXPECT_STREQ(models::precision_name(Precision::bf16), "bf16");
  EXPECT_EQ(models::activation_dtype(Precision::bf16), DType::bf16);
  EXPECT_EQ(models::activation_dtype(Precision::f32), DType::f32);
}

TEST(ModelsBf16Cpu, UnknownPrecisionIsAnError) {
  try {
    models::parse_precision("fp16");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "unknown precision 'fp16' (f32 or bf16)");
  }
}

TEST(ModelsBf16Cpu, Bf16DType) {
  EXPECT_EQ(models::dtype_size(DType::bf16), 2u);
  EXPECT_STREQ(models::dtype_name(DType::bf16), "bfloat16");
}

TEST(ModelsBf16Cpu, KernelsRejectBadArgumentsBeforeLaunching) {
  namespace nn = kernels::nn;
  EXPECT_EQ(nn::cast_f32_to_bf16(nullptr, nullptr, 4, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(nn::cast_bf16_to_f32(nullptr, nullptr, 0, nullptr), cudaSuccess);  // empty: nothing to do
  EXPECT_EQ(nn::cast_f32_to_bf16_multi(nullptr, nullptr, nullptr, -1, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(nn::cast_f32_to_bf16_multi(nullptr, nullptr, nullptr, 0, nullptr), cudaSuccess);
  const float* src[1] = {nullptr};
  nn::bf16* dst[1] = {nullptr};
  const std::size_t n[1] = {3};
  EXPECT_EQ(nn::cast_f32_to_bf16_multi(src, dst, n, 1, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(nn::bias_add_bf16(nullptr, nullptr, nullptr, -1, 4, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(nn::column_sum_bf16(nullptr, nullptr, 2, 3, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(nn::add_bf16(nullptr, nullptr, nullptr, 8, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(nn::activation_forward_bf16(nn::Act::gelu, nullptr, nullptr, 8, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(nn::activation_backward_bf16(nn::Act::relu, nullptr, nullptr, nullptr, 8, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(nn::layernorm_forward_bf16(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 4, 0, 1e-5f, nullptr),
            cudaErrorInvalidValue);  // cols 0
  float stat = 0;
  EXPECT_EQ(nn::layernorm_forward_bf16(nullptr, nullptr, nullptr, nullptr, &stat, nullptr, 0, 8, 1e-5f, nullptr),
            cudaErrorInvalidValue);  // mean without rstd
  EXPECT_EQ(nn::layernorm_backward_bf16(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 4, 8,
                                        nullptr),
            cudaErrorInvalidValue);
}

TEST(ModelsBf16Cpu, TrainTransformerBf16VariantsAreRegistered) {
  const auto& reg = harness::Registry::instance();
  const auto* p = reg.find_problem("train_transformer");
  ASSERT_NE(p, nullptr);
  auto params = harness::with_defaults(p->params(), {});
  for (const char* name : {"ours_bf16", "cublas_bf16"}) {
    const auto* v = reg.find_variant("train_transformer", name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_NE(v->description.find("bf16"), std::string::npos) << v->description;
    ASSERT_TRUE(v->constraint) << name;
    EXPECT_FALSE(v->constraint(params).has_value()) << name << ": head_dim 64 runs";
    harness::Params d32 = params;
    d32.set("heads", std::int64_t{16});  // 512 / 16 = 32: no flash_tc kernel
    EXPECT_EQ(v->constraint(d32).value_or(""),
              "bf16 flash attention (flash_tc) has kernels for head_dim 64 and 128, not 32 (d_model / heads)");
  }
  EXPECT_NE(p->tolerance_rule().find("bf16"), std::string::npos);
}

}  // namespace
