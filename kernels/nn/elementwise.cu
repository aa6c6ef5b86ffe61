// Elementwise kernels (activations, residual add, axpby, fill), bias add and its backward
// (column sums), embedding lookup and its backward, sinusoidal positional encoding.
// All memory-bound: grid-stride loops, 16-byte vector accesses where every pointer is
// 16-byte aligned, scalar accesses for the tail and for unaligned pointers.
#include <cmath>
#include <cstddef>

#include "nn/nn.hpp"
#include "nn/activation_math.cuh"
#include "nn/nn_common.cuh"

namespace kernels::nn {
namespace {
using namespace detail;

// ---- elementwise functors: y = f(), f(a) or f(a, b) ---------------------------------------

template <class T>
struct AddF {
  __device__ T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct AxpbyF {
  T alpha, beta;
  __device__ T operator()(T x, T y) const { return alpha * x + beta * y; }
};
template <class T>
struct ScaleF {
  T alpha;
  __device__ T operator()(T x) const { return alpha * x; }
};
template <class T>
struct FillF {
  T value;
  __device__ T operator()() const { return value; }
};

template <int kIn, class T, class F>
__device__ __forceinline__ T apply(const F& f, T a, T b) {
  if constexpr (kIn == 0) {
    (void)a, (void)b;
    return f();
  } else if constexpr (kIn == 1) {
    (void)b;
    return f(a);
  } else {
    return f(a, b);
  }
}

// y[i] = f(a[i], b[i]) for the first kIn of (a, b). y may alias a or b (each element is
// read and written by the same thread), hence no __restrict__.
// vec: a, b, y are 16-byte aligned; the first n / W * W elements go by W-element vectors.
template <class T, int kIn, class F>
__global__ void __launch_bounds__(kThreads)
    map_kernel(F f, const T* a, const T* b, T* y, std::size_t n, bool vec) {
  constexpr int W = kWidth<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t head = 0;
  if (vec) {
    const std::size_t nv = n / W;
    for (std::size_t i = tid; i < nv; i += stride) {
      Vec<T> va{}, vb{}, vy;
      if constexpr (kIn >= 1) va = load_vec(a, i);
      if constexpr (kIn >= 2) vb = load_vec(b, i);
#pragma unroll
      for (int e = 0; e < W; ++e) vy.v[e] = apply<kIn>(f, va.v[e], vb.v[e]);
      store_vec(y, i, vy);
    }
    head = nv * W;
  }
  for (std::size_t i = head + tid; i < n; i += stride) {
    T va{}, vb{};
    if constexpr (kIn >= 1) va = a[i];
    if constexpr (kIn >= 2) vb = b[i];
    y[i] = apply<kIn>(f, va, vb);
  }
}

template <class T, int kIn, class F>
cudaError_t launch_map(F f, const T* a, const T* b, T* y, std::size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  if (y == nullptr || (kIn >= 1 && a == nullptr) || (kIn >= 2 && b == nullptr))
    return cudaErrorInvalidValue;
  const bool vec = aligned16(y) && (kIn < 1 || aligned16(a)) && (kIn < 2 || aligned16(b));
  const std::size_t work = vec ? (n + kWidth<T> - 1) / kWidth<T> : n;
  map_kernel<T, kIn><<<grid_for(work), kThreads, 0, s>>>(f, a, b, y, n, vec);
  return cudaGetLastError();
}

// ---- bias ------------------------------------------------------------------------------

// y[r, c] = x[r, c] + bias[c] over n = rows * cols elements.
// vec: cols % W == 0 and x, bias, y 16-byte aligned, so a vector never straddles rows.
template <class T>
__global__ void __launch_bounds__(kThreads)
    bias_add_kernel(const T* x, const T* __restrict__ bias, T* y, std::size_t n, int cols,
                    bool vec) {
  constexpr int W = kWidth<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (vec) {
    const std::size_t nv = n / W;
    const std::size_t cv = static_cast<std::size_t>(cols / W);
    for (std::size_t i = tid; i < nv; i += stride) {
      const Vec<T> vx = load_vec(x, i);
      const Vec<T> vb = load_vec(bias, i % cv);
      Vec<T> vy;
#pragma unroll
      for (int e = 0; e < W; ++e) vy.v[e] = vx.v[e] + vb.v[e];
      store_vec(y, i, vy);
    }
  } else {
    for (std::size_t i = tid; i < n; i += stride) y[i] = x[i] + bias[i % cols];
  }
}

// Column sums: a (32, 32) block owns 32 adjacent columns; thread (tx, ty) sums rows
// ty, ty + 32, ... of column c0 + tx (a warp reads 32 consecutive elements of a row), then
// the 32 partials of each column are reduced by one warp through shared memory. Fixed order.
constexpr int kColTile = 32;
constexpr int kColRows = 32;

template <class T>
__global__ void __launch_bounds__(kColTile* kColRows)
    column_sum_kernel(const T* __restrict__ dy, T* __restrict__ out, int rows, int cols) {
  __shared__ T partial[kColRows][kColTile + 1];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int c = static_cast<int>(blockIdx.x) * kColTile + tx;
  T acc = T(0);
  if (c < cols) {
    const T* p = dy + static_cast<std::size_t>(ty) * cols + c;
    const std::size_t step = static_cast<std::size_t>(kColRows) * cols;
#pragma unroll 4
    for (int r = ty; r < rows; r += kColRows, p += step) acc += *p;
  }
  partial[ty][tx] = acc;
  __syncthreads();
  // warp ty reduces column ty of the tile: its lanes hold the 32 row-partials
  const T total = arch::warp_sum(partial[tx][ty]);
  const int oc = static_cast<int>(blockIdx.x) * kColTile + ty;
  if (tx == 0 && oc < cols) out[oc] = total;
}

// ---- embedding -------------------------------------------------------------------------

// out[r, :] = table[ids[r], :] (zeros for ids[r] < 0). Work items are vectors (vec: dim %
// W == 0, table and out aligned) or elements of the (rows, dim) output.
template <class T>
__global__ void __launch_bounds__(kThreads)
    embedding_forward_kernel(const int* __restrict__ ids, const T* __restrict__ table,
                             T* __restrict__ out, int rows, int dim, bool vec) {
  constexpr int W = kWidth<T>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (vec) {
    const std::size_t dv = static_cast<std::size_t>(dim / W);
    const std::size_t n = static_cast<std::size_t>(rows) * dv;
    for (std::size_t i = tid; i < n; i += stride) {
      const std::size_t r = i / dv;
      const int id = ids[r];
      Vec<T> v{};
      if (id >= 0) v = load_vec(table, static_cast<std::size_t>(id) * dv + (i - r * dv));
      store_vec(out, i, v);
    }
  } else {
    const std::size_t n = static_cast<std::size_t>(rows) * dim;
    for (std::size_t i = tid; i < n; i += stride) {
      const std::size_t r = i / dim;
      const int id = ids[r];
      out[i] = id >= 0 ? table[static_cast<std::size_t>(id) * dim + (i - r * dim)] : T(0);
    }
  }
}

// dtable[ids[r], c] += dout[r, c], one atomicAdd per element (double: sm_60+ native).
template <class T>
__global__ void __launch_bounds__(kThreads)
    embedding_backward_kernel(const int* __restrict__ ids, const T* __restrict__ dout,
                              T* __restrict__ dtable, int rows, int dim) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t n = static_cast<std::size_t>(rows) * dim;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const std::size_t r = i / dim;
    const int id = ids[r];
    if (id >= 0) atomicAdd(dtable + static_cast<std::size_t>(id) * dim + (i - r * dim), dout[i]);
  }
}

// ---- positional encoding ---------------------------------------------------------------

// One thread per (position p, column c) of PE, evaluated once in double and added to all
// `batch` sequences (consecutive threads: consecutive columns, coalesced).
template <class T>
__global__ void __launch_bounds__(kThreads)
    positional_encoding_kernel(T* __restrict__ x, int batch, int seq, int dim) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t plane = static_cast<std::size_t>(seq) * dim;
  const double log_base = 9.210340371976184;  // ln(10000)
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < plane; i += stride) {
    const int p = static_cast<int>(i / dim);
    const int c = static_cast<int>(i - static_cast<std::size_t>(p) * dim);
    const int two_i = c & ~1;
    const double angle = p * exp(-log_base * two_i / dim);
    const T pe = static_cast<T>((c & 1) ? cos(angle) : sin(angle));
    T* px = x + i;
    for (int b = 0; b < batch; ++b, px += plane) *px += pe;
  }
}

}  // namespace

template <class T>
cudaError_t bias_add(const T* x, const T* bias, T* y, int rows, int cols, cudaStream_t s) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  if (n == 0) return cudaSuccess;
  if (!x || !bias || !y) return cudaErrorInvalidValue;
  constexpr int W = kWidth<T>;
  const bool vec = cols % W == 0 && aligned16(x) && aligned16(bias) && aligned16(y);
  bias_add_kernel<<<grid_for(vec ? n / W : n), kThreads, 0, s>>>(x, bias, y, n, cols, vec);
  return cudaGetLastError();
}

template <class T>
cudaError_t column_sum(const T* dy, T* dbias, int rows, int cols, cudaStream_t s) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (cols == 0) return cudaSuccess;
  if (!dbias || (rows > 0 && !dy)) return cudaErrorInvalidValue;
  const unsigned blocks = static_cast<unsigned>((cols + kColTile - 1) / kColTile);
  column_sum_kernel<<<blocks, dim3(kColTile, kColRows), 0, s>>>(dy, dbias, rows, cols);
  return cudaGetLastError();
}

template <class T>
cudaError_t relu_forward(const T* x, T* y, std::size_t n, cudaStream_t s) {
  return launch_map<T, 1>(ReluF<T>{}, x, static_cast<const T*>(nullptr), y, n, s);
}
template <class T>
cudaError_t relu_backward(const T* x, const T* dy, T* dx, std::size_t n, cudaStream_t s) {
  return launch_map<T, 2>(ReluGradF<T>{}, x, dy, dx, n, s);
}
template <class T>
cudaError_t gelu_forward(const T* x, T* y, std::size_t n, cudaStream_t s) {
  return launch_map<T, 1>(GeluF<T>{}, x, static_cast<const T*>(nullptr), y, n, s);
}
template <class T>
cudaError_t gelu_backward(const T* x, const T* dy, T* dx, std::size_t n, cudaStream_t s) {
  return launch_map<T, 2>(GeluGradF<T>{}, x, dy, dx, n, s);
}
template <class T>
cudaError_t add(const T* a, const T* b, T* c, std::size_t n, cudaStream_t s) {
  return launch_map<T, 2>(AddF<T>{}, a, b, c, n, s);
}
template <class T>
cudaError_t axpby(T alpha, const T* x, T beta, T* y, std::size_t n, cudaStream_t s) {
  if (beta == T(0))  // BLAS: y is not read
    return launch_map<T, 1>(ScaleF<T>{alpha}, x, static_cast<const T*>(nullptr), y, n, s);
  return launch_map<T, 2>(AxpbyF<T>{alpha, beta}, x, static_cast<const T*>(y), y, n, s);
}
template <class T>
cudaError_t fill(T* x, T value, std::size_t n, cudaStream_t s) {
  return launch_map<T, 0>(FillF<T>{value}, static_cast<const T*>(nullptr),
                          static_cast<const T*>(nullptr), x, n, s);
}

template <class T>
cudaError_t embedding_forward(const int* ids, const T* table, T* out, int rows, int dim,
                              cudaStream_t s) {
  if (rows < 0 || dim < 0) return cudaErrorInvalidValue;
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(dim);
  if (n == 0) return cudaSuccess;
  if (!ids || !table || !out) return cudaErrorInvalidValue;
  constexpr int W = kWidth<T>;
  const bool vec = dim % W == 0 && aligned16(table) && aligned16(out);
  embedding_forward_kernel<<<grid_for(vec ? n / W : n), kThreads, 0, s>>>(ids, table, out,
                                                                          rows, dim, vec);
  return cudaGetLastError();
}

template <class T>
cudaError_t embedding_backward(const int* ids, const T* dout, T* dtable, int rows, int dim,
                               cudaStream_t s) {
  if (rows < 0 || dim < 0) return cudaErrorInvalidValue;
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(dim);
  if (n == 0) return cudaSuccess;
  if (!ids || !dout || !dtable) return cudaErrorInvalidValue;
  embedding_backward_kernel<<<grid_for(n), kThreads, 0, s>>>(ids, dout, dtable, rows, dim);
  return cudaGetLastError();
}

template <class T>
cudaError_t add_positional_encoding(T* x, int batch, int seq, int dim, cudaStream_t s) {
  if (batch < 0 || seq < 0 || dim < 0) return cudaErrorInvalidValue;
  const std::size_t plane = static_cast<std::size_t>(seq) * static_cast<std::size_t>(dim);
  if (plane == 0 || batch == 0) return cudaSuccess;
  if (!x) return cudaErrorInvalidValue;
  positional_encoding_kernel<<<grid_for(plane), kThreads, 0, s>>>(x, batch, seq, dim);
  return cudaGetLastError();
}

#define KERNELS_NN_ELEMENTWISE(T)                                                            \
  template cudaError_t bias_add<T>(const T*, const T*, T*, int, int, cudaStream_t);           \
  template cudaError_t column_sum<T>(const T*, T*, int, int, cudaStream_t);                   \
  template cudaError_t relu_forward<T>(const T*, T*, std::size_t, cudaStream_t);              \
  template cudaError_t relu_backward<T>(const T*, const T*, T*, std::size_t, cudaStream_t);   \
  template cudaError_t gelu_forward<T>(const T*, T*, std::size_t, cudaStream_t);              \
  template cudaError_t gelu_backward<T>(const T*, const T*, T*, std::size_t, cudaStream_t);   \
  template cudaError_t add<T>(const T*, const T*, T*, std::size_t, cudaStream_t);             \
  template cudaError_t axpby<T>(T, const T*, T, T*, std::size_t, cudaStream_t);              \
  template cudaError_t fill<T>(T*, T, std::size_t, cudaStream_t);                             \
  template cudaError_t embedding_forward<T>(const int*, const T*, T*, int, int, cudaStream_t); \
  template cudaError_t embedding_backward<T>(const int*, const T*, T*, int, int, cudaStream_t); \
  template cudaError_t add_positional_encoding<T>(T*, int, int, int, cudaStream_t);

KERNELS_NN_ELEMENTWISE(float)
KERNELS_NN_ELEMENTWISE(double)
#undef KERNELS_NN_ELEMENTWISE

}  // namespace kernels::nn
