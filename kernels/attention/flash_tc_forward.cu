// FlashAttention-2 forward on tensor cores, bf16 or f16 inputs and outputs, f32 softmax
// statistics and accumulation (mma.sync m16n8k16, sm_80+).
//
// Block: kWarps = 4 warps, Br = 64 query rows of one (b, h), each warp owning 16 rows.
// Data path per key tile (Bc = 64 keys x d):
//   global --cp.async (16 B, zero-filled past N)--> swizzled smem K_t, V_t (2 stages:
//   tile t+1 lands while tile t is computed)
//   S  = Q K_t^T : A = Q fragments held in registers for the whole block (one ldmatrix
//                  pass at the start), B = K via ldmatrix (non-transposed: K rows are the
//                  n index of S); 16 x 64 f32 per warp, 32 floats per thread
//   online softmax in registers, log2 domain: s' = s * scale * log2(e), m = running max,
//     P = exp2(s' - m), l = l * exp2(m_old - m) + rowsum(P), O *= exp2(m_old - m)
//   O += P V_t   : A = P rounded to T straight from the S accumulators (their layout is
//                  the A fragment's), B = V via ldmatrix.trans; 16 x d f32 per warp
// End: O / l rounded to T, LSE = ln(2) * (m + log2 l) in f32.
// Causal: key tiles beyond the block's last query are never loaded; tiles that straddle
// the diagonal, and the tail tile past N, get -inf scores where masked. Blocks run in
// reverse query order when causal so the longest rows start first.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "attention.hpp"
#include "flash_tc_common.cuh"

namespace kernels::attention {
namespace {

using tc::swz;

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kBr = 16 * kWarps;  // query rows per block
constexpr int kBc = 64;           // keys per tile

template <int kD>
constexpr int forward_smem_bytes() {
  return (kBr + 4 * kBc) * kD * 2;  // Q, K[2], V[2], 16-bit elements
}

template <class T, int kD>
__global__ void __launch_bounds__(kThreads)
    flash_tc_forward_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                            T* __restrict__ o, float* __restrict__ lse, int heads, int group, int n,
                            float scale_log2, bool causal) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* qs = reinterpret_cast<T*>(smem_raw);  // (Br, d)
  T* ks = qs + kBr * kD;                   // 2 x (Bc, d)
  T* vs = ks + 2 * kBc * kD;               // 2 x (Bc, d)

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int qb = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int q0 = qb * kBr, h = blockIdx.y, b = blockIdx.z;
  const int kv_heads = heads / group;
  const std::int64_t q_base = (static_cast<std::int64_t>(b) * heads + h) * n * kD;
  const std::int64_t kv_base = (static_cast<std::int64_t>(b) * kv_heads + h / group) * n * kD;
  const T* qp = q + q_base;
  const T* kp = k + kv_base;
  const T* vp = v + kv_base;
  const int key_end = causal ? min(q0 + kBr, n) : n;  // keys [0, key_end) are visible to some row
  const int n_tiles = (key_end + kBc - 1) / kBc;

  tc::load_tile<kBr, kD, kThreads>(qs, qp, q0, n, tid);
  tc::load_tile<kBc, kD, kThreads>(ks, kp, 0, n, tid);
  tc::load_tile<kBc, kD, kThreads>(vs, vp, 0, n, tid);
  detail::cp_async_commit();
  detail::cp_async_wait<0>();
  __syncthreads();

  // This warp's 16 query rows as A fragments, one per 16 columns of d.
  std::uint32_t qf[kD / 16][4];
#pragma unroll
  for (int kk = 0; kk < kD / 16; ++kk)
    tc::ldsm_x4(qf[kk], qs + swz<kD>(warp * 16 + (lane & 15), kk * 16 + (lane >> 4) * 8));

  float acc[kD / 8][4];
#pragma unroll
  for (int c = 0; c < kD / 8; ++c) acc[c][0] = acc[c][1] = acc[c][2] = acc[c][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  const int row_a = q0 + warp * 16 + g;  // rows of c0,c1 (row_a) and c2,c3 (row_a + 8)

#pragma unroll 1
  for (int tile = 0; tile < n_tiles; ++tile) {
    const int st = tile & 1;
    if (tile + 1 < n_tiles) {
      tc::load_tile<kBc, kD, kThreads>(ks + (st ^ 1) * kBc * kD, kp, (tile + 1) * kBc, n, tid);
      tc::load_tile<kBc, kD, kThreads>(vs + (st ^ 1) * kBc * kD, vp, (tile + 1) * kBc, n, tid);
    }
    detail::cp_async_commit();
    const T* kt = ks + st * kBc * kD;
    const T* vt = vs + st * kBc * kD;

    // S = Q K_t^T, (16, Bc) per warp.
    float s[kBc / 8][4];
#pragma unroll
    for (int j = 0; j < kBc / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
#pragma unroll
      for (int np = 0; np < kBc / 16; ++np) {
        std::uint32_t kf[4];
        tc::ldsm_x4(kf, kt + swz<kD>(np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 16 + ((lane >> 3) & 1) * 8));
        tc::mma<T>(s[2 * np], qf[kk], kf[0], kf[1]);
        tc::mma<T>(s[2 * np + 1], qf[kk], kf[2], kf[3]);
      }

    // Scale into the log2 domain (before the max: the scale may be negative), then mask.
    const int k0 = tile * kBc;
    const bool masked = k0 + kBc > n || (causal && k0 + kBc - 1 > q0);
#pragma unroll
    for (int j = 0; j < kBc / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[j][e] *= scale_log2;
        if (masked) {
          const int key = k0 + 8 * j + 2 * t + (e & 1), row = row_a + 8 * (e >> 1);
          if (key >= n || (causal && key > row)) s[j][e] = -INFINITY;
        }
      }

    // Online softmax per row (r = 0: row_a, r = 1: row_a + 8); a quad shares a row.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = m[r];
#pragma unroll
      for (int j = 0; j < kBc / 8; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * r], s[j][2 * r + 1]));
      mx = tc::quad_max(mx);
      const float mu = mx == -INFINITY ? 0.0f : mx;  // a row with nothing visible yet
      const float alpha = detail::fast_exp2(m[r] - mu);
      m[r] = mx;
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kBc / 8; ++j) {
        s[j][2 * r] = detail::fast_exp2(s[j][2 * r] - mu);
        s[j][2 * r + 1] = detail::fast_exp2(s[j][2 * r + 1] - mu);
        sum += s[j][2 * r] + s[j][2 * r + 1];
      }
      l[r] = l[r] * alpha + sum;
#pragma unroll
      for (int c = 0; c < kD / 8; ++c) {
        acc[c][2 * r] *= alpha;
        acc[c][2 * r + 1] *= alpha;
      }
    }

    // O += P V_t: P's accumulators become A fragments (16 keys each) in registers.
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      const std::uint32_t pa[4] = {tc::pack2<T>(s[2 * kk][0], s[2 * kk][1]), tc::pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                                   tc::pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                   tc::pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < kD / 16; ++dp) {
        std::uint32_t vf[4];
        tc::ldsm_x4_t(vf, vt + swz<kD>(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, dp * 16 + (lane >> 4) * 8));
        tc::mma<T>(acc[2 * dp], pa, vf[0], vf[1]);
        tc::mma<T>(acc[2 * dp + 1], pa, vf[2], vf[3]);
      }
    }
    detail::cp_async_wait<0>();  // tile t+1 has landed ...
    __syncthreads();             // ... for everyone, and stage st is free for tile t+2
  }

  // O = acc / l (two T per 4-byte store), LSE in natural log.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float total = tc::quad_sum(l[r]);
    const int row = row_a + 8 * r;
    if (row >= n) continue;
    const float inv = 1.0f / total;
    T* orow = o + q_base + static_cast<std::int64_t>(row) * kD;
#pragma unroll
    for (int c = 0; c < kD / 8; ++c)
      *reinterpret_cast<std::uint32_t*>(orow + 8 * c + 2 * t) =
          tc::pack2<T>(acc[c][2 * r] * inv, acc[c][2 * r + 1] * inv);
    if (t == 0)
      lse[(static_cast<std::int64_t>(b) * heads + h) * n + row] = (m[r] + log2f(total)) * detail::kLn2;
  }
}

template <class T, int kD>
cudaError_t launch(const Shape& s, const void* q, const void* k, const void* v, void* o, float* lse,
                   cudaStream_t stream) {
  constexpr int smem = forward_smem_bytes<kD>();
  static const cudaError_t prepared = detail::prepare_kernel(flash_tc_forward_kernel<T, kD>, smem);
  if (prepared != cudaSuccess) return prepared;
  const dim3 grid((s.seq_len + kBr - 1) / kBr, s.heads, s.batch);
  flash_tc_forward_kernel<T, kD><<<grid, kThreads, smem, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<T*>(o), lse,
      s.heads, s.group(), s.seq_len, s.effective_scale() * detail::kLog2e, s.causal);
  return cudaGetLastError();
}

template <class T>
cudaError_t dispatch(const Shape& s, const void* q, const void* k, const void* v, void* o, float* lse,
                     cudaStream_t stream) {
  switch (s.head_dim) {
    case 64: return launch<T, 64>(s, q, k, v, o, lse, stream);
    case 128: return launch<T, 128>(s, q, k, v, o, lse, stream);
    default:
      throw std::invalid_argument("attention: tensor-core flash kernels support head_dim 64, 128, not " +
                                  std::to_string(s.head_dim));
  }
}

}  // namespace

bool flash_tc_supported(int head_dim) { return head_dim == 64 || head_dim == 128; }

cudaError_t flash_tc_forward(const Shape& shape, Precision precision, const void* q, const void* k,
                             const void* v, void* o, float* lse, cudaStream_t stream) {
  detail::require_valid(shape);
  return precision == Precision::bf16 ? dispatch<__nv_bfloat16>(shape, q, k, v, o, lse, stream)
                                      : dispatch<__half>(shape, q, k, v, o, lse, stream);
}

}  // namespace kernels::attention
