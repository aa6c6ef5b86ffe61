// FlashAttention-2 forward in FP32 on CUDA cores (no tensor cores: the inputs are FP32).
//
// One block per (Q tile of kBr rows, head h, batch b). The Q tile stays in shared memory
// (pre-multiplied by scale*log2(e), so that scores come out in the log2 domain and every
// exponential is one exp2), while the K and V tiles of the block's kv head stream through
// shared memory with cp.async: V_t is fetched while S = Q K_t^T is computed, K_{t+1}
// while O += P V_t is. Online softmax per row: running max m and sum l, O rescaled by
// exp2(m_old - m_new) each tile and divided by l once at the end; LSE = (m + log2 l)*ln2.
//
// Register tiling (thread coarsening): 128 threads as 16 row groups (ty) x 8 column
// groups (tx). Thread (ty, tx) owns
//   S rows  r_i = ty + 16 i  (i < kRm)  and columns c_j = tx + 8 j  (j < kCn) of the tile,
//   O rows  r_i (the same rows: m and l stay in registers) and columns 32 h + 4 tx + e.
// The 8 threads of a row are 8 consecutive lanes, so row max/sum are 3 shuffles.
// Per 4-wide k step of S = Q K^T a thread does kRm*kCn*4 FMAs from (kRm + kCn) float4
// shared loads (16 FMA per LDS.128 at 8 x 8); O += P V is the same ratio.
//
// Shared-memory strides are padded so that the float4 reads of one warp hit distinct
// banks: Q and K rows at stride d+4 (rows that differ by 1 start 4 banks apart), P rows
// at stride kBc+8 (the 4 row groups of a warp start 8 banks apart; scalar stores of P by
// (ty, tx) are conflict-free).
//
// Causal: a Q tile only visits K tiles that start at or before its last row; masking is
// applied only on tiles that straddle the diagonal or the sequence end. Blocks are issued
// heaviest (last) Q tile first to shorten the tail.
#include <cmath>

#include "attention.hpp"
#include "attention_common.cuh"
#include "flash_tc_common.cuh"

namespace kernels::attention {
namespace {

using detail::cp_async_tile;
using detail::dot4;
using detail::get;

constexpr int kThreads = 128;

template <int kD, int kRm, int kCn, int kMinBlocks>
struct FwdConfig {
  static constexpr int D = kD;
  static constexpr int Rm = kRm;             // S/O rows per thread
  static constexpr int Cn = kCn;             // S columns per thread
  static constexpr int MinBlocks = kMinBlocks;
  static constexpr int Br = 16 * kRm;        // queries per block
  static constexpr int Bc = 8 * kCn;         // keys per tile
  static constexpr int Dh = kD / 32;         // float4 column groups of O per thread
  static constexpr int LdQ = kD + 4;
  static constexpr int LdK = kD + 4;
  static constexpr int LdV = kD;             // V rows are read whole by a warp: no padding
  static constexpr int LdP = Bc + 8;
  static constexpr int SmemFloats = Br * LdQ + Bc * LdK + Bc * LdV + Br * LdP;
  static constexpr int SmemBytes = SmemFloats * 4;
  static_assert(kD % 32 == 0 && Bc % 32 == 0, "tile shapes");
};

// The configurations per head dim. Register budget at (d=64): S 64 + O 64 + Q operands 32.
//   d=32 : 128 x 64 tiles, 72 KB shared, 2 blocks/SM (registers; 3 spilled at 168)
//   d=64 : 128 x 64 tiles, 103 KB shared -> 2 blocks/SM (8 warps)
//   d=128:  64 x 32 tiles, 76 KB shared -> 2 blocks/SM (O alone is 64 registers)
using Fwd32 = FwdConfig<32, 8, 8, 2>;
using Fwd64 = FwdConfig<64, 8, 8, 2>;
using Fwd128 = FwdConfig<128, 4, 4, 2>;

template <class C, bool kMask>
__device__ __forceinline__ void score_tile(float (&s)[C::Rm][C::Cn], const float* Qs,
                                           const float* Ks, int ty, int tx, int q0, int k0,
                                           int n, bool causal) {
#pragma unroll
  for (int i = 0; i < C::Rm; ++i)
#pragma unroll
    for (int j = 0; j < C::Cn; ++j) s[i][j] = 0.0f;

  // S = Q K^T over the head dim, 4 at a time. Not unrolled: the body is already
  // Rm*Cn*4 FMAs, and full unrolling made ptxas spill at d=64 (255 registers).
#pragma unroll 1
  for (int kk = 0; kk < C::D; kk += 4) {
    float4 qv[C::Rm];
#pragma unroll
    for (int i = 0; i < C::Rm; ++i)
      qv[i] = *reinterpret_cast<const float4*>(Qs + (ty + 16 * i) * C::LdQ + kk);
#pragma unroll
    for (int j = 0; j < C::Cn; ++j) {
      const float4 kv = *reinterpret_cast<const float4*>(Ks + (tx + 8 * j) * C::LdK + kk);
#pragma unroll
      for (int i = 0; i < C::Rm; ++i) s[i][j] = dot4(qv[i], kv, s[i][j]);
    }
  }
  if constexpr (kMask) {
#pragma unroll
    for (int i = 0; i < C::Rm; ++i)
#pragma unroll
      for (int j = 0; j < C::Cn; ++j) {
        const int col = k0 + tx + 8 * j;
        const int row = q0 + ty + 16 * i;
        if (col >= n || (causal && col > row)) s[i][j] = -INFINITY;
      }
  }
}

template <class C>
__global__ void __launch_bounds__(kThreads, C::MinBlocks)
    flash_forward_kernel(const float* __restrict__ q, const float* __restrict__ k,
                         const float* __restrict__ v, float* __restrict__ o,
                         float* __restrict__ lse, int heads, int group, int n,
                         float scale_log2, bool causal) {
  constexpr int D = C::D, Rm = C::Rm, Cn = C::Cn, Br = C::Br, Bc = C::Bc, Dh = C::Dh;
  extern __shared__ float4 smem4[];
  float* Qs = reinterpret_cast<float*>(smem4);  // (Br, D)  scaled by scale*log2e
  float* Ks = Qs + Br * C::LdQ;                 // (Bc, D)
  float* Vs = Ks + Bc * C::LdK;                 // (Bc, D)
  float* Ps = Vs + Bc * C::LdV;                 // (Br, Bc) unnormalized probabilities

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int tx = lane & 7;
  const int ty = (tid >> 5) * 4 + (lane >> 3);
  const int qtile = causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : blockIdx.x;
  const int q0 = qtile * Br;
  const int h = blockIdx.y;
  const int b = blockIdx.z;
  const std::int64_t q_base = (static_cast<std::int64_t>(b) * heads + h) * n * D;
  const std::int64_t kv_base =
      (static_cast<std::int64_t>(b) * (heads / group) + h / group) * n * D;
  const float* kh = k + kv_base;
  const float* vh = v + kv_base;

  // Q tile -> shared, scaled; rows past N are zeros (their outputs are never written).
  for (int c = tid; c < Br * D / 4; c += kThreads) {
    const int r = c / (D / 4);
    const int col = (c % (D / 4)) * 4;
    float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
    if (q0 + r < n) x = __ldg(reinterpret_cast<const float4*>(q + q_base + static_cast<std::int64_t>(q0 + r) * D + col));
    x.x *= scale_log2;
    x.y *= scale_log2;
    x.z *= scale_log2;
    x.w *= scale_log2;
    *reinterpret_cast<float4*>(Qs + r * C::LdQ + col) = x;
  }

  // Causal: keys past the tile's last row are masked for every row of the tile.
  const int kv_end = causal ? min(n, q0 + Br) : n;
  const int n_tiles = (kv_end + Bc - 1) / Bc;

  cp_async_tile<Bc, D, C::LdK, kThreads>(Ks, kh, 0, n, tid);
  arch::cp_async_commit();

  float acc[Rm][Dh * 4];
  float m[Rm], l[Rm];
#pragma unroll
  for (int i = 0; i < Rm; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.0f;  // this thread's share of the row sum (its Cn columns), reduced at the end
#pragma unroll
    for (int c = 0; c < Dh * 4; ++c) acc[i][c] = 0.0f;
  }

  for (int t = 0; t < n_tiles; ++t) {
    const int k0 = t * Bc;
    cp_async_tile<Bc, D, C::LdV, kThreads>(Vs, vh, k0, n, tid);  // V_t overlaps S
    arch::cp_async_commit();
    arch::cp_async_wait<1>();  // K_t has landed
    __syncthreads();

    float s[Rm][Cn];
    const bool need_mask = (k0 + Bc > n) || (causal && k0 + Bc - 1 > q0);
    if (need_mask)
      score_tile<C, true>(s, Qs, Ks, ty, tx, q0, k0, n, causal);
    else
      score_tile<C, false>(s, Qs, Ks, ty, tx, q0, k0, n, causal);

    // Online softmax, log2 domain. m_use guards rows with no visible key yet (-inf - -inf).
#pragma unroll
    for (int i = 0; i < Rm; ++i) {
      float mx = s[i][0];
#pragma unroll
      for (int j = 1; j < Cn; ++j) mx = fmaxf(mx, s[i][j]);
      mx = arch::group8_max(mx);
      const float m_new = fmaxf(m[i], mx);
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;
      const float alpha = arch::fast_exp2(m[i] - m_use);
      m[i] = m_new;
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < Cn; ++j) {
        const float p = arch::fast_exp2(s[i][j] - m_use);
        sum += p;
        Ps[(ty + 16 * i) * C::LdP + tx + 8 * j] = p;
      }
      l[i] = l[i] * alpha + sum;
#pragma unroll
      for (int c = 0; c < Dh * 4; ++c) acc[i][c] *= alpha;
    }
    __syncthreads();  // P complete, every thread done with K_t

    if (t + 1 < n_tiles) cp_async_tile<Bc, D, C::LdK, kThreads>(Ks, kh, k0 + Bc, n, tid);
    arch::cp_async_commit();  // possibly empty: keeps the group count uniform
    arch::cp_async_wait<1>();  // V_t has landed
    __syncthreads();

    // O += P V over the tile's keys, 4 at a time (body: Rm*d*4 FMAs, kept rolled).
#pragma unroll 1
    for (int jj = 0; jj < Bc; jj += 4) {
      float4 pv[Rm];
#pragma unroll
      for (int i = 0; i < Rm; ++i)
        pv[i] = *reinterpret_cast<const float4*>(Ps + (ty + 16 * i) * C::LdP + jj);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        float4 vv[Dh];
#pragma unroll
        for (int hh = 0; hh < Dh; ++hh)
          vv[hh] = *reinterpret_cast<const float4*>(Vs + (jj + u) * C::LdV + 32 * hh + 4 * tx);
#pragma unroll
        for (int i = 0; i < Rm; ++i) {
          const float p = get(pv[i], u);
#pragma unroll
          for (int hh = 0; hh < Dh; ++hh) {
            acc[i][4 * hh + 0] = fmaf(p, vv[hh].x, acc[i][4 * hh + 0]);
            acc[i][4 * hh + 1] = fmaf(p, vv[hh].y, acc[i][4 * hh + 1]);
            acc[i][4 * hh + 2] = fmaf(p, vv[hh].z, acc[i][4 * hh + 2]);
            acc[i][4 * hh + 3] = fmaf(p, vv[hh].w, acc[i][4 * hh + 3]);
          }
        }
      }
    }
    __syncthreads();  // done with P and V_t before they are overwritten
  }
  arch::cp_async_wait<0>();

  // O = acc / l, written once (float4, 8 lanes cover 128 contiguous bytes per group).
#pragma unroll
  for (int i = 0; i < Rm; ++i) {
    const float row_sum = arch::group8_sum(l[i]);
    const int row = q0 + ty + 16 * i;
    if (row >= n) continue;
    const float inv = 1.0f / row_sum;
    float* orow = o + q_base + static_cast<std::int64_t>(row) * D;
#pragma unroll
    for (int hh = 0; hh < Dh; ++hh) {
      const float4 x = make_float4(acc[i][4 * hh] * inv, acc[i][4 * hh + 1] * inv,
                                   acc[i][4 * hh + 2] * inv, acc[i][4 * hh + 3] * inv);
      *reinterpret_cast<float4*>(orow + 32 * hh + 4 * tx) = x;
    }
    if (tx == 0)
      lse[(static_cast<std::int64_t>(b) * heads + h) * n + row] =
          (m[i] + log2f(row_sum)) * detail::kLn2;
  }
}

template <class C>
cudaError_t launch_forward(const Shape& s, const float* q, const float* k, const float* v,
                           float* o, float* lse, cudaStream_t stream) {
  static const cudaError_t prepared =
      detail::prepare_kernel(flash_forward_kernel<C>, C::SmemBytes);
  if (prepared != cudaSuccess) return prepared;
  const dim3 grid((s.seq_len + C::Br - 1) / C::Br, s.heads, s.batch);
  const float scale_log2 = s.effective_scale() * detail::kLog2e;
  flash_forward_kernel<C><<<grid, kThreads, C::SmemBytes, stream>>>(
      q, k, v, o, lse, s.heads, s.group(), s.seq_len, scale_log2, s.causal);
  return cudaGetLastError();
}

// ---- 3xTF32 on tensor cores (flash_forward_tf32x3) ----
// FP32 inputs and outputs, every product by the 3xTF32 split (attention_common.cuh:
// relative error ~2^-21 per product, f32 accumulation), so the FP32 tolerances hold.
// Block: 4 warps x 16 query rows (Br = 64) of one (b, h), key tiles of Bc = 64 keys.
// Data path per key tile, with the pipeline of the SIMT kernel above (V_t lands while
// S is computed, K_{t+1} while O += P V_t is):
//   global --cp.async (zero-filled past N)--> smem K_t, V_t (FP32)
//   S = Q K_t^T : A = Q (16 x 8 per warp and k-step, float2 loads; Q pre-scaled by
//                 scale log2 e), B = K_t rows (float2 loads); 3 mma.sync m16n8k8 per
//                 8x8 product; S: 32 f32 per thread (8 key chunks x 4)
//   online softmax in registers as in flash_tc_forward.cu (quad reductions; O rescale
//   skipped when no row max of the warp changed)
//   O += P V_t  : A = P straight from the S accumulators (k permutation, no shuffles),
//                 split in registers; B = V_t (scalar loads); O: d/2 f32 per thread
// Shared memory: Q and K at row stride d + 8 (the float2 fragment loads of a half-warp,
// rows g, columns 2t, fall on 32 distinct banks), V at d + 4 (rows 2t and 2t+1, column
// g: 8t + g and 8t + 4 + g, distinct). d = 128: 103 KB -> 2 blocks (8 warps) per SM;
// d = 64: 54 KB -> up to 4.
template <int kD, int kBc>
struct Tf32Fwd {
  static constexpr int Br = 64, Bc = kBc;
  static constexpr int LdQK = kD + 8, LdV = kD + 4;
  static constexpr int SmemBytes = (Br * LdQK + Bc * LdQK + Bc * LdV) * 4;
  static constexpr int MinBlocks = kD == 128 ? 2 : 3;
};

template <int kD, int kBc>
__global__ void __launch_bounds__(kThreads, Tf32Fwd<kD, kBc>::MinBlocks)
    flash_forward_tf32x3_kernel(const float* __restrict__ q, const float* __restrict__ k,
                                const float* __restrict__ v, float* __restrict__ o,
                                float* __restrict__ lse, int heads, int group, int n,
                                float scale_log2, bool causal) {
  using C = Tf32Fwd<kD, kBc>;
  constexpr int Br = C::Br, Bc = C::Bc, LdQK = C::LdQK, LdV = C::LdV;
  using detail::split_tf32;
  using detail::Tf32x2;
  extern __shared__ float4 smem4[];
  float* Qs = reinterpret_cast<float*>(smem4);  // (Br, d), scaled by scale*log2e
  float* Ks = Qs + Br * LdQK;                   // (Bc, d)
  float* Vs = Ks + Bc * LdQK;                   // (Bc, d)

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int qtile = causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : blockIdx.x;
  const int q0 = qtile * Br, h = blockIdx.y, b = blockIdx.z;
  const int wrow = warp * 16;
  const std::int64_t q_base = (static_cast<std::int64_t>(b) * heads + h) * n * kD;
  const std::int64_t kv_base = (static_cast<std::int64_t>(b) * (heads / group) + h / group) * n * kD;
  const float* kh = k + kv_base;
  const float* vh = v + kv_base;

  for (int c = tid; c < Br * kD / 4; c += kThreads) {
    const int r = c / (kD / 4), col = (c % (kD / 4)) * 4;
    float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
    if (q0 + r < n) x = __ldg(reinterpret_cast<const float4*>(q + q_base + static_cast<std::int64_t>(q0 + r) * kD + col));
    *reinterpret_cast<float4*>(Qs + r * LdQK + col) =
        make_float4(x.x * scale_log2, x.y * scale_log2, x.z * scale_log2, x.w * scale_log2);
  }
  const int kv_end = causal ? min(n, q0 + Br) : n;
  const int n_tiles = (kv_end + Bc - 1) / Bc;
  cp_async_tile<Bc, kD, LdQK, kThreads>(Ks, kh, 0, n, tid);
  arch::cp_async_commit();

  float acc[kD / 8][4];
#pragma unroll
  for (int c = 0; c < kD / 8; ++c) acc[c][0] = acc[c][1] = acc[c][2] = acc[c][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  const float* qa = Qs + (wrow + g) * LdQK + 2 * t;  // this lane's A elements (row g; g + 8 at +8 rows)
  const float* kb = Ks + g * LdQK + 2 * t;           // B elements of key chunk 0 (key g)
  const float* vb = Vs + 2 * t * LdV + g;            // B elements of P V (keys 2t, 2t + 1; column g)

#pragma unroll 1
  for (int tile = 0; tile < n_tiles; ++tile) {
    const int k0 = tile * Bc;
    cp_async_tile<Bc, kD, LdV, kThreads>(Vs, vh, k0, n, tid);
    arch::cp_async_commit();
    arch::cp_async_wait<1>();  // K_t has landed
    __syncthreads();

    float s[Bc / 8][4];
#pragma unroll
    for (int j = 0; j < Bc / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll 2
    for (int kk = 0; kk < kD / 8; ++kk) {
      const float2 x0 = *reinterpret_cast<const float2*>(qa + 8 * kk);
      const float2 x1 = *reinterpret_cast<const float2*>(qa + 8 * LdQK + 8 * kk);
      const Tf32x2 a[4] = {split_tf32(x0.x), split_tf32(x1.x), split_tf32(x0.y), split_tf32(x1.y)};
#pragma unroll
      for (int j = 0; j < Bc / 8; ++j) {
        const float2 y = *reinterpret_cast<const float2*>(kb + 8 * j * LdQK + 8 * kk);
        detail::mma_3xtf32(s[j], a, split_tf32(y.x), split_tf32(y.y));
      }
    }
    if (k0 + Bc > n || (causal && k0 + Bc - 1 > q0)) {
#pragma unroll
      for (int j = 0; j < Bc / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = k0 + 8 * j + 2 * t + (e & 1), row = q0 + wrow + g + 8 * (e >> 1);
          if (key >= n || (causal && key > row)) s[j][e] = -INFINITY;
        }
    }
    // Online softmax (r = 0: row g, r = 1: row g + 8); a quad of lanes shares a row.
    float alpha[2];
    bool rescale = false;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = m[r];
#pragma unroll
      for (int j = 0; j < Bc / 8; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * r], s[j][2 * r + 1]));
      mx = arch::quad_max(mx);
      const float mu = mx == -INFINITY ? 0.0f : mx;  // a row with nothing visible yet
      alpha[r] = arch::fast_exp2(m[r] - mu);
      m[r] = mx;
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < Bc / 8; ++j) {
        s[j][2 * r] = arch::fast_exp2(s[j][2 * r] - mu);
        s[j][2 * r + 1] = arch::fast_exp2(s[j][2 * r + 1] - mu);
        sum += s[j][2 * r] + s[j][2 * r + 1];
      }
      l[r] = l[r] * alpha[r] + sum;
      rescale = rescale || alpha[r] != 1.0f;
    }
    if (__any_sync(0xffffffffu, rescale)) {
#pragma unroll
      for (int c = 0; c < kD / 8; ++c) {
        acc[c][0] *= alpha[0];
        acc[c][1] *= alpha[0];
        acc[c][2] *= alpha[1];
        acc[c][3] *= alpha[1];
      }
    }
    __syncthreads();  // every warp is done with K_t
    if (tile + 1 < n_tiles) cp_async_tile<Bc, kD, LdQK, kThreads>(Ks, kh, k0 + Bc, n, tid);
    arch::cp_async_commit();   // possibly empty: keeps the group count uniform
    arch::cp_async_wait<1>();  // V_t has landed
    __syncthreads();

    // O += P V_t, 8 keys per step: a0..a3 = P(g, 2t), P(g+8, 2t), P(g, 2t+1), P(g+8, 2t+1).
#pragma unroll
    for (int j = 0; j < Bc / 8; ++j) {
      const Tf32x2 a[4] = {split_tf32(s[j][0]), split_tf32(s[j][2]), split_tf32(s[j][1]), split_tf32(s[j][3])};
      const float* vj = vb + 8 * j * LdV;
#pragma unroll
      for (int dn = 0; dn < kD / 8; ++dn)
        detail::mma_3xtf32(acc[dn], a, split_tf32(vj[8 * dn]), split_tf32(vj[LdV + 8 * dn]));
    }
    __syncthreads();  // done with V_t before it is overwritten
  }
  arch::cp_async_wait<0>();

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float total = arch::quad_sum(l[r]);
    const int row = q0 + wrow + g + 8 * r;
    if (row >= n) continue;
    const float inv = 1.0f / total;
    float* orow = o + q_base + static_cast<std::int64_t>(row) * kD + 2 * t;
#pragma unroll
    for (int dn = 0; dn < kD / 8; ++dn)
      *reinterpret_cast<float2*>(orow + 8 * dn) = make_float2(acc[dn][2 * r] * inv, acc[dn][2 * r + 1] * inv);
    if (t == 0) lse[(static_cast<std::int64_t>(b) * heads + h) * n + row] = (m[r] + log2f(total)) * detail::kLn2;
  }
}

template <int kD, int kBc>
cudaError_t launch_forward_tf32x3(const Shape& s, const float* q, const float* k, const float* v, float* o,
                                  float* lse, cudaStream_t stream) {
  using C = Tf32Fwd<kD, kBc>;
  static const cudaError_t prepared = detail::prepare_kernel(flash_forward_tf32x3_kernel<kD, kBc>, C::SmemBytes);
  if (prepared != cudaSuccess) return prepared;
  const dim3 grid((s.seq_len + C::Br - 1) / C::Br, s.heads, s.batch);
  flash_forward_tf32x3_kernel<kD, kBc><<<grid, kThreads, C::SmemBytes, stream>>>(
      q, k, v, o, lse, s.heads, s.group(), s.seq_len, s.effective_scale() * detail::kLog2e, s.causal);
  return cudaGetLastError();
}

}  // namespace

bool flash_supported(int head_dim) {
  return head_dim == 32 || head_dim == 64 || head_dim == 128;
}

cudaError_t flash_forward(const Shape& shape, const float* q, const float* k, const float* v,
                          float* o, float* lse, cudaStream_t stream) {
  detail::require_valid(shape);
  switch (shape.head_dim) {
    case 32: return launch_forward<Fwd32>(shape, q, k, v, o, lse, stream);
    case 64: return launch_forward<Fwd64>(shape, q, k, v, o, lse, stream);
    case 128: return launch_forward<Fwd128>(shape, q, k, v, o, lse, stream);
    default:
      throw std::invalid_argument("attention: flash kernels support head_dim 32, 64, 128, not " +
                                  std::to_string(shape.head_dim));
  }
}

namespace {

template <int kD>
cudaError_t forward_tf32x3_tiles(const Shape& s, const float* q, const float* k, const float* v, float* o,
                                 float* lse, cudaStream_t stream, int key_tile) {
  if (key_tile == 0) key_tile = flash_tf32x3_key_tile(kD);
  if (key_tile == 32) return launch_forward_tf32x3<kD, 32>(s, q, k, v, o, lse, stream);
  if (key_tile == 64) return launch_forward_tf32x3<kD, 64>(s, q, k, v, o, lse, stream);
  throw std::invalid_argument("attention: flash_forward_tf32x3 key tiles are 32 or 64 keys, not " +
                              std::to_string(key_tile));
}

}  // namespace

// 64 at every d: faster than 32 by 1-4% at B=4 H=32 N=4096 d=64/128 (H200, 2026-11-23,
// docs/PERFORMANCE.md), though at d = 128 it spills 32 bytes (255 registers; 32: 199, none).
int flash_tf32x3_key_tile(int) { return 64; }

cudaError_t flash_forward_tf32x3(const Shape& shape, const float* q, const float* k, const float* v, float* o,
                                 float* lse, cudaStream_t stream, int key_tile) {
  detail::require_valid(shape);
  switch (shape.head_dim) {
    case 32: return forward_tf32x3_tiles<32>(shape, q, k, v, o, lse, stream, key_tile);
    case 64: return forward_tf32x3_tiles<64>(shape, q, k, v, o, lse, stream, key_tile);
    case 128: return forward_tf32x3_tiles<128>(shape, q, k, v, o, lse, stream, key_tile);
    default:
      throw std::invalid_argument("attention: flash kernels support head_dim 32, 64, 128, not " +
                                  std::to_string(shape.head_dim));
  }
}

}  // namespace kernels::attention
