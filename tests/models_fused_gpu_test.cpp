// The fused elementwise tails of the engine (issue 18: ops.hpp bias_act, add_layer_norm;
// kernels/nn/nn_fused.hpp) on a real device (label gpu): outputs and gradients against a
// double host reference in double, float and bf16 at odd sizes (one and several 64-row
// chunks of the bias gradient, rows longer than the register-held 1024 columns), the
// kernels' argument checks, and the training step with fused on and off (same losses,
// fewer kernels per step).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "models/context.hpp"
#include "models/ops.hpp"
#include "models/precision.hpp"
#include "models/trainer.hpp"
#include "nn/nn_fused.hpp"
#include "models_test_support.hpp"
#include "test_support.hpp"

namespace {

using namespace models;
using harness::test::have_device;

// x with 8 significant bits (bf16's, round to nearest even; normal range).
double round_bf16(double x) {
  if (x == 0) return x;
  const double q = std::ldexp(1.0, std::ilogb(x) - 7);
  return std::nearbyint(x / q) * q;
}

// Normal values; rounded to bf16 when `bf16_values`, so that the host reference sees
// exactly the bf16 inputs.
std::vector<double> values(std::size_t n, std::uint64_t seed, double scale, bool bf16_values) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(0.0, scale);
  std::vector<double> v(n);
  for (auto& x : v) x = bf16_values ? round_bf16(d(rng)) : d(rng);
  return v;
}

// A leaf of dtype dt (f64, f32 or bf16) holding v.
Tensor leaf(const std::vector<double>& v, const Shape& s, DType dt, bool grad) {
  Tensor t;
  {
    NoGradGuard ng;
    t = dt == DType::f64 ? Tensor::from_host(v, s) : Tensor::from_host(std::vector<float>(v.begin(), v.end()), s);
    if (dt == DType::bf16) t = cast(t, DType::bf16).detach();
  }
  if (grad) t.set_requires_grad(true);
  return t;
}

DType param_type(DType act) { return act == DType::bf16 ? DType::f32 : act; }

// Tolerances relative to the largest reference magnitude: bf16 stores 8 significant bits.
double fwd_tol(DType dt) { return dt == DType::f64 ? 1e-12 : dt == DType::f32 ? 1e-5 : 1e-2; }
double grad_tol(DType dt) { return dt == DType::f64 ? 1e-12 : dt == DType::f32 ? 1e-4 : 2e-2; }

// floor: the scale where the reference is a difference of larger terms that cancel (it is
// then the size of those terms, so that their rounding is what the tolerance measures).
void expect_close(const std::string& what, const Tensor& got, const std::vector<double>& ref, double tol,
                  double floor = 1e-30) {
  const auto g = got.to_host();
  ASSERT_EQ(g.size(), ref.size()) << what;
  double worst = 0, scale = floor;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_TRUE(std::isfinite(g[i])) << what << " element " << i;
    worst = std::max(worst, std::abs(g[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  EXPECT_LE(worst, tol * scale) << what << ": max |got - ref| " << worst << " (max |ref| " << scale << ")";
}

const char* name_of(DType dt) { return dt == DType::f64 ? "f64" : dt == DType::f32 ? "f32" : "bf16"; }

// Every op test runs on a current default Context (cuBLAS GEMMs, fused layers).
struct ModelsFused : ::testing::Test {
  Context context;
  ContextScope scope{context};
  void SetUp() override { REQUIRE_GPU(); }
};

// act(v) and act'(v) in double (GeLU: the tanh approximation of nn.hpp).
double act_ref(Activation a, double v, double* grad) {
  if (a == Activation::relu) {
    *grad = v > 0 ? 1 : 0;
    return v > 0 ? v : 0;
  }
  if (a == Activation::identity) {
    *grad = 1;
    return v;
  }
  const double k = std::sqrt(2.0 / M_PI), u = k * (v + 0.044715 * v * v * v), t = std::tanh(u);
  *grad = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k * (1 + 3 * 0.044715 * v * v);
  return 0.5 * v * (1 + t);
}

TEST_F(ModelsFused, BiasActMatchesTheDoubleReference) {
  // (rows, cols): one element, a tail of the 16-byte packs, exactly one 64-row chunk, three
  // chunks with a tail, and the seed's FFN width.
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{1, 1}, {7, 13}, {64, 40}, {150, 9}, {130, 2048}};
  for (DType dt : {DType::f64, DType::f32, DType::bf16})
    for (Activation a : {Activation::relu, Activation::gelu, Activation::identity})
      for (const auto& [rows, cols] : shapes) {
        const bool b16 = dt == DType::bf16;
        const auto n = static_cast<std::size_t>(rows * cols);
        auto bv = values(static_cast<std::size_t>(cols), 2, 0.5, b16);
        auto xv = values(n, 1, 1.0, b16);
        // x + b kept 0.1 away from relu's kink (float and double sums must agree on the side).
        for (std::size_t i = 0; i < n; ++i) {
          const double b = bv[i % static_cast<std::size_t>(cols)];
          if (std::abs(xv[i] + b) < 0.1) xv[i] = (xv[i] + b >= 0 ? 0.125 : -0.125) - b;
          if (b16) xv[i] = round_bf16(xv[i]);  // moves it by 2^-9 relative at most
        }
        const auto dyv = values(n, 3, 1.0, b16);
        Tensor x = leaf(xv, {rows, cols}, dt, true), b = leaf(bv, {cols}, param_type(dt), true);
        Tensor y = bias_act(x, b, a);
        EXPECT_EQ(y.dtype(), dt);
        backward(y, leaf(dyv, {rows, cols}, dt, false));
        std::vector<double> yr(n), dxr(n), dbr(static_cast<std::size_t>(cols), 0.0);
        for (std::size_t i = 0; i < n; ++i) {
          double d = 0;
          const std::size_t c = i % static_cast<std::size_t>(cols);
          yr[i] = act_ref(a, xv[i] + bv[c], &d);
          dxr[i] = d * dyv[i];
          dbr[c] += dxr[i];
        }
        const std::string what = std::string("bias_act ") + name_of(dt) + " act " + std::to_string(int(a)) + " (" +
                                 std::to_string(rows) + ", " + std::to_string(cols) + ")";
        expect_close(what + " y", y, yr, fwd_tol(dt));
        ASSERT_TRUE(x.grad().defined() && b.grad().defined()) << what;
        EXPECT_EQ(b.grad().dtype(), param_type(dt)) << what;
        expect_close(what + " dx", x.grad(), dxr, grad_tol(dt));
        expect_close(what + " dbias", b.grad(), dbr, grad_tol(dt));
      }
}

TEST_F(ModelsFused, AddLayerNormMatchesTheDoubleReference) {
  for (DType dt : {DType::f64, DType::f32, DType::bf16})
    for (std::int64_t cols : {1, 7, 64, 512, 1500})  // 1500: longer than the 1024 held in registers
      for (std::int64_t rows : {19, 150}) {  // one 64-row chunk of dgamma / dbeta, three
        const bool b16 = dt == DType::bf16;
        const auto n = static_cast<std::size_t>(rows * cols), C = static_cast<std::size_t>(cols);
        const auto xv = values(n, 11, 2.0, b16), rv = values(n, 12, 1.0, b16), dyv = values(n, 13, 1.0, b16);
        const auto gv = values(C, 14, 1.0, b16), bv = values(C, 15, 1.0, b16);
        Tensor x = leaf(xv, {rows, cols}, dt, true), r = leaf(rv, {rows, cols}, dt, true);
        Tensor g = leaf(gv, {cols}, param_type(dt), true), b = leaf(bv, {cols}, param_type(dt), true);
        Tensor y = add_layer_norm(x, r, g, b);
        backward(y, leaf(dyv, {rows, cols}, dt, false));
        // LayerNorm of s = x + r in double, and its backward (nn.hpp's formulas).
        std::vector<double> yr(n), dsr(n), dgr(C, 0.0), dbr(C, 0.0);
        // ds = rstd (dy g - mean(dy g) - xhat mean(dy g xhat)) cancels (to 0 at one column,
        // where rstd = 1/sqrt(eps) ~ 316 magnifies the rounding): its scale is its terms'.
        double ds_terms = 1e-30;
        for (std::size_t row = 0; row < static_cast<std::size_t>(rows); ++row) {
          std::vector<double> s(C), xh(C);
          double mean = 0, var = 0, mg = 0, mgx = 0;
          for (std::size_t c = 0; c < C; ++c) mean += s[c] = xv[row * C + c] + rv[row * C + c];
          mean /= static_cast<double>(C);
          for (std::size_t c = 0; c < C; ++c) var += (s[c] - mean) * (s[c] - mean);
          const double rstd = 1.0 / std::sqrt(var / static_cast<double>(C) + 1e-5);
          for (std::size_t c = 0; c < C; ++c) {
            xh[c] = (s[c] - mean) * rstd;
            yr[row * C + c] = xh[c] * gv[c] + bv[c];
            const double gg = dyv[row * C + c] * gv[c];
            mg += gg / static_cast<double>(C);
            mgx += gg * xh[c] / static_cast<double>(C);
            dgr[c] += dyv[row * C + c] * xh[c];
            dbr[c] += dyv[row * C + c];
          }
          for (std::size_t c = 0; c < C; ++c) {
            dsr[row * C + c] = rstd * (dyv[row * C + c] * gv[c] - mg - xh[c] * mgx);
            ds_terms = std::max(ds_terms, rstd * (std::abs(dyv[row * C + c] * gv[c]) + std::abs(mg) + std::abs(xh[c] * mgx)));
          }
        }
        const std::string what = std::string("add_layer_norm ") + name_of(dt) + " (" + std::to_string(rows) + ", " +
                                 std::to_string(cols) + ")";
        expect_close(what + " y", y, yr, fwd_tol(dt));
        expect_close(what + " dx", x.grad(), dsr, grad_tol(dt), ds_terms);
        expect_close(what + " dr", r.grad(), dsr, grad_tol(dt), ds_terms);
        expect_close(what + " dgamma", g.grad(), dgr, grad_tol(dt));
        expect_close(what + " dbeta", b.grad(), dbr, grad_tol(dt));
        EXPECT_EQ(x.grad().to_host(), r.grad().to_host()) << what << ": the sum's gradient goes to both inputs";
      }
}

TEST_F(ModelsFused, OpsRejectMismatchedInputs) {
  Tensor x = Tensor::zeros({4, 6}, DType::f32), b5 = Tensor::zeros({5}, DType::f32);
  EXPECT_THROW(bias_act(x, b5, Activation::relu), std::invalid_argument);
  EXPECT_THROW(bias_act(cast(x, DType::bf16), cast(Tensor::zeros({6}, DType::f32), DType::bf16), Activation::relu),
               std::invalid_argument);  // bf16 activations take the float bias
  Tensor g = Tensor::zeros({6}, DType::f32);
  EXPECT_THROW(add_layer_norm(x, Tensor::zeros({4, 5}, DType::f32), g, g), std::invalid_argument);
  EXPECT_THROW(add_layer_norm(x, x, Tensor::zeros({5}, DType::f32), g), std::invalid_argument);
}

// rows == 0: the column sums are still written, as zeros (column_sum's rule); the argument
// checks themselves are in models_cpu_test.
TEST_F(ModelsFused, EmptyRowsWriteZeroGradients) {
  namespace nn = kernels::nn;
  Tensor out = Tensor::empty({3, 3}, DType::f32);  // dbias, dgamma, dbeta
  float* p = out.data<float>();
  ASSERT_EQ(cudaMemsetAsync(p, 0xff, 9 * sizeof(float), context.stream()), cudaSuccess);  // NaN pattern
  EXPECT_EQ((nn::bias_act_backward<float, float>(nn::Act::gelu, nullptr, nullptr, nullptr, nullptr, p, nullptr,
                                                  nullptr, 0, 3, context.stream())),
            cudaSuccess);
  EXPECT_EQ((nn::layernorm_param_grads<float, float>(nullptr, nullptr, nullptr, nullptr, p + 3, p + 6, nullptr,
                                                      nullptr, 0, 3, context.stream())),
            cudaSuccess);
  EXPECT_EQ(out.to_host(), std::vector<double>(9, 0.0));
}

// The two reductions of the chunk partials (the last block of each column tile, with
// counters; a second kernel, without) give the same bits, for the bias gradient and the
// LayerNorm parameter gradients; the counters are back at zero after each launch (so a
// second launch works), and the sums match the host's.
TEST_F(ModelsFused, LastBlockAndTwoKernelColumnSumsAgreeBitwise) {
  namespace nn = kernels::nn;
  const int rows = 1000, cols = 77;  // 16 chunks, 3 column tiles (the last one partial)
  const auto dyv = values(static_cast<std::size_t>(rows) * cols, 61, 1.0, false);
  Tensor dy = leaf(dyv, {rows, cols}, DType::f32, false);
  Tensor ws = Tensor::empty({static_cast<std::int64_t>(nn::bias_act_backward_workspace(rows, cols))}, DType::f32);
  Tensor db1 = Tensor::empty({cols}, DType::f32), db2 = Tensor::empty({cols}, DType::f32),
         db3 = Tensor::empty({cols}, DType::f32);
  unsigned* counters = context.zeroed_counters(3);
  ASSERT_NE(counters, nullptr);
  const cudaStream_t s = context.stream();
  ASSERT_EQ((nn::bias_act_backward<float, float>(nn::Act::identity, nullptr, nullptr, dy.data<float>(), nullptr,
                                                  db1.data<float>(), ws.data<float>(), counters, rows, cols, s)),
            cudaSuccess);
  ASSERT_EQ((nn::bias_act_backward<float, float>(nn::Act::identity, nullptr, nullptr, dy.data<float>(), nullptr,
                                                  db2.data<float>(), ws.data<float>(), counters, rows, cols, s)),
            cudaSuccess);
  ASSERT_EQ((nn::bias_act_backward<float, float>(nn::Act::identity, nullptr, nullptr, dy.data<float>(), nullptr,
                                                  db3.data<float>(), ws.data<float>(), nullptr, rows, cols, s)),
            cudaSuccess);
  unsigned left[3] = {1, 1, 1};
  ASSERT_EQ(cudaMemcpyAsync(left, counters, sizeof left, cudaMemcpyDeviceToHost, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(left[0] + left[1] + left[2], 0u) << "the counters are left at zero";
  EXPECT_EQ(db1.to_host(), db3.to_host()) << "one kernel (last block) vs two kernels";
  EXPECT_EQ(db1.to_host(), db2.to_host()) << "a second launch on the same counters";
  std::vector<double> ref(static_cast<std::size_t>(cols), 0.0);
  for (std::size_t i = 0; i < dyv.size(); ++i) ref[i % static_cast<std::size_t>(cols)] += static_cast<float>(dyv[i]);
  expect_close("column sums", db1, ref, 1e-5);

  // The LayerNorm parameter gradients' two sums, the same way (mean 0, rstd 1: dgamma sums
  // dy x, dbeta sums dy).
  const auto xv = values(dyv.size(), 62, 1.0, false);
  Tensor x = leaf(xv, {rows, cols}, DType::f32, false), mean = Tensor::zeros({rows}, DType::f32);
  Tensor rstd = fill({rows}, DType::f32, 1.0);
  Tensor lws = Tensor::empty({static_cast<std::int64_t>(nn::layernorm_param_grads_workspace(rows, cols))}, DType::f32);
  Tensor g1 = Tensor::empty({cols}, DType::f32), b1 = Tensor::empty({cols}, DType::f32),
         g2 = Tensor::empty({cols}, DType::f32), b2 = Tensor::empty({cols}, DType::f32);
  for (unsigned* cnt : {counters, static_cast<unsigned*>(nullptr)}) {
    Tensor& g = cnt != nullptr ? g1 : g2;
    Tensor& b = cnt != nullptr ? b1 : b2;
    ASSERT_EQ((nn::layernorm_param_grads<float, float>(x.data<float>(), mean.data<float>(), rstd.data<float>(),
                                                        dy.data<float>(), g.data<float>(), b.data<float>(),
                                                        lws.data<float>(), cnt, rows, cols, s)),
              cudaSuccess);
  }
  EXPECT_EQ(g1.to_host(), g2.to_host());
  EXPECT_EQ(b1.to_host(), b2.to_host());
  EXPECT_EQ(b1.to_host(), db1.to_host()) << "dbeta is the bias gradient's column sum, in the same order";
  std::vector<double> gref(static_cast<std::size_t>(cols), 0.0);
  for (std::size_t i = 0; i < dyv.size(); ++i)
    gref[i % static_cast<std::size_t>(cols)] +=
        static_cast<double>(static_cast<float>(dyv[i])) * static_cast<float>(xv[i]);
  expect_close("dgamma", g1, gref, 1e-5);
  ASSERT_EQ(cudaMemcpyAsync(left, counters, sizeof left, cudaMemcpyDeviceToHost, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(left[0] + left[1] + left[2], 0u);
}

// ---- the training step, fused on and off --------------------------------------------------

TrainConfig small_config(Precision p, bool fused) {
  TrainConfig c;
  c.model.vocab = 300;
  c.model.d_model = 128;  // head_dim 64: flash_tc under bf16
  c.model.heads = 2;
  c.model.hidden = 200;
  c.model.encoder_layers = 2;
  c.model.decoder_layers = 2;
  c.model.precision = p;
  c.batch = 10;
  c.seq_len = 13;  // 130 rows: three chunks of the bias gradient
  c.gemm = "cublas";
  c.fused = fused;
  return c;
}

using models_test::Stream;

// Same model, same batches: the fused and the separate kernels compute the same math in
// another order (and, in bf16, round at fewer places), so the losses agree to float
// rounding (FP32) or to bf16's (0.02 + 1%, the suite's bf16 tolerance). The fused step
// launches fewer kernels: per layer, one fewer in the FFN forward and one per residual +
// LayerNorm; the parallel bias gradients add one small kernel per Linear of > 64 rows.
// A plain Linear's bias gradient (identity, no dpre) with a thread's rows read at once
// (bias_grad_row_batch: the default; HARNESS_BIAS_GRAD_BATCH=0 is the row loop) gives the
// same bits as the row loop, in
// f32 and bf16: full chunks, a partial last chunk, one chunk (written at once), column
// counts that are and are not a multiple of the 16-byte packs (the latter take the row
// loop either way), with and without counters; and the host's sums.
TEST_F(ModelsFused, BatchedBiasGradientAgreesBitwise) {
  namespace nn = kernels::nn;
  const bool was = nn::bias_grad_row_batch();
  const std::vector<std::pair<int, int>> shapes = {{8192, 512}, {1000, 512}, {64, 256}, {130, 2048}, {4099, 6880},
                                                   {515, 77}};
  for (DType dt : {DType::f32, DType::bf16})
    for (const auto& [rows, cols] : shapes)
      for (bool with_counters : {true, false}) {
        const std::string what = std::string(name_of(dt)) + " (" + std::to_string(rows) + ", " + std::to_string(cols) +
                                 (with_counters ? "), counters" : "), two kernels");
        const auto dyv = values(static_cast<std::size_t>(rows) * cols, 71 + rows, 1.0, dt == DType::bf16);
        Tensor dy = leaf(dyv, {rows, cols}, dt, false);
        Tensor ws = Tensor::empty({std::max<std::int64_t>(1, nn::bias_act_backward_workspace(rows, cols))}, DType::f32);
        const int tiles = (cols + 31) / 32;
        unsigned* counters = with_counters ? context.zeroed_counters(tiles) : nullptr;
        if (with_counters) {
          ASSERT_NE(counters, nullptr) << what;
        }
        std::vector<float> got[2];
        for (int batch : {0, 1}) {
          nn::set_bias_grad_row_batch(batch == 1);
          Tensor db = fill({cols}, DType::f32, std::nan(""));  // poisoned: every column must be written
          const cudaError_t e =
              dt == DType::bf16
                  ? nn::bias_act_backward<nn::bf16, float>(nn::Act::identity, nullptr, nullptr, dy.data<nn::bf16>(),
                                                           nullptr, db.data<float>(), ws.data<float>(), counters, rows,
                                                           cols, context.stream())
                  : nn::bias_act_backward<float, float>(nn::Act::identity, nullptr, nullptr, dy.data<float>(), nullptr,
                                                        db.data<float>(), ws.data<float>(), counters, rows, cols,
                                                        context.stream());
          ASSERT_EQ(e, cudaSuccess) << what;
          ASSERT_EQ(cudaStreamSynchronize(context.stream()), cudaSuccess) << what;
          const auto h = db.to_host();
          got[batch].assign(h.begin(), h.end());
          if (batch == 1) {
            std::vector<double> ref(static_cast<std::size_t>(cols), 0.0);
            for (std::size_t i = 0; i < dyv.size(); ++i) ref[i % static_cast<std::size_t>(cols)] += dyv[i];
            expect_close(what + " batched column sums", db, ref, 1e-5, std::sqrt(static_cast<double>(rows)));
          }
        }
        nn::set_bias_grad_row_batch(was);
        ASSERT_EQ(got[0].size(), got[1].size()) << what;
        for (std::size_t c = 0; c < got[0].size(); ++c)
          ASSERT_EQ(std::memcmp(&got[0][c], &got[1][c], sizeof(float)), 0)
              << what << ": column " << c << " row loop " << got[0][c] << " batched " << got[1][c];
      }
  nn::set_bias_grad_row_batch(was);
}

TEST(ModelsFusedStep, FusedAndUnfusedTrainTheSameWithFewerKernels) {
  REQUIRE_GPU();
  constexpr int kSteps = 6;
  for (Precision p : {Precision::f32, Precision::bf16}) {
    Stream s1, s2;
    TransformerTrainer fused(small_config(p, true), s1.s), sep(small_config(p, false), s2.s);
    EXPECT_TRUE(fused.context().fused());
    EXPECT_FALSE(sep.context().fused());
    for (int i = 0; i < kSteps; ++i) {
      fused.step();
      sep.step();
    }
    const auto lf = fused.losses(), ls = sep.losses();
    ASSERT_EQ(lf.size(), static_cast<std::size_t>(kSteps));
    const bool b16 = p == Precision::bf16;
    for (int i = 0; i < kSteps; ++i) {
      const auto k = static_cast<std::size_t>(i);
      EXPECT_TRUE(std::isfinite(lf[k]));
      EXPECT_NEAR(lf[k], ls[k], b16 ? 0.02 + 0.01 * std::abs(ls[k]) : 1e-4 * std::abs(ls[k])) << "step " << i;
    }
    EXPECT_LT(lf.back(), lf.front());
    const auto kf = fused.step_launches().kernels, ks = sep.step_launches().kernels;
    std::printf("[fused step] %s: losses fused %.6f -> %.6f, unfused %.6f -> %.6f; kernels/step fused %lld, "
                "unfused %lld\n",
                b16 ? "bf16" : "f32", lf.front(), lf.back(), ls.front(), ls.back(), static_cast<long long>(kf),
                static_cast<long long>(ks));
    EXPECT_LT(kf, ks);
  }
}

}  // namespace
