// Naive attention: the textbook algorithm with the (N, N) score matrix of every
// (batch, head) materialized in global memory. It is the baseline that runs out of memory
// where flash keeps going, so its memory use is the point, not its speed; the GEMMs are
// still reasonably tiled so that suites finish in time.
//
// Forward, per z = (b, h):  S = scale * Q K^T  -> row softmax in place (P, LSE) -> O = P V.
// Backward, per z:          P = exp(S - LSE), dP = dO V^T, dS = P * (dP - D),
//                           dQ = scale * dS K, and per kv head (summing its query heads g)
//                           dK = scale * sum_g dS_g^T Q_g,  dV = sum_g P_g^T dO_g.
#include <cmath>

#include "attention.hpp"
#include "attention_common.cuh"

namespace kernels::attention {
namespace {

// Where matrix z of a batched operand starts. z enumerates (b, hz) with hz < heads_z;
// the operand's own head index is (hz * num + add) / den among heads_op heads:
//   Q-like operand in a launch over (b, h):   num 1, add 0, den 1
//   K-like operand in a launch over (b, h):   den = group (h -> kv head h / group)
//   Q-like operand in a launch over (b, kvh): num = group, add = g (g-th head of the group)
struct BatchMap {
  int heads_z = 1;
  int num = 1, add = 0, den = 1;
  int heads_op = 1;
  std::int64_t matrix = 0;  // elements per matrix
  __device__ std::int64_t offset(int z) const {
    const int b = z / heads_z;
    const int hz = z % heads_z;
    return (static_cast<std::int64_t>(b) * heads_op + (hz * num + add) / den) * matrix;
  }
};

// Element (r, c) of matrix z is p[map.offset(z) + r * rs + c * cs].
struct Operand {
  const float* p = nullptr;
  std::int64_t rs = 0, cs = 0;
  BatchMap map;
};

constexpr int kGemmTile = 64;
constexpr int kGemmK = 16;
constexpr int kGemmThreads = 256;

// C[z] = alpha * A[z] B[z] + beta * C[z]; A (M, K), B (K, N), C (M, N) row stride ldc.
// 64 x 64 tile per block, 4 x 4 per thread, operands staged k-major in shared memory.
__global__ void __launch_bounds__(kGemmThreads)
    batched_gemm_kernel(Operand a, Operand b, float* __restrict__ c, BatchMap cmap,
                        std::int64_t ldc, int m, int n, int k, float alpha, float beta) {
  __shared__ __align__(16) float As[kGemmK][kGemmTile + 4];
  __shared__ __align__(16) float Bs[kGemmK][kGemmTile + 4];
  const int z = blockIdx.z;
  const float* ap = a.p + a.map.offset(z);
  const float* bp = b.p + b.map.offset(z);
  float* cp = c + cmap.offset(z);
  const int m0 = blockIdx.y * kGemmTile;
  const int n0 = blockIdx.x * kGemmTile;
  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  float acc[4][4] = {};

  for (int k0 = 0; k0 < k; k0 += kGemmK) {
#pragma unroll
    for (int it = 0; it < kGemmTile * kGemmK / kGemmThreads; ++it) {
      const int e = tid + it * kGemmThreads;
      // Consecutive threads walk the operand's contiguous dimension (coalesced reads).
      const int am = a.cs == 1 ? e / kGemmK : e % kGemmTile;
      const int ak = a.cs == 1 ? e % kGemmK : e / kGemmTile;
      const int bk = b.cs == 1 ? e / kGemmTile : e % kGemmK;
      const int bn = b.cs == 1 ? e % kGemmTile : e / kGemmK;
      float av = 0.0f, bv = 0.0f;
      if (m0 + am < m && k0 + ak < k) av = ap[(m0 + am) * a.rs + (k0 + ak) * a.cs];
      if (k0 + bk < k && n0 + bn < n) bv = bp[(k0 + bk) * b.rs + (n0 + bn) * b.cs];
      As[ak][am] = av;
      Bs[bk][bn] = bv;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kGemmK; ++kk) {
      const float4 av = *reinterpret_cast<const float4*>(&As[kk][ty * 4]);
      const float4 bv = *reinterpret_cast<const float4*>(&Bs[kk][tx * 4]);
      const float ar[4] = {av.x, av.y, av.z, av.w};
      const float br[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = m0 + ty * 4 + i;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int col = n0 + tx * 4 + j;
      if (col >= n) continue;
      float* out = cp + row * ldc + col;
      *out = beta == 0.0f ? alpha * acc[i][j] : fmaf(beta, *out, alpha * acc[i][j]);
    }
  }
}

cudaError_t gemm(const Operand& a, const Operand& b, float* c, const BatchMap& cmap,
                 std::int64_t ldc, int m, int n, int k, float alpha, float beta, int batches,
                 cudaStream_t stream) {
  const dim3 grid((n + kGemmTile - 1) / kGemmTile, (m + kGemmTile - 1) / kGemmTile, batches);
  batched_gemm_kernel<<<grid, kGemmThreads, 0, stream>>>(a, b, c, cmap, ldc, m, n, k, alpha,
                                                         beta);
  return cudaGetLastError();
}

constexpr int kRowThreads = 128;  // one warp per row, 4 rows per block

// In place over S (rows, N): P = softmax(S) per row (causal: j > i gets 0), LSE = m + log l.
__global__ void __launch_bounds__(kRowThreads)
    softmax_rows_kernel(float* __restrict__ s, float* __restrict__ lse, std::int64_t rows, int n,
                        bool causal) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kRowThreads / 32) +
                           threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const int i = static_cast<int>(row % n);  // query position
  const int visible = causal ? i + 1 : n;
  float* sr = s + row * n;
  float mx = -INFINITY;
  for (int j = lane; j < visible; j += 32) mx = fmaxf(mx, sr[j]);
  mx = arch::warp_max(mx);
  float sum = 0.0f;
  for (int j = lane; j < visible; j += 32) sum += expf(sr[j] - mx);
  sum = arch::warp_sum(sum);
  const float inv = 1.0f / sum;
  for (int j = lane; j < n; j += 32) sr[j] = j < visible ? expf(sr[j] - mx) * inv : 0.0f;
  if (lane == 0) lse[row] = mx + logf(sum);
}

// In place over S (rows, N): P = exp(S - LSE) (causal: j > i gets 0).
__global__ void __launch_bounds__(kRowThreads)
    probs_from_lse_kernel(float* __restrict__ s, const float* __restrict__ lse,
                          std::int64_t rows, int n, bool causal) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kRowThreads / 32) +
                           threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const int i = static_cast<int>(row % n);
  const int visible = causal ? i + 1 : n;
  const float l = lse[row];
  float* sr = s + row * n;
  for (int j = lane; j < n; j += 32) sr[j] = j < visible ? expf(sr[j] - l) : 0.0f;
}

// In place over dP (rows, N): dS = P * (dP - D[row]).
__global__ void __launch_bounds__(kRowThreads)
    ds_kernel(const float* __restrict__ p, float* __restrict__ dp, const float* __restrict__ delta,
              std::int64_t rows, int n) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kRowThreads / 32) +
                           threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const float d = delta[row];
  const float* pr = p + row * n;
  float* dr = dp + row * n;
  for (int j = lane; j < n; j += 32) dr[j] = pr[j] * (dr[j] - d);
}

// D[row] = sum_c dO[row][c] * O[row][c]; one warp per row.
__global__ void __launch_bounds__(kRowThreads)
    row_dot_kernel(const float* __restrict__ d_o, const float* __restrict__ o,
                   float* __restrict__ delta, std::int64_t rows, int d) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kRowThreads / 32) +
                           threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  float sum = 0.0f;
  for (int c = lane; c < d; c += 32) sum = fmaf(d_o[row * d + c], o[row * d + c], sum);
  sum = arch::warp_sum(sum);
  if (lane == 0) delta[row] = sum;
}

unsigned row_blocks(std::int64_t rows) {
  return static_cast<unsigned>((rows + kRowThreads / 32 - 1) / (kRowThreads / 32));
}

BatchMap per_head(const Shape& s, std::int64_t matrix) {
  return BatchMap{s.heads, 1, 0, 1, s.heads, matrix};
}
BatchMap per_kv_head(const Shape& s, std::int64_t matrix) {  // launch over (b, h)
  return BatchMap{s.heads, 1, 0, s.group(), s.kv_heads, matrix};
}

}  // namespace

namespace detail {
cudaError_t launch_row_dot(const float* d_o, const float* o, float* delta, std::int64_t rows,
                           int head_dim, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  row_dot_kernel<<<row_blocks(rows), kRowThreads, 0, stream>>>(d_o, o, delta, rows, head_dim);
  return cudaGetLastError();
}
}  // namespace detail

std::size_t naive_forward_workspace_bytes(const Shape& s) {
  return static_cast<std::size_t>(s.batch) * s.heads * s.seq_len * s.seq_len * sizeof(float);
}

std::size_t naive_backward_workspace_bytes(const Shape& s) {
  return 2 * naive_forward_workspace_bytes(s) + static_cast<std::size_t>(s.lse_elements()) * sizeof(float);
}

#define ATTN_TRY(expr)                            \
  do {                                            \
    const cudaError_t attn_status_ = (expr);      \
    if (attn_status_ != cudaSuccess) return attn_status_; \
  } while (0)

cudaError_t naive_forward(const Shape& s, const float* q, const float* k, const float* v,
                          float* o, float* lse, float* workspace, cudaStream_t stream) {
  detail::require_valid(s);
  const int n = s.seq_len, d = s.head_dim, z = s.batch * s.heads;
  const std::int64_t nd = std::int64_t(n) * d, nn = std::int64_t(n) * n;
  float* scores = workspace;  // (B, H, N, N)
  // S = scale * Q K^T: A = Q (N, d) row-major, B(k=c, n=j) = K[j][c].
  ATTN_TRY(gemm(Operand{q, d, 1, per_head(s, nd)}, Operand{k, 1, d, per_kv_head(s, nd)}, scores,
                per_head(s, nn), n, n, n, d, s.effective_scale(), 0.0f, z, stream));
  const std::int64_t rows = s.lse_elements();
  softmax_rows_kernel<<<row_blocks(rows), kRowThreads, 0, stream>>>(scores, lse, rows, n,
                                                                    s.causal);
  ATTN_TRY(cudaGetLastError());
  // O = P V: A = P (N, N), B = V (N, d).
  return gemm(Operand{scores, n, 1, per_head(s, nn)}, Operand{v, d, 1, per_kv_head(s, nd)}, o,
              per_head(s, nd), d, n, d, n, 1.0f, 0.0f, z, stream);
}

cudaError_t naive_backward(const Shape& s, const float* q, const float* k, const float* v,
                           const float* o, const float* lse, const float* d_o, float* dq,
                           float* dk, float* dv, float* workspace, cudaStream_t stream) {
  detail::require_valid(s);
  const int n = s.seq_len, d = s.head_dim, z = s.batch * s.heads, g = s.group();
  const float scale = s.effective_scale();
  const std::int64_t nd = std::int64_t(n) * d, nn = std::int64_t(n) * n;
  const std::int64_t rows = s.lse_elements();
  float* probs = workspace;                            // (B, H, N, N) P
  float* dprobs = workspace + rows * n;                // (B, H, N, N) dP, then dS
  float* delta = workspace + 2 * rows * n;             // (B, H, N)

  ATTN_TRY(detail::launch_row_dot(d_o, o, delta, rows, d, stream));
  ATTN_TRY(gemm(Operand{q, d, 1, per_head(s, nd)}, Operand{k, 1, d, per_kv_head(s, nd)}, probs,
                per_head(s, nn), n, n, n, d, scale, 0.0f, z, stream));
  probs_from_lse_kernel<<<row_blocks(rows), kRowThreads, 0, stream>>>(probs, lse, rows, n,
                                                                      s.causal);
  ATTN_TRY(cudaGetLastError());
  // dP = dO V^T: A = dO (N, d), B(k=c, n=j) = V[j][c].
  ATTN_TRY(gemm(Operand{d_o, d, 1, per_head(s, nd)}, Operand{v, 1, d, per_kv_head(s, nd)},
                dprobs, per_head(s, nn), n, n, n, d, 1.0f, 0.0f, z, stream));
  ds_kernel<<<row_blocks(rows), kRowThreads, 0, stream>>>(probs, dprobs, delta, rows, n);
  ATTN_TRY(cudaGetLastError());
  // dQ = scale * dS K: A = dS (N, N), B = K (N, d).
  ATTN_TRY(gemm(Operand{dprobs, n, 1, per_head(s, nn)}, Operand{k, d, 1, per_kv_head(s, nd)}, dq,
                per_head(s, nd), d, n, d, n, scale, 0.0f, z, stream));
  // dK, dV per kv head: launches over (b, kvh), one per head g of the group, accumulating.
  const int zk = s.batch * s.kv_heads;
  const BatchMap kv_out{s.kv_heads, 1, 0, 1, s.kv_heads, nd};
  for (int hg = 0; hg < g; ++hg) {
    const BatchMap nn_of_group{s.kv_heads, g, hg, 1, s.heads, nn};
    const BatchMap nd_of_group{s.kv_heads, g, hg, 1, s.heads, nd};
    const float beta = hg == 0 ? 0.0f : 1.0f;
    // dK += scale * dS^T Q: A(r=j, c=i) = dS[i][j], B = Q (N, d).
    ATTN_TRY(gemm(Operand{dprobs, 1, n, nn_of_group}, Operand{q, d, 1, nd_of_group}, dk, kv_out,
                  d, n, d, n, scale, beta, zk, stream));
    // dV += P^T dO.
    ATTN_TRY(gemm(Operand{probs, 1, n, nn_of_group}, Operand{d_o, d, 1, nd_of_group}, dv, kv_out,
                  d, n, d, n, 1.0f, beta, zk, stream));
  }
  return cudaSuccess;
}

}  // namespace kernels::attention
