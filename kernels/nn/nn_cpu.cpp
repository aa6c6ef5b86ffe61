// Double-precision host references for kernels/nn (see nn_cpu.hpp and, for the math,
// nn.hpp). Written for clarity, not speed.
#include "nn/nn_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace kernels::nn::cpu {
namespace {

using std::size_t;

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("kernels::nn::cpu: ") + what);
}

size_t sz(int v) { return static_cast<size_t>(v); }

constexpr double kGeluBeta = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluKappa = 0.044715;

}  // namespace

void bias_add(const double* x, const double* bias, double* y, int rows, int cols) {
  require(rows >= 0 && cols >= 0, "bias_add: negative size");
  for (size_t r = 0; r < sz(rows); ++r)
    for (size_t c = 0; c < sz(cols); ++c) y[r * sz(cols) + c] = x[r * sz(cols) + c] + bias[c];
}

void column_sum(const double* dy, double* dbias, int rows, int cols) {
  require(rows >= 0 && cols >= 0, "column_sum: negative size");
  for (size_t c = 0; c < sz(cols); ++c) {
    double s = 0.0;
    for (size_t r = 0; r < sz(rows); ++r) s += dy[r * sz(cols) + c];
    dbias[c] = s;
  }
}

void relu_forward(const double* x, double* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0 ? x[i] : 0.0;
}
void relu_backward(const double* x, const double* dy, double* dx, size_t n) {
  for (size_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0 ? dy[i] : 0.0;
}

double gelu(double x) {
  return 0.5 * x * (1.0 + std::tanh(kGeluBeta * (x + kGeluKappa * x * x * x)));
}
double gelu_derivative(double x) {
  const double th = std::tanh(kGeluBeta * (x + kGeluKappa * x * x * x));
  return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * kGeluBeta * (1.0 + 3.0 * kGeluKappa * x * x);
}
void gelu_forward(const double* x, double* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = gelu(x[i]);
}
void gelu_backward(const double* x, const double* dy, double* dx, size_t n) {
  for (size_t i = 0; i < n; ++i) dx[i] = dy[i] * gelu_derivative(x[i]);
}

void add(const double* a, const double* b, double* c, size_t n) {
  for (size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
void axpby(double alpha, const double* x, double beta, double* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = beta == 0.0 ? alpha * x[i] : alpha * x[i] + beta * y[i];
}
void fill(double* x, double value, size_t n) { std::fill(x, x + n, value); }

void layernorm_forward(const double* x, const double* gamma, const double* beta, double* y,
                       double* mean, double* rstd, int rows, int cols, double eps) {
  require(rows >= 0 && cols >= 1, "layernorm_forward: bad size");
  const size_t C = sz(cols);
  for (size_t r = 0; r < sz(rows); ++r) {
    const double* xr = x + r * C;
    double mu = 0.0;
    for (size_t c = 0; c < C; ++c) mu += xr[c];
    mu /= static_cast<double>(C);
    double var = 0.0;
    for (size_t c = 0; c < C; ++c) var += (xr[c] - mu) * (xr[c] - mu);
    var /= static_cast<double>(C);
    const double rs = 1.0 / std::sqrt(var + eps);
    for (size_t c = 0; c < C; ++c) y[r * C + c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = rs;
  }
}

void layernorm_backward(const double* x, const double* gamma, const double* mean,
                        const double* rstd, const double* dy, double* dx, double* dgamma,
                        double* dbeta, int rows, int cols) {
  require(rows >= 0 && cols >= 0, "layernorm_backward: bad size");
  const size_t C = sz(cols);
  std::fill(dgamma, dgamma + C, 0.0);
  std::fill(dbeta, dbeta + C, 0.0);
  for (size_t r = 0; r < sz(rows); ++r) {
    double sum_g = 0.0, sum_gx = 0.0;
    for (size_t c = 0; c < C; ++c) {
      const double xhat = (x[r * C + c] - mean[r]) * rstd[r];
      const double g = dy[r * C + c] * gamma[c];
      sum_g += g;
      sum_gx += g * xhat;
      dgamma[c] += dy[r * C + c] * xhat;
      dbeta[c] += dy[r * C + c];
    }
    const double mg = sum_g / static_cast<double>(C), mgx = sum_gx / static_cast<double>(C);
    for (size_t c = 0; c < C; ++c) {
      const double xhat = (x[r * C + c] - mean[r]) * rstd[r];
      dx[r * C + c] = rstd[r] * (dy[r * C + c] * gamma[c] - mg - xhat * mgx);
    }
  }
}

void embedding_forward(const int* ids, const double* table, double* out, int rows, int dim) {
  require(rows >= 0 && dim >= 0, "embedding_forward: negative size");
  for (size_t r = 0; r < sz(rows); ++r)
    for (size_t c = 0; c < sz(dim); ++c)
      out[r * sz(dim) + c] = ids[r] >= 0 ? table[sz(ids[r]) * sz(dim) + c] : 0.0;
}
void embedding_backward(const int* ids, const double* dout, double* dtable, int rows, int dim) {
  require(rows >= 0 && dim >= 0, "embedding_backward: negative size");
  for (size_t r = 0; r < sz(rows); ++r)
    if (ids[r] >= 0)
      for (size_t c = 0; c < sz(dim); ++c) dtable[sz(ids[r]) * sz(dim) + c] += dout[r * sz(dim) + c];
}

double positional_encoding(int pos, int c, int dim) {
  const int two_i = c - c % 2;
  const double w = std::pow(10000.0, -static_cast<double>(two_i) / dim);
  return c % 2 == 0 ? std::sin(pos * w) : std::cos(pos * w);
}
void add_positional_encoding(double* x, int batch, int seq, int dim) {
  require(batch >= 0 && seq >= 0 && dim >= 0, "add_positional_encoding: negative size");
  for (size_t b = 0; b < sz(batch); ++b)
    for (int p = 0; p < seq; ++p)
      for (int c = 0; c < dim; ++c)
        x[(b * sz(seq) + sz(p)) * sz(dim) + sz(c)] += positional_encoding(p, c, dim);
}

void softmax_cross_entropy(const double* logits, const int* targets, double* loss_sum,
                           double* count, double* dlogits, int rows, int vocab,
                           int ignore_index, double grad_scale) {
  require(rows >= 0 && vocab >= 0, "softmax_cross_entropy: negative size");
  const size_t V = sz(vocab);
  double total = 0.0, counted = 0.0;
  for (size_t r = 0; r < sz(rows); ++r) {
    const double* x = logits + r * V;
    double* d = dlogits + r * V;
    const int t = targets[r];
    if (t == ignore_index) {
      std::fill(d, d + V, 0.0);
      continue;
    }
    counted += 1.0;
    if (t < 0 || t >= vocab) {
      total += std::numeric_limits<double>::quiet_NaN();
      std::fill(d, d + V, std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    const double m = *std::max_element(x, x + V);
    double s = 0.0;
    for (size_t j = 0; j < V; ++j) s += std::exp(x[j] - m);
    const double lse = m + std::log(s);
    total += lse - x[t];
    for (size_t j = 0; j < V; ++j)
      d[j] = (std::exp(x[j] - lse) - (static_cast<int>(j) == t ? 1.0 : 0.0)) * grad_scale;
  }
  loss_sum[0] = total;
  count[0] = counted;
}

void mse(const double* pred, const double* target, double* loss_sum, double* dpred, size_t n,
         double grad_scale) {
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = pred[i] - target[i];
    s += d * d;
    dpred[i] = 2.0 * d * grad_scale;
  }
  loss_sum[0] = s;
}

void adam_step(double* p, const double* g, double* m, double* v, size_t n, double lr,
               double b1, double b2, double eps, double wd, int t) {
  require(t >= 1, "adam_step: t < 1");
  const double bc1 = 1.0 - std::pow(b1, t), bc2 = 1.0 - std::pow(b2, t);
  for (size_t i = 0; i < n; ++i) {
    m[i] = b1 * m[i] + (1.0 - b1) * g[i];
    v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
    p[i] -= lr * (m[i] / bc1) / (std::sqrt(v[i] / bc2) + eps) + lr * wd * p[i];
  }
}

void sgd_step(double* p, const double* g, double* momentum_buf, size_t n, double lr,
              double momentum) {
  for (size_t i = 0; i < n; ++i) {
    if (momentum_buf) {
      momentum_buf[i] = momentum * momentum_buf[i] + g[i];
      p[i] -= lr * momentum_buf[i];
    } else {
      p[i] -= lr * g[i];
    }
  }
}

void sum_squares(const double* x, double* out, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) s += x[i] * x[i];
  out[0] += s;
}

void clip_by_norm(double* x, size_t n, const double* sumsq, double max_norm) {
  const double scale = std::min(1.0, max_norm / (std::sqrt(sumsq[0]) + 1e-6));
  for (size_t i = 0; i < n; ++i) x[i] *= scale;
}

namespace {
// Index of (b, h, n, e) in (B, H, N, d) and of (b, n, part, h, e) in (B, N, parts, H, d).
size_t bhnd(int b, int h, int n, int e, int H, int N, int d) {
  return ((sz(b) * sz(H) + sz(h)) * sz(N) + sz(n)) * sz(d) + sz(e);
}
size_t bnphd(int b, int n, int part, int h, int e, int N, int parts, int H, int d) {
  return (((sz(b) * sz(N) + sz(n)) * sz(parts) + sz(part)) * sz(H) + sz(h)) * sz(d) + sz(e);
}
void require_heads(int B, int N, int H, int d) {
  require(B >= 0 && N >= 0 && H >= 0 && d >= 0, "head layout: negative size");
}
}  // namespace

void split_qkv(const double* qkv, double* q, double* k, double* v, int B, int N, int H, int d) {
  require_heads(B, N, H, d);
  double* out[3] = {q, k, v};
  for (int b = 0; b < B; ++b)
    for (int n = 0; n < N; ++n)
      for (int part = 0; part < 3; ++part)
        for (int h = 0; h < H; ++h)
          for (int e = 0; e < d; ++e)
            out[part][bhnd(b, h, n, e, H, N, d)] = qkv[bnphd(b, n, part, h, e, N, 3, H, d)];
}

void merge_qkv(const double* dq, const double* dk, const double* dv, double* dqkv, int B, int N,
               int H, int d) {
  require_heads(B, N, H, d);
  const double* in[3] = {dq, dk, dv};
  for (int b = 0; b < B; ++b)
    for (int n = 0; n < N; ++n)
      for (int part = 0; part < 3; ++part)
        for (int h = 0; h < H; ++h)
          for (int e = 0; e < d; ++e)
            dqkv[bnphd(b, n, part, h, e, N, 3, H, d)] = in[part][bhnd(b, h, n, e, H, N, d)];
}

void bnhd_to_bhnd(const double* x, double* y, int B, int N, int H, int d) {
  require_heads(B, N, H, d);
  for (int b = 0; b < B; ++b)
    for (int n = 0; n < N; ++n)
      for (int h = 0; h < H; ++h)
        for (int e = 0; e < d; ++e)
          y[bhnd(b, h, n, e, H, N, d)] = x[bnphd(b, n, 0, h, e, N, 1, H, d)];
}

void bhnd_to_bnhd(const double* x, double* y, int B, int N, int H, int d) {
  require_heads(B, N, H, d);
  for (int b = 0; b < B; ++b)
    for (int n = 0; n < N; ++n)
      for (int h = 0; h < H; ++h)
        for (int e = 0; e < d; ++e)
          y[bnphd(b, n, 0, h, e, N, 1, H, d)] = x[bhnd(b, h, n, e, H, N, d)];
}

void transpose(const double* x, double* y, int rows, int cols) {
  require(rows >= 0 && cols >= 0, "transpose: negative size");
  for (size_t r = 0; r < sz(rows); ++r)
    for (size_t c = 0; c < sz(cols); ++c) y[c * sz(rows) + r] = x[r * sz(cols) + c];
}

void gemm_simple(bool transA, bool transB, int M, int N, int K, double alpha, const double* A,
                 const double* B, double beta, double* C) {
  require(M >= 0 && N >= 0 && K >= 0, "gemm_simple: negative size");
  for (size_t m = 0; m < sz(M); ++m)
    for (size_t n = 0; n < sz(N); ++n) {
      double acc = 0.0;
      for (size_t k = 0; k < sz(K); ++k) {
        const double a = transA ? A[k * sz(M) + m] : A[m * sz(K) + k];
        const double b = transB ? B[n * sz(K) + k] : B[k * sz(N) + n];
        acc += a * b;
      }
      double& c = C[m * sz(N) + n];
      c = beta == 0.0 ? alpha * acc : alpha * acc + beta * c;
    }
}

namespace {
struct AttnDims {
  int B, H, Hkv, N, d;
  bool causal;
  double scale;
  size_t zk(size_t z) const {
    return (z / sz(H)) * sz(Hkv) + (z % sz(H)) / sz(H / Hkv);
  }
};

AttnDims attn_dims(int B, int H, int Hkv, int N, int d, bool causal, double scale) {
  require(B >= 0 && H >= 0 && N >= 0 && d >= 0, "attention: negative size");
  require(H == 0 || (Hkv >= 1 && H % Hkv == 0), "attention: Hkv must divide H");
  return {B, H, Hkv, N, d, causal, scale == 0.0 ? 1.0 / std::sqrt(static_cast<double>(d)) : scale};
}

// Row i of P for query head z (P[j] = 0 where masked); returns lse.
double probs_row(const AttnDims& a, const double* q, const double* k, size_t z, int i,
                 std::vector<double>& P) {
  const size_t N = sz(a.N), d = sz(a.d);
  const double* qi = q + (z * N + sz(i)) * d;
  const double* kz = k + a.zk(z) * N * d;
  double m = -std::numeric_limits<double>::infinity();
  for (size_t j = 0; j < N; ++j) {
    if (a.causal && static_cast<int>(j) > i) {
      P[j] = -std::numeric_limits<double>::infinity();
      continue;
    }
    double s = 0.0;
    for (size_t e = 0; e < d; ++e) s += qi[e] * kz[j * d + e];
    P[j] = a.scale * s;
    m = std::max(m, P[j]);
  }
  double sum = 0.0;
  for (size_t j = 0; j < N; ++j) sum += std::exp(P[j] - m);
  const double lse = m + std::log(sum);
  for (size_t j = 0; j < N; ++j) P[j] = std::exp(P[j] - lse);
  return lse;
}
}  // namespace

void attention_naive_forward(const double* q, const double* k, const double* v, double* o,
                             double* lse, int B, int H, int Hkv, int N, int d, bool causal,
                             double scale) {
  const AttnDims a = attn_dims(B, H, Hkv, N, d, causal, scale);
  std::vector<double> P(sz(N));
  for (size_t z = 0; z < sz(B) * sz(H); ++z)
    for (int i = 0; i < N; ++i) {
      lse[z * sz(N) + sz(i)] = probs_row(a, q, k, z, i, P);
      const double* vz = v + a.zk(z) * sz(N) * sz(d);
      for (size_t e = 0; e < sz(d); ++e) {
        double acc = 0.0;
        for (size_t j = 0; j < sz(N); ++j) acc += P[j] * vz[j * sz(d) + e];
        o[(z * sz(N) + sz(i)) * sz(d) + e] = acc;
      }
    }
}

void attention_naive_backward(const double* q, const double* k, const double* v,
                              const double* dout, double* dq, double* dk, double* dv, int B,
                              int H, int Hkv, int N, int d, bool causal, double scale) {
  const AttnDims a = attn_dims(B, H, Hkv, N, d, causal, scale);
  const size_t Nn = sz(N), D = sz(d);
  std::fill(dk, dk + sz(B) * sz(Hkv) * Nn * D, 0.0);
  std::fill(dv, dv + sz(B) * sz(Hkv) * Nn * D, 0.0);
  std::vector<double> P(Nn), o(D);
  for (size_t z = 0; z < sz(B) * sz(H); ++z) {
    const size_t zk = a.zk(z);
    const double* kz = k + zk * Nn * D;
    const double* vz = v + zk * Nn * D;
    for (int i = 0; i < N; ++i) {
      probs_row(a, q, k, z, i, P);
      const size_t row = z * Nn + sz(i);
      const double* doi = dout + row * D;
      const double* qi = q + row * D;
      std::fill(o.begin(), o.end(), 0.0);
      for (size_t j = 0; j < Nn; ++j)
        for (size_t e = 0; e < D; ++e) o[e] += P[j] * vz[j * D + e];
      double Di = 0.0;
      for (size_t e = 0; e < D; ++e) Di += doi[e] * o[e];
      for (size_t e = 0; e < D; ++e) dq[row * D + e] = 0.0;
      for (size_t j = 0; j < Nn; ++j) {
        double dp = 0.0;
        for (size_t e = 0; e < D; ++e) dp += doi[e] * vz[j * D + e];
        const double ds = P[j] * (dp - Di);
        for (size_t e = 0; e < D; ++e) {
          dq[row * D + e] += a.scale * ds * kz[j * D + e];
          dk[(zk * Nn + j) * D + e] += a.scale * ds * qi[e];
          dv[(zk * Nn + j) * D + e] += P[j] * doi[e];
        }
      }
    }
  }
}

}  // namespace kernels::nn::cpu
