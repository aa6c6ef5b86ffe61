// The double-precision host references of kernels/nn (kernels/nn/nn_cpu.hpp) against
// direct formulas, known values, hand-computed optimizer steps, adjoint identities of the
// linear layout ops, and, for every backward, central finite differences of a scalar loss
// L = sum(w * forward(...)) with random weights w. CPU only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "nn/nn_cpu.hpp"

namespace {

namespace cpu = kernels::nn::cpu;
using Vec = std::vector<double>;

Vec random_vec(std::size_t n, unsigned seed, double scale = 1.0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> dist(0.0, scale);
  Vec v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

double dot(const Vec& a, const Vec& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

// Central differences of f with respect to every element of x (restored afterwards).
Vec numeric_grad(const std::function<double()>& f, Vec& x, double h = 1e-6) {
  Vec g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = f();
    x[i] = keep - h;
    const double down = f();
    x[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

void expect_near_all(const Vec& got, const Vec& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double worst = 0.0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(got[i] - want[i]) / std::max(1.0, std::abs(want[i]));
    if (!(err <= worst)) worst = err, at = i;  // NaN counts as worst
  }
  EXPECT_LE(worst, tol) << what << ": element " << at << " got " << got[at] << " want "
                        << want[at];
}

TEST(NnCpu, GeluKnownValuesAndFiniteDifferences) {
  // PyTorch F.gelu(x, approximate='tanh')
  EXPECT_NEAR(cpu::gelu(1.0), 0.8411919906082768, 1e-15);
  EXPECT_NEAR(cpu::gelu(-0.5), -0.15428599017485606, 1e-15);
  EXPECT_NEAR(cpu::gelu(3.0), 2.996362607918227, 1e-15);
  EXPECT_EQ(cpu::gelu(0.0), 0.0);
  Vec x = random_vec(41, 1, 2.5), w = random_vec(41, 2);
  x.push_back(0.0);
  w.push_back(0.7);
  Vec y(x.size()), dx(x.size());
  auto loss = [&] {
    cpu::gelu_forward(x.data(), y.data(), x.size());
    return dot(w, y);
  };
  cpu::gelu_backward(x.data(), w.data(), dx.data(), x.size());
  expect_near_all(dx, numeric_grad(loss, x), 1e-8, "gelu dx");
}

TEST(NnCpu, ReluForwardBackward) {
  Vec x = {-2.0, -0.0, 0.0, 1e-9, 3.5}, dy = {1, 2, 3, 4, 5}, y(5), dx(5);
  cpu::relu_forward(x.data(), y.data(), 5);
  cpu::relu_backward(x.data(), dy.data(), dx.data(), 5);
  EXPECT_EQ(y, (Vec{0, 0, 0, 1e-9, 3.5}));
  EXPECT_EQ(dx, (Vec{0, 0, 0, 4, 5}));  // gradient 0 at x == 0, as PyTorch
}

TEST(NnCpu, AddAxpbyFill) {
  Vec a = {1, 2, 3}, b = {10, 20, 30}, c(3);
  cpu::add(a.data(), b.data(), c.data(), 3);
  EXPECT_EQ(c, (Vec{11, 22, 33}));
  cpu::axpby(2.0, a.data(), 0.5, b.data(), 3);
  EXPECT_EQ(b, (Vec{7, 14, 21}));
  Vec nan(3, std::numeric_limits<double>::quiet_NaN());
  cpu::axpby(3.0, a.data(), 0.0, nan.data(), 3);  // beta 0: y not read
  EXPECT_EQ(nan, (Vec{3, 6, 9}));
  cpu::fill(c.data(), -1.5, 3);
  EXPECT_EQ(c, (Vec{-1.5, -1.5, -1.5}));
}

TEST(NnCpu, BiasAddAndColumnSumAreAdjoint) {
  const int rows = 5, cols = 7;
  Vec x = random_vec(35, 3), bias = random_vec(7, 4), y(35), dy = random_vec(35, 5), db(7);
  cpu::bias_add(x.data(), bias.data(), y.data(), rows, cols);
  EXPECT_DOUBLE_EQ(y[2 * 7 + 3], x[2 * 7 + 3] + bias[3]);
  // d/dbias of sum(dy * (x + bias)) is the column sum of dy.
  cpu::column_sum(dy.data(), db.data(), rows, cols);
  auto loss = [&] {
    cpu::bias_add(x.data(), bias.data(), y.data(), rows, cols);
    return dot(dy, y);
  };
  expect_near_all(db, numeric_grad(loss, bias), 1e-8, "column_sum = dL/dbias");
  Vec none(3, 1.0);
  cpu::column_sum(nullptr, none.data(), 0, 3);
  EXPECT_EQ(none, (Vec{0, 0, 0}));
}

TEST(NnCpu, LayerNormForwardNormalizesRows) {
  const int rows = 4, cols = 9;
  Vec x = random_vec(36, 6, 3.0), gamma(9, 1.0), beta(9, 0.0), y(36), mean(4), rstd(4);
  for (int c = 0; c < cols; ++c) x[c] += 100.0;  // a large offset on row 0
  cpu::layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(),
                         rstd.data(), rows, cols, 1e-12);
  for (int r = 0; r < rows; ++r) {
    double m = 0.0, v = 0.0, xm = 0.0;
    for (int c = 0; c < cols; ++c) m += y[r * cols + c], xm += x[r * cols + c];
    for (int c = 0; c < cols; ++c) v += y[r * cols + c] * y[r * cols + c];
    EXPECT_NEAR(m / cols, 0.0, 1e-12) << r;
    EXPECT_NEAR(v / cols, 1.0, 1e-9) << r;
    EXPECT_NEAR(mean[r], xm / cols, 1e-12) << r;
  }
}

TEST(NnCpu, LayerNormBackwardMatchesFiniteDifferences) {
  const int rows = 3, cols = 7;
  Vec x = random_vec(21, 7, 2.0), gamma = random_vec(7, 8), beta = random_vec(7, 9);
  const Vec w = random_vec(21, 10);
  Vec y(21), mean(3), rstd(3), dx(21), dgamma(7), dbeta(7);
  auto loss = [&] {
    cpu::layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(),
                           rstd.data(), rows, cols, 1e-5);
    return dot(w, y);
  };
  loss();
  cpu::layernorm_backward(x.data(), gamma.data(), mean.data(), rstd.data(), w.data(), dx.data(),
                          dgamma.data(), dbeta.data(), rows, cols);
  expect_near_all(dx, numeric_grad(loss, x), 1e-7, "layernorm dx");
  expect_near_all(dgamma, numeric_grad(loss, gamma), 1e-7, "layernorm dgamma");
  expect_near_all(dbeta, numeric_grad(loss, beta), 1e-7, "layernorm dbeta");
}

TEST(NnCpu, EmbeddingForwardBackward) {
  const int vocab = 6, dim = 3, rows = 5;
  const std::vector<int> ids = {4, 0, 4, -1, 5};  // repeated id, padding
  Vec table = random_vec(18, 11), out(15), dout = random_vec(15, 12), dtable(18, 0.0);
  cpu::embedding_forward(ids.data(), table.data(), out.data(), rows, dim);
  EXPECT_EQ(out[0], table[12]);
  EXPECT_EQ(out[2 * 3 + 1], table[4 * 3 + 1]);
  EXPECT_EQ(out[3 * 3 + 2], 0.0);
  cpu::embedding_backward(ids.data(), dout.data(), dtable.data(), rows, dim);
  auto loss = [&] {
    cpu::embedding_forward(ids.data(), table.data(), out.data(), rows, dim);
    return dot(dout, out);
  };
  expect_near_all(dtable, numeric_grad(loss, table), 1e-8, "embedding dtable");
  EXPECT_DOUBLE_EQ(dtable[4 * 3], dout[0] + dout[6]);  // accumulated over both uses of id 4
  (void)vocab;
}

TEST(NnCpu, PositionalEncodingKnownValues) {
  const int dim = 7;
  EXPECT_EQ(cpu::positional_encoding(0, 0, dim), 0.0);
  EXPECT_EQ(cpu::positional_encoding(0, 1, dim), 1.0);
  EXPECT_DOUBLE_EQ(cpu::positional_encoding(3, 0, dim), std::sin(3.0));
  EXPECT_DOUBLE_EQ(cpu::positional_encoding(3, 1, dim), std::cos(3.0));
  EXPECT_DOUBLE_EQ(cpu::positional_encoding(5, 4, dim), std::sin(5.0 / std::pow(10000.0, 4.0 / 7)));
  EXPECT_DOUBLE_EQ(cpu::positional_encoding(5, 5, dim), std::cos(5.0 / std::pow(10000.0, 4.0 / 7)));
  EXPECT_DOUBLE_EQ(cpu::positional_encoding(5, 6, dim), std::sin(5.0 / std::pow(10000.0, 6.0 / 7)));
  Vec x(2 * 3 * dim, 1.0);
  cpu::add_positional_encoding(x.data(), 2, 3, dim);
  EXPECT_DOUBLE_EQ(x[(1 * 3 + 2) * dim + 1], 1.0 + std::cos(2.0));
}

TEST(NnCpu, SoftmaxCrossEntropyLossAndGradient) {
  const int rows = 4, vocab = 6, ignore = -100;
  Vec logits = random_vec(24, 13, 3.0), dlogits(24);
  const std::vector<int> targets = {2, ignore, 5, 0};
  double loss = 0.0, count = 0.0;
  const double scale = 1.0 / 3.0;
  cpu::softmax_cross_entropy(logits.data(), targets.data(), &loss, &count, dlogits.data(), rows,
                             vocab, ignore, scale);
  EXPECT_EQ(count, 3.0);
  double direct = 0.0;
  for (int r : {0, 2, 3}) {
    double z = 0.0;
    for (int j = 0; j < vocab; ++j) z += std::exp(logits[r * vocab + j]);
    direct += -std::log(std::exp(logits[r * vocab + targets[r]]) / z);
  }
  EXPECT_NEAR(loss, direct, 1e-12);
  for (int j = 0; j < vocab; ++j) EXPECT_EQ(dlogits[vocab + j], 0.0);  // ignored row
  Vec scratch(24);
  auto f = [&] {
    double l = 0.0, c = 0.0;
    cpu::softmax_cross_entropy(logits.data(), targets.data(), &l, &c, scratch.data(), rows, vocab,
                               ignore, scale);
    return l * scale;
  };
  expect_near_all(dlogits, numeric_grad(f, logits), 1e-8, "cross-entropy dlogits");
  // A target outside [0, vocab) that is not ignored poisons the loss.
  const std::vector<int> bad = {2, 6, 5, 0};
  cpu::softmax_cross_entropy(logits.data(), bad.data(), &loss, &count, dlogits.data(), rows,
                             vocab, ignore, scale);
  EXPECT_TRUE(std::isnan(loss));
}

TEST(NnCpu, MseLossAndGradient) {
  Vec pred = random_vec(11, 14), target = random_vec(11, 15), dpred(11);
  double loss = 0.0;
  cpu::mse(pred.data(), target.data(), &loss, dpred.data(), 11, 0.25);
  double direct = 0.0;
  for (int i = 0; i < 11; ++i) direct += (pred[i] - target[i]) * (pred[i] - target[i]);
  EXPECT_NEAR(loss, direct, 1e-13);
  Vec scratch(11);
  auto f = [&] {
    double l = 0.0;
    cpu::mse(pred.data(), target.data(), &l, scratch.data(), 11, 0.25);
    return 0.25 * l;
  };
  expect_near_all(dpred, numeric_grad(f, pred), 1e-8, "mse dpred");
}

TEST(NnCpu, AdamStepsByHand) {
  const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  Vec p = {1.0, -2.0, 0.5}, m(3, 0.0), v(3, 0.0);
  const Vec g1 = {0.5, -0.25, 0.0};
  cpu::adam_step(p.data(), g1.data(), m.data(), v.data(), 3, lr, b1, b2, eps, 0.0, 1);
  // step 1: mhat = g, vhat = g^2, so p -= lr g / (|g| + eps) ~ lr sign(g)
  EXPECT_NEAR(p[0], 1.0 - lr * 0.5 / (0.5 + eps), 1e-15);
  EXPECT_NEAR(p[1], -2.0 + lr * 0.25 / (0.25 + eps), 1e-15);
  EXPECT_EQ(p[2], 0.5);
  EXPECT_NEAR(m[0], 0.05, 1e-16);
  EXPECT_NEAR(v[0], 0.001 * 0.25, 1e-18);
  // step 2 with weight decay, from the formulas
  const Vec g2 = {-1.0, 0.5, 2.0};
  Vec pe = p, me = m, ve = v;
  const double wd = 0.01;
  for (int i = 0; i < 3; ++i) {
    me[i] = b1 * me[i] + (1 - b1) * g2[i];
    ve[i] = b2 * ve[i] + (1 - b2) * g2[i] * g2[i];
    const double mhat = me[i] / (1 - b1 * b1), vhat = ve[i] / (1 - b2 * b2);
    pe[i] = pe[i] - lr * mhat / (std::sqrt(vhat) + eps) - lr * wd * pe[i];
  }
  cpu::adam_step(p.data(), g2.data(), m.data(), v.data(), 3, lr, b1, b2, eps, wd, 2);
  expect_near_all(p, pe, 1e-15, "adam p");
  expect_near_all(m, me, 1e-15, "adam m");
  expect_near_all(v, ve, 1e-15, "adam v");
  EXPECT_THROW(cpu::adam_step(p.data(), g2.data(), m.data(), v.data(), 3, lr, b1, b2, eps, wd, 0),
               std::invalid_argument);
}

TEST(NnCpu, SgdWithAndWithoutMomentum) {
  Vec p = {1.0, 2.0}, g = {0.5, -1.0}, buf = {0.0, 0.0};
  cpu::sgd_step(p.data(), g.data(), nullptr, 2, 0.1, 0.9);
  EXPECT_EQ(p, (Vec{0.95, 2.1}));
  cpu::sgd_step(p.data(), g.data(), buf.data(), 2, 0.1, 0.9);  // buf = g
  cpu::sgd_step(p.data(), g.data(), buf.data(), 2, 0.1, 0.9);  // buf = 0.9 g + g
  EXPECT_NEAR(buf[0], 0.95, 1e-15);
  EXPECT_NEAR(p[0], 0.95 - 0.1 * 0.5 - 0.1 * 0.95, 1e-15);
}

TEST(NnCpu, SumSquaresAccumulatesAndClipScales) {
  Vec a = {3.0, 4.0}, b = {12.0};
  double s = 0.0;
  cpu::sum_squares(a.data(), &s, 2);
  cpu::sum_squares(b.data(), &s, 1);
  EXPECT_EQ(s, 169.0);  // global norm 13
  cpu::clip_by_norm(a.data(), 2, &s, 1.3);
  EXPECT_NEAR(a[0], 3.0 * 1.3 / (13.0 + 1e-6), 1e-15);
  Vec c = {3.0, 4.0};
  cpu::clip_by_norm(c.data(), 2, &s, 100.0);  // under the limit: unchanged
  EXPECT_EQ(c, (Vec{3.0, 4.0}));
}

TEST(NnCpu, HeadLayoutsAreInversesAndAdjoints) {
  const int B = 2, N = 3, H = 4, d = 5;
  const std::size_t n = static_cast<std::size_t>(B) * N * H * d;
  Vec qkv = random_vec(3 * n, 16), q(n), k(n), v(n), back(3 * n);
  cpu::split_qkv(qkv.data(), q.data(), k.data(), v.data(), B, N, H, d);
  // element (b=1, n=2, part=1 (k), h=3, e=4) goes to k (b=1, h=3, n=2, e=4)
  EXPECT_EQ(k[((1 * H + 3) * N + 2) * d + 4], qkv[(((1 * N + 2) * 3 + 1) * H + 3) * d + 4]);
  cpu::merge_qkv(q.data(), k.data(), v.data(), back.data(), B, N, H, d);
  EXPECT_EQ(back, qkv);
  Vec x = random_vec(n, 17), y(n), z(n);
  cpu::bnhd_to_bhnd(x.data(), y.data(), B, N, H, d);
  EXPECT_EQ(y[((1 * H + 2) * N + 1) * d + 3], x[((1 * N + 1) * H + 2) * d + 3]);
  cpu::bhnd_to_bnhd(y.data(), z.data(), B, N, H, d);
  EXPECT_EQ(z, x);
}

TEST(NnCpu, TransposeTwiceIsIdentity) {
  Vec x = random_vec(35, 18), y(35), z(35);
  cpu::transpose(x.data(), y.data(), 5, 7);
  EXPECT_EQ(y[3 * 5 + 2], x[2 * 7 + 3]);
  cpu::transpose(y.data(), z.data(), 7, 5);
  EXPECT_EQ(z, x);
}

TEST(NnCpu, GemmSimpleAllTranspositions) {
  const int M = 4, N = 5, K = 3;
  const Vec A = random_vec(12, 19), B = random_vec(15, 20), C0 = random_vec(20, 21);
  // op(A)(m, k), op(B)(k, n) formed explicitly
  Vec At(12), Bt(15);
  cpu::transpose(A.data(), At.data(), M, K);  // (K, M)
  cpu::transpose(B.data(), Bt.data(), K, N);  // (N, K)
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Vec C = C0;
      cpu::gemm_simple(ta, tb, M, N, K, 1.5, ta ? At.data() : A.data(), tb ? Bt.data() : B.data(),
                       -0.5, C.data());
      Vec want(20);
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
          double acc = 0.0;
          for (int k = 0; k < K; ++k) acc += A[m * K + k] * B[k * N + n];
          want[m * N + n] = 1.5 * acc - 0.5 * C0[m * N + n];
        }
      expect_near_all(C, want, 1e-14, "gemm ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
    }
  Vec nan(20, std::numeric_limits<double>::quiet_NaN());
  cpu::gemm_simple(false, false, M, N, K, 1.0, A.data(), B.data(), 0.0, nan.data());
  for (double c : nan) EXPECT_FALSE(std::isnan(c));  // beta 0: C not read
}

struct AttnCase {
  int B, H, Hkv, N, d;
  bool causal;
  double scale;
};

class NnCpuAttention : public ::testing::TestWithParam<AttnCase> {};

TEST_P(NnCpuAttention, ForwardIsSoftmaxAndBackwardMatchesFiniteDifferences) {
  const AttnCase c = GetParam();
  const std::size_t nq = static_cast<std::size_t>(c.B) * c.H * c.N * c.d;
  const std::size_t nkv = static_cast<std::size_t>(c.B) * c.Hkv * c.N * c.d;
  Vec q = random_vec(nq, 22), k = random_vec(nkv, 23), v = random_vec(nkv, 24);
  const Vec w = random_vec(nq, 25);
  Vec o(nq), lse(static_cast<std::size_t>(c.B) * c.H * c.N);
  auto loss = [&] {
    cpu::attention_naive_forward(q.data(), k.data(), v.data(), o.data(), lse.data(), c.B, c.H,
                                 c.Hkv, c.N, c.d, c.causal, c.scale);
    return dot(w, o);
  };
  loss();
  // Row 0 of a causal head sees only key 0: O = v_0 and lse = scale q_0 . k_0.
  if (c.causal) {
    const double sc = c.scale == 0.0 ? 1.0 / std::sqrt(double(c.d)) : c.scale;
    double s = 0.0;
    for (int e = 0; e < c.d; ++e) {
      EXPECT_NEAR(o[e], v[e], 1e-14);
      s += q[e] * k[e];
    }
    EXPECT_NEAR(lse[0], sc * s, 1e-14);
  }
  Vec dq(nq), dk(nkv), dv(nkv);
  cpu::attention_naive_backward(q.data(), k.data(), v.data(), w.data(), dq.data(), dk.data(),
                                dv.data(), c.B, c.H, c.Hkv, c.N, c.d, c.causal, c.scale);
  expect_near_all(dq, numeric_grad(loss, q), 1e-7, "attention dq");
  expect_near_all(dk, numeric_grad(loss, k), 1e-7, "attention dk");
  expect_near_all(dv, numeric_grad(loss, v), 1e-7, "attention dv");
}

INSTANTIATE_TEST_SUITE_P(Shapes, NnCpuAttention,
                         ::testing::Values(AttnCase{1, 2, 2, 5, 3, false, 0.0},
                                           AttnCase{2, 4, 2, 4, 3, true, 0.0},
                                           AttnCase{1, 3, 1, 6, 2, true, 0.7},
                                           AttnCase{1, 1, 1, 1, 4, false, 0.0}));

TEST(NnCpu, BadSizesThrow) {
  Vec x(4);
  EXPECT_THROW(cpu::transpose(x.data(), x.data(), -1, 2), std::invalid_argument);
  EXPECT_THROW(cpu::attention_naive_forward(x.data(), x.data(), x.data(), x.data(), x.data(), 1, 3,
                                            2, 1, 1, false, 0.0),
               std::invalid_argument);
}

}  // namespace
