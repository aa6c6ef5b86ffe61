// Host reference GEMM: C = alpha * A * B + beta * C, row-major, double accumulation.
//
// Accuracy: a product of two floats (24-bit significands) is exact in double (53 bits),
// and the sums of K <= 2^24 such products in k order lose at most ~K * 2^-53 relative to
// sum |a*b|, far below the float rounding of the result (2^-24); so the result is the
// exactly rounded value up to that tiny error, whatever the thread count (each element is
// computed by one thread, in the same order, so results are bitwise reproducible).
//
// Blocking: work items are (kRows rows) x (kCols columns) panels of C. A panel keeps its
// kRows x kCols double accumulators (4 x 512 x 8 bytes = 16 KB) in L1 and streams the
// (K, kCols) panel of B once, each loaded B value feeding kRows multiply-adds. Threads
// take panels from an atomic counter, so tall, wide and tiny shapes all spread evenly.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gemm/gemm.hpp"

namespace kernels::gemm {
namespace {

constexpr int kRows = 4;
constexpr int kCols = 512;

struct Panel {
  int row0, rows, col0, cols;
};

// acc[r][j] = sum_k A(row0 + r, k) * B(k, col0 + j) for the panel, then the epilogue.
void run_panel(const Panel& p, int N, int K, double alpha, const float* A, const float* B,
               double beta, float* C, double* acc /* kRows * kCols */) {
  std::fill(acc, acc + kRows * kCols, 0.0);
  const float* a_rows[kRows];
  double* acc_rows[kRows];
  for (int r = 0; r < kRows; ++r) {
    // Rows past the panel reuse the last real row (their sums are discarded) so that the
    // inner loop has no branches.
    const int row = p.row0 + std::min(r, p.rows - 1);
    a_rows[r] = A + static_cast<std::size_t>(row) * K;
    acc_rows[r] = acc + static_cast<std::size_t>(r) * kCols;
  }
  for (int k = 0; k < K; ++k) {
    const float* b = B + static_cast<std::size_t>(k) * N + p.col0;  // B(k, col0 ..)
    const double a0 = a_rows[0][k];
    const double a1 = a_rows[1][k];
    const double a2 = a_rows[2][k];
    const double a3 = a_rows[3][k];
    double* c0 = acc_rows[0];
    double* c1 = acc_rows[1];
    double* c2 = acc_rows[2];
    double* c3 = acc_rows[3];
    for (int j = 0; j < p.cols; ++j) {
      const double bj = b[j];
      c0[j] += a0 * bj;
      c1[j] += a1 * bj;
      c2[j] += a2 * bj;
      c3[j] += a3 * bj;
    }
  }
  for (int r = 0; r < p.rows; ++r) {
    float* c = C + static_cast<std::size_t>(p.row0 + r) * N + p.col0;
    const double* s = acc_rows[r];
    for (int j = 0; j < p.cols; ++j) {
      // beta == 0: C is not read (it may hold NaN), as in BLAS.
      const double old = beta == 0.0 ? 0.0 : beta * static_cast<double>(c[j]);
      c[j] = static_cast<float>(alpha * s[j] + old);
    }
  }
}

}  // namespace

void gemm_cpu(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
              float* C, unsigned threads) {
  if (M < 1 || N < 1 || K < 1)
    throw std::invalid_argument("gemm_cpu: M, N, K must be >= 1 (got M=" + std::to_string(M) +
                                " N=" + std::to_string(N) + " K=" + std::to_string(K) + ")");
  if (A == nullptr || B == nullptr || C == nullptr)
    throw std::invalid_argument("gemm_cpu: null matrix pointer");

  const int row_panels = (M + kRows - 1) / kRows;
  const int col_panels = (N + kCols - 1) / kCols;
  const long long panels = static_cast<long long>(row_panels) * col_panels;
  auto panel = [&](long long index) {
    const int pr = static_cast<int>(index / col_panels);
    const int pc = static_cast<int>(index % col_panels);
    Panel p{pr * kRows, 0, pc * kCols, 0};
    p.rows = std::min(kRows, M - p.row0);
    p.cols = std::min(kCols, N - p.col0);
    return p;
  };

  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Below ~1M multiply-adds a thread costs more to start than it saves.
  const double macs = static_cast<double>(M) * N * K;
  if (macs < (1 << 20)) threads = 1;
  threads = static_cast<unsigned>(std::min<long long>(threads, panels));

  std::atomic<long long> next{0};
  auto worker = [&] {
    std::vector<double> acc(static_cast<std::size_t>(kRows) * kCols);
    for (long long i = next.fetch_add(1); i < panels; i = next.fetch_add(1))
      run_panel(panel(i), N, K, alpha, A, B, beta, C, acc.data());
  };
  if (threads == 1) {
    worker();
    return;
  }
  std::vector<std::jthread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
}

}  // namespace kernels::gemm
