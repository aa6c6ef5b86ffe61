// Naive attention in T (float or double) for gradient checks and small shapes: the score
// matrix of every (b, h) is materialized in `scratch` (B*H*N*N), one thread per output
// element, grid-stride. Same math and layouts as kernels/attention (see nn.hpp).
//
// Indexing: z = b H + h enumerates query heads, zk = b Hkv + h / G (G = H / Hkv) the kv head
// it reads. Rows of q, o, dq: (z, i); rows of k, v, dk, dv: (zk, j); scratch[z][i][j].
//
// Forward:  S = scale q k^T (masked -inf) -> per row: lse, P = exp(S - lse) -> O = P v.
// Backward: P (recomputed from q, k, lse) -> dV = sum_{h in group} P^T dO
//           -> dS = P (dO v^T - D), D_i = dO_i . O_i, in place -> dQ = scale dS k,
//           dK = scale sum_{h in group} dS^T q.
#include <cmath>
#include <cstddef>

#include "nn/nn.hpp"
#include "nn/nn_common.cuh"

namespace kernels::nn {
namespace {
using namespace detail;

struct Dims {
  int B, H, Hkv, N, d, G;
  bool causal;
  __device__ std::size_t zk_of(std::size_t z) const {
    const std::size_t b = z / H;
    const int h = static_cast<int>(z - b * H);
    return b * Hkv + h / G;
  }
};

#define NN_GRID_STRIDE(i, count)                                                           \
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;     \
       i < (count); i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

// S[z][i][j] = scale q_i . k_j, or -inf where causal and j > i.
template <class T>
__global__ void scores_kernel(const T* __restrict__ q, const T* __restrict__ k,
                              T* __restrict__ S, Dims D, T scale) {
  const std::size_t NN = static_cast<std::size_t>(D.N) * D.N;
  NN_GRID_STRIDE(idx, static_cast<std::size_t>(D.B) * D.H * NN) {
    const std::size_t z = idx / NN;
    const int i = static_cast<int>((idx - z * NN) / D.N);
    const int j = static_cast<int>(idx - z * NN - static_cast<std::size_t>(i) * D.N);
    if (D.causal && j > i) {
      S[idx] = T(-INFINITY);
      continue;
    }
    const T* qi = q + (z * D.N + i) * D.d;
    const T* kj = k + (D.zk_of(z) * D.N + j) * D.d;
    T acc = T(0);
    for (int e = 0; e < D.d; ++e) acc += qi[e] * kj[e];
    S[idx] = scale * acc;
  }
}

// One warp per row (z, i) of S: lse = max + log sum exp(S - max), S <- P = exp(S - lse).
template <class T>
__global__ void softmax_rows_kernel(T* __restrict__ S, T* __restrict__ lse, std::size_t rows,
                                    int N) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (blockDim.x / 32);
  for (std::size_t r = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       r < rows; r += warps) {
    T* row = S + r * N;
    T m = T(-INFINITY);
    for (int j = lane; j < N; j += 32) m = max(m, row[j]);
    m = arch::warp_max(m);
    T sum = T(0);
    for (int j = lane; j < N; j += 32) sum += exp(row[j] - m);
    const T l = m + log(arch::warp_sum(sum));
    for (int j = lane; j < N; j += 32) row[j] = exp(row[j] - l);
    if (lane == 0) lse[r] = l;
  }
}

// O[z][i][:] = sum_j P[z][i][j] v[zk][j][:].
template <class T>
__global__ void pv_kernel(const T* __restrict__ P, const T* __restrict__ v, T* __restrict__ o,
                          Dims D) {
  NN_GRID_STRIDE(idx, static_cast<std::size_t>(D.B) * D.H * D.N * D.d) {
    const std::size_t row = idx / D.d;  // z N + i
    const int e = static_cast<int>(idx - row * D.d);
    const std::size_t z = row / D.N;
    const T* p = P + row * D.N;
    const T* vz = v + D.zk_of(z) * D.N * D.d + e;
    T acc = T(0);
    for (int j = 0; j < D.N; ++j) acc += p[j] * vz[static_cast<std::size_t>(j) * D.d];
    o[idx] = acc;
  }
}

// P[z][i][j] = exp(scale q_i . k_j - lse_i), 0 where masked.
template <class T>
__global__ void probs_kernel(const T* __restrict__ q, const T* __restrict__ k,
                             const T* __restrict__ lse, T* __restrict__ P, Dims D, T scale) {
  const std::size_t NN = static_cast<std::size_t>(D.N) * D.N;
  NN_GRID_STRIDE(idx, static_cast<std::size_t>(D.B) * D.H * NN) {
    const std::size_t z = idx / NN;
    const int i = static_cast<int>((idx - z * NN) / D.N);
    const int j = static_cast<int>(idx - z * NN - static_cast<std::size_t>(i) * D.N);
    if (D.causal && j > i) {
      P[idx] = T(0);
      continue;
    }
    const T* qi = q + (z * D.N + i) * D.d;
    const T* kj = k + (D.zk_of(z) * D.N + j) * D.d;
    T acc = T(0);
    for (int e = 0; e < D.d; ++e) acc += qi[e] * kj[e];
    P[idx] = exp(scale * acc - lse[z * D.N + i]);
  }
}

// out[zk][j][e] = alpha sum_{g < G} sum_i M[z_g][i][j] X[z_g][i][e], z_g = b H + hk G + g:
// dV (M = P, X = dO, alpha 1) and dK (M = dS, X = q, alpha scale).
template <class T>
__global__ void kv_grad_kernel(const T* __restrict__ Mat, const T* __restrict__ X,
                               T* __restrict__ out, Dims D, T alpha) {
  NN_GRID_STRIDE(idx, static_cast<std::size_t>(D.B) * D.Hkv * D.N * D.d) {
    const std::size_t row = idx / D.d;  // zk N + j
    const int e = static_cast<int>(idx - row * D.d);
    const std::size_t zk = row / D.N;
    const int j = static_cast<int>(row - zk * D.N);
    const std::size_t b = zk / D.Hkv;
    const int hk = static_cast<int>(zk - b * D.Hkv);
    T acc = T(0);
    for (int g = 0; g < D.G; ++g) {
      const std::size_t z = b * D.H + static_cast<std::size_t>(hk) * D.G + g;
      const T* m = Mat + z * D.N * D.N + j;                 // column j, stride N
      const T* x = X + z * D.N * D.d + e;                   // column e, stride d
      for (int i = 0; i < D.N; ++i)
        acc += m[static_cast<std::size_t>(i) * D.N] * x[static_cast<std::size_t>(i) * D.d];
    }
    out[idx] = alpha * acc;
  }
}

// In place: S[z][i][j] = P_ij (dO_i . v_j - dO_i . O_i).
template <class T>
__global__ void dscores_kernel(const T* __restrict__ v, const T* __restrict__ o,
                               const T* __restrict__ dout, T* __restrict__ S, Dims D) {
  const std::size_t NN = static_cast<std::size_t>(D.N) * D.N;
  NN_GRID_STRIDE(idx, static_cast<std::size_t>(D.B) * D.H * NN) {
    const T p = S[idx];
    if (p == T(0)) continue;  // masked or underflowed: dS = 0 exactly
    const std::size_t z = idx / NN;
    const int i = static_cast<int>((idx - z * NN) / D.N);
    const int j = static_cast<int>(idx - z * NN - static_cast<std::size_t>(i) * D.N);
    const T* doi = dout + (z * D.N + i) * D.d;
    const T* oi = o + (z * D.N + i) * D.d;
    const T* vj = v + (D.zk_of(z) * D.N + j) * D.d;
    T dp = T(0), di = T(0);
    for (int e = 0; e < D.d; ++e) {
      dp += doi[e] * vj[e];
      di += doi[e] * oi[e];
    }
    S[idx] = p * (dp - di);
  }
}

// dQ[z][i][e] = scale sum_j dS[z][i][j] k[zk][j][e].
template <class T>
__global__ void dq_kernel(const T* __restrict__ dS, const T* __restrict__ k, T* __restrict__ dq,
                          Dims D, T scale) {
  NN_GRID_STRIDE(idx, static_cast<std::size_t>(D.B) * D.H * D.N * D.d) {
    const std::size_t row = idx / D.d;
    const int e = static_cast<int>(idx - row * D.d);
    const std::size_t z = row / D.N;
    const T* ds = dS + row * D.N;
    const T* kz = k + D.zk_of(z) * D.N * D.d + e;
    T acc = T(0);
    for (int j = 0; j < D.N; ++j) acc += ds[j] * kz[static_cast<std::size_t>(j) * D.d];
    dq[idx] = scale * acc;
  }
}

#undef NN_GRID_STRIDE

bool attention_args_ok(int B, int H, int Hkv, int N, int d) {
  return B >= 0 && H >= 0 && Hkv >= 0 && N >= 0 && d >= 0 && (H == 0 || (Hkv >= 1 && H % Hkv == 0));
}

template <class T>
T effective_scale(T scale, int d) {
  return scale == T(0) ? T(1) / static_cast<T>(std::sqrt(static_cast<double>(d))) : scale;
}

}  // namespace

template <class T>
cudaError_t attention_naive_forward(const T* q, const T* k, const T* v, T* o, T* lse,
                                    T* scratch, int B, int H, int Hkv, int N, int d,
                                    bool causal, T scale, cudaStream_t s) {
  if (!attention_args_ok(B, H, Hkv, N, d)) return cudaErrorInvalidValue;
  if (static_cast<long long>(B) * H * N == 0) return cudaSuccess;
  if (d == 0 || !q || !k || !v || !o || !lse || !scratch) return cudaErrorInvalidValue;
  const Dims D{B, H, Hkv, N, d, H / Hkv, causal};
  const T sc = effective_scale(scale, d);
  const std::size_t rows = static_cast<std::size_t>(B) * H * N;
  scores_kernel<<<grid_for(rows * N), kThreads, 0, s>>>(q, k, scratch, D, sc);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  softmax_rows_kernel<<<grid_for(rows * 32), kThreads, 0, s>>>(scratch, lse, rows, N);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  pv_kernel<<<grid_for(rows * d), kThreads, 0, s>>>(scratch, v, o, D);
  return cudaGetLastError();
}

template <class T>
cudaError_t attention_naive_backward(const T* q, const T* k, const T* v, const T* o,
                                     const T* lse, const T* dout, T* dq, T* dk, T* dv,
                                     T* scratch, int B, int H, int Hkv, int N, int d,
                                     bool causal, T scale, cudaStream_t s) {
  if (!attention_args_ok(B, H, Hkv, N, d)) return cudaErrorInvalidValue;
  if (static_cast<long long>(B) * H * N * d == 0) return cudaSuccess;
  if (!q || !k || !v || !o || !lse || !dout || !dq || !dk || !dv || !scratch)
    return cudaErrorInvalidValue;
  const Dims D{B, H, Hkv, N, d, H / Hkv, causal};
  const T sc = effective_scale(scale, d);
  const std::size_t rows = static_cast<std::size_t>(B) * H * N;
  const std::size_t kv_rows = static_cast<std::size_t>(B) * Hkv * N;
  probs_kernel<<<grid_for(rows * N), kThreads, 0, s>>>(q, k, lse, scratch, D, sc);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  kv_grad_kernel<<<grid_for(kv_rows * d), kThreads, 0, s>>>(scratch, dout, dv, D, T(1));
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  dscores_kernel<<<grid_for(rows * N), kThreads, 0, s>>>(v, o, dout, scratch, D);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  dq_kernel<<<grid_for(rows * d), kThreads, 0, s>>>(scratch, k, dq, D, sc);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  kv_grad_kernel<<<grid_for(kv_rows * d), kThreads, 0, s>>>(scratch, q, dk, D, sc);
  return cudaGetLastError();
}

template cudaError_t attention_naive_forward<float>(const float*, const float*, const float*,
                                                    float*, float*, float*, int, int, int, int,
                                                    int, bool, float, cudaStream_t);
template cudaError_t attention_naive_forward<double>(const double*, const double*,
                                                     const double*, double*, double*, double*,
                                                     int, int, int, int, int, bool, double,
                                                     cudaStream_t);
template cudaError_t attention_naive_backward<float>(const float*, const float*, const float*,
                                                     const float*, const float*, const float*,
                                                     float*, float*, float*, float*, int, int,
                                                     int, int, int, bool, float, cudaStream_t);
template cudaError_t attention_naive_backward<double>(const double*, const double*,
                                                      const double*, const double*,
                                                      const double*, const double*, double*,
                                                      double*, double*, double*, int, int, int,
                                                      int, int, bool, double, cudaStream_t);

}  // namespace kernels::nn
