// Residual add + LayerNorm forward in one kernel (nn_fused.hpp), for float, double and
// bf16 activations.
//
// One warp per row, 8 rows per 256-thread block. Lane l owns columns l, l + 32, ... (a warp
// reads 32 consecutive elements of x and r per step). The data path of one row:
//   pass 1: s = S(x + r) (rounded to the storage type, then widened back: the statistics
//           see exactly what is stored), store s, sum it            -> mean (warp_sum)
//   pass 2: sum (s - mean)^2                                        -> rstd (warp_sum)
//   pass 3: y = (s - mean) rstd gamma + beta, stored as S
// kPer > 0: the row has at most 32 kPer columns and lane l keeps its kPer values of s in
// registers (x and r are read once, nothing re-read). kPer == 0 (rows over 1024 columns):
// passes 2 and 3 re-read the s this lane stored in pass 1 (its own writes; L1/L2 hits).
#include <cstddef>

#include "nn/fused_common.cuh"
#include "nn/nn_common.cuh"
#include "nn/nn_fused.hpp"

namespace kernels::nn {
namespace {
using namespace detail;

constexpr int kRowsPerBlock = 8;
constexpr int kRowThreads = 32 * kRowsPerBlock;

template <class S, class P, int kPer>
__global__ void __launch_bounds__(kRowThreads)
    add_ln_forward_kernel(const S* __restrict__ x, const S* __restrict__ r, const P* __restrict__ gamma,
                          const P* __restrict__ beta, S* __restrict__ sum, S* __restrict__ y, P* __restrict__ mean,
                          P* __restrict__ rstd, int rows, int cols, P eps) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = static_cast<int>(blockIdx.x) * kRowsPerBlock + static_cast<int>(threadIdx.x >> 5);
  if (row >= rows) return;
  const std::size_t off = static_cast<std::size_t>(row) * cols;
  constexpr int kHeld = kPer > 0 ? kPer : 1;
  P held[kHeld];
  P total = P(0);
  if constexpr (kPer > 0) {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int c = lane + 32 * k;
      held[k] = P(0);
      if (c < cols) {
        const S sv = narrow<S>(widen<P>(x[off + c]) + widen<P>(r[off + c]));
        sum[off + c] = sv;
        held[k] = widen<P>(sv);
        total += held[k];
      }
    }
  } else {
    for (int c = lane; c < cols; c += 32) {
      const S sv = narrow<S>(widen<P>(x[off + c]) + widen<P>(r[off + c]));
      sum[off + c] = sv;
      total += widen<P>(sv);
    }
  }
  const P mu = arch::warp_sum(total) / P(cols);
  P sq = P(0);
  if constexpr (kPer > 0) {
#pragma unroll
    for (int k = 0; k < kPer; ++k)
      if (lane + 32 * k < cols) {
        const P d = held[k] - mu;
        sq += d * d;
      }
  } else {
    for (int c = lane; c < cols; c += 32) {
      const P d = widen<P>(sum[off + c]) - mu;
      sq += d * d;
    }
  }
  const P rs = P(1) / sqrt(arch::warp_sum(sq) / P(cols) + eps);
  if constexpr (kPer > 0) {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int c = lane + 32 * k;
      if (c < cols) y[off + c] = narrow<S>((held[k] - mu) * rs * gamma[c] + beta[c]);
    }
  } else {
    for (int c = lane; c < cols; c += 32)
      y[off + c] = narrow<S>((widen<P>(sum[off + c]) - mu) * rs * gamma[c] + beta[c]);
  }
  if (lane == 0 && mean != nullptr) {
    mean[row] = mu;
    rstd[row] = rs;
  }
}

template <class S, class P, int kPer>
void launch(unsigned blocks, cudaStream_t s, const S* x, const S* r, const P* gamma, const P* beta, S* sum, S* y,
            P* mean, P* rstd, int rows, int cols, P eps) {
  add_ln_forward_kernel<S, P, kPer><<<blocks, kRowThreads, 0, s>>>(x, r, gamma, beta, sum, y, mean, rstd, rows, cols,
                                                                   eps);
}

}  // namespace

template <class S, class P>
cudaError_t add_layernorm_forward(const S* x, const S* r, const P* gamma, const P* beta, S* sum, S* y, P* mean,
                                  P* rstd, int rows, int cols, P eps, cudaStream_t s) {
  if (rows < 0 || cols < 1 || (mean == nullptr) != (rstd == nullptr)) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (x == nullptr || r == nullptr || gamma == nullptr || beta == nullptr || sum == nullptr || y == nullptr)
    return cudaErrorInvalidValue;
  const unsigned blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  const int per = (cols + 31) / 32;  // columns per lane
  if (per <= 1) launch<S, P, 1>(blocks, s, x, r, gamma, beta, sum, y, mean, rstd, rows, cols, eps);
  else if (per <= 2) launch<S, P, 2>(blocks, s, x, r, gamma, beta, sum, y, mean, rstd, rows, cols, eps);
  else if (per <= 4) launch<S, P, 4>(blocks, s, x, r, gamma, beta, sum, y, mean, rstd, rows, cols, eps);
  else if (per <= 8) launch<S, P, 8>(blocks, s, x, r, gamma, beta, sum, y, mean, rstd, rows, cols, eps);
  else if (per <= 16) launch<S, P, 16>(blocks, s, x, r, gamma, beta, sum, y, mean, rstd, rows, cols, eps);
  else if (per <= 32) launch<S, P, 32>(blocks, s, x, r, gamma, beta, sum, y, mean, rstd, rows, cols, eps);
  else launch<S, P, 0>(blocks, s, x, r, gamma, beta, sum, y, mean, rstd, rows, cols, eps);
  return cudaGetLastError();
}

#define KERNELS_NN_ADD_LN(S, P)                                                                               \
  template cudaError_t add_layernorm_forward<S, P>(const S*, const S*, const P*, const P*, S*, S*, P*, P*, int, \
                                                   int, P, cudaStream_t);

KERNELS_NN_ADD_LN(float, float)
KERNELS_NN_ADD_LN(double, double)
KERNELS_NN_ADD_LN(bf16, float)
#undef KERNELS_NN_ADD_LN

}  // namespace kernels::nn
