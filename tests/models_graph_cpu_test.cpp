// Host-only parts of the CUDA-graph training step (issue 18, label cpu): the trainer's
// configuration errors (raised before anything touches the device), the multi-tensor
// Adam's argument checks and step scalars, and the train_transformer problem's `graph`
// parameter.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "harness/registry.hpp"
#include "models/trainer.hpp"
#include "nn/nn.hpp"

namespace {

std::string construction_error(const models::TrainConfig& c, cudaStream_t stream) {
  try {
    models::TransformerTrainer t(c, stream);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ModelsGraphCpu, GraphNeedsANonDefaultStream) {
  models::TrainConfig c;
  c.graph = true;
  const std::string e = construction_error(c, nullptr);
  EXPECT_NE(e.find("graph: true needs a non-default stream"), std::string::npos) << e;
  EXPECT_NE(construction_error(c, cudaStreamLegacy).find("non-default stream"), std::string::npos);
}

TEST(ModelsGraphCpu, GraphNeedsAWarmUpStep) {
  models::TrainConfig c;
  c.graph = true;
  c.graph_warmup_steps = 0;
  const std::string e = construction_error(c, nullptr);
  EXPECT_NE(e.find("graph_warmup_steps must be >= 1"), std::string::npos) << e;
  EXPECT_NE(e.find("not 0"), std::string::npos) << e;
}

TEST(ModelsGraphCpu, MultiTensorAdamRejectsBadArgumentsBeforeLaunching) {
  namespace nn = kernels::nn;
  float p = 0, g = 0, m = 0, v = 0;
  nn::AdamStepScalars* scalars = reinterpret_cast<nn::AdamStepScalars*>(&p);  // never read: rejected first
  nn::AdamTensorList<float> list;
  list.count = nn::AdamTensorList<float>::kMaxTensors + 1;
  EXPECT_EQ(nn::adam_multi_tensor<float>(list, scalars, 0.9f, 0.98f, 1e-9f, 0.f, nullptr), cudaErrorInvalidValue);
  list.count = 1;
  list.n[0] = -1;
  EXPECT_EQ(nn::adam_multi_tensor<float>(list, scalars, 0.9f, 0.98f, 1e-9f, 0.f, nullptr), cudaErrorInvalidValue);
  list.n[0] = 1;
  list.p[0] = &p;
  list.g[0] = &g;
  list.m[0] = &m;
  list.v[0] = nullptr;  // a null array where elements exist
  EXPECT_EQ(nn::adam_multi_tensor<float>(list, scalars, 0.9f, 0.98f, 1e-9f, 0.f, nullptr), cudaErrorInvalidValue);
  list.v[0] = &v;
  EXPECT_EQ(nn::adam_multi_tensor<float>(list, nullptr, 0.9f, 0.98f, 1e-9f, 0.f, nullptr), cudaErrorInvalidValue);
  list.n[0] = 0;  // nothing to update: no launch, success
  EXPECT_EQ(nn::adam_multi_tensor<float>(list, scalars, 0.9f, 0.98f, 1e-9f, 0.f, nullptr), cudaSuccess);
  EXPECT_EQ(nn::adam_set_scalars(nullptr, {}, nullptr), cudaErrorInvalidValue);
  nn::TensorChunkList<float> chunks;
  chunks.count = nn::TensorChunkList<float>::kMaxTensors + 1;
  EXPECT_EQ(nn::sum_squares_multi_tensor<float>(chunks, &p, nullptr), cudaErrorInvalidValue);
  chunks.count = 1;
  chunks.n[0] = 4;  // x[0] is null
  EXPECT_EQ(nn::sum_squares_multi_tensor<float>(chunks, &p, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(nn::clip_by_norm_multi_tensor<float>(chunks, &p, 1.f, nullptr), cudaErrorInvalidValue);
  chunks.x[0] = &p;
  EXPECT_EQ(nn::clip_by_norm_multi_tensor<float>(chunks, nullptr, 1.f, nullptr), cudaErrorInvalidValue);
  std::int32_t counter = 0;
  EXPECT_EQ(nn::log_scalar<float>(&p, &p, &counter, 0, nullptr), cudaErrorInvalidValue);
}

// The bias corrections as adam_step computes them: double tensors from the double betas,
// float tensors from the betas rounded to float (1 - b^t in double, rounded once).
TEST(ModelsGraphCpu, AdamStepScalars) {
  const auto s = kernels::nn::adam_step_scalars(2e-4, 0.9, 0.98, 3);
  EXPECT_DOUBLE_EQ(s.lr, 2e-4);
  EXPECT_DOUBLE_EQ(s.bc1, 1.0 - 0.9 * 0.9 * 0.9);
  EXPECT_DOUBLE_EQ(s.bc2, 1.0 - std::pow(0.98, 3));
  EXPECT_EQ(s.lr_f, 2e-4f);
  EXPECT_EQ(s.bc1_f, static_cast<float>(1.0 - std::pow(static_cast<double>(0.9f), 3)));
  EXPECT_EQ(s.bc2_f, static_cast<float>(1.0 - std::pow(static_cast<double>(0.98f), 3)));
}

TEST(ModelsGraphCpu, TrainTransformerHasAGraphParameter) {
  const auto* p = harness::Registry::instance().find_problem("train_transformer");
  ASSERT_NE(p, nullptr);
  bool found = false;
  for (const auto& spec : p->params()) {
    if (spec.name != "graph") continue;
    found = true;
    EXPECT_EQ(spec.type, harness::ParamType::boolean);
    EXPECT_EQ(std::get<bool>(spec.default_value), false);
    EXPECT_TRUE(spec.reject(harness::ParamValue{true}) == std::nullopt);
    EXPECT_TRUE(spec.reject(harness::ParamValue{std::string("maybe")}).has_value());
  }
  EXPECT_TRUE(found);
  auto params = harness::with_defaults(p->params(), {});
  EXPECT_FALSE(params.get_bool("graph"));
  params.set("graph", true);
  EXPECT_EQ(p->reject(params), std::nullopt);
  EXPECT_NE(params.describe().find("graph=true"), std::string::npos) << params.describe();
}

}  // namespace
