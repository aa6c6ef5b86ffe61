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

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gemm/gemm.hpp"
#include "gemm/gemm_reference.hpp"

namespace kernels::gemm {
namespace {

constexpr int kRows = 4;
constexpr int kCols = 512;

struct Panel {
  int row0, rows, col0, cols;
};

// acc[r][j] = sum_k A(row0 + r, k) * B(k, col0 + j) for the panel, then
// store(row, col0, sums, cols) for each of its rows.
template <class Store>
void run_panel(const Panel& p, int N, int K, const float* A, const float* B, double* acc /* kRows * kCols */,
               const Store& store) {
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
  for (int r = 0; r < p.rows; ++r) store(p.row0 + r, p.col0, acc_rows[r], p.cols);
}

// Runs every panel of the (M, N) result over `threads` threads (0: all hardware threads).
template <class Store>
void run_panels(int M, int N, int K, const float* A, const float* B, unsigned threads, const Store& store) {
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
      run_panel(panel(i), N, K, A, B, acc.data(), store);
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

}  // namespace

void gemm_cpu(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
              float* C, unsigned threads) {
  if (M < 1 || N < 1 || K < 1)
    throw std::invalid_argument("gemm_cpu: M, N, K must be >= 1 (got M=" + std::to_string(M) +
                                " N=" + std::to_string(N) + " K=" + std::to_string(K) + ")");
  if (A == nullptr || B == nullptr || C == nullptr)
    throw std::invalid_argument("gemm_cpu: null matrix pointer");

  const double a = alpha, b = beta;
  run_panels(M, N, K, A, B, threads, [&](int row, int col0, const double* sums, int cols) {
    float* c = C + static_cast<std::size_t>(row) * N + col0;
    for (int j = 0; j < cols; ++j) {
      // beta == 0: C is not read (it may hold NaN), as in BLAS.
      const double old = b == 0.0 ? 0.0 : b * static_cast<double>(c[j]);
      c[j] = static_cast<float>(a * sums[j] + old);
    }
  });
}

float round_to_tf32(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u) return x;  // Inf, NaN
  // Add half of the last kept bit's weight to the magnitude and drop the 13 low bits:
  // nearest, ties away from zero (the sign bit is untouched; a carry into the exponent
  // is the correct rounding up to the next binade).
  bits = (bits + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &bits, 4);
  return x;
}

namespace {

float load_float(TcDType dtype, const void* p, std::size_t i) {
  switch (dtype) {
    case TcDType::f32: return static_cast<const float*>(p)[i];
    case TcDType::tf32: return round_to_tf32(static_cast<const float*>(p)[i]);
    case TcDType::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case TcDType::f16: return __half2float(static_cast<const __half*>(p)[i]);
    case TcDType::fp8_e4m3: return fp8_e4m3_to_float(static_cast<const std::uint8_t*>(p)[i]);
  }
  return 0.0f;
}

// op(X) as a row-major (rows, cols) float matrix; `transposed`: X is stored (cols, rows).
std::vector<float> pack(TcDType dtype, const void* X, int rows, int cols, bool transposed) {
  std::vector<float> out(static_cast<std::size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      out[static_cast<std::size_t>(r) * cols + c] =
          load_float(dtype, X, transposed ? static_cast<std::size_t>(c) * rows + r : static_cast<std::size_t>(r) * cols + c);
  return out;
}

}  // namespace

void gemm_cpu_ex(TcDType dtype, Layout layout, int M, int N, int K, float alpha, const void* A, const void* B,
                 float beta, void* C, unsigned threads) {
  if (M < 1 || N < 1 || K < 1)
    throw std::invalid_argument("gemm_cpu_ex: M, N, K must be >= 1 (got M=" + std::to_string(M) +
                                " N=" + std::to_string(N) + " K=" + std::to_string(K) + ")");
  if (A == nullptr || B == nullptr || C == nullptr) throw std::invalid_argument("gemm_cpu_ex: null matrix pointer");
  if (dtype == TcDType::fp8_e4m3) throw std::invalid_argument("gemm_cpu_ex: fp8_e4m3 has scales: gemm_cpu_fp8_e4m3");
  const bool direct = dtype == TcDType::f32 && layout == Layout::nn;
  std::vector<float> a_packed, b_packed;
  if (!direct) {
    a_packed = pack(dtype, A, M, K, a_transposed(layout));
    b_packed = pack(dtype, B, K, N, b_transposed(layout));
  }
  const float* a = direct ? static_cast<const float*>(A) : a_packed.data();
  const float* b = direct ? static_cast<const float*>(B) : b_packed.data();
  const double al = alpha, be = beta;
  run_panels(M, N, K, a, b, threads, [&](int row, int col0, const double* sums, int cols) {
    const std::size_t base = static_cast<std::size_t>(row) * N + col0;
    for (int j = 0; j < cols; ++j) {
      const std::size_t i = base + static_cast<std::size_t>(j);
      // beta == 0: C is not read (it may hold NaN), as in BLAS.
      const double v = al * sums[j] + (be == 0.0 ? 0.0 : be * static_cast<double>(load_float(dtype == TcDType::tf32 ? TcDType::f32 : dtype, C, i)));
      switch (dtype) {
        case TcDType::f32:
        case TcDType::tf32: static_cast<float*>(C)[i] = static_cast<float>(v); break;
        case TcDType::bf16: static_cast<__nv_bfloat16*>(C)[i] = __double2bfloat16(v); break;
        case TcDType::f16: static_cast<__half*>(C)[i] = __double2half(v); break;
        case TcDType::fp8_e4m3: break;  // rejected above
      }
    }
  });
}

float fp8_e4m3_to_float(std::uint8_t x) {
  const int sign = x >> 7, exponent = (x >> 3) & 0xF, mantissa = x & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  const float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -9)  // m/8 2^-6
                                        : std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);  // (1+m/8) 2^(e-7)
  return sign != 0 ? -magnitude : magnitude;
}

void gemm_cpu_fp8_e4m3(Layout layout, int M, int N, int K, float scale_a, float scale_b, const std::uint8_t* A,
                       const std::uint8_t* B, __nv_bfloat16* C, unsigned threads) {
  if (M < 1 || N < 1 || K < 1)
    throw std::invalid_argument("gemm_cpu_fp8_e4m3: M, N, K must be >= 1 (got M=" + std::to_string(M) +
                                " N=" + std::to_string(N) + " K=" + std::to_string(K) + ")");
  if (A == nullptr || B == nullptr || C == nullptr) throw std::invalid_argument("gemm_cpu_fp8_e4m3: null matrix pointer");
  // op(A) as (M, K), op(B) as (K, N) float panels (nt: B (N, K) transposed).
  const std::vector<float> a = pack(TcDType::fp8_e4m3, A, M, K, a_transposed(layout));
  const std::vector<float> b = pack(TcDType::fp8_e4m3, B, K, N, b_transposed(layout));
  const double scale = static_cast<double>(scale_a) * static_cast<double>(scale_b);
  run_panels(M, N, K, a.data(), b.data(), threads, [&](int row, int col0, const double* sums, int cols) {
    __nv_bfloat16* c = C + static_cast<std::size_t>(row) * N + col0;
    for (int j = 0; j < cols; ++j) c[j] = __double2bfloat16(scale * sums[j]);
  });
}

}  // namespace kernels::gemm
