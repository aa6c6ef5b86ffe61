// Fused optimizer steps: Adam (bias-corrected, decoupled weight decay) and SGD (optional
// momentum), one grid-stride kernel each, 16-byte vectors where all buffers are aligned.
// The bias corrections 1 - b1^t, 1 - b2^t are computed once on the host in double.
#include <cmath>
#include <cstddef>

#include "nn/nn.hpp"
#include "nn/nn_common.cuh"

namespace kernels::nn {
namespace {
using namespace detail;

template <class T>
struct AdamParams {
  T lr, b1, b2, eps, wd;
  T bc1, bc2;  // 1 - b1^t, 1 - b2^t
};

template <class T>
__device__ __forceinline__ void adam_one(T& p, T g, T& m, T& v, const AdamParams<T>& a) {
  m = a.b1 * m + (T(1) - a.b1) * g;
  v = a.b2 * v + (T(1) - a.b2) * g * g;
  const T mhat = m / a.bc1;
  const T vhat = v / a.bc2;
  p -= a.lr * mhat / (sqrt(vhat) + a.eps) + a.lr * a.wd * p;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    adam_kernel(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ m, T* __restrict__ v,
                std::size_t n, AdamParams<T> a, bool vec) {
  constexpr int W = kWidth<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t head = 0;
  if (vec) {
    const std::size_t nv = n / W;
    for (std::size_t i = tid; i < nv; i += stride) {
      Vec<T> pv = load_vec(p, i), mv = load_vec(m, i), vv = load_vec(v, i);
      const Vec<T> gv = load_vec(g, i);
#pragma unroll
      for (int e = 0; e < W; ++e) adam_one(pv.v[e], gv.v[e], mv.v[e], vv.v[e], a);
      store_vec(p, i, pv);
      store_vec(m, i, mv);
      store_vec(v, i, vv);
    }
    head = nv * W;
  }
  for (std::size_t i = head + tid; i < n; i += stride) {
    T pi = p[i], mi = m[i], vi = v[i];
    adam_one(pi, g[i], mi, vi, a);
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
  }
}

// kMomentum: buf = momentum buf + g, p -= lr buf; else p -= lr g.
template <class T, bool kMomentum>
__global__ void __launch_bounds__(kThreads)
    sgd_kernel(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ buf, std::size_t n,
               T lr, T momentum, bool vec) {
  constexpr int W = kWidth<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t head = 0;
  if (vec) {
    const std::size_t nv = n / W;
    for (std::size_t i = tid; i < nv; i += stride) {
      Vec<T> pv = load_vec(p, i);
      const Vec<T> gv = load_vec(g, i);
      if constexpr (kMomentum) {
        Vec<T> bv = load_vec(buf, i);
#pragma unroll
        for (int e = 0; e < W; ++e) {
          bv.v[e] = momentum * bv.v[e] + gv.v[e];
          pv.v[e] -= lr * bv.v[e];
        }
        store_vec(buf, i, bv);
      } else {
#pragma unroll
        for (int e = 0; e < W; ++e) pv.v[e] -= lr * gv.v[e];
      }
      store_vec(p, i, pv);
    }
    head = nv * W;
  }
  for (std::size_t i = head + tid; i < n; i += stride) {
    if constexpr (kMomentum) {
      const T b = momentum * buf[i] + g[i];
      buf[i] = b;
      p[i] -= lr * b;
    } else {
      p[i] -= lr * g[i];
    }
  }
}

}  // namespace

template <class T>
cudaError_t adam_step(T* p, const T* g, T* m, T* v, std::size_t n, T lr, T b1, T b2, T eps,
                      T wd, int t, cudaStream_t s) {
  if (t < 1) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!p || !g || !m || !v) return cudaErrorInvalidValue;
  const AdamParams<T> a{lr,
                        b1,
                        b2,
                        eps,
                        wd,
                        static_cast<T>(1.0 - std::pow(static_cast<double>(b1), t)),
                        static_cast<T>(1.0 - std::pow(static_cast<double>(b2), t))};
  const bool vec = aligned16(p) && aligned16(g) && aligned16(m) && aligned16(v);
  const std::size_t work = vec ? (n + kWidth<T> - 1) / kWidth<T> : n;
  adam_kernel<<<grid_for(work), kThreads, 0, s>>>(p, g, m, v, n, a, vec);
  return cudaGetLastError();
}

template <class T>
cudaError_t sgd_step(T* p, const T* g, T* momentum_buf, std::size_t n, T lr, T momentum,
                     cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  if (!p || !g) return cudaErrorInvalidValue;
  const bool vec = aligned16(p) && aligned16(g) && (!momentum_buf || aligned16(momentum_buf));
  const std::size_t work = vec ? (n + kWidth<T> - 1) / kWidth<T> : n;
  if (momentum_buf)
    sgd_kernel<T, true><<<grid_for(work), kThreads, 0, s>>>(p, g, momentum_buf, n, lr, momentum, vec);
  else
    sgd_kernel<T, false><<<grid_for(work), kThreads, 0, s>>>(p, g, nullptr, n, lr, momentum, vec);
  return cudaGetLastError();
}

#define KERNELS_NN_OPTIM(T)                                                                   \
  template cudaError_t adam_step<T>(T*, const T*, T*, T*, std::size_t, T, T, T, T, T, int,    \
                                    cudaStream_t);                                            \
  template cudaError_t sgd_step<T>(T*, const T*, T*, std::size_t, T, T, cudaStream_t);

KERNELS_NN_OPTIM(float)
KERNELS_NN_OPTIM(double)
#undef KERNELS_NN_OPTIM

}  // namespace kernels::nn
