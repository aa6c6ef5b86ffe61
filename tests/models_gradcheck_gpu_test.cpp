// The engine's ops and layers on a real device (label gpu): every op's backward against
// central finite differences in double precision on small shapes, the float paths (our
// GEMM kernels, cuBLAS, flash and naive attention) against the double results, and the
// autograd mechanics (accumulation, no-grad, parameter gradients across calls).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "models/context.hpp"
#include "models/layers.hpp"
#include "models/ops.hpp"
#include "models/tensor.hpp"
#include "models_test_support.hpp"

namespace {

using namespace models;

using test::randn;

Tensor make(const Shape& s, DType dt, std::uint64_t seed, double scale = 1.0, bool grad = true) {
  auto v = randn(static_cast<std::size_t>(numel_of(s)), seed, scale);
  Tensor t = dt == DType::f64 ? Tensor::from_host(v, s) : Tensor::from_host(std::vector<float>(v.begin(), v.end()), s);
  if (grad) t.set_requires_grad(true);
  return t;
}

// L = sum_i w_i f(inputs)_i with fixed random w (w = 1 for a one-element output).
double objective(const Tensor& out, const std::vector<double>& w) {
  const auto o = out.to_host();
  double s = 0;
  for (std::size_t i = 0; i < o.size(); ++i) s += o[i] * w[i];
  return s;
}

struct GradCheckReport {
  double max_abs_err = 0;
  double max_rel_err = 0;
  int checked = 0;
};

// Central differences (h = 1e-6) on up to `per_input` elements of each input, against the
// analytic gradient from backward(). Double precision throughout.
GradCheckReport gradcheck(const std::string& what, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          std::vector<Tensor> inputs, int per_input = 12, double atol = 1e-6, double rtol = 1e-5) {
  for (auto& t : inputs) t.zero_grad();
  Tensor out = f(inputs);
  std::vector<double> w(static_cast<std::size_t>(out.numel()), 1.0);
  Tensor seed;
  if (out.numel() > 1) {
    w = randn(w.size(), 99);
    seed = Tensor::from_host(w, out.shape());
  }
  backward(out, seed);
  out = Tensor();
  GradCheckReport rep;
  const double h = 1e-6;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    Tensor& x = inputs[k];
    if (!x.requires_grad()) continue;
    const auto g = x.grad().defined() ? x.grad().to_host() : std::vector<double>(static_cast<std::size_t>(x.numel()), 0.0);
    auto xv = x.to_host();
    const std::size_t n = xv.size();
    const std::size_t step = std::max<std::size_t>(1, n / static_cast<std::size_t>(per_input));
    for (std::size_t i = 0; i < n; i += step) {
      const double orig = xv[i];
      double lp, lm;
      {
        NoGradGuard ng;
        xv[i] = orig + h;
        x.copy_from_host(xv.data(), xv.size() * sizeof(double));
        lp = objective(f(inputs), w);
        xv[i] = orig - h;
        x.copy_from_host(xv.data(), xv.size() * sizeof(double));
        lm = objective(f(inputs), w);
        xv[i] = orig;
        x.copy_from_host(xv.data(), xv.size() * sizeof(double));
      }
      const double num = (lp - lm) / (2 * h);
      const double err = std::abs(num - g[i]);
      rep.max_abs_err = std::max(rep.max_abs_err, err);
      rep.max_rel_err = std::max(rep.max_rel_err, err / std::max(1e-12, std::abs(num)));
      ++rep.checked;
      EXPECT_LE(err, atol + rtol * std::abs(num))
          << what << ": input " << k << " element " << i << ": analytic " << g[i] << ", numeric " << num;
    }
  }
  std::printf("[gradcheck] %-34s %3d elements, max |analytic - numeric| = %.2e (max rel %.2e)\n", what.c_str(),
              rep.checked, rep.max_abs_err, rep.max_rel_err);
  return rep;
}

// A current Context with the `simple` GEMM backend for every test.
class ModelsGpu : public test::ContextTest {
 protected:
  ModelsGpu() : ContextTest("simple") {}
};

constexpr DType D = DType::f64;

TEST_F(ModelsGpu, GradAdd) {
  gradcheck("add", [](const auto& in) { return add(in[0], in[1]); }, {make({3, 5}, D, 1), make({3, 5}, D, 2)});
}

TEST_F(ModelsGpu, GradLinearSimpleAndCublas) {
  for (const char* backend : {"simple", "cublas"}) {
    context_->set_gemm(backend);
    gradcheck(std::string("linear (gemm ") + backend + ")", [](const auto& in) { return linear(in[0], in[1], in[2]); },
              {make({2, 3, 7}, D, 3), make({7, 5}, D, 4), make({5}, D, 5)});
  }
}

TEST_F(ModelsGpu, GradReluGelu) {
  // Inputs kept away from relu's kink at 0.
  auto v = randn(40, 6);
  for (auto& x : v) x = x >= 0 ? x + 0.1 : x - 0.1;
  Tensor x = Tensor::from_host(v, {5, 8});
  x.set_requires_grad(true);
  gradcheck("relu", [](const auto& in) { return relu(in[0]); }, {x});
  gradcheck("gelu", [](const auto& in) { return gelu(in[0]); }, {make({5, 8}, D, 7)});
}

TEST_F(ModelsGpu, GradLayerNorm) {
  gradcheck("layer_norm", [](const auto& in) { return layer_norm(in[0], in[1], in[2]); },
            {make({6, 16}, D, 8), make({16}, D, 9), make({16}, D, 10)});
}

// The fused ops (ops.hpp bias_act, add_layer_norm). Rows 150 span three 64-row chunks of
// the bias gradient's two-stage column sum; 7 rows fit in one.
TEST_F(ModelsGpu, GradBiasAct) {
  for (std::int64_t rows : {7, 150}) {
    const std::string tag = " rows " + std::to_string(rows);
    // x + b kept away from relu's kink at 0 (b is 0.05 at most in magnitude here).
    auto v = randn(static_cast<std::size_t>(rows * 9), 40);
    for (auto& x : v) x = x >= 0 ? x + 0.2 : x - 0.2;
    Tensor x = Tensor::from_host(v, {rows, 9});
    x.set_requires_grad(true);
    gradcheck("bias_act relu" + tag, [](const auto& in) { return bias_act(in[0], in[1], Activation::relu); },
              {x, make({9}, D, 41, 0.02)});
    gradcheck("bias_act gelu" + tag, [](const auto& in) { return bias_act(in[0], in[1], Activation::gelu); },
              {make({rows, 9}, D, 42), make({9}, D, 43)});
    gradcheck("bias_act identity" + tag, [](const auto& in) { return bias_act(in[0], in[1], Activation::identity); },
              {make({rows, 9}, D, 44), make({9}, D, 45)});
  }
  // The fused Linear + activation as the Transformer's feed-forward block runs it.
  gradcheck("linear + bias_act gelu",
            [](const auto& in) { return bias_act(linear(in[0], in[1], Tensor()), in[2], Activation::gelu); },
            {make({2, 3, 7}, D, 46), make({7, 5}, D, 47), make({5}, D, 48)});
}

TEST_F(ModelsGpu, GradAddLayerNorm) {
  for (std::int64_t cols : {1, 16, 1100})  // 1100 > 1024: the kernel's re-reading path
    gradcheck("add_layer_norm cols " + std::to_string(cols),
              [](const auto& in) { return add_layer_norm(in[0], in[1], in[2], in[3]); },
              {make({6, cols}, D, 50), make({6, cols}, D, 51), make({cols}, D, 52), make({cols}, D, 53)}, 8);
  gradcheck("add_layer_norm rows 130", [](const auto& in) { return add_layer_norm(in[0], in[1], in[2], in[3]); },
            {make({130, 10}, D, 57), make({130, 10}, D, 58), make({10}, D, 59), make({10}, D, 60)}, 8);
  // x also feeding the residual's other branch (x + relu-free f(x)): gradients accumulate.
  gradcheck("add_layer_norm(x, gelu(x))",
            [](const auto& in) { return add_layer_norm(in[0], gelu(in[0]), in[1], in[2]); },
            {make({5, 12}, D, 54), make({12}, D, 55), make({12}, D, 56)});
}

TEST_F(ModelsGpu, GradEmbeddingAndPositions) {
  Tensor ids = Tensor::from_host(std::vector<std::int32_t>{1, 3, 3, 0, 2, 1}, {2, 3});
  gradcheck("embedding + positions", [&](const auto& in) { return embedding(ids, in[0], true); }, {make({4, 6}, D, 11)});
  gradcheck("positional_encoding", [](const auto& in) { return positional_encoding(in[0]); }, {make({2, 3, 6}, D, 12)});
}

TEST_F(ModelsGpu, GradLosses) {
  Tensor targets = Tensor::from_host(std::vector<std::int32_t>{0, 4, 2, 1, 3}, {5});
  gradcheck("cross_entropy", [&](const auto& in) { return cross_entropy(in[0], targets); }, {make({5, 6}, D, 13)});
  Tensor target = make({4, 5}, D, 14, 1.0, false);
  gradcheck("mse_loss", [&](const auto& in) { return mse_loss(in[0], target); }, {make({4, 5}, D, 15)});
}

TEST_F(ModelsGpu, GradAttention) {
  for (bool causal : {false, true})
    gradcheck(std::string("self_attention") + (causal ? " causal" : ""),
              [&](const auto& in) { return self_attention(in[0], 2, causal); }, {make({2, 5, 3 * 8}, D, 16)}, 24);
  gradcheck("cross_attention", [](const auto& in) { return cross_attention(in[0], in[1], in[2], 2); },
            {make({2, 5, 8}, D, 17), make({2, 5, 8}, D, 18), make({2, 5, 8}, D, 19)});
}

TEST_F(ModelsGpu, GradViewAndReuse) {
  // x used twice (gradient accumulation inside the graph) and through a view.
  gradcheck("add(x, x).view", [](const auto& in) { return add(in[0], in[0]).view({15}); }, {make({3, 5}, D, 20)});
}

TEST_F(ModelsGpu, GradEncoderDecoderTransformer) {
  TransformerConfig c = test::sized(7, 8, 2, 12, 2, 2);
  c.activation = Activation::gelu;
  c.dtype = D;
  Transformer model(c, 3);
  Tensor src = Tensor::from_host(std::vector<std::int32_t>{2, 3, 4, 5, 6, 2, 2, 3}, {2, 4});
  Tensor tin = Tensor::from_host(std::vector<std::int32_t>{1, 2, 3, 4, 1, 6, 2, 2}, {2, 4});
  Tensor tout = Tensor::from_host(std::vector<std::int32_t>{2, 3, 4, 5, 6, 2, 2, 3}, {8});
  auto params = model.parameters();
  // Every parameter tensor, a few elements each (parameters are used in place by the model),
  // with the fused layers (the default) and the separate ops.
  for (bool fused : {true, false}) {
    context_->set_fused(fused);
    gradcheck(std::string("transformer (2+2 layers, all params") + (fused ? ", fused)" : ", unfused)"),
              [&](const auto&) { return cross_entropy(model(src, tin), tout); }, params, 3);
  }
}

// ---- float paths against double ----------------------------------------------------------

std::vector<double> host_gemm(bool ta, bool tb, int M, int N, int K, const std::vector<double>& A,
                              const std::vector<double>& B) {
  std::vector<double> C(static_cast<std::size_t>(M * N), 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += (ta ? A[k * M + i] : A[i * K + k]) * (tb ? B[j * K + k] : B[k * N + j]);
      C[i * N + j] = s;
    }
  return C;
}

TEST_F(ModelsGpu, FloatGemmBackendsAllTransposes) {
  const int M = 37, N = 45, K = 29;
  const auto a = randn(static_cast<std::size_t>(M * K), 21), b = randn(static_cast<std::size_t>(K * N), 22);
  for (const auto& backend : gemm_backends()) {
    context_->set_gemm(backend);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        Tensor A = Tensor::from_host(std::vector<float>(a.begin(), a.end()), {ta ? K : M, ta ? M : K});
        Tensor B = Tensor::from_host(std::vector<float>(b.begin(), b.end()), {tb ? N : K, tb ? K : N});
        Tensor C = fill({M, N}, DType::f32, 1.0);
        gemm(ta, tb, M, N, K, 1.0, A, B, 0.5, C);  // C = A B + 0.5 * 1
        const auto ref = host_gemm(ta, tb, M, N, K, a, b);
        const auto got = C.to_host();
        double worst = 0;
        for (std::size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(got[i] - (ref[i] + 0.5)));
        EXPECT_LE(worst, 1e-4) << backend << " ta=" << ta << " tb=" << tb;
      }
    std::printf("[gemm] %-10s NN/NT/TN/TT with beta: ok\n", backend.c_str());
  }
}

// The same graph in float (each GEMM backend, flash and naive attention) and in double:
// loss and gradients agree to float accuracy.
TEST_F(ModelsGpu, FloatTransformerMatchesDouble) {
  auto run = [&](DType dt, const std::string& gemm_name, AttentionImpl attn, bool fused = true) {
    context_->set_gemm(gemm_name);
    context_->set_attention(attn);
    context_->set_fused(fused);
    Transformer model(test::float_vs_double_model(dt), 5);
    std::vector<std::int32_t> s(3 * 9), t(3 * 9);
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::int32_t>(2 + (i * 7) % 9), t[i] = static_cast<std::int32_t>(1 + (i * 5) % 10);
    Tensor src = Tensor::from_host(s, {3, 9}), tin = Tensor::from_host(t, {3, 9}), tout = Tensor::from_host(s, {27});
    Tensor loss = cross_entropy(model(src, tin), tout);
    return test::loss_and_gradients(model, loss);
  };
  const auto ref = run(DType::f64, "simple", AttentionImpl::flash);
  double gnorm = 0;
  for (double g : ref.second) gnorm = std::max(gnorm, std::abs(g));
  for (const auto& backend : gemm_backends())
    for (AttentionImpl attn : {AttentionImpl::flash, AttentionImpl::flash_tf32x3, AttentionImpl::naive}) {
      const auto got = run(DType::f32, backend, attn);
      double worst = 0;
      for (std::size_t i = 0; i < ref.second.size(); ++i) worst = std::max(worst, std::abs(got.second[i] - ref.second[i]));
      std::printf("[float vs double] gemm %-10s attention %-12s loss %.7f (double %.7f), max grad err %.2e (max |g| "
                  "%.2e)\n", backend.c_str(), attention_impl_name(attn), got.first, ref.first, worst, gnorm);
      EXPECT_NEAR(got.first, ref.first, 1e-4 * std::abs(ref.first)) << backend;
      EXPECT_LE(worst, 2e-3 * gnorm + 1e-5) << backend;
    }
  // The separate (unfused) ops in float and in double: the same model and loss.
  const auto ref_unfused = run(DType::f64, "simple", AttentionImpl::flash, false);
  EXPECT_NEAR(ref_unfused.first, ref.first, 1e-10 * std::abs(ref.first));
  double fused_vs_unfused = 0;
  for (std::size_t i = 0; i < ref.second.size(); ++i)
    fused_vs_unfused = std::max(fused_vs_unfused, std::abs(ref_unfused.second[i] - ref.second[i]));
  EXPECT_LE(fused_vs_unfused, 1e-10 * gnorm) << "double: fused and unfused gradients differ";
  const auto got = run(DType::f32, "cublas", AttentionImpl::flash, false);
  double worst = 0;
  for (std::size_t i = 0; i < ref.second.size(); ++i) worst = std::max(worst, std::abs(got.second[i] - ref.second[i]));
  std::printf("[unfused] double vs fused double: max grad diff %.2e; float (cublas, flash) loss %.7f, max grad err "
              "%.2e\n", fused_vs_unfused, got.first, worst);
  EXPECT_NEAR(got.first, ref.first, 1e-4 * std::abs(ref.first));
  EXPECT_LE(worst, 2e-3 * gnorm + 1e-5);
}

// ---- autograd mechanics -------------------------------------------------------------------

TEST_F(ModelsGpu, NoGradRecordsNothing) {
  Tensor x = make({4, 4}, D, 30);
  {
    NoGradGuard ng;
    Tensor y = relu(add(x, x));
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
  }
  Tensor y = relu(add(x, x));
  EXPECT_TRUE(y.requires_grad());
  ASSERT_NE(y.grad_fn(), nullptr);
}

TEST_F(ModelsGpu, ParameterGradientsAccumulateAcrossBackwardCalls) {
  Tensor W = make({3, 2}, D, 31), x = make({4, 3}, D, 32, 1.0, false), t = make({4, 2}, D, 33, 1.0, false);
  backward(mse_loss(linear(x, W, Tensor()), t));
  const auto g1 = W.grad().to_host();
  backward(mse_loss(linear(x, W, Tensor()), t));
  const auto g2 = W.grad().to_host();
  for (std::size_t i = 0; i < g1.size(); ++i) EXPECT_NEAR(g2[i], 2 * g1[i], 1e-12);
  W.zero_grad();
  EXPECT_FALSE(W.grad().defined());
}

TEST_F(ModelsGpu, CachingAllocatorReusesBlocks) {
  auto& a = context_->allocator();
  { Tensor t = Tensor::empty({1000}, DType::f32); }
  const auto mallocs = a.stats().cuda_malloc_calls;
  for (int i = 0; i < 10; ++i) { Tensor t = Tensor::empty({1000}, DType::f32); }
  EXPECT_EQ(a.stats().cuda_malloc_calls, mallocs);
  EXPECT_GE(a.stats().cache_hits, 10u);
}

}  // namespace
