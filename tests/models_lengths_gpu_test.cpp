// Unequal source and target lengths (issue 18) on a real device (label gpu):
//  - cross_attention with Nq != Nk (48/64, the odd 13/29, and Nq > Nk: 29/13, 64/48),
//    forward and backward, in double (kernels::nn naive) and in float (flash, the
//    kernels/attention naive core, and the nn naive core at head_dim 3), against an
//    independent host reference in double (softmax attention and its gradients written
//    out below), plus central differences of the double op at 13/29;
//  - the whole encoder-decoder Transformer with source 29 / target 13, float (flash and
//    naive) against double: loss and every parameter gradient;
//  - the trainer's copy task with src_len != tgt_len (the target is the first tgt_len
//    source tokens): it trains, counts target tokens, and refuses tgt_len > src_len.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/context.hpp"
#include "models/layers.hpp"
#include "models/ops.hpp"
#include "models/tensor.hpp"
#include "models/trainer.hpp"
#include "models_test_support.hpp"

namespace {

using namespace models;

using test::randn;

Tensor upload(const std::vector<double>& v, const Shape& s, DType dt) {
  return dt == DType::f64 ? Tensor::from_host(v, s) : Tensor::from_host(std::vector<float>(v.begin(), v.end()), s);
}

struct Sizes {
  int B, Nq, Nk, E, H;
};

struct AttentionResult {
  std::vector<double> o, dq, dk, dv;
};

// Host reference in double of cross_attention(q (B, Nq, E), k, v (B, Nk, E), H heads) and of
// the gradients of L = sum(w * out): per (b, h), with d = E / H and head h the columns
// h*d..h*d+d-1, S = q k^T / sqrt(d), P = softmax over keys, O = P v; dP = dO v^T,
// dS = P (dP - rowsum(P dP)), dV = P^T dO, dQ = dS k / sqrt(d), dK = dS^T q / sqrt(d).
AttentionResult host_cross_attention(const Sizes& z, const std::vector<double>& q, const std::vector<double>& k,
                                     const std::vector<double>& v, const std::vector<double>& w) {
  const int d = z.E / z.H;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  AttentionResult r;
  r.o.assign(q.size(), 0.0);
  r.dq.assign(q.size(), 0.0);
  r.dk.assign(k.size(), 0.0);
  r.dv.assign(v.size(), 0.0);
  auto qi = [&](int b, int i, int h, int e) { return (static_cast<std::size_t>(b) * z.Nq + i) * z.E + h * d + e; };
  auto kj = [&](int b, int j, int h, int e) { return (static_cast<std::size_t>(b) * z.Nk + j) * z.E + h * d + e; };
  std::vector<double> P(static_cast<std::size_t>(z.Nk)), dS(P.size());
  for (int b = 0; b < z.B; ++b)
    for (int h = 0; h < z.H; ++h)
      for (int i = 0; i < z.Nq; ++i) {
        double m = -INFINITY;
        for (int j = 0; j < z.Nk; ++j) {
          double s = 0;
          for (int e = 0; e < d; ++e) s += q[qi(b, i, h, e)] * k[kj(b, j, h, e)];
          P[j] = scale * s;
          m = std::max(m, P[j]);
        }
        double sum = 0;
        for (int j = 0; j < z.Nk; ++j) sum += P[j] = std::exp(P[j] - m);
        for (int j = 0; j < z.Nk; ++j) P[j] /= sum;
        double rowsum = 0;  // sum_j P_ij dP_ij
        for (int j = 0; j < z.Nk; ++j) {
          double dp = 0;
          for (int e = 0; e < d; ++e) {
            r.o[qi(b, i, h, e)] += P[j] * v[kj(b, j, h, e)];
            dp += w[qi(b, i, h, e)] * v[kj(b, j, h, e)];
            r.dv[kj(b, j, h, e)] += P[j] * w[qi(b, i, h, e)];
          }
          dS[j] = dp;
          rowsum += P[j] * dp;
        }
        for (int j = 0; j < z.Nk; ++j) {
          const double ds = P[j] * (dS[j] - rowsum);
          for (int e = 0; e < d; ++e) {
            r.dq[qi(b, i, h, e)] += scale * ds * k[kj(b, j, h, e)];
            r.dk[kj(b, j, h, e)] += scale * ds * q[qi(b, i, h, e)];
          }
        }
      }
  return r;
}

// The engine's op on the device in `dt` with attention core choice `impl`.
AttentionResult device_cross_attention(const Sizes& z, DType dt, AttentionImpl impl, const std::vector<double>& q,
                                       const std::vector<double>& k, const std::vector<double>& v,
                                       const std::vector<double>& w) {
  Context context(nullptr, "simple", impl);
  ContextScope scope(context);
  Tensor tq = upload(q, {z.B, z.Nq, z.E}, dt), tk = upload(k, {z.B, z.Nk, z.E}, dt),
         tv = upload(v, {z.B, z.Nk, z.E}, dt);
  for (Tensor* t : {&tq, &tk, &tv}) t->set_requires_grad(true);
  Tensor out = cross_attention(tq, tk, tv, z.H);
  EXPECT_EQ(out.shape(), (Shape{z.B, z.Nq, z.E}));
  backward(out, upload(w, out.shape(), dt));
  AttentionResult r{out.to_host(), tq.grad().to_host(), tk.grad().to_host(), tv.grad().to_host()};
  MODELS_CUDA(cudaDeviceSynchronize());
  return r;
}

double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double x : a) m = std::max(m, std::abs(x));
  return m;
}

// max |got - want| / max |want|
double rel_error(const std::vector<double>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double m = 0;
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) m = std::max(m, std::abs(got[i] - want[i]));
  return m / std::max(1e-300, max_abs(want));
}

class ModelsLengthsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_GPU();
  }
};

TEST_F(ModelsLengthsGpu, CrossAttentionWithUnequalLengthsMatchesHostDouble) {
  struct Case {
    Sizes z;
    DType dt;
    AttentionImpl impl;
    const char* core;  // what attention_core_name must say
    double tol;        // on max |error| / max |reference|, each of o, dq, dk, dv
  };
  std::vector<Case> cases;
  for (auto [nq, nk] : {std::pair{48, 64}, {13, 29}, {29, 13}, {64, 48}, {17, 17}}) {
    cases.push_back({{2, nq, nk, 64, 2}, DType::f64, AttentionImpl::flash, "nn_naive", 1e-12});
    cases.push_back({{2, nq, nk, 64, 2}, DType::f32, AttentionImpl::flash, "flash", 1e-4});
    cases.push_back({{2, nq, nk, 64, 2}, DType::f32, AttentionImpl::flash_tf32x3, "flash_tf32x3", 1e-4});
    cases.push_back({{2, nq, nk, 64, 2}, DType::f32, AttentionImpl::naive, "naive", 1e-4});
    cases.push_back({{3, nq, nk, 6, 2}, DType::f32, AttentionImpl::naive, "nn_naive", 1e-4});  // head_dim 3
  }
  std::uint64_t seed = 100;
  for (const auto& c : cases) {
    const auto& z = c.z;
    const std::size_t nq = static_cast<std::size_t>(z.B) * z.Nq * z.E, nk = static_cast<std::size_t>(z.B) * z.Nk * z.E;
    const auto q = randn(nq, ++seed), k = randn(nk, ++seed), v = randn(nk, ++seed), w = randn(nq, ++seed);
    const auto want = host_cross_attention(z, q, k, v, w);
    {
      Context context(nullptr, "simple", c.impl);
      ContextScope scope(context);
      EXPECT_STREQ(attention_core_name(c.dt, z.Nq, z.Nk, z.E / z.H), c.core);
    }
    const auto got = device_cross_attention(z, c.dt, c.impl, q, k, v, w);
    const double eo = rel_error(got.o, want.o), eq = rel_error(got.dq, want.dq), ek = rel_error(got.dk, want.dk),
                 ev = rel_error(got.dv, want.dv);
    std::printf("[unequal] %-4s %-12s B=%d Nq=%2d Nk=%2d E=%2d H=%d: rel err o %.1e dq %.1e dk %.1e dv %.1e\n",
                c.dt == DType::f64 ? "f64" : "f32", c.core, z.B, z.Nq, z.Nk, z.E, z.H, eo, eq, ek, ev);
    const std::string what = std::string(c.core) + " Nq=" + std::to_string(z.Nq) + " Nk=" + std::to_string(z.Nk);
    EXPECT_LE(eo, c.tol) << what;
    EXPECT_LE(eq, c.tol) << what;
    EXPECT_LE(ek, c.tol) << what;
    EXPECT_LE(ev, c.tol) << what;
  }
}

// Central differences of the double op itself (13 queries, 29 keys) on a few elements of
// each input, against its backward.
TEST_F(ModelsLengthsGpu, CrossAttentionUnequalGradientMatchesFiniteDifferences) {
  Context context(nullptr, "simple");
  ContextScope scope(context);
  const Sizes z{2, 13, 29, 8, 2};
  std::vector<Tensor> in = {upload(randn(2 * 13 * 8, 1), {2, 13, 8}, DType::f64),
                            upload(randn(2 * 29 * 8, 2), {2, 29, 8}, DType::f64),
                            upload(randn(2 * 29 * 8, 3), {2, 29, 8}, DType::f64)};
  for (auto& t : in) t.set_requires_grad(true);
  const auto w = randn(2 * 13 * 8, 4);
  auto objective = [&] {
    const auto o = cross_attention(in[0], in[1], in[2], z.H).to_host();
    double s = 0;
    for (std::size_t i = 0; i < o.size(); ++i) s += o[i] * w[i];
    return s;
  };
  backward(cross_attention(in[0], in[1], in[2], z.H), Tensor::from_host(w, {2, 13, 8}));
  int checked = 0;
  double worst = 0;
  for (std::size_t t = 0; t < in.size(); ++t) {
    const auto g = in[t].grad().to_host();
    auto x = in[t].to_host();
    for (std::size_t i = 0; i < x.size(); i += x.size() / 9) {
      const double orig = x[i], h = 1e-6;
      double lp, lm;
      {
        NoGradGuard ng;
        x[i] = orig + h;
        in[t].copy_from_host(x.data(), x.size() * sizeof(double));
        lp = objective();
        x[i] = orig - h;
        in[t].copy_from_host(x.data(), x.size() * sizeof(double));
        lm = objective();
        x[i] = orig;
        in[t].copy_from_host(x.data(), x.size() * sizeof(double));
      }
      const double num = (lp - lm) / (2 * h);
      worst = std::max(worst, std::abs(num - g[i]));
      EXPECT_NEAR(g[i], num, 1e-6 + 1e-5 * std::abs(num)) << "input " << t << " element " << i;
      ++checked;
    }
  }
  std::printf("[unequal] finite differences, Nq=13 Nk=29: %d elements, max |analytic - numeric| %.1e\n", checked,
              worst);
}

// The encoder-decoder Transformer with source 29 / target 13: float (flash, naive) against
// double, loss and every parameter gradient (the tolerances of FloatTransformerMatchesDouble).
TEST_F(ModelsLengthsGpu, FloatTransformerWithUnequalLengthsMatchesDouble) {
  const int B = 3, Ns = 29, Nt = 13;
  auto run = [&](DType dt, AttentionImpl attn) {
    Context context(nullptr, dt == DType::f64 ? "simple" : "cublas", attn);
    ContextScope scope(context);
    Transformer model(test::float_vs_double_model(dt), 5);
    std::vector<std::int32_t> s(B * Ns), t(B * Nt), o(B * Nt);
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::int32_t>(2 + (i * 7) % 9);
    for (std::size_t i = 0; i < t.size(); ++i)
      t[i] = static_cast<std::int32_t>(1 + (i * 5) % 10), o[i] = static_cast<std::int32_t>(2 + (i * 3) % 9);
    Tensor src = Tensor::from_host(s, {B, Ns}), tin = Tensor::from_host(t, {B, Nt}), tout = Tensor::from_host(o, {B * Nt});
    Tensor logits = model(src, tin);
    EXPECT_EQ(logits.shape(), (Shape{B * Nt, 11}));
    Tensor loss = cross_entropy(logits, tout);
    return test::loss_and_gradients(model, loss);
  };
  const auto ref = run(DType::f64, AttentionImpl::flash);
  const double gmax = max_abs(ref.second);
  for (AttentionImpl attn : {AttentionImpl::flash, AttentionImpl::flash_tf32x3, AttentionImpl::naive}) {
    const auto got = run(DType::f32, attn);
    double worst = 0;
    for (std::size_t i = 0; i < ref.second.size(); ++i) worst = std::max(worst, std::abs(got.second[i] - ref.second[i]));
    std::printf("[unequal] transformer Ns=%d Nt=%d attention %-12s: loss %.7f (double %.7f), max grad err %.2e "
                "(max |g| %.2e)\n",
                Ns, Nt, attention_impl_name(attn), got.first, ref.first, worst, gmax);
    EXPECT_NEAR(got.first, ref.first, 1e-4 * std::abs(ref.first));
    EXPECT_LE(worst, 2e-3 * gmax + 1e-5);
  }
}

TrainConfig small_config(std::int64_t src_len, std::int64_t tgt_len) {
  TrainConfig c;
  c.model = test::sized(16, 64, 2, 96, 1, 1);
  c.batch = 8;
  c.seq_len = 9;
  c.src_len = src_len;
  c.tgt_len = tgt_len;
  c.lr = 1e-3;
  return c;
}

// The copy task at source 29 / target 13 trains (the loss falls over repeated steps on
// one batch) and counts target tokens; a target longer than the source is refused.
TEST_F(ModelsLengthsGpu, TrainerCopiesThePrefixOfALongerSource) {
  for (AttentionImpl attn : {AttentionImpl::flash, AttentionImpl::flash_tf32x3, AttentionImpl::naive}) {
    TrainConfig c = small_config(29, 13);
    c.attention = attn;
    TransformerTrainer t(c, nullptr);
    EXPECT_EQ(t.tokens_per_step(), 8 * 13);
    for (int i = 0; i < 8; ++i) t.step(0);
    const auto l = t.losses();
    ASSERT_EQ(l.size(), 8u);
    for (double x : l) EXPECT_TRUE(std::isfinite(x));
    std::printf("[unequal] trainer Ns=29 Nt=13 %-12s: loss %.4f -> %.4f over 8 steps on one batch\n",
                attention_impl_name(attn), l.front(), l.back());
    EXPECT_LT(l.back(), l.front());
  }
  TrainConfig same = small_config(0, 0);  // both from seq_len
  EXPECT_EQ(same.source_length(), 9);
  EXPECT_EQ(same.target_length(), 9);
  TransformerTrainer t(same, nullptr);
  EXPECT_EQ(t.tokens_per_step(), 8 * 9);
  t.step();
  try {
    TransformerTrainer bad(small_config(29, 30), nullptr);
    FAIL() << "tgt_len 30 > src_len 29 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("target length 30 > source length 29"), std::string::npos) << e.what();
  }
}

}  // namespace
