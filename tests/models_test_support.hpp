#pragma once
// Set-up shared by the models GPU tests: the skip without a device, a fixture that keeps a
// models::Context current for the whole test, and the model / training configurations that
// several tests use.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "models/context.hpp"
#include "models/layers.hpp"
#include "models/tensor.hpp"
#include "models/trainer.hpp"
#include "test_support.hpp"

// First statement of a GPU test: skips it (with the reason) where no CUDA device exists.
#define REQUIRE_GPU() \
  if (!::harness::test::have_device()) GTEST_SKIP() << "no CUDA device: GPU test skipped"

namespace models::test {

// n draws of N(0, scale^2) from mt19937_64(seed): the inputs of the float-against-double
// and gradient checks.
inline std::vector<double> randn(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(0.0, scale);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// A Transformer of these sizes (the other fields at their defaults: f32, ReLU).
inline TransformerConfig sized(std::int64_t vocab, std::int64_t d_model, int heads, std::int64_t hidden,
                               int encoder_layers, int decoder_layers) {
  TransformerConfig c;
  c.vocab = vocab;
  c.d_model = d_model;
  c.heads = heads;
  c.hidden = hidden;
  c.encoder_layers = encoder_layers;
  c.decoder_layers = decoder_layers;
  return c;
}

// The encoder-decoder of the float-against-double comparisons: vocab 11, d_model 64, 2 heads
// (head_dim 32: flash has a kernel), hidden 96, 1 + 1 layers, parameters in dtype.
inline TransformerConfig float_vs_double_model(DType dtype) {
  TransformerConfig c = sized(11, 64, 2, 96, 1, 1);
  c.dtype = dtype;
  return c;
}

// A small configuration of the benchmark's training step: vocab 500, d_model 128, 4 heads,
// hidden 256, 2 + 2 layers, batch 16, sequences of 13, the given GEMM backend.
inline TrainConfig small_step_config(std::string gemm) {
  TrainConfig c;
  c.model = sized(500, 128, 4, 256, 2, 2);
  c.batch = 16;
  c.seq_len = 13;
  c.gemm = std::move(gemm);
  return c;
}

// backward(loss), then the loss and every parameter gradient of model, flattened in
// parameters() order (what the float-against-double comparisons compare).
inline std::pair<double, std::vector<double>> loss_and_gradients(const Module& model, const Tensor& loss) {
  backward(loss);
  std::vector<double> grads;
  for (const auto& p : model.parameters()) {
    const auto g = p.grad().to_host();
    grads.insert(grads.end(), g.begin(), g.end());
  }
  return {loss.item(), grads};
}

// A fixture whose tests run with a current Context (on the default stream, with the GEMM
// backend given to the constructor), made after the device check: inputs made in the test
// body already use it.
class ContextTest : public ::testing::Test {
 protected:
  explicit ContextTest(std::string gemm = "cublas") : gemm_(std::move(gemm)) {}
  void SetUp() override {
    REQUIRE_GPU();
    context_ = std::make_unique<Context>(nullptr, gemm_);
    scope_ = std::make_unique<ContextScope>(*context_);
  }
  void TearDown() override {
    scope_.reset();
    context_.reset();
  }
  std::string gemm_;
  std::unique_ptr<Context> context_;
  std::unique_ptr<ContextScope> scope_;
};

}  // namespace models::test

// A non-blocking stream for a trainer (graph capture needs one that is not the legacy
// default stream), destroyed with the test.
namespace models_test {

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  ~Stream() { (void)cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

}  // namespace models_test
