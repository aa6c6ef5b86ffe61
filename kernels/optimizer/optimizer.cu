// The optimizer kernels (see optimizer.hpp for the math and the ladder). Index arithmetic
// in 64 bits: a single tensor may hold 2^28 elements and more.
#include <algorithm>
#include <cstdint>

#include "optimizer/optimizer.hpp"

namespace kernels::optimizer {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ void adam_one(float& w, float g, float& m, float& v, const AdamConfig& c) {
  m = c.b1 * m + c.one_minus_b1 * g;
  v = c.b2 * v + c.one_minus_b2 * g * g;
  w -= c.lr * (m / c.c1) / (sqrtf(v / c.c2) + c.eps);
}

// sgd: a thread per element (grid-stride), one fused multiply-add.
__global__ void sgd_kernel(float* __restrict__ w, const float* __restrict__ g, std::int64_t n, float lr) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    w[i] = fmaf(-lr, g[i], w[i]);
}

// Rung 1, adam: the slides' loop body, a thread per element (grid-stride), 4-byte
// accesses to four arrays; one launch per tensor (the caller loops over tensors).
__global__ void adam_kernel(float* __restrict__ w, const float* __restrict__ g, float* __restrict__ m,
                            float* __restrict__ v, std::int64_t n, AdamConfig c) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    float wi = w[i], mi = m[i], vi = v[i];
    adam_one(wi, g[i], mi, vi, c);
    w[i] = wi;
    m[i] = mi;
    v[i] = vi;
  }
}

// Rung 2, adam_vectorized: 16-byte loads and stores (a quarter of the memory
// instructions) over the aligned body; `head` scalar elements first bring the four
// pointers to a 16-byte boundary (the host checks they share one misalignment), and the
// n % 4 tail is scalar too. Still one launch per tensor.
__global__ void adam_vec_kernel(float* __restrict__ w, const float* __restrict__ g, float* __restrict__ m,
                                float* __restrict__ v, std::int64_t n, std::int64_t head, AdamConfig c) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid < head) {  // head < 4 <= the grid's thread count
    float wi = w[tid], mi = m[tid], vi = v[tid];
    adam_one(wi, g[tid], mi, vi, c);
    w[tid] = wi;
    m[tid] = mi;
    v[tid] = vi;
  }
  const std::int64_t n4 = (n - head) / 4;
  auto* w4 = reinterpret_cast<float4*>(w + head);
  const auto* g4 = reinterpret_cast<const float4*>(g + head);
  auto* m4 = reinterpret_cast<float4*>(m + head);
  auto* v4 = reinterpret_cast<float4*>(v + head);
  for (std::int64_t i = tid; i < n4; i += stride) {
    float4 wi = w4[i], mi = m4[i], vi = v4[i];
    const float4 gi = g4[i];
    adam_one(wi.x, gi.x, mi.x, vi.x, c);
    adam_one(wi.y, gi.y, mi.y, vi.y, c);
    adam_one(wi.z, gi.z, mi.z, vi.z, c);
    adam_one(wi.w, gi.w, mi.w, vi.w, c);
    w4[i] = wi;
    m4[i] = mi;
    v4[i] = vi;
  }
  for (std::int64_t i = head + n4 * 4 + tid; i < n; i += stride) {
    float wi = w[i], mi = m[i], vi = v[i];
    adam_one(wi, g[i], mi, vi, c);
    w[i] = wi;
    m[i] = mi;
    v[i] = vi;
  }
}

// Rung 3, adam_fused: one launch for a whole list of tensors. Block b owns chunk b of the
// concatenated chunk list: it finds its tensor by binary search over the descriptors'
// first_chunk (ascending), then updates elements [c * kFusedChunk, min((c + 1) *
// kFusedChunk, n)) of that tensor: float4 where the tensor's four pointers are 16-byte
// aligned (chunk starts are multiples of 4 elements), scalar otherwise and for the tail.
// Fixes over the per-tensor rungs: a list of small tensors (biases, layer norms) costs
// one launch instead of one each, and every block has a full chunk of work.
__global__ void __launch_bounds__(kThreads)
    adam_fused_kernel(const TensorDesc* __restrict__ descs, int count, AdamConfig c) {
  const std::int64_t b = blockIdx.x;
  int lo = 0, hi = count - 1;  // the last descriptor with first_chunk <= b
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (descs[mid].first_chunk <= b) lo = mid;
    else hi = mid - 1;
  }
  const TensorDesc d = descs[lo];
  const std::int64_t start = (b - d.first_chunk) * kFusedChunk;
  const std::int64_t len = d.n - start < kFusedChunk ? d.n - start : kFusedChunk;
  float *w = d.w + start, *m = d.m + start, *v = d.v + start;
  const float* g = d.g + start;
  const bool aligned = ((reinterpret_cast<std::uintptr_t>(w) | reinterpret_cast<std::uintptr_t>(g) |
                         reinterpret_cast<std::uintptr_t>(m) | reinterpret_cast<std::uintptr_t>(v)) % 16) == 0;
  std::int64_t done = 0;
  if (aligned) {
    const std::int64_t n4 = len / 4;
    for (std::int64_t i = threadIdx.x; i < n4; i += kThreads) {
      float4 wi = reinterpret_cast<float4*>(w)[i], mi = reinterpret_cast<float4*>(m)[i],
             vi = reinterpret_cast<float4*>(v)[i];
      const float4 gi = reinterpret_cast<const float4*>(g)[i];
      adam_one(wi.x, gi.x, mi.x, vi.x, c);
      adam_one(wi.y, gi.y, mi.y, vi.y, c);
      adam_one(wi.z, gi.z, mi.z, vi.z, c);
      adam_one(wi.w, gi.w, mi.w, vi.w, c);
      reinterpret_cast<float4*>(w)[i] = wi;
      reinterpret_cast<float4*>(m)[i] = mi;
      reinterpret_cast<float4*>(v)[i] = vi;
    }
    done = n4 * 4;
  }
  for (std::int64_t i = done + threadIdx.x; i < len; i += kThreads) {
    float wi = w[i], mi = m[i], vi = v[i];
    adam_one(wi, g[i], mi, vi, c);
    w[i] = wi;
    m[i] = mi;
    v[i] = vi;
  }
}

unsigned grid_for(std::int64_t work_items) {
  // A thread per item up to 2^20 blocks; the grid-stride loops cover the rest.
  return static_cast<unsigned>(std::clamp<std::int64_t>((work_items + kThreads - 1) / kThreads, 1, 1 << 20));
}

}  // namespace

cudaError_t sgd(float* w, const float* g, std::size_t n, float lr, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  sgd_kernel<<<grid_for(static_cast<std::int64_t>(n)), kThreads, 0, stream>>>(w, g, static_cast<std::int64_t>(n), lr);
  return cudaGetLastError();
}

cudaError_t adam(float* w, const float* g, float* m, float* v, std::size_t n, const AdamConfig& c, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  adam_kernel<<<grid_for(static_cast<std::int64_t>(n)), kThreads, 0, stream>>>(w, g, m, v, static_cast<std::int64_t>(n), c);
  return cudaGetLastError();
}

cudaError_t adam_vectorized(float* w, const float* g, float* m, float* v, std::size_t n, const AdamConfig& c,
                            cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const auto mis = [](const void* p) { return (reinterpret_cast<std::uintptr_t>(p) % 16) / 4; };  // in floats
  const auto nn = static_cast<std::int64_t>(n);
  if (reinterpret_cast<std::uintptr_t>(w) % 4 != 0 || mis(w) != mis(g) || mis(w) != mis(m) || mis(w) != mis(v)) {
    adam_kernel<<<grid_for(nn), kThreads, 0, stream>>>(w, g, m, v, nn, c);  // no common alignment: scalar
  } else {
    const std::int64_t head = std::min<std::int64_t>(static_cast<std::int64_t>((4 - mis(w)) % 4), nn);
    adam_vec_kernel<<<grid_for((nn - head + 3) / 4), kThreads, 0, stream>>>(w, g, m, v, nn, head, c);
  }
  return cudaGetLastError();
}

cudaError_t adam_fused(const TensorDesc* descs, int count, std::int64_t chunks, const AdamConfig& c,
                       cudaStream_t stream) {
  if (count == 0 || chunks == 0) return cudaSuccess;
  if (chunks > 0x7FFFFFFF) return cudaErrorInvalidValue;
  adam_fused_kernel<<<static_cast<unsigned>(chunks), kThreads, 0, stream>>>(descs, count, c);
  return cudaGetLastError();
}

}  // namespace kernels::optimizer
