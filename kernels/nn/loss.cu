// Losses (softmax cross-entropy, MSE) and the pieces of gradient clipping by global norm
// (sum of squares, scaling by a device-side factor). See nn.hpp for the math.
//
// Cross-entropy, two kernels, deterministic, no atomics and no workspace:
//  1. one 512-thread block per row: max, sum of exp (block reductions), then
//     dlogits[r, j] = softmax_j * grad_scale for j != t, and the row's loss
//     lse - logits[r, t] parked in dlogits[r, t] (the slot the second kernel finishes).
//     Rows that are 16-byte aligned with vocab % W == 0 and vocab / W <= 512 kVecs are
//     held in registers (kVecs = 1, 2, 4, 8; vocab 6880 in float is kVecs = 4): one read
//     of the logits and one exp per element. Other rows take scalar loops (three reads).
//     dlogits may alias logits: every element is read (by the thread that writes it) before
//     it is written, and logits[r, t] is read by all threads before the block reductions'
//     barriers, so no __restrict__ on the two.
//  2. one block walks the rows in a fixed order: loss_sum = sum of the parked losses,
//     count = counted rows, and dlogits[r, t] = (exp(-loss_r) - 1) grad_scale
//     = (softmax_t - 1) grad_scale, computed as expm1(-loss_r) without cancellation.
#include <cmath>
#include <cstddef>

#include "nn/nn.hpp"
#include "nn/nn_common.cuh"

namespace kernels::nn {
namespace {
using namespace detail;

constexpr int kCeThreads = 512;
constexpr int kFinishThreads = 1024;

template <class T, int kVecs>
__global__ void __launch_bounds__(kCeThreads)
    ce_rows_kernel(const T* logits, const int* __restrict__ targets, T* dlogits, int vocab,
                   int ignore_index, T grad_scale) {
  __shared__ T sh[32];
  const int row = static_cast<int>(blockIdx.x);
  const int tid = static_cast<int>(threadIdx.x);
  const int t = targets[row];
  const std::size_t off = static_cast<std::size_t>(row) * vocab;
  const T* xr = logits + off;
  T* dr = dlogits + off;
  if (t == ignore_index || t < 0 || t >= vocab) {  // uniform over the block
    const T fillv = t == ignore_index ? T(0) : T(NAN);
    for (int j = tid; j < vocab; j += kCeThreads) dr[j] = fillv;
    return;
  }
  const T xt = xr[t];
  if constexpr (kVecs > 0) {
    constexpr int W = kWidth<T>;
    const int nv = vocab / W;
    Vec<T> buf[kVecs];
    T m = T(-INFINITY);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int v = tid + k * kCeThreads;
      if (v < nv) {
        buf[k] = load_vec(xr, v);
#pragma unroll
        for (int e = 0; e < W; ++e) m = max(m, buf[k].v[e]);
      }
    }
    m = block_max(m, sh);
    T sum = T(0);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if (tid + k * kCeThreads < nv) {
#pragma unroll
        for (int e = 0; e < W; ++e) {
          buf[k].v[e] = exp(buf[k].v[e] - m);
          sum += buf[k].v[e];
        }
      }
    }
    sum = block_sum(sum, sh);
    const T loss = m + log(sum) - xt;
    const T scale = grad_scale / sum;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int v = tid + k * kCeThreads;
      if (v < nv) {
        Vec<T> out;
#pragma unroll
        for (int e = 0; e < W; ++e) out.v[e] = v * W + e == t ? loss : buf[k].v[e] * scale;
        store_vec(dr, v, out);
      }
    }
  } else {
    T m = T(-INFINITY);
    for (int j = tid; j < vocab; j += kCeThreads) m = max(m, xr[j]);
    m = block_max(m, sh);
    T sum = T(0);
    for (int j = tid; j < vocab; j += kCeThreads) sum += exp(xr[j] - m);
    sum = block_sum(sum, sh);
    const T lse = m + log(sum);
    for (int j = tid; j < vocab; j += kCeThreads)
      dr[j] = j == t ? lse - xt : exp(xr[j] - lse) * grad_scale;
  }
}

template <class T>
__global__ void __launch_bounds__(kFinishThreads)
    ce_finish_kernel(const int* __restrict__ targets, T* __restrict__ dlogits,
                     T* __restrict__ loss_sum, T* __restrict__ count, int rows, int vocab,
                     int ignore_index, T grad_scale) {
  __shared__ T sh[32];
  T sum = T(0), cnt = T(0);
  for (int r = static_cast<int>(threadIdx.x); r < rows; r += kFinishThreads) {
    const int t = targets[r];
    if (t == ignore_index) continue;
    cnt += T(1);
    if (t < 0 || t >= vocab) {
      sum += T(NAN);
      continue;
    }
    T* slot = dlogits + static_cast<std::size_t>(r) * vocab + t;
    const T loss = *slot;
    sum += loss;
    *slot = expm1(-loss) * grad_scale;
  }
  sum = block_sum(sum, sh);
  cnt = block_sum(cnt, sh);
  if (threadIdx.x == 0) {
    loss_sum[0] = sum;
    count[0] = cnt;
  }
}

// ---- MSE, sum of squares, clip ----------------------------------------------------------

// d = pred - target; dpred = 2 d grad_scale; atomicAdd(loss_sum, block sum of d^2).
template <class T>
__global__ void __launch_bounds__(kThreads)
    mse_kernel(const T* __restrict__ pred, const T* __restrict__ target, T* __restrict__ loss_sum,
               T* __restrict__ dpred, std::size_t n, T grad_scale, bool vec) {
  __shared__ T sh[32];
  constexpr int W = kWidth<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const T g2 = T(2) * grad_scale;
  T acc = T(0);
  std::size_t head = 0;
  if (vec) {
    const std::size_t nv = n / W;
    for (std::size_t i = tid; i < nv; i += stride) {
      const Vec<T> p = load_vec(pred, i);
      const Vec<T> t = load_vec(target, i);
      Vec<T> out;
#pragma unroll
      for (int e = 0; e < W; ++e) {
        const T d = p.v[e] - t.v[e];
        acc += d * d;
        out.v[e] = g2 * d;
      }
      store_vec(dpred, i, out);
    }
    head = nv * W;
  }
  for (std::size_t i = head + tid; i < n; i += stride) {
    const T d = pred[i] - target[i];
    acc += d * d;
    dpred[i] = g2 * d;
  }
  acc = block_sum(acc, sh);
  if (threadIdx.x == 0) atomicAdd(loss_sum, acc);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    sum_squares_kernel(const T* __restrict__ x, T* __restrict__ out, std::size_t n, bool vec) {
  __shared__ T sh[32];
  constexpr int W = kWidth<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  T acc = T(0);
  std::size_t head = 0;
  if (vec) {
    const std::size_t nv = n / W;
    for (std::size_t i = tid; i < nv; i += stride) {
      const Vec<T> v = load_vec(x, i);
#pragma unroll
      for (int e = 0; e < W; ++e) acc += v.v[e] * v.v[e];
    }
    head = nv * W;
  }
  for (std::size_t i = head + tid; i < n; i += stride) acc += x[i] * x[i];
  acc = block_sum(acc, sh);
  if (threadIdx.x == 0) atomicAdd(out, acc);
}

// x *= scale, scale = max_norm / (sqrt(sumsq) + 1e-6) when below 1; otherwise (and for a
// NaN scale) every thread returns before touching x.
template <class T>
__global__ void __launch_bounds__(kThreads)
    clip_kernel(T* __restrict__ x, std::size_t n, const T* __restrict__ sumsq, T max_norm,
                bool vec) {
  const T scale = max_norm / (sqrt(*sumsq) + T(1e-6));
  if (!(scale < T(1))) return;
  constexpr int W = kWidth<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t head = 0;
  if (vec) {
    const std::size_t nv = n / W;
    for (std::size_t i = tid; i < nv; i += stride) {
      Vec<T> v = load_vec(x, i);
#pragma unroll
      for (int e = 0; e < W; ++e) v.v[e] *= scale;
      store_vec(x, i, v);
    }
    head = nv * W;
  }
  for (std::size_t i = head + tid; i < n; i += stride) x[i] *= scale;
}

}  // namespace

template <class T>
cudaError_t softmax_cross_entropy(const T* logits, const int* targets, T* loss_sum, T* count,
                                  T* dlogits, int rows, int vocab, int ignore_index,
                                  T grad_scale, cudaStream_t s) {
  if (rows < 0 || vocab < 0 || !loss_sum || !count) return cudaErrorInvalidValue;
  if (rows > 0 && (vocab == 0 || !logits || !targets || !dlogits)) return cudaErrorInvalidValue;
  if (rows > 0) {
    constexpr int W = kWidth<T>;
    int k = 0;
    if (vocab % W == 0 && aligned16(logits) && aligned16(dlogits)) {
      const int nv = vocab / W;
      for (int c : {1, 2, 4, 8})
        if (nv <= kCeThreads * c) {
          k = c;
          break;
        }
    }
    const unsigned blocks = static_cast<unsigned>(rows);
    switch (k) {
      case 1:
        ce_rows_kernel<T, 1><<<blocks, kCeThreads, 0, s>>>(logits, targets, dlogits, vocab, ignore_index, grad_scale);
        break;
      case 2:
        ce_rows_kernel<T, 2><<<blocks, kCeThreads, 0, s>>>(logits, targets, dlogits, vocab, ignore_index, grad_scale);
        break;
      case 4:
        ce_rows_kernel<T, 4><<<blocks, kCeThreads, 0, s>>>(logits, targets, dlogits, vocab, ignore_index, grad_scale);
        break;
      case 8:
        ce_rows_kernel<T, 8><<<blocks, kCeThreads, 0, s>>>(logits, targets, dlogits, vocab, ignore_index, grad_scale);
        break;
      default:
        ce_rows_kernel<T, 0><<<blocks, kCeThreads, 0, s>>>(logits, targets, dlogits, vocab, ignore_index, grad_scale);
    }
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  ce_finish_kernel<T><<<1, kFinishThreads, 0, s>>>(targets, dlogits, loss_sum, count, rows, vocab,
                                                  ignore_index, grad_scale);
  return cudaGetLastError();
}

template <class T>
cudaError_t mse(const T* pred, const T* target, T* loss_sum, T* dpred, std::size_t n,
                T grad_scale, cudaStream_t s) {
  if (!loss_sum || (n > 0 && (!pred || !target || !dpred))) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaMemsetAsync(loss_sum, 0, sizeof(T), s); e != cudaSuccess) return e;
  if (n == 0) return cudaSuccess;
  const bool vec = aligned16(pred) && aligned16(target) && aligned16(dpred);
  const std::size_t work = vec ? (n + kWidth<T> - 1) / kWidth<T> : n;
  mse_kernel<<<grid_for(work), kThreads, 0, s>>>(pred, target, loss_sum, dpred, n, grad_scale,
                                                 vec);
  return cudaGetLastError();
}

template <class T>
cudaError_t sum_squares(const T* x, T* out, std::size_t n, cudaStream_t s) {
  if (!out || (n > 0 && !x)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const bool vec = aligned16(x);
  const std::size_t work = vec ? (n + kWidth<T> - 1) / kWidth<T> : n;
  sum_squares_kernel<<<grid_for(work), kThreads, 0, s>>>(x, out, n, vec);
  return cudaGetLastError();
}

template <class T>
cudaError_t clip_by_norm(T* x, std::size_t n, const T* sumsq, T max_norm, cudaStream_t s) {
  if (!sumsq || (n > 0 && !x)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const bool vec = aligned16(x);
  const std::size_t work = vec ? (n + kWidth<T> - 1) / kWidth<T> : n;
  clip_kernel<<<grid_for(work), kThreads, 0, s>>>(x, n, sumsq, max_norm, vec);
  return cudaGetLastError();
}

#define KERNELS_NN_LOSS(T)                                                                    \
  template cudaError_t softmax_cross_entropy<T>(const T*, const int*, T*, T*, T*, int, int, int, \
                                                T, cudaStream_t);                             \
  template cudaError_t mse<T>(const T*, const T*, T*, T*, std::size_t, T, cudaStream_t);      \
  template cudaError_t sum_squares<T>(const T*, T*, std::size_t, cudaStream_t);               \
  template cudaError_t clip_by_norm<T>(T*, std::size_t, const T*, T, cudaStream_t);

KERNELS_NN_LOSS(float)
KERNELS_NN_LOSS(double)
#undef KERNELS_NN_LOSS

}  // namespace kernels::nn
