#include "models/tasks.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <random>
#include <stdexcept>

#include "models/context.hpp"
#include "models/layers.hpp"
#include "models/ops.hpp"
#include "models/optim.hpp"

namespace models {

namespace {

Tensor upload(const std::vector<double>& v, const Shape& s, DType dt) {
  if (dt == DType::f64) return Tensor::from_host(v, s);
  return Tensor::from_host(std::vector<float>(v.begin(), v.end()), s);
}

// Solves the symmetric positive definite system A x = b (n x n, several right-hand sides
// as columns of B (n x m)) by Gaussian elimination with partial pivoting, in double.
std::vector<double> solve(std::vector<double> A, std::vector<double> B, int n, int m) {
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(A[r * n + c]) > std::abs(A[piv * n + c])) piv = r;
    if (piv != c) {
      for (int k = 0; k < n; ++k) std::swap(A[c * n + k], A[piv * n + k]);
      for (int k = 0; k < m; ++k) std::swap(B[c * m + k], B[piv * m + k]);
    }
    for (int r = c + 1; r < n; ++r) {
      const double f = A[r * n + c] / A[c * n + c];
      for (int k = c; k < n; ++k) A[r * n + k] -= f * A[c * n + k];
      for (int k = 0; k < m; ++k) B[r * m + k] -= f * B[c * m + k];
    }
  }
  std::vector<double> X(static_cast<std::size_t>(n * m));
  for (int r = n - 1; r >= 0; --r)
    for (int k = 0; k < m; ++k) {
      double s = B[r * m + k];
      for (int j = r + 1; j < n; ++j) s -= A[r * n + j] * X[j * m + k];
      X[r * m + k] = s / A[r * n + r];
    }
  return X;
}

double mean_last(const std::vector<double>& v, std::size_t k) {
  const std::size_t n = std::min(k, v.size());
  double s = 0;
  for (std::size_t i = v.size() - n; i < v.size(); ++i) s += v[i];
  return n ? s / static_cast<double>(n) : 0;
}

}  // namespace

LeastSquaresResult run_least_squares(DType dtype, int n, int p, int q, int steps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> X(static_cast<std::size_t>(n * p)), Wt(static_cast<std::size_t>(p * q)), bt(q),
      Y(static_cast<std::size_t>(n * q));
  for (auto& x : X) x = normal(rng);
  for (auto& w : Wt) w = normal(rng);
  for (auto& b : bt) b = normal(rng);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < q; ++k) {
      double s = bt[k] + 0.1 * normal(rng);
      for (int j = 0; j < p; ++j) s += X[i * p + j] * Wt[j * q + k];
      Y[i * q + k] = s;
    }
  // Closed form with a bias column: [W; b] = (Xa^T Xa)^-1 Xa^T Y, Xa = [X 1].
  const int pa = p + 1;
  std::vector<double> AtA(static_cast<std::size_t>(pa * pa), 0.0), AtY(static_cast<std::size_t>(pa * q), 0.0);
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < pa; ++a) {
      const double xa = a < p ? X[i * p + a] : 1.0;
      for (int c = 0; c < pa; ++c) AtA[a * pa + c] += xa * (c < p ? X[i * p + c] : 1.0);
      for (int k = 0; k < q; ++k) AtY[a * q + k] += xa * Y[i * q + k];
    }
  const std::vector<double> Wstar = solve(AtA, AtY, pa, q);
  auto mse_of = [&](const std::vector<double>& Wb) {
    double s = 0;
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < q; ++k) {
        double y = Wb[p * q + k];
        for (int j = 0; j < p; ++j) y += X[i * p + j] * Wb[j * q + k];
        s += (y - Y[i * q + k]) * (y - Y[i * q + k]);
      }
    return s / (n * q);
  };

  Init init(seed + 1);
  Linear net(p, q, true, dtype, init);
  Tensor x = upload(X, {n, p}, dtype), y = upload(Y, {n, q}, dtype);
  // Full-batch gradient descent: the loss Hessian is (2 / q) X^T X / n ~ (2/q) I, so a
  // step of 1.0 contracts the error by ~|1 - 2/3| per step.
  SGD opt(net.parameters(), 1.0, 0.0);
  LeastSquaresResult r;
  for (int s = 0; s < steps; ++s) {
    Tensor loss = mse_loss(net(x), y);
    backward(loss);
    opt.step();
    opt.zero_grad();
    if (s == steps - 1) r.loss = loss.item();
  }
  const auto W = net.W.to_host(), b = net.b.to_host();
  double num = 0, den = 0;
  for (int j = 0; j < p; ++j)
    for (int k = 0; k < q; ++k) {
      num += std::pow(W[j * q + k] - Wstar[j * q + k], 2);
      den += std::pow(Wstar[j * q + k], 2);
    }
  for (int k = 0; k < q; ++k) {
    num += std::pow(b[k] - Wstar[p * q + k], 2);
    den += std::pow(Wstar[p * q + k], 2);
  }
  r.weight_rel_error = std::sqrt(num / den);
  r.closed_form_loss = mse_of(Wstar);
  r.steps = steps;
  return r;
}

CurveResult run_sine_task(SineTask task, int steps, int B, int S, int E, int layers, int heads, std::uint64_t seed,
                          Precision precision) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> noise(-0.5, 0.5), phase(0.0, 2 * std::numbers::pi);
  std::vector<double> X(static_cast<std::size_t>(B * S * E)), Y(X.size());
  for (int b = 0; b < B; ++b) {
    const double phi = phase(rng);
    for (int s = 0; s < S; ++s)
      for (int e = 0; e < E; ++e) {
        const std::size_t i = static_cast<std::size_t>((b * S + s) * E + e);
        if (task == SineTask::denoise) {
          Y[i] = std::sin(0.1 * s + 0.05 * e + phi);
          X[i] = Y[i] + noise(rng);
        } else {
          X[i] = std::sin(b + s + e / 10.0);
          Y[i] = -X[i];
        }
      }
  }
  const DType dt = DType::f32;
  Init init(seed + 1);
  std::vector<EncoderLayer> enc;
  for (int l = 0; l < layers; ++l) enc.emplace_back(E, heads, 4 * E, Activation::relu, dt, init);
  Linear head(E, E, true, dt, init);
  std::vector<Tensor> params;
  for (const auto& l : enc) l.parameters(params);
  head.parameters(params);
  Adam opt(params, 1e-3);
  WarmupCosine sched{1e-3, 50, steps, 1e-5};
  Tensor x = upload(X, {B, S, E}, dt), y = upload(Y, {B, S, E}, dt);
  CurveResult r;
  Tensor log = Tensor::zeros({steps}, dt);
  for (int s = 0; s < steps; ++s) {
    std::optional<WeightCastScope> casts;  // bf16: one cast of the weights per step
    if (precision == Precision::bf16) casts.emplace().prefetch(params);
    Tensor h = precision == Precision::bf16 ? cast(x, DType::bf16) : x;
    for (const auto& l : enc) h = l(h);
    Tensor loss = mse_loss(head(h), y);  // bf16 predictions: the loss in float
    backward(loss);
    casts.reset();
    clip_grad_norm(params, 1.0);
    opt.set_lr(sched.at(s));
    opt.step();
    opt.zero_grad();
    MODELS_CUDA(cudaMemcpyAsync(log.data<float>() + s, loss.raw(), sizeof(float), cudaMemcpyDeviceToDevice,
                                ctx().stream()));
  }
  r.losses = log.to_host();
  r.final_loss = mean_last(r.losses, 10);
  r.steps = steps;
  return r;
}

ReverseResult run_reverse_task(int steps, int N, int V, int batch, std::uint64_t seed, Precision precision,
                               int heads) {
  constexpr std::int32_t kPad = 0, kBos = 1;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> tok(2, V - 1);
  auto make = [&](int B, std::vector<std::int32_t>& src, std::vector<std::int32_t>& tin, std::vector<std::int32_t>& tout) {
    src.resize(static_cast<std::size_t>(B * N));
    tin.resize(src.size());
    tout.resize(src.size());
    for (auto& t : src) t = tok(rng);
    for (int b = 0; b < B; ++b)
      for (int n = 0; n < N; ++n) {
        tout[b * N + n] = src[b * N + (N - 1 - n)];
        tin[b * N + n] = n == 0 ? kBos : tout[b * N + n - 1];
      }
  };
  TransformerConfig cfg;
  cfg.vocab = V;
  cfg.d_model = 64;
  cfg.heads = heads;
  cfg.hidden = 128;
  cfg.encoder_layers = 2;
  cfg.decoder_layers = 2;
  cfg.precision = precision;
  Transformer model(cfg, seed + 1);
  Adam opt(model.parameters(), 1e-3, 0.9, 0.98, 1e-9);
  WarmupCosine sched{1e-3, 100, steps, 1e-5};
  ReverseResult r;
  Tensor log = Tensor::zeros({steps}, DType::f32);
  std::vector<std::int32_t> src, tin, tout;
  for (int s = 0; s < steps; ++s) {
    make(batch, src, tin, tout);
    Tensor ts = Tensor::from_host(src, {batch, N}), ti = Tensor::from_host(tin, {batch, N}),
           to = Tensor::from_host(tout, {batch * N});
    std::optional<WeightCastScope> casts;
    if (precision == Precision::bf16) casts.emplace().prefetch(opt.params());
    Tensor loss = cross_entropy(model(ts, ti), to);
    backward(loss);
    casts.reset();
    clip_grad_norm(opt.params(), 1.0);
    opt.set_lr(sched.at(s));
    opt.step();
    opt.zero_grad();
    MODELS_CUDA(cudaMemcpyAsync(log.data<float>() + s, loss.raw(), sizeof(float), cudaMemcpyDeviceToDevice,
                                ctx().stream()));
  }
  r.losses = log.to_host();
  r.final_loss = mean_last(r.losses, 20);
  r.steps = steps;

  // Greedy decoding of fresh sequences: position i is predicted from the decoder input
  // BOS + predictions[:i] (later positions hold PAD, which the causal mask hides).
  NoGradGuard no_grad;
  const int B = 256;
  make(B, src, tin, tout);
  Tensor ts = Tensor::from_host(src, {B, N});
  Tensor memory = model.encode(ts);
  std::vector<std::int32_t> dec(static_cast<std::size_t>(B * N), kPad), pred(dec.size(), kPad);
  for (int b = 0; b < B; ++b) dec[b * N] = kBos;
  for (int i = 0; i < N; ++i) {
    Tensor logits = model.decode(Tensor::from_host(dec, {B, N}), memory);
    const auto h = logits.to_host();
    for (int b = 0; b < B; ++b) {
      const double* row = h.data() + static_cast<std::size_t>((b * N + i) * V);
      const auto best = static_cast<std::int32_t>(std::max_element(row, row + V) - row);
      pred[b * N + i] = best;
      if (i + 1 < N) dec[b * N + i + 1] = best;
    }
  }
  int tok_ok = 0, seq_ok = 0;
  for (int b = 0; b < B; ++b) {
    bool all = true;
    for (int n = 0; n < N; ++n) {
      const bool ok = pred[b * N + n] == tout[b * N + n];
      tok_ok += ok;
      all = all && ok;
    }
    seq_ok += all;
  }
  r.token_accuracy = static_cast<double>(tok_ok) / (B * N);
  r.sequence_accuracy = static_cast<double>(seq_ok) / B;
  return r;
}

}  // namespace models
