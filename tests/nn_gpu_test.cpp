// kernels/nn on a real device (label gpu): every kernel in float and double against the
// double-precision host references (kernels/nn/nn_cpu.hpp) on odd shapes, on both the
// vectorized and the scalar paths (sizes that are not multiples of the vector width,
// pointers offset by one element). Pure outputs are poisoned with 0xFF bytes (NaN in float
// and double) before each launch, so an element a kernel never writes is reported as
// "unwritten". The bad-argument checks at the end run without a device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "nn/nn.hpp"
#include "nn/nn_cpu.hpp"
#include "test_support.hpp"

namespace {

namespace nn = kernels::nn;
namespace cpu = kernels::nn::cpu;
using std::size_t;
using Host = std::vector<double>;

using harness::test::have_device;

#define REQUIRE_DEVICE() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device"

// Launch status, then completion status.
#define EXPECT_LAUNCH(call)                                   \
  do {                                                        \
    EXPECT_EQ((call), cudaSuccess) << #call;                  \
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << #call; \
  } while (0)

// Device array of n elements of T starting `offset` elements into its allocation (offset 1
// breaks 16-byte alignment and forces the scalar paths).
template <class T>
class Dev {
 public:
  explicit Dev(size_t n, size_t offset = 0) : n_(n) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&base_), (n + offset + 1) * sizeof(T)),
              cudaSuccess);
    p_ = base_ + offset;
  }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  ~Dev() { cudaFree(base_); }
  T* get() const { return p_; }
  void upload(const std::vector<T>& h) {
    ASSERT_EQ(h.size(), n_);
    EXPECT_EQ(cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    EXPECT_EQ(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
  void poison() { EXPECT_EQ(cudaMemset(p_, 0xFF, n_ * sizeof(T)), cudaSuccess); }
  void zero() { EXPECT_EQ(cudaMemset(p_, 0, n_ * sizeof(T)), cudaSuccess); }

 private:
  T* base_ = nullptr;
  T* p_ = nullptr;
  size_t n_;
};

// Random N(mean, scale) values already rounded to T (so the double reference sees exactly
// the GPU's inputs).
template <class T>
struct Data {
  std::vector<T> t;  // what the GPU gets
  Host d;            // the same values in double, for the reference
};
template <class T>
Data<T> randn(size_t n, std::uint64_t seed, double scale = 1.0, double mean = 0.0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> dist(mean, scale);
  Data<T> r{std::vector<T>(n), Host(n)};
  for (size_t i = 0; i < n; ++i) {
    r.t[i] = static_cast<T>(dist(gen));
    r.d[i] = static_cast<double>(r.t[i]);
  }
  return r;
}
template <class T>
Data<T> from_host(const Host& h) {
  Data<T> r{std::vector<T>(h.size()), Host(h.size())};
  for (size_t i = 0; i < h.size(); ++i) {
    r.t[i] = static_cast<T>(h[i]);
    r.d[i] = static_cast<double>(r.t[i]);
  }
  return r;
}

template <class T>
constexpr double kEps = std::numeric_limits<T>::epsilon();

// Every element written (not NaN where the reference is a number), NaN where the
// reference is NaN, and |got - want| <= abs + rel |want| elsewhere.
template <class T>
void expect_close(const std::vector<T>& got, const Host& want, double abs, double rel,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t unwritten = 0, bad = 0, first = got.size();
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), w = want[i];
    if (std::isnan(w)) {
      if (!std::isnan(g)) ++bad, first = std::min(first, i);
      continue;
    }
    if (std::isnan(g)) {
      ++unwritten, first = std::min(first, i);
      continue;
    }
    const double err = std::abs(g - w);
    worst = std::max(worst, err);
    if (err > abs + rel * std::abs(w)) ++bad, first = std::min(first, i);
  }
  EXPECT_EQ(unwritten, 0u) << what << ": " << unwritten << " of " << got.size()
                           << " elements unwritten (NaN), first at " << first;
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size()
                     << " elements out of tolerance (abs " << abs << ", rel " << rel
                     << "), first at " << first << ": got "
                     << (first < got.size() ? static_cast<double>(got[first]) : 0.0) << " want "
                     << (first < got.size() ? want[first] : 0.0) << "; max abs err " << worst;
}

template <class T>
void expect_equal(const std::vector<T>& got, const Host& want, const std::string& what) {
  expect_close(got, want, 0.0, 0.0, what);
}

template <class T>
class NnGpu : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(NnGpu, Types);

// ---- elementwise ------------------------------------------------------------------------

TYPED_TEST(NnGpu, ElementwiseOps) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  const double tol = 64 * kEps<T>;
  std::uint64_t seed = 1;
  for (size_t n : {size_t{1}, size_t{3}, size_t{4}, size_t{1001}, size_t{100003}})
    for (size_t off : {size_t{0}, size_t{1}}) {
      const std::string at = " n=" + std::to_string(n) + " offset=" + std::to_string(off);
      const auto x = randn<T>(n, ++seed, 2.0), dy = randn<T>(n, ++seed, 1.5);
      Dev<T> dx(n, off), ddy(n, off), out(n, off);
      dx.upload(x.t);
      ddy.upload(dy.t);
      Host want(n);

      out.poison();
      EXPECT_LAUNCH(nn::relu_forward(dx.get(), out.get(), n, nullptr));
      cpu::relu_forward(x.d.data(), want.data(), n);
      expect_equal(out.download(), want, "relu_forward" + at);

      out.poison();
      EXPECT_LAUNCH(nn::relu_backward(dx.get(), ddy.get(), out.get(), n, nullptr));
      cpu::relu_backward(x.d.data(), dy.d.data(), want.data(), n);
      expect_equal(out.download(), want, "relu_backward" + at);

      out.poison();
      EXPECT_LAUNCH(nn::gelu_forward(dx.get(), out.get(), n, nullptr));
      cpu::gelu_forward(x.d.data(), want.data(), n);
      expect_close(out.download(), want, tol, tol, "gelu_forward" + at);

      out.poison();
      EXPECT_LAUNCH(nn::gelu_backward(dx.get(), ddy.get(), out.get(), n, nullptr));
      cpu::gelu_backward(x.d.data(), dy.d.data(), want.data(), n);
      expect_close(out.download(), want, tol, tol, "gelu_backward" + at);

      out.poison();
      EXPECT_LAUNCH(nn::add(dx.get(), ddy.get(), out.get(), n, nullptr));
      cpu::add(x.d.data(), dy.d.data(), want.data(), n);
      expect_close(out.download(), want, kEps<T>, kEps<T>, "add" + at);

      // in place: c aliases a
      EXPECT_LAUNCH(nn::add(out.get(), ddy.get(), out.get(), n, nullptr));
      cpu::add(want.data(), dy.d.data(), want.data(), n);
      expect_close(out.download(), want, 4 * kEps<T>, 4 * kEps<T>, "add in place" + at);

      out.poison();  // beta 0: y is not read
      EXPECT_LAUNCH(nn::axpby(T(1.5), dx.get(), T(0), out.get(), n, nullptr));
      cpu::axpby(1.5, x.d.data(), 0.0, want.data(), n);
      expect_close(out.download(), want, kEps<T>, kEps<T>, "axpby beta 0" + at);

      EXPECT_LAUNCH(nn::axpby(T(-0.75), ddy.get(), T(0.5), out.get(), n, nullptr));
      cpu::axpby(-0.75, dy.d.data(), 0.5, want.data(), n);
      expect_close(out.download(), want, 4 * kEps<T>, 4 * kEps<T>, "axpby" + at);

      out.poison();
      EXPECT_LAUNCH(nn::fill(out.get(), T(0.25), n, nullptr));
      cpu::fill(want.data(), 0.25, n);
      expect_equal(out.download(), want, "fill" + at);
    }
  // n == 0 launches nothing
  EXPECT_EQ(nn::relu_forward<T>(nullptr, nullptr, 0, nullptr), cudaSuccess);
}

// ---- bias, column sums --------------------------------------------------------------------

TYPED_TEST(NnGpu, BiasAddAndColumnSum) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  struct Shape {
    int rows, cols;
    size_t off;
  };
  std::uint64_t seed = 100;
  for (Shape s : {Shape{1, 1, 0}, Shape{37, 45, 0}, Shape{1300, 512, 0}, Shape{1300, 512, 1},
                  Shape{5, 6880, 0}, Shape{64, 8, 0}, Shape{3, 2049, 0}, Shape{2000, 33, 1}}) {
    const std::string at = " rows=" + std::to_string(s.rows) + " cols=" + std::to_string(s.cols) +
                           " offset=" + std::to_string(s.off);
    const size_t n = size_t(s.rows) * s.cols;
    const auto x = randn<T>(n, ++seed), bias = randn<T>(size_t(s.cols), ++seed);
    Dev<T> dx(n, s.off), db(size_t(s.cols), s.off), dy(n, s.off);
    dx.upload(x.t);
    db.upload(bias.t);
    dy.poison();
    EXPECT_LAUNCH(nn::bias_add(dx.get(), db.get(), dy.get(), s.rows, s.cols, nullptr));
    Host want(n);
    cpu::bias_add(x.d.data(), bias.d.data(), want.data(), s.rows, s.cols);
    expect_close(dy.download(), want, kEps<T>, kEps<T>, "bias_add" + at);

    db.poison();
    EXPECT_LAUNCH(nn::column_sum(dx.get(), db.get(), s.rows, s.cols, nullptr));
    Host sums(size_t(s.cols));
    cpu::column_sum(x.d.data(), sums.data(), s.rows, s.cols);
    expect_close(db.download(), sums, 4 * kEps<T> * s.rows, 0.0, "column_sum" + at);
  }
  // rows == 0: the sums are written as zeros
  Dev<T> db(7);
  db.poison();
  EXPECT_LAUNCH(nn::column_sum<T>(nullptr, db.get(), 0, 7, nullptr));
  expect_equal(db.download(), Host(7, 0.0), "column_sum rows=0");
}

// ---- LayerNorm ----------------------------------------------------------------------------

TYPED_TEST(NnGpu, LayerNormForwardBackward) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  struct Shape {
    int rows, cols;
    size_t off;
  };
  std::uint64_t seed = 200;
  // cols 4 / 45 / 512 / 1000 / 2052 / 513 cover the cached kVecs 1..8 and generic paths
  for (Shape s : {Shape{3, 4, 0}, Shape{37, 45, 0}, Shape{64, 512, 0}, Shape{1300, 512, 0},
                  Shape{64, 512, 1}, Shape{13, 1000, 0}, Shape{7, 2052, 0}, Shape{100, 513, 0},
                  Shape{9, 96, 0}, Shape{5, 256, 0}, Shape{2, 1, 0}}) {
    const std::string at = " rows=" + std::to_string(s.rows) + " cols=" + std::to_string(s.cols) +
                           " offset=" + std::to_string(s.off);
    const size_t n = size_t(s.rows) * s.cols, C = size_t(s.cols), R = size_t(s.rows);
    const auto x = randn<T>(n, ++seed, 2.0, 0.5), dy = randn<T>(n, ++seed);
    const auto gamma = randn<T>(C, ++seed, 0.2, 1.0), beta = randn<T>(C, ++seed, 0.2);
    Dev<T> dx(n, s.off), dg(C, s.off), dbeta(C, s.off), y(n, s.off), mean(R), rstd(R);
    dx.upload(x.t);
    dg.upload(gamma.t);
    dbeta.upload(beta.t);
    y.poison();
    mean.poison();
    rstd.poison();
    const double eps = 1e-5;
    EXPECT_LAUNCH(nn::layernorm_forward(dx.get(), dg.get(), dbeta.get(), y.get(), mean.get(),
                                        rstd.get(), s.rows, s.cols, T(eps), nullptr));
    Host wy(n), wmean(R), wrstd(R);
    cpu::layernorm_forward(x.d.data(), gamma.d.data(), beta.d.data(), wy.data(), wmean.data(),
                           wrstd.data(), s.rows, s.cols, eps);
    const double tol = 32 * kEps<T> * std::sqrt(double(s.cols));
    expect_close(y.download(), wy, tol, tol, "layernorm y" + at);
    expect_close(mean.download(), wmean, tol, tol, "layernorm mean" + at);
    expect_close(rstd.download(), wrstd, tol, tol, "layernorm rstd" + at);

    // backward from the GPU's saved mean / rstd (T-rounded) in both, so that the
    // reference sees the same statistics
    const std::vector<T> gmean = mean.download(), grstd = rstd.download();
    Host mean_d(gmean.begin(), gmean.end()), rstd_d(grstd.begin(), grstd.end());
    Dev<T> ddy(n, s.off), ddx(n, s.off), dgamma(C, s.off), ddbeta(C, s.off);
    ddy.upload(dy.t);
    ddx.poison();
    dgamma.poison();
    ddbeta.poison();
    EXPECT_LAUNCH(nn::layernorm_backward(dx.get(), dg.get(), mean.get(), rstd.get(), ddy.get(),
                                         ddx.get(), dgamma.get(), ddbeta.get(), s.rows, s.cols,
                                         nullptr));
    Host wdx(n), wdgamma(C), wdbeta(C);
    cpu::layernorm_backward(x.d.data(), gamma.d.data(), mean_d.data(), rstd_d.data(), dy.d.data(),
                            wdx.data(), wdgamma.data(), wdbeta.data(), s.rows, s.cols);
    // dx scales with rstd (up to 1/sqrt(eps) for cols 1, where x - mean is exactly 0)
    expect_close(ddx.download(), wdx, 4 * tol, 4 * tol, "layernorm dx" + at);
    expect_close(dgamma.download(), wdgamma, 8 * kEps<T> * s.rows, 0.0, "layernorm dgamma" + at);
    expect_close(ddbeta.download(), wdbeta, 4 * kEps<T> * s.rows, 0.0, "layernorm dbeta" + at);
  }
}

TYPED_TEST(NnGpu, LayerNormWithoutSavedStatistics) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  const int rows = 5, cols = 64;
  const auto x = randn<T>(320, 250), gamma = randn<T>(64, 251), beta = randn<T>(64, 252);
  Dev<T> dx(320), dg(64), db(64), y(320);
  dx.upload(x.t);
  dg.upload(gamma.t);
  db.upload(beta.t);
  y.poison();
  EXPECT_LAUNCH(nn::layernorm_forward<T>(dx.get(), dg.get(), db.get(), y.get(), nullptr, nullptr,
                                         rows, cols, T(1e-5), nullptr));
  Host want(320);
  cpu::layernorm_forward(x.d.data(), gamma.d.data(), beta.d.data(), want.data(), nullptr, nullptr,
                         rows, cols, 1e-5);
  expect_close(y.download(), want, 256 * kEps<T>, 256 * kEps<T>, "layernorm no stats");
}

// ---- embedding, positional encoding -------------------------------------------------------

TYPED_TEST(NnGpu, EmbeddingForwardBackward) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  const int vocab = 50, rows = 37;
  std::mt19937 gen(300);
  std::vector<int> ids(rows);
  for (int& id : ids) id = static_cast<int>(gen() % 8);  // many repeats
  ids[5] = -1;                                            // padding
  ids[6] = vocab - 1;
  int* dids = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dids), ids.size() * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dids, ids.data(), ids.size() * sizeof(int), cudaMemcpyHostToDevice),
            cudaSuccess);
  std::uint64_t seed = 300;
  for (int dim : {1, 3, 45, 512})
    for (size_t off : {size_t{0}, size_t{1}}) {
      const std::string at = " dim=" + std::to_string(dim) + " offset=" + std::to_string(off);
      const size_t tn = size_t(vocab) * dim, on = size_t(rows) * dim;
      const auto table = randn<T>(tn, ++seed), dout = randn<T>(on, ++seed);
      Dev<T> dtable(tn, off), out(on, off), ddout(on, off), dgrad(tn, off);
      dtable.upload(table.t);
      out.poison();
      EXPECT_LAUNCH(nn::embedding_forward(dids, dtable.get(), out.get(), rows, dim, nullptr));
      Host want(on);
      cpu::embedding_forward(ids.data(), table.d.data(), want.data(), rows, dim);
      expect_equal(out.download(), want, "embedding_forward" + at);

      ddout.upload(dout.t);
      dgrad.zero();
      EXPECT_LAUNCH(nn::embedding_backward(dids, ddout.get(), dgrad.get(), rows, dim, nullptr));
      Host wgrad(tn, 0.0);
      cpu::embedding_backward(ids.data(), dout.d.data(), wgrad.data(), rows, dim);
      expect_close(dgrad.download(), wgrad, 32 * kEps<T>, 32 * kEps<T>, "embedding_backward" + at);
    }
  cudaFree(dids);
}

TYPED_TEST(NnGpu, PositionalEncoding) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  struct Shape {
    int batch, seq, dim;
  };
  std::uint64_t seed = 400;
  for (Shape s : {Shape{3, 17, 45}, Shape{2, 13, 512}, Shape{1, 2048, 64}, Shape{4, 1, 1}}) {
    const std::string at = " batch=" + std::to_string(s.batch) + " seq=" + std::to_string(s.seq) +
                           " dim=" + std::to_string(s.dim);
    const size_t n = size_t(s.batch) * s.seq * s.dim;
    const auto x = randn<T>(n, ++seed);
    Dev<T> dx(n);
    dx.upload(x.t);
    EXPECT_LAUNCH(nn::add_positional_encoding(dx.get(), s.batch, s.seq, s.dim, nullptr));
    Host want = x.d;
    cpu::add_positional_encoding(want.data(), s.batch, s.seq, s.dim);
    // the reference evaluates the angle as p 10000^(-2i/dim), the kernel as p exp(-2i/dim
    // ln 10000): double roundings apart, which sin and cos carry at angles up to seq
    const double abs = 4 * kEps<T> + 16 * std::numeric_limits<double>::epsilon() * s.seq;
    expect_close(dx.download(), want, abs, 4 * kEps<T>, "positional encoding" + at);
  }
}

// ---- losses -------------------------------------------------------------------------------

TYPED_TEST(NnGpu, SoftmaxCrossEntropy) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  struct Case {
    int rows, vocab, ignore;
    size_t off;
  };
  std::uint64_t seed = 500;
  // vocab 45: scalar path; 6880: registers (kVecs 4 in float, 8 in double); 20000: scalar
  // (too long); offset 1: scalar; ignore 0 is an in-range padding id
  for (Case c : {Case{37, 45, -100, 0}, Case{19, 6880, -100, 0}, Case{1300, 6880, 0, 0},
                 Case{5, 20000, -100, 0}, Case{3, 1, -100, 0}, Case{64, 1000, -1, 1},
                 Case{8, 2048, -100, 0}, Case{4, 4, 3, 0}}) {
    const std::string at = " rows=" + std::to_string(c.rows) + " vocab=" + std::to_string(c.vocab) +
                           " offset=" + std::to_string(c.off);
    const size_t n = size_t(c.rows) * c.vocab;
    const auto logits = randn<T>(n, ++seed, 3.0);
    std::mt19937 gen(static_cast<unsigned>(seed));
    std::vector<int> targets(size_t(c.rows));
    int counted = 0;
    for (size_t r = 0; r < targets.size(); ++r) {
      targets[r] = r % 5 == 1 ? c.ignore : static_cast<int>(gen() % unsigned(c.vocab));
      if (targets[r] != c.ignore) ++counted;
    }
    const double scale = counted > 0 ? 1.0 / counted : 1.0;
    int* dt = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dt), targets.size() * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dt, targets.data(), targets.size() * sizeof(int), cudaMemcpyHostToDevice),
              cudaSuccess);
    Dev<T> dl(n, c.off), dd(n, c.off), loss(1), count(1);
    dl.upload(logits.t);
    dd.poison();
    loss.poison();
    count.poison();
    EXPECT_LAUNCH(nn::softmax_cross_entropy(dl.get(), dt, loss.get(), count.get(), dd.get(), c.rows,
                                            c.vocab, c.ignore, T(scale), nullptr));
    Host wd(n);
    double wloss = 0.0, wcount = 0.0;
    cpu::softmax_cross_entropy(logits.d.data(), targets.data(), &wloss, &wcount, wd.data(), c.rows,
                               c.vocab, c.ignore, scale);
    expect_close(dd.download(), wd, 64 * kEps<T> * scale, 64 * kEps<T>, "CE dlogits" + at);
    expect_close(loss.download(), Host{wloss}, 0.0, 64 * kEps<T>, "CE loss_sum" + at);
    expect_equal(count.download(), Host{wcount}, "CE count" + at);
    // in place: dlogits overwrites logits
    EXPECT_LAUNCH(nn::softmax_cross_entropy(dl.get(), dt, loss.get(), count.get(), dl.get(), c.rows,
                                            c.vocab, c.ignore, T(scale), nullptr));
    expect_close(dl.download(), wd, 64 * kEps<T> * scale, 64 * kEps<T>, "CE in place" + at);
    expect_close(loss.download(), Host{wloss}, 0.0, 64 * kEps<T>, "CE in place loss_sum" + at);
    cudaFree(dt);
  }
  // rows == 0: loss and count written as 0
  Dev<T> loss(1), count(1);
  loss.poison();
  count.poison();
  EXPECT_LAUNCH(nn::softmax_cross_entropy<T>(nullptr, nullptr, loss.get(), count.get(), nullptr, 0,
                                             10, -100, T(1), nullptr));
  expect_equal(loss.download(), Host{0.0}, "CE rows=0 loss");
  expect_equal(count.download(), Host{0.0}, "CE rows=0 count");
}

TYPED_TEST(NnGpu, SoftmaxCrossEntropyBadTargetGivesNaN) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  const int rows = 3, vocab = 8;
  const auto logits = randn<T>(24, 550);
  const std::vector<int> targets = {1, 8, 2};  // 8 is out of range
  int* dt = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dt), 3 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dt, targets.data(), 3 * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  Dev<T> dl(24), dd(24), loss(1), count(1);
  dl.upload(logits.t);
  EXPECT_LAUNCH(nn::softmax_cross_entropy(dl.get(), dt, loss.get(), count.get(), dd.get(), rows,
                                          vocab, -100, T(1), nullptr));
  EXPECT_TRUE(std::isnan(static_cast<double>(loss.download()[0])));
  EXPECT_EQ(count.download()[0], T(3));
  cudaFree(dt);
}

TYPED_TEST(NnGpu, Mse) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  std::uint64_t seed = 600;
  for (size_t n : {size_t{1}, size_t{1001}, size_t{100003}})
    for (size_t off : {size_t{0}, size_t{1}}) {
      const std::string at = " n=" + std::to_string(n) + " offset=" + std::to_string(off);
      const auto pred = randn<T>(n, ++seed), target = randn<T>(n, ++seed);
      Dev<T> dp(n, off), dt(n, off), dd(n, off), loss(1);
      dp.upload(pred.t);
      dt.upload(target.t);
      dd.poison();
      loss.poison();
      const double scale = 1.0 / double(n);
      EXPECT_LAUNCH(nn::mse(dp.get(), dt.get(), loss.get(), dd.get(), n, T(scale), nullptr));
      Host wd(n);
      double wl = 0.0;
      cpu::mse(pred.d.data(), target.d.data(), &wl, wd.data(), n, scale);
      expect_close(dd.download(), wd, 4 * kEps<T> * scale, 4 * kEps<T>, "mse dpred" + at);
      expect_close(loss.download(), Host{wl}, 0.0, 128 * kEps<T>, "mse loss_sum" + at);
    }
}

// ---- optimizers, clipping -----------------------------------------------------------------

TYPED_TEST(NnGpu, AdamSteps) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  std::uint64_t seed = 700;
  for (size_t n : {size_t{1}, size_t{1001}, size_t{4099}})
    for (size_t off : {size_t{0}, size_t{1}}) {
      const std::string at = " n=" + std::to_string(n) + " offset=" + std::to_string(off);
      const auto p0 = randn<T>(n, ++seed);
      Dev<T> dp(n, off), dg(n, off), dm(n, off), dv(n, off);
      dp.upload(p0.t);
      dm.zero();
      dv.zero();
      Host p = p0.d, m(n, 0.0), v(n, 0.0);
      for (int t = 1; t <= 3; ++t) {
        const auto g = randn<T>(n, ++seed, 0.1);
        dg.upload(g.t);
        const double lr = 1e-2, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = t == 3 ? 0.01 : 0.0;
        EXPECT_LAUNCH(nn::adam_step(dp.get(), dg.get(), dm.get(), dv.get(), n, T(lr), T(b1), T(b2),
                                    T(eps), T(wd), t, nullptr));
        cpu::adam_step(p.data(), g.d.data(), m.data(), v.data(), n, T(lr), T(b1), T(b2), T(eps),
                       T(wd), t);
        const std::string step = at + " t=" + std::to_string(t);
        expect_close(dp.download(), p, 32 * kEps<T>, 32 * kEps<T>, "adam p" + step);
        expect_close(dm.download(), m, 32 * kEps<T> * 0.1, 32 * kEps<T>, "adam m" + step);
        expect_close(dv.download(), v, 32 * kEps<T> * 0.01, 32 * kEps<T>, "adam v" + step);
      }
    }
  EXPECT_EQ(nn::adam_step<T>(nullptr, nullptr, nullptr, nullptr, 0, T(1), T(0.9), T(0.999), T(1e-8),
                             T(0), 1, nullptr),
            cudaSuccess);
}

TYPED_TEST(NnGpu, SgdSteps) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  std::uint64_t seed = 800;
  for (size_t n : {size_t{1}, size_t{1001}})
    for (size_t off : {size_t{0}, size_t{1}})
      for (bool momentum : {false, true}) {
        const std::string at = " n=" + std::to_string(n) + " offset=" + std::to_string(off) +
                               (momentum ? " momentum" : "");
        const auto p0 = randn<T>(n, ++seed);
        Dev<T> dp(n, off), dg(n, off), db(n, off);
        dp.upload(p0.t);
        db.zero();
        Host p = p0.d, buf(n, 0.0);
        for (int step = 0; step < 2; ++step) {
          const auto g = randn<T>(n, ++seed);
          dg.upload(g.t);
          EXPECT_LAUNCH(nn::sgd_step(dp.get(), dg.get(), momentum ? db.get() : nullptr, n, T(0.1),
                                     T(0.9), nullptr));
          cpu::sgd_step(p.data(), g.d.data(), momentum ? buf.data() : nullptr, n, T(0.1), T(0.9));
        }
        expect_close(dp.download(), p, 8 * kEps<T>, 8 * kEps<T>, "sgd p" + at);
        if (momentum) expect_close(db.download(), buf, 8 * kEps<T>, 8 * kEps<T>, "sgd buf" + at);
      }
}

TYPED_TEST(NnGpu, SumSquaresAndClipByNorm) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  std::uint64_t seed = 900;
  for (size_t off : {size_t{0}, size_t{1}}) {
    const std::string at = " offset=" + std::to_string(off);
    const auto a = randn<T>(100003, ++seed), b = randn<T>(17, ++seed);
    Dev<T> da(100003, off), dbb(17, off), sum(1);
    da.upload(a.t);
    dbb.upload(b.t);
    sum.upload({T(2)});  // accumulates onto what is there
    EXPECT_LAUNCH(nn::sum_squares(da.get(), sum.get(), 100003, nullptr));
    EXPECT_LAUNCH(nn::sum_squares(dbb.get(), sum.get(), 17, nullptr));
    double want = 2.0;
    cpu::sum_squares(a.d.data(), &want, 100003);
    cpu::sum_squares(b.d.data(), &want, 17);
    const std::vector<T> got = sum.download();
    // The reference sums 100020 squares one after another: its own rounding grows like
    // sqrt(n) * eps (seen: 1.8e-14 relative in double on an H200, above 64 eps), so the
    // bound is 4 sqrt(n) eps rather than a constant.
    expect_close(got, Host{want}, 0.0, 4 * std::sqrt(100020.0) * kEps<T>, "sum_squares" + at);

    // norm ~ 316: max_norm 10 scales by ~0.03; max_norm 1000 leaves x bit for bit
    const double gs = static_cast<double>(got[0]);
    EXPECT_LAUNCH(nn::clip_by_norm(da.get(), 100003, sum.get(), T(10), nullptr));
    Host wa = a.d;
    cpu::clip_by_norm(wa.data(), 100003, &gs, double(T(10)));
    expect_close(da.download(), wa, 4 * kEps<T>, 4 * kEps<T>, "clip_by_norm" + at);
    EXPECT_LAUNCH(nn::clip_by_norm(dbb.get(), 17, sum.get(), T(1000), nullptr));
    expect_equal(dbb.download(), b.d, "clip_by_norm below the limit" + at);
  }
}

// ---- layouts, transpose -------------------------------------------------------------------

TYPED_TEST(NnGpu, HeadLayouts) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  struct Shape {
    int B, N, H, d;
    size_t off;
  };
  std::uint64_t seed = 1000;
  for (Shape s : {Shape{2, 13, 8, 64, 0}, Shape{2, 13, 8, 64, 1}, Shape{3, 5, 3, 7, 0},
                  Shape{1, 1, 1, 1, 0}, Shape{4, 33, 2, 6, 0}}) {
    const std::string at = " B=" + std::to_string(s.B) + " N=" + std::to_string(s.N) + " H=" +
                           std::to_string(s.H) + " d=" + std::to_string(s.d) +
                           " offset=" + std::to_string(s.off);
    const size_t n = size_t(s.B) * s.N * s.H * s.d;
    const auto qkv = randn<T>(3 * n, ++seed);
    Dev<T> dqkv(3 * n, s.off), q(n, s.off), k(n, s.off), v(n, s.off), back(3 * n, s.off);
    dqkv.upload(qkv.t);
    q.poison();
    k.poison();
    v.poison();
    EXPECT_LAUNCH(nn::split_qkv(dqkv.get(), q.get(), k.get(), v.get(), s.B, s.N, s.H, s.d, nullptr));
    Host wq(n), wk(n), wv(n);
    cpu::split_qkv(qkv.d.data(), wq.data(), wk.data(), wv.data(), s.B, s.N, s.H, s.d);
    expect_equal(q.download(), wq, "split_qkv q" + at);
    expect_equal(k.download(), wk, "split_qkv k" + at);
    expect_equal(v.download(), wv, "split_qkv v" + at);
    back.poison();
    EXPECT_LAUNCH(nn::merge_qkv(q.get(), k.get(), v.get(), back.get(), s.B, s.N, s.H, s.d, nullptr));
    expect_equal(back.download(), qkv.d, "merge_qkv" + at);

    const auto x = randn<T>(n, ++seed);
    Dev<T> dx(n, s.off), y(n, s.off), z(n, s.off);
    dx.upload(x.t);
    y.poison();
    EXPECT_LAUNCH(nn::bnhd_to_bhnd(dx.get(), y.get(), s.B, s.N, s.H, s.d, nullptr));
    Host wy(n);
    cpu::bnhd_to_bhnd(x.d.data(), wy.data(), s.B, s.N, s.H, s.d);
    expect_equal(y.download(), wy, "bnhd_to_bhnd" + at);
    z.poison();
    EXPECT_LAUNCH(nn::bhnd_to_bnhd(y.get(), z.get(), s.B, s.N, s.H, s.d, nullptr));
    expect_equal(z.download(), x.d, "bhnd_to_bnhd" + at);
  }
}

TYPED_TEST(NnGpu, Transpose) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  std::uint64_t seed = 1100;
  for (auto [rows, cols] : std::vector<std::pair<int, int>>{
           {1, 1}, {37, 45}, {1000, 33}, {64, 512}, {33, 2000}, {1, 70}, {70, 1}}) {
    const std::string at = " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols);
    const size_t n = size_t(rows) * cols;
    const auto x = randn<T>(n, ++seed);
    Dev<T> dx(n), y(n);
    dx.upload(x.t);
    y.poison();
    EXPECT_LAUNCH(nn::transpose(dx.get(), y.get(), rows, cols, nullptr));
    Host want(n);
    cpu::transpose(x.d.data(), want.data(), rows, cols);
    expect_equal(y.download(), want, "transpose" + at);
  }
}

// ---- GEMM, naive attention ----------------------------------------------------------------

TYPED_TEST(NnGpu, GemmSimple) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  struct Shape {
    int M, N, K;
  };
  std::uint64_t seed = 1200;
  for (Shape s : {Shape{1, 1, 1}, Shape{37, 45, 29}, Shape{130, 67, 200}, Shape{64, 64, 16},
                  Shape{5, 7, 0}, Shape{1, 300, 17}, Shape{300, 1, 65}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (double beta : {0.0, -0.5}) {
          const std::string at = " M=" + std::to_string(s.M) + " N=" + std::to_string(s.N) +
                                 " K=" + std::to_string(s.K) + " ta=" + std::to_string(ta) +
                                 " tb=" + std::to_string(tb) + " beta=" + std::to_string(beta);
          const size_t na = size_t(s.M) * s.K, nb = size_t(s.K) * s.N, nc = size_t(s.M) * s.N;
          const auto a = randn<T>(na, ++seed), b = randn<T>(nb, ++seed), c = randn<T>(nc, ++seed);
          Dev<T> da(na), db(nb), dc(nc);
          da.upload(a.t);
          db.upload(b.t);
          if (beta == 0.0)
            dc.poison();  // not read
          else
            dc.upload(c.t);
          EXPECT_LAUNCH(nn::gemm_simple(ta, tb, s.M, s.N, s.K, T(1.25), da.get(), db.get(), T(beta),
                                        dc.get(), nullptr));
          Host want = c.d;
          cpu::gemm_simple(ta, tb, s.M, s.N, s.K, 1.25, a.d.data(), b.d.data(), beta, want.data());
          const double tol = 8 * kEps<T> * (s.K + 1);
          expect_close(dc.download(), want, tol, tol, "gemm_simple" + at);
        }
}

TYPED_TEST(NnGpu, AttentionNaiveForwardBackward) {
  REQUIRE_DEVICE();
  using T = TypeParam;
  struct Case {
    int B, H, Hkv, N, d;
    bool causal;
    double scale;
  };
  std::uint64_t seed = 1300;
  for (Case c : {Case{2, 4, 4, 1, 3, false, 0.0}, Case{2, 4, 2, 7, 16, true, 0.0},
                 Case{1, 4, 1, 33, 3, false, 0.3}, Case{2, 4, 4, 33, 16, true, 0.3},
                 Case{1, 2, 2, 64, 32, true, 0.0}}) {
    const std::string at = " B=" + std::to_string(c.B) + " H=" + std::to_string(c.H) +
                           " Hkv=" + std::to_string(c.Hkv) + " N=" + std::to_string(c.N) +
                           " d=" + std::to_string(c.d) + (c.causal ? " causal" : "");
    const size_t nq = size_t(c.B) * c.H * c.N * c.d, nkv = size_t(c.B) * c.Hkv * c.N * c.d;
    const size_t nl = size_t(c.B) * c.H * c.N, ns = nl * c.N;
    const auto q = randn<T>(nq, ++seed), k = randn<T>(nkv, ++seed), v = randn<T>(nkv, ++seed);
    const auto dout = randn<T>(nq, ++seed);
    Dev<T> dq(nq), dk(nkv), dv(nkv), o(nq), lse(nl), scratch(ns), ddo(nq), gq(nq), gk(nkv),
        gv(nkv);
    dq.upload(q.t);
    dk.upload(k.t);
    dv.upload(v.t);
    o.poison();
    lse.poison();
    scratch.poison();
    EXPECT_LAUNCH(nn::attention_naive_forward(dq.get(), dk.get(), dv.get(), o.get(), lse.get(),
                                              scratch.get(), c.B, c.H, c.Hkv, c.N, c.d, c.causal,
                                              T(c.scale), nullptr));
    Host wo(nq), wl(nl);
    cpu::attention_naive_forward(q.d.data(), k.d.data(), v.d.data(), wo.data(), wl.data(), c.B, c.H,
                                 c.Hkv, c.N, c.d, c.causal, double(T(c.scale)));
    const double tol = 64 * kEps<T> * (c.N + c.d);
    expect_close(o.download(), wo, tol, tol, "attention O" + at);
    expect_close(lse.download(), wl, tol, tol, "attention LSE" + at);

    ddo.upload(dout.t);
    gq.poison();
    gk.poison();
    gv.poison();
    scratch.poison();
    EXPECT_LAUNCH(nn::attention_naive_backward(dq.get(), dk.get(), dv.get(), o.get(), lse.get(),
                                               ddo.get(), gq.get(), gk.get(), gv.get(),
                                               scratch.get(), c.B, c.H, c.Hkv, c.N, c.d, c.causal,
                                               T(c.scale), nullptr));
    Host wq(nq), wk(nkv), wv(nkv);
    cpu::attention_naive_backward(q.d.data(), k.d.data(), v.d.data(), dout.d.data(), wq.data(),
                                  wk.data(), wv.data(), c.B, c.H, c.Hkv, c.N, c.d, c.causal,
                                  double(T(c.scale)));
    const double gtol = 4 * tol * c.H / c.Hkv;
    expect_close(gq.download(), wq, gtol, gtol, "attention dQ" + at);
    expect_close(gk.download(), wk, gtol, gtol, "attention dK" + at);
    expect_close(gv.download(), wv, gtol, gtol, "attention dV" + at);
  }
}

// ---- arguments (no device needed: rejected before any CUDA call) -------------------------

TYPED_TEST(NnGpu, BadArgumentsAreRejected) {
  using T = TypeParam;
  T* p = reinterpret_cast<T*>(std::uintptr_t{256});  // never dereferenced
  const int* ids = reinterpret_cast<const int*>(std::uintptr_t{256});
  const cudaError_t bad = cudaErrorInvalidValue;
  EXPECT_EQ(nn::bias_add<T>(p, p, p, -1, 4, nullptr), bad);
  EXPECT_EQ(nn::bias_add<T>(nullptr, p, p, 2, 4, nullptr), bad);
  EXPECT_EQ(nn::column_sum<T>(p, nullptr, 2, 4, nullptr), bad);
  EXPECT_EQ(nn::relu_forward<T>(nullptr, p, 5, nullptr), bad);
  EXPECT_EQ(nn::gelu_backward<T>(p, nullptr, p, 5, nullptr), bad);
  EXPECT_EQ(nn::layernorm_forward<T>(p, p, p, p, p, p, 3, -2, T(1e-5), nullptr), bad);
  EXPECT_EQ(nn::layernorm_forward<T>(p, p, p, p, p, p, 3, 0, T(1e-5), nullptr), bad);
  EXPECT_EQ(nn::layernorm_backward<T>(p, p, p, p, p, p, nullptr, p, 3, 4, nullptr), bad);
  EXPECT_EQ(nn::embedding_forward<T>(nullptr, p, p, 3, 4, nullptr), bad);
  EXPECT_EQ(nn::embedding_backward<T>(ids, p, p, -3, 4, nullptr), bad);
  EXPECT_EQ(nn::add_positional_encoding<T>(p, 1, -1, 4, nullptr), bad);
  EXPECT_EQ(nn::softmax_cross_entropy<T>(p, ids, p, p, p, 3, 0, -100, T(1), nullptr), bad);
  EXPECT_EQ(nn::softmax_cross_entropy<T>(p, ids, nullptr, p, p, 3, 4, -100, T(1), nullptr), bad);
  EXPECT_EQ(nn::mse<T>(p, nullptr, p, p, 4, T(1), nullptr), bad);
  EXPECT_EQ(nn::adam_step<T>(p, p, p, p, 4, T(1), T(0.9), T(0.999), T(1e-8), T(0), 0, nullptr), bad);
  EXPECT_EQ(nn::sgd_step<T>(p, nullptr, nullptr, 4, T(1), T(0), nullptr), bad);
  EXPECT_EQ(nn::sum_squares<T>(p, nullptr, 4, nullptr), bad);
  EXPECT_EQ(nn::clip_by_norm<T>(p, 4, nullptr, T(1), nullptr), bad);
  EXPECT_EQ(nn::split_qkv<T>(p, p, p, p, 1, 1, -1, 4, nullptr), bad);
  EXPECT_EQ(nn::merge_qkv<T>(p, p, nullptr, p, 1, 1, 1, 4, nullptr), bad);
  EXPECT_EQ(nn::bnhd_to_bhnd<T>(p, nullptr, 1, 1, 1, 4, nullptr), bad);
  EXPECT_EQ(nn::transpose<T>(p, p, -1, 4, nullptr), bad);
  EXPECT_EQ(nn::gemm_simple<T>(false, false, 2, 2, -1, T(1), p, p, T(0), p, nullptr), bad);
  EXPECT_EQ(nn::gemm_simple<T>(false, false, 2, 2, 2, T(1), p, nullptr, T(0), p, nullptr), bad);
  EXPECT_EQ(nn::attention_naive_forward<T>(p, p, p, p, p, p, 1, 3, 2, 4, 4, false, T(0), nullptr),
            bad);  // Hkv does not divide H
  EXPECT_EQ(nn::attention_naive_backward<T>(p, p, p, p, p, p, p, p, nullptr, p, 1, 2, 1, 4, 4, true,
                                            T(0), nullptr),
            bad);
  // Empty work is not an error and launches nothing.
  EXPECT_EQ(nn::transpose<T>(nullptr, nullptr, 0, 5, nullptr), cudaSuccess);
  EXPECT_EQ(nn::fill<T>(nullptr, T(1), 0, nullptr), cudaSuccess);
  EXPECT_EQ(nn::layernorm_forward<T>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 8,
                                     T(1e-5), nullptr),
            cudaSuccess);
}

}  // namespace
