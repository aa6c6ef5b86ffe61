// Fused bias + activation, forward and backward (nn_fused.hpp), for float, double and
// bf16 activations.
//
// Forward: a grid-stride elementwise kernel, V elements per thread step: 16-byte packs
// (4 floats, 2 doubles, 8 bf16) when x, y are 16-byte aligned and cols % V == 0 (a pack
// never crosses a row), else V = 1. y = act(x + b) in P, rounded once to S.
//
// Backward: the chunked column sum of column_sums.cuh (blocks of 32 V columns x 64 rows, the
// partials added by the last block of each column tile or a second kernel; V = 16-byte
// packs as forward, else 1); the element step recomputes v = x + b, writes dpre = act'(v) dy
// and adds dpre (in P) to dbias.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "nn/activation_math.cuh"
#include "nn/column_sums.cuh"
#include "nn/fused_common.cuh"
#include "nn/nn_common.cuh"
#include "nn/nn_fused.hpp"

namespace kernels::nn {
namespace {
using namespace detail;

// act(v) and g act'(v) (activation_math.cuh; ReLU selects, so a non-finite g at v <= 0
// gives 0, as relu_backward).
template <class P>
__device__ __forceinline__ P act_value(Act act, P v) {
  if (act == Act::relu) return ReluF<P>{}(v);
  if (act == Act::gelu) return GeluF<P>{}(v);
  return v;
}
template <class P>
__device__ __forceinline__ P act_backward(Act act, P v, P g) {
  if (act == Act::relu) return ReluGradF<P>{}(v, g);
  if (act == Act::gelu) return GeluGradF<P>{}(v, g);
  return g;
}

template <class S, class P, int V>
__global__ void bias_act_forward_kernel(Act act, const S* x, const P* __restrict__ bias, S* y, std::size_t packs,
                                        int cols) {
  using Pk = Pack<S, V>;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < packs;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const Pk in = reinterpret_cast<const Pk*>(x)[i];
    const int c0 = static_cast<int>((i * V) % static_cast<std::size_t>(cols));
    Pk out;
#pragma unroll
    for (int e = 0; e < V; ++e) out.v[e] = narrow<S>(act_value(act, widen<P>(in.v[e]) + bias[c0 + e]));
    reinterpret_cast<Pk*>(y)[i] = out;
  }
}

// dpre = act'(x + b) dy where dpre is wanted; the addend of dbias: dpre in P (unrounded).
template <class S, class P>
struct BiasActGrad {
  Act act;
  const S* __restrict__ x;
  const P* __restrict__ bias;
  const S* __restrict__ dy;
  S* __restrict__ dpre;
  // Elements i .. i + V - 1 (columns c .. c + V - 1 of one row; V > 1: 16-byte aligned packs).
  template <int V>
  __device__ void at(int /*r*/, std::size_t i, int c, Addends<P, 1> (&out)[V]) const {
    using Pk = Pack<S, V>;
    const Pk g = *reinterpret_cast<const Pk*>(dy + i);
    Pk d;
    if (act == Act::identity) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        d.v[e] = g.v[e];
        out[e].v[0] = widen<P>(g.v[e]);
      }
    } else {
      const Pk v = *reinterpret_cast<const Pk*>(x + i);
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const P de = act_backward(act, widen<P>(v.v[e]) + bias[c + e], widen<P>(g.v[e]));
        d.v[e] = narrow<S>(de);
        out[e].v[0] = de;
      }
    }
    if (dpre != nullptr) *reinterpret_cast<Pk*>(dpre + i) = d;
  }
};

// The bias gradient of a plain Linear (identity activation, dpre not wanted): dbias = the
// column sums of dy. at() only loads, so the row loop can batch a thread's rows
// (chunked_column_sums' kBatch); its addends are BiasActGrad's for identity (widen(dy)).
template <class S, class P>
struct DyColumns {
  const S* dy;
  template <int V>
  __device__ void at(int /*r*/, std::size_t i, int /*c*/, Addends<P, 1> (&out)[V]) const {
    const Pack<S, V> g = *reinterpret_cast<const Pack<S, V>*>(dy + i);
#pragma unroll
    for (int e = 0; e < V; ++e) out[e].v[0] = widen<P>(g.v[e]);
  }
};

template <class S, class P, int V>
__global__ void __launch_bounds__(kSumTile* kSumRows)
    dy_column_sums_kernel(DyColumns<S, P> elem, ColumnOutputs<P, 1> outs, P* partial, unsigned* counters, int rows,
                          int cols, int chunks) {
  chunked_column_sums<1, V, P, DyColumns<S, P>, true>(elem, outs, partial, counters, rows, cols, chunks);
}

template <class S, class P, int V>
__global__ void __launch_bounds__(kSumTile* kSumRows)
    bias_act_backward_kernel(BiasActGrad<S, P> elem, ColumnOutputs<P, 1> outs, P* partial, unsigned* counters,
                             int rows, int cols, int chunks) {
  chunked_column_sums<1, V>(elem, outs, partial, counters, rows, cols, chunks);
}

}  // namespace

namespace {
std::atomic<int> row_batch_override{-1};  // set_bias_grad_row_batch: 0 / 1; -1: the environment's
}  // namespace

bool bias_grad_row_batch() {
  // On by default (docs/PERFORMANCE.md "The bias gradient, profiled"); read once.
  static const bool from_env = [] {
    const char* e = std::getenv("HARNESS_BIAS_GRAD_BATCH");
    return e == nullptr || *e == '\0' || std::string(e) != "0";
  }();
  const int v = row_batch_override.load(std::memory_order_relaxed);
  return v < 0 ? from_env : v == 1;
}

void set_bias_grad_row_batch(bool on) { row_batch_override.store(on ? 1 : 0, std::memory_order_relaxed); }

std::size_t bias_act_backward_workspace(int rows, int cols) {
  if (rows < 0 || cols < 0) return 0;
  const int chunks = fused_chunks(rows);
  return chunks > 1 ? static_cast<std::size_t>(chunks) * static_cast<std::size_t>(cols) : 0;
}

template <class S, class P>
cudaError_t bias_act_forward(Act act, const S* x, const P* bias, S* y, int rows, int cols, cudaStream_t s) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  if (n == 0) return cudaSuccess;
  if (x == nullptr || bias == nullptr || y == nullptr) return cudaErrorInvalidValue;
  constexpr int V = static_cast<int>(16 / sizeof(S));
  if (cols % V == 0 && aligned16(x) && aligned16(y))
    bias_act_forward_kernel<S, P, V><<<grid_for(n / V), kThreads, 0, s>>>(act, x, bias, y, n / V, cols);
  else
    bias_act_forward_kernel<S, P, 1><<<grid_for(n), kThreads, 0, s>>>(act, x, bias, y, n, cols);
  return cudaGetLastError();
}

template <class S, class P>
cudaError_t bias_act_backward(Act act, const S* x, const P* bias, const S* dy, S* dpre, P* dbias, P* workspace,
                              unsigned* counters, int rows, int cols, cudaStream_t s) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (cols == 0) return cudaSuccess;
  const int chunks = fused_chunks(rows);
  if (dbias == nullptr || (chunks > 1 && workspace == nullptr)) return cudaErrorInvalidValue;
  if (rows > 0 && (dy == nullptr || (act != Act::identity && (x == nullptr || bias == nullptr || dpre == nullptr))))
    return cudaErrorInvalidValue;
  const ColumnOutputs<P, 1> outs{{dbias}};
  // f64 (the gradient checks) one element per thread: packs of 2 doubles spill around the
  // double GELU's calls (8 bytes, ptxas -v).
  constexpr int V = std::is_same_v<S, double> ? 1 : static_cast<int>(16 / sizeof(S));
  const BiasActGrad<S, P> elem{act, x, bias, dy, dpre};
  const bool packs = cols % V == 0 && aligned16(dy) && (act == Act::identity || aligned16(x)) &&
                     (dpre == nullptr || aligned16(dpre));
  if (chunks > 0 && packs && act == Act::identity && dpre == nullptr && bias_grad_row_batch())
    dy_column_sums_kernel<S, P, V><<<column_sums_grid(cols, chunks, V), column_sums_block(), 0, s>>>(
        DyColumns<S, P>{dy}, outs, workspace, counters, rows, cols, chunks);
  else if (chunks > 0 && packs)
    bias_act_backward_kernel<S, P, V><<<column_sums_grid(cols, chunks, V), column_sums_block(), 0, s>>>(
        elem, outs, workspace, counters, rows, cols, chunks);
  else if (chunks > 0)
    bias_act_backward_kernel<S, P, 1><<<column_sums_grid(cols, chunks, 1), column_sums_block(), 0, s>>>(
        elem, outs, workspace, counters, rows, cols, chunks);
  return finish_if_needed<1, P>(workspace, outs, counters, chunks, cols, s);
}

#define KERNELS_NN_BIAS_ACT(S, P)                                                                          \
  template cudaError_t bias_act_forward<S, P>(Act, const S*, const P*, S*, int, int, cudaStream_t);         \
  template cudaError_t bias_act_backward<S, P>(Act, const S*, const P*, const S*, S*, P*, P*, unsigned*, int, \
                                               int, cudaStream_t);

KERNELS_NN_BIAS_ACT(float, float)
KERNELS_NN_BIAS_ACT(double, double)
KERNELS_NN_BIAS_ACT(bf16, float)
#undef KERNELS_NN_BIAS_ACT

}  // namespace kernels::nn
