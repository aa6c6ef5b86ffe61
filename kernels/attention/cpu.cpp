// CPU references for attention: every sum in double, rows spread over std::threads.
// These are the ground truth the GPU variants are checked against, so they are written
// for clarity (one query row at a time, the formulas of attention.hpp) rather than speed.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "attention.hpp"

namespace kernels::attention {
namespace {

unsigned thread_count(unsigned requested, std::int64_t work_items) {
  unsigned t = requested != 0 ? requested : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp<std::int64_t>(work_items, 1, t));
}

// Runs body(worker, item) for item in [0, items) on `threads` threads, items handed out
// in chunks from an atomic counter (rows near the end of a causal head are longer).
template <class Body>
void parallel_for(std::int64_t items, unsigned threads, Body body) {
  const std::int64_t chunk = std::max<std::int64_t>(1, items / (std::int64_t(threads) * 16));
  std::atomic<std::int64_t> next{0};
  auto work = [&](unsigned worker) {
    for (;;) {
      const std::int64_t begin = next.fetch_add(chunk);
      if (begin >= items) return;
      const std::int64_t end = std::min(items, begin + chunk);
      for (std::int64_t item = begin; item < end; ++item) body(worker, item);
    }
  };
  if (threads <= 1) {
    work(0);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned w = 1; w < threads; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& t : pool) t.join();
}

// Pointers to the (N, d) matrices of query row `row` = (b*H + h)*N + i.
struct RowView {
  std::int64_t z, i;           // (b, h) pair, query position
  std::int64_t q_head, kv_head;  // element offsets of the (N, d) matrices
  int visible;                 // keys 0 .. visible-1 are attended
};

RowView row_view(const Shape& s, std::int64_t row) {
  const std::int64_t n = s.seq_len, d = s.head_dim;
  RowView r;
  r.z = row / n;
  r.i = row % n;
  const std::int64_t b = r.z / s.heads, h = r.z % s.heads;
  r.q_head = r.z * n * d;
  r.kv_head = (b * s.kv_heads + h / s.group()) * n * d;
  r.visible = s.causal ? static_cast<int>(r.i + 1) : s.seq_len;
  return r;
}

// Softmax row of query row `r`: p[j] = exp(s_j - m) / l for j < visible, with
// s_j = scale * q_i . k_j. Returns LSE = m + log(l).
double softmax_row(const Shape& s, const RowView& r, const float* q, const float* k,
                   std::vector<double>& p) {
  const int d = s.head_dim;
  const double scale = s.effective_scale();
  const float* qi = q + r.q_head + r.i * d;
  p.assign(r.visible, 0.0);
  double m = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < r.visible; ++j) {
    const float* kj = k + r.kv_head + std::int64_t(j) * d;
    double dot = 0.0;
    for (int c = 0; c < d; ++c) dot += double(qi[c]) * double(kj[c]);
    p[j] = scale * dot;
    m = std::max(m, p[j]);
  }
  double l = 0.0;
  for (int j = 0; j < r.visible; ++j) {
    p[j] = std::exp(p[j] - m);
    l += p[j];
  }
  for (int j = 0; j < r.visible; ++j) p[j] /= l;
  return m + std::log(l);
}

// O row = sum_j p[j] v_j, in double.
void weighted_values(const Shape& s, const RowView& r, const float* v,
                     const std::vector<double>& p, std::vector<double>& out) {
  const int d = s.head_dim;
  out.assign(d, 0.0);
  for (int j = 0; j < r.visible; ++j) {
    const float* vj = v + r.kv_head + std::int64_t(j) * d;
    for (int c = 0; c < d; ++c) out[c] += p[j] * double(vj[c]);
  }
}

}  // namespace

void forward_cpu(const Shape& s, const float* q, const float* k, const float* v, float* o,
                 float* lse, unsigned threads) {
  const std::int64_t rows = s.lse_elements();
  const int d = s.head_dim;
  const unsigned t = thread_count(threads, rows);
  std::vector<std::vector<double>> p(t), out(t);
  parallel_for(rows, t, [&](unsigned w, std::int64_t row) {
    const RowView r = row_view(s, row);
    const double l = softmax_row(s, r, q, k, p[w]);
    weighted_values(s, r, v, p[w], out[w]);
    for (int c = 0; c < d; ++c) o[row * d + c] = static_cast<float>(out[w][c]);
    lse[row] = static_cast<float>(l);
  });
}

void forward_cpu_rows(const Shape& s, const float* q, const float* k, const float* v,
                      const std::int64_t* rows, std::size_t row_count, float* o,
                      float* lse, unsigned threads) {
  const int d = s.head_dim;
  const auto count = static_cast<std::int64_t>(row_count);
  const unsigned t = thread_count(threads, count);
  std::vector<std::vector<double>> p(t), out(t);
  parallel_for(count, t, [&](unsigned w, std::int64_t idx) {
    const RowView r = row_view(s, rows[idx]);
    const double l = softmax_row(s, r, q, k, p[w]);
    weighted_values(s, r, v, p[w], out[w]);
    for (int c = 0; c < d; ++c) o[idx * d + c] = static_cast<float>(out[w][c]);
    lse[idx] = static_cast<float>(l);
  });
}

void backward_cpu(const Shape& s, const float* q, const float* k, const float* v,
                  const float* d_o, float* dq, float* dk, float* dv, unsigned threads) {
  const std::int64_t rows = s.lse_elements();
  const std::int64_t kv = s.kv_elements();
  const int d = s.head_dim;
  const double scale = s.effective_scale();
  const unsigned t = thread_count(threads, rows);
  // dK, dV gather from every query row of every head of the group: each thread sums into
  // its own copy, added up at the end (no locks, fixed per-thread order).
  std::vector<std::vector<double>> dk_acc(t, std::vector<double>(kv, 0.0));
  std::vector<std::vector<double>> dv_acc(t, std::vector<double>(kv, 0.0));
  std::vector<std::vector<double>> p(t), o_row(t), dp(t), dq_row(t);

  parallel_for(rows, t, [&](unsigned w, std::int64_t row) {
    const RowView r = row_view(s, row);
    softmax_row(s, r, q, k, p[w]);
    weighted_values(s, r, v, p[w], o_row[w]);
    const float* doi = d_o + row * d;
    const float* qi = q + row * d;
    // dP_j = dO_i . v_j;  D_i = dO_i . O_i;  dS_j = P_j (dP_j - D_i).
    double delta = 0.0;
    for (int c = 0; c < d; ++c) delta += double(doi[c]) * o_row[w][c];
    dp[w].assign(r.visible, 0.0);
    for (int j = 0; j < r.visible; ++j) {
      const float* vj = v + r.kv_head + std::int64_t(j) * d;
      double dot = 0.0;
      for (int c = 0; c < d; ++c) dot += double(doi[c]) * double(vj[c]);
      dp[w][j] = p[w][j] * (dot - delta);  // now dS_j
    }
    // dQ_i = scale * sum_j dS_j k_j;  dK_j += scale * dS_j q_i;  dV_j += P_j dO_i.
    dq_row[w].assign(d, 0.0);
    for (int j = 0; j < r.visible; ++j) {
      const std::int64_t kj = r.kv_head + std::int64_t(j) * d;
      const double ds = dp[w][j], pj = p[w][j];
      for (int c = 0; c < d; ++c) {
        dq_row[w][c] += ds * double(k[kj + c]);
        dk_acc[w][kj + c] += scale * ds * double(qi[c]);
        dv_acc[w][kj + c] += pj * double(doi[c]);
      }
    }
    for (int c = 0; c < d; ++c) dq[row * d + c] = static_cast<float>(scale * dq_row[w][c]);
  });

  for (std::int64_t e = 0; e < kv; ++e) {
    double sk = 0.0, sv = 0.0;
    for (unsigned w = 0; w < t; ++w) {
      sk += dk_acc[w][e];
      sv += dv_acc[w][e];
    }
    dk[e] = static_cast<float>(sk);
    dv[e] = static_cast<float>(sv);
  }
}

void backward_cpu_dq_rows(const Shape& s, const float* q, const float* k, const float* v,
                          const float* d_o, const std::int64_t* rows, std::size_t row_count,
                          float* dq, unsigned threads) {
  const int d = s.head_dim;
  const double scale = s.effective_scale();
  const auto count = static_cast<std::int64_t>(row_count);
  const unsigned t = thread_count(threads, count);
  std::vector<std::vector<double>> p(t), o_row(t), dq_row(t);
  parallel_for(count, t, [&](unsigned w, std::int64_t idx) {
    const std::int64_t row = rows[idx];
    const RowView r = row_view(s, row);
    softmax_row(s, r, q, k, p[w]);
    weighted_values(s, r, v, p[w], o_row[w]);
    const float* doi = d_o + row * d;
    double delta = 0.0;
    for (int c = 0; c < d; ++c) delta += double(doi[c]) * o_row[w][c];
    dq_row[w].assign(d, 0.0);
    for (int j = 0; j < r.visible; ++j) {
      const float* vj = v + r.kv_head + std::int64_t(j) * d;
      const float* kj = k + r.kv_head + std::int64_t(j) * d;
      double dot = 0.0;
      for (int c = 0; c < d; ++c) dot += double(doi[c]) * double(vj[c]);
      const double ds = p[w][j] * (dot - delta);
      for (int c = 0; c < d; ++c) dq_row[w][c] += ds * double(kj[c]);
    }
    for (int c = 0; c < d; ++c) dq[idx * d + c] = static_cast<float>(scale * dq_row[w][c]);
  });
}

}  // namespace kernels::attention
