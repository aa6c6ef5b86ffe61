// LayerNorm gamma / beta gradients parallel over rows (nn_fused.hpp), for float, double
// and bf16 activations: the chunked column sums of column_sums.cuh with two sums per
// element, dy (x - mean) rstd and dy, in P. Blocks of 32 columns x 64 rows instead of
// layernorm_backward's one block per 32 columns (16 blocks at d_model 512, whatever the
// row count).
#include <cstddef>

#include "nn/column_sums.cuh"
#include "nn/fused_common.cuh"
#include "nn/nn_common.cuh"
#include "nn/nn_fused.hpp"

namespace kernels::nn {
namespace {
using namespace detail;

template <class S, class P>
struct LayerNormParamGrad {
  const S* __restrict__ x;
  const P* __restrict__ mean;
  const P* __restrict__ rstd;
  const S* __restrict__ dy;
  // Elements i .. i + V - 1 of row r (V > 1: 16-byte aligned packs).
  template <int V>
  __device__ void at(int r, std::size_t i, int /*c*/, Addends<P, 2> (&out)[V]) const {
    using Pk = Pack<S, V>;
    const Pk g = *reinterpret_cast<const Pk*>(dy + i);
    const Pk v = *reinterpret_cast<const Pk*>(x + i);
    const P m = mean[r], s = rstd[r];
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const P d = widen<P>(g.v[e]);
      out[e] = {{d * (widen<P>(v.v[e]) - m) * s, d}};
    }
  }
};

template <class S, class P, int V>
__global__ void __launch_bounds__(kSumTile* kSumRows)
    layernorm_param_grads_kernel(LayerNormParamGrad<S, P> elem, ColumnOutputs<P, 2> outs, P* partial,
                                 unsigned* counters, int rows, int cols, int chunks) {
  chunked_column_sums<2, V>(elem, outs, partial, counters, rows, cols, chunks);
}

}  // namespace

std::size_t layernorm_param_grads_workspace(int rows, int cols) {
  if (rows < 0 || cols < 0) return 0;
  const int chunks = fused_chunks(rows);
  return chunks > 1 ? 2 * static_cast<std::size_t>(chunks) * static_cast<std::size_t>(cols) : 0;
}

template <class S, class P>
cudaError_t layernorm_param_grads(const S* x, const P* mean, const P* rstd, const S* dy, P* dgamma, P* dbeta,
                                  P* workspace, unsigned* counters, int rows, int cols, cudaStream_t s) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (cols == 0) return cudaSuccess;
  const int chunks = fused_chunks(rows);
  if (dgamma == nullptr || dbeta == nullptr || (chunks > 1 && workspace == nullptr)) return cudaErrorInvalidValue;
  if (rows > 0 && (x == nullptr || mean == nullptr || rstd == nullptr || dy == nullptr)) return cudaErrorInvalidValue;
  const ColumnOutputs<P, 2> outs{{dgamma, dbeta}};
  // One column per thread (V = 1): 16-byte packs (V = 8 for bf16) measured slower here, 0.58-0.69
  // against 0.33 ms per training step at 8192 x 512 (H200, 2026-11-23; docs/PERFORMANCE.md),
  // where the bias gradient's packed kernel was faster (1.66 -> 1.42 ms).
  if (chunks > 0)
    layernorm_param_grads_kernel<S, P, 1><<<column_sums_grid(cols, chunks, 1), column_sums_block(), 0, s>>>(
        LayerNormParamGrad<S, P>{x, mean, rstd, dy}, outs, workspace, counters, rows, cols, chunks);
  return finish_if_needed<2, P>(workspace, outs, counters, chunks, cols, s);
}

#define KERNELS_NN_LN_PARAM_GRADS(S, P)                                                                       \
  template cudaError_t layernorm_param_grads<S, P>(const S*, const P*, const P*, const S*, P*, P*, P*, unsigned*, \
                                                   int, int, cudaStream_t);

KERNELS_NN_LN_PARAM_GRADS(float, float)
KERNELS_NN_LN_PARAM_GRADS(double, double)
KERNELS_NN_LN_PARAM_GRADS(bf16, float)
#undef KERNELS_NN_LN_PARAM_GRADS

}  // namespace kernels::nn
