// FlashAttention-2 forward on tensor cores, bf16 or f16 inputs and outputs, f32 softmax
// statistics and accumulation (mma.sync m16n8k16, sm_80+).
//
// Block: kWarps warps x kM 16-row m-tiles each, Br = 16 kM kWarps query rows of one (b, h).
// TcTiles::rows128: 4 warps x 2 m-tiles; rows128_deep: the same with 48-key tiles at d = 128;
// rows64: 4 warps x 1; rows128_w8: 8 warps x 1 (128 rows, Q fragments in registers and
// 64-key tiles at every d). Automatic:
// flash_tc_forward_tiles (rows128 at d = 64, rows128_deep at d = 128, see there).
// Data path per key tile (Bc = 64 keys x d; with two m-tiles at d = 128: 32, 48 for
// rows128_deep; see keys_per_tile):
//   global --cp.async (16 B, zero-filled past N)--> swizzled smem K_t, V_t (2 stages:
//   tile t+1 lands while tile t is computed)
//   S  = Q K_t^T : A = Q fragments held in registers for the whole block (one ldmatrix
//                  pass at the start; d = 128 with two m-tiles: re-read from smem), B = K
//                  via ldmatrix (non-transposed: K rows are the n index of S); Bc/2 floats
//                  per thread and m-tile. ldmatrix addresses: one per-lane base per
//                  operand plus a constant XOR / offset per step (tc::swz_step).
//   online softmax in registers on the raw scores, scale folded into the exponent:
//     c = scale * log2(e) > 0 (a negative scale flips the sign of Q in smem once, exact),
//     m = running max of c s (c times the raw max), P = exp2(fma(s, c, -m)) (one FFMA and
//     one MUFU.EX2 per score), l = l * exp2(m_old - m) + rowsum(P), O *= exp2(m_old - m);
//     P is rounded to T straight into A-fragment registers (the S accumulator layout is
//     the A fragment's), so S's f32 registers die during the softmax
//   O += P V_t   : A = P from registers, B = V via ldmatrix.trans; d/2 f32 per thread and m-tile
// The O rescale (d/2 multiplies per thread and m-tile) is skipped when no row of the warp
// changed its max (alpha == 1 exactly for all of them: the skip changes no bit).
// End: O / l rounded to T, LSE = ln(2) * (m + log2 l) in f32.
// Causal: key tiles beyond the block's last query are never loaded; tiles that straddle
// the diagonal, and the tail tile past N, get -inf scores where masked. Blocks run in
// reverse query order when causal so the longest rows start first.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "attention.hpp"
#include "flash_tc_common.cuh"

namespace kernels::attention {
namespace {

using tc::swz;

// kM 16-row m-tiles per warp, kWarps warps: Br = 16 kM kWarps query rows per block. With kM = 2 every K or V
// fragment read from shared memory feeds twice the MMAs (at kM = 1 an ldmatrix.x4 of
// 512 bytes per 2 MMAs keeps shared memory about as busy as the tensor cores). Q stays
// in registers when it fits (kM = 1, or d = 64); at d = 128 with kM = 2 (128 f32 of O
// and 64 of S per thread) its fragments are re-read from shared memory at each step.
template <int kD, int kM>
__host__ __device__ constexpr bool q_in_registers() {
  return kM == 1 || kD <= 64;
}
// Keys per tile (Bc): 64, except with two m-tiles at d = 128 (O alone is 128 f32 per
// thread there, S another Bc/2 per m-tile): 32 for rows128 (239-248 registers), 48 for
// rows128_deep (248). At 64 ptxas spills (12 bytes at 255 registers even with P packed
// during the softmax and one-register ldmatrix bases). Q does not fit in registers there
// and is re-read from smem per key tile, so larger tiles read less per MMA: per 16-column
// step of d a warp reads 2 Q, Bc/16 K and (per 16 keys) 8 V ldmatrix.x4 for Bc/2 x 8 MMAs
// in all, 0.375 ldmatrix per MMA at Bc = 32, 0.333 at 48 (0.3125 at 64), and the block
// synchronizes once per Bc keys.
template <int kD, int kM>
__host__ __device__ constexpr int keys_per_tile(TcTiles tiles) {
  return kD == 128 && kM == 2 ? (tiles == TcTiles::rows128_deep ? 48 : 32) : 64;
}
template <int kD, int kM, int kWarps, int kBc>
constexpr int forward_smem_bytes() {
  return (16 * kM * kWarps + 4 * kBc) * kD * 2;  // Q, K[2], V[2], 16-bit elements
}

template <class T, int kD, int kM, int kWarps, int kBc>
__global__ void __launch_bounds__(32 * kWarps)
    flash_tc_forward_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                            T* __restrict__ o, float* __restrict__ lse, int heads, int group, int n,
                            float scale_log2, bool causal) {
  constexpr int kThreads = 32 * kWarps;
  constexpr int kBr = 16 * kM * kWarps;  // query rows per block
  constexpr bool kQRegs = q_in_registers<kD, kM>();
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
  const int wrow = warp * 16 * kM;  // this warp's first row in the block

  tc::load_tile<kBr, kD, kThreads>(qs, qp, q0, n, tid);
  tc::load_tile<kBc, kD, kThreads>(ks, kp, 0, n, tid);
  tc::load_tile<kBc, kD, kThreads>(vs, vp, 0, n, tid);
  arch::cp_async_commit();
  arch::cp_async_wait<0>();
  __syncthreads();
  // A negative scale: S = (-Q) K^T with c = |scale| log2(e) > 0 (flipping the sign bits of
  // Q rounds nothing; the products are those of Q K^T negated). Uniform over the block.
  if (scale_log2 < 0.0f) {
    scale_log2 = -scale_log2;
    for (int c = tid; c < kBr * kD / 8; c += kThreads) {
      uint4* p = reinterpret_cast<uint4*>(qs) + c;
      const uint4 x = *p;
      *p = make_uint4(x.x ^ 0x80008000u, x.y ^ 0x80008000u, x.z ^ 0x80008000u, x.w ^ 0x80008000u);
    }
    __syncthreads();
  }

  // Per-lane ldmatrix bases (tc::swz_step): Q rows of m-tile 0 (A, 16 rows x 16 columns),
  // K rows of key pair 0 (B, non-transposed), V rows of key step 0 (B, transposed).
  const int q_lane = swz<kD>(wrow + (lane & 15), (lane >> 4) * 8);
  const int k_lane = swz<kD>((lane & 7) + ((lane >> 4) << 3), ((lane >> 3) & 1) * 8);
  const int v_lane = swz<kD>((lane & 7) + ((lane >> 3) & 1) * 8, (lane >> 4) * 8);

  // This warp's query rows as A fragments, one per m-tile and 16 columns of d.
  std::uint32_t qf[kQRegs ? kM : 1][kQRegs ? kD / 16 : 1][4];
  if constexpr (kQRegs) {
#pragma unroll
    for (int mi = 0; mi < kM; ++mi)
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk)
        arch::ldsm_x4(qf[mi][kk], qs + swz<kD>(wrow + mi * 16 + (lane & 15), kk * 16 + (lane >> 4) * 8));
  }

  float acc[kM][kD / 8][4];
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int c = 0; c < kD / 8; ++c) acc[mi][c][0] = acc[mi][c][1] = acc[mi][c][2] = acc[mi][c][3] = 0.0f;
  float m[kM][2], l[kM][2];
#pragma unroll
  for (int mi = 0; mi < kM; ++mi) m[mi][0] = m[mi][1] = -INFINITY, l[mi][0] = l[mi][1] = 0.0f;

#pragma unroll 1
  for (int tile = 0; tile < n_tiles; ++tile) {
    const int st = tile & 1;
    if (tile + 1 < n_tiles) {
      tc::load_tile<kBc, kD, kThreads>(ks + (st ^ 1) * kBc * kD, kp, (tile + 1) * kBc, n, tid);
      tc::load_tile<kBc, kD, kThreads>(vs + (st ^ 1) * kBc * kD, vp, (tile + 1) * kBc, n, tid);
    }
    arch::cp_async_commit();
    const T* kt = ks + st * kBc * kD;
    const T* vt = vs + st * kBc * kD;

    // S = Q K_t^T, (16 kM, Bc) per warp.
    float s[kM][kBc / 8][4];
#pragma unroll
    for (int mi = 0; mi < kM; ++mi)
#pragma unroll
      for (int j = 0; j < kBc / 8; ++j) s[mi][j][0] = s[mi][j][1] = s[mi][j][2] = s[mi][j][3] = 0.0f;
#pragma unroll(kQRegs ? kD / 16 : 1)
    for (int kk = 0; kk < kD / 16; ++kk) {
      std::uint32_t qa[kM][4];
#pragma unroll
      for (int mi = 0; mi < kM; ++mi) {
        if constexpr (kQRegs) {
#pragma unroll
          for (int e = 0; e < 4; ++e) qa[mi][e] = qf[mi][kk][e];
        } else {
          arch::ldsm_x4(qa[mi], qs + tc::swz_step(q_lane, kk) + mi * 16 * kD);
        }
      }
#pragma unroll
      for (int np = 0; np < kBc / 16; ++np) {
        std::uint32_t kf[4];
        arch::ldsm_x4(kf, kt + tc::swz_step(k_lane, kk) + np * 16 * kD);
#pragma unroll
        for (int mi = 0; mi < kM; ++mi) {
          arch::mma_m16n8k16<T>(s[mi][2 * np], qa[mi], kf[0], kf[1]);
          arch::mma_m16n8k16<T>(s[mi][2 * np + 1], qa[mi], kf[2], kf[3]);
        }
      }
    }

    // Mask (raw scores; the scale is folded into the exponent below), only in the tail tile
    // past N and the tiles that straddle the causal diagonal.
    const int k0 = tile * kBc;
    if (k0 + kBc > n || (causal && k0 + kBc - 1 > q0)) {
#pragma unroll
      for (int mi = 0; mi < kM; ++mi)
#pragma unroll
        for (int j = 0; j < kBc / 8; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = k0 + 8 * j + 2 * t + (e & 1), row = q0 + wrow + mi * 16 + g + 8 * (e >> 1);
            if (key >= n || (causal && key > row)) s[mi][j][e] = -INFINITY;
          }
    }

    // Online softmax per row (r = 0: row g, r = 1: row g + 8 of m-tile mi); a quad shares a
    // row. scale_log2 > 0 (a negative scale was moved into Q), so the max of the scaled
    // scores is scale_log2 times the raw max and P = exp2(s scale_log2 - m) is one FFMA and
    // one MUFU.EX2 per score, rounded to T straight into A fragments.
    float alphas[kM][2];
    std::uint32_t pa[kM][kBc / 16][4];  // P as A fragments (16 keys each)
    bool rescale = false;
#pragma unroll
    for (int mi = 0; mi < kM; ++mi)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float raw = -INFINITY;
#pragma unroll
        for (int j = 0; j < kBc / 8; ++j) raw = fmaxf(raw, fmaxf(s[mi][j][2 * r], s[mi][j][2 * r + 1]));
        const float mx = fmaxf(m[mi][r], arch::quad_max(raw) * scale_log2);
        const float mu = mx == -INFINITY ? 0.0f : mx;  // a row with nothing visible yet
        const float alpha = arch::fast_exp2(m[mi][r] - mu);
        m[mi][r] = mx;
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < kBc / 8; ++j) {
          const float p0 = arch::fast_exp2(fmaf(s[mi][j][2 * r], scale_log2, -mu));
          const float p1 = arch::fast_exp2(fmaf(s[mi][j][2 * r + 1], scale_log2, -mu));
          sum += p0 + p1;
          pa[mi][j / 2][r + 2 * (j & 1)] = arch::pack2<T>(p0, p1);
        }
        l[mi][r] = l[mi][r] * alpha + sum;
        alphas[mi][r] = alpha;
        rescale = rescale || alpha != 1.0f;
      }
    // O *= alpha, skipped when no row of the warp changed its max (alpha == 1 exactly for
    // all of them: the skip changes no bit; after the first tiles most maxima stay).
    if (__any_sync(0xffffffffu, rescale)) {  // warp-uniform
#pragma unroll
      for (int mi = 0; mi < kM; ++mi)
#pragma unroll
        for (int c = 0; c < kD / 8; ++c) {
          acc[mi][c][0] *= alphas[mi][0];
          acc[mi][c][1] *= alphas[mi][0];
          acc[mi][c][2] *= alphas[mi][1];
          acc[mi][c][3] *= alphas[mi][1];
        }
    }

    // O += P V_t: P's accumulators become A fragments (16 keys each) in registers.
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
#pragma unroll
      for (int dp = 0; dp < kD / 16; ++dp) {
        std::uint32_t vf[4];
        arch::ldsm_x4_t(vf, vt + tc::swz_step(v_lane, dp) + kk * 16 * kD);
#pragma unroll
        for (int mi = 0; mi < kM; ++mi) {
          arch::mma_m16n8k16<T>(acc[mi][2 * dp], pa[mi][kk], vf[0], vf[1]);
          arch::mma_m16n8k16<T>(acc[mi][2 * dp + 1], pa[mi][kk], vf[2], vf[3]);
        }
      }
    }
    arch::cp_async_wait<0>();  // tile t+1 has landed ...
    __syncthreads();             // ... for everyone, and stage st is free for tile t+2
  }

  // O = acc / l (two T per 4-byte store), LSE in natural log.
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float total = arch::quad_sum(l[mi][r]);
      const int row = q0 + wrow + mi * 16 + g + 8 * r;
      if (row >= n) continue;
      const float inv = 1.0f / total;
      T* orow = o + q_base + static_cast<std::int64_t>(row) * kD;
#pragma unroll
      for (int c = 0; c < kD / 8; ++c)
        *reinterpret_cast<std::uint32_t*>(orow + 8 * c + 2 * t) =
            arch::pack2<T>(acc[mi][c][2 * r] * inv, acc[mi][c][2 * r + 1] * inv);
      if (t == 0)
        lse[(static_cast<std::int64_t>(b) * heads + h) * n + row] = (m[mi][r] + log2f(total)) * detail::kLn2;
    }
}

// c = scale log2(e). |c| below FLT_MIN (a scale under ~8e-39) is raised to FLT_MIN so that
// a masked score, -inf times c, stays -inf (times 0 it would be NaN); every scaled score
// is ~0 there either way.
float scale_log2_of(const Shape& s) {
  const float c = s.effective_scale() * detail::kLog2e;
  return std::fabs(c) < FLT_MIN ? std::copysign(FLT_MIN, c) : c;
}

template <class T, int kD, int kM, int kWarps, TcTiles kTiles>
cudaError_t launch(const Shape& s, const void* q, const void* k, const void* v, void* o, float* lse,
                   cudaStream_t stream) {
  constexpr int kBc = keys_per_tile<kD, kM>(kTiles);
  constexpr int smem = forward_smem_bytes<kD, kM, kWarps, kBc>();
  constexpr int rows = 16 * kM * kWarps;
  static const cudaError_t prepared =
      detail::prepare_kernel(flash_tc_forward_kernel<T, kD, kM, kWarps, kBc>, smem);
  if (prepared != cudaSuccess) return prepared;
  const dim3 grid((s.seq_len + rows - 1) / rows, s.heads, s.batch);
  flash_tc_forward_kernel<T, kD, kM, kWarps, kBc><<<grid, 32 * kWarps, smem, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<T*>(o), lse,
      s.heads, s.group(), s.seq_len, scale_log2_of(s), s.causal);
  return cudaGetLastError();
}

template <class T, int kD>
cudaError_t by_tiles(const Shape& s, TcTiles tiles, const void* q, const void* k, const void* v, void* o,
                     float* lse, cudaStream_t stream) {
  if (tiles == TcTiles::automatic) tiles = flash_tc_forward_tiles(kD);
  switch (tiles) {
    case TcTiles::rows64: return launch<T, kD, 1, 4, TcTiles::rows64>(s, q, k, v, o, lse, stream);
    case TcTiles::rows128_w8: return launch<T, kD, 1, 8, TcTiles::rows128_w8>(s, q, k, v, o, lse, stream);
    case TcTiles::rows128_deep:  // 48-key tiles at d = 128; at d = 64 the same kernel as rows128
      if constexpr (kD == 128) return launch<T, kD, 2, 4, TcTiles::rows128_deep>(s, q, k, v, o, lse, stream);
      return launch<T, kD, 2, 4, TcTiles::rows128>(s, q, k, v, o, lse, stream);
    default: return launch<T, kD, 2, 4, TcTiles::rows128>(s, q, k, v, o, lse, stream);  // rows128
  }
}

template <class T>
cudaError_t dispatch(const Shape& s, TcTiles tiles, const void* q, const void* k, const void* v, void* o,
                     float* lse, cudaStream_t stream) {
  switch (s.head_dim) {
    case 64: return by_tiles<T, 64>(s, tiles, q, k, v, o, lse, stream);
    case 128: return by_tiles<T, 128>(s, tiles, q, k, v, o, lse, stream);
    default:
      throw std::invalid_argument("attention: tensor-core flash kernels support head_dim 64, 128, not " +
                                  std::to_string(s.head_dim));
  }
}

}  // namespace

bool flash_tc_supported(int head_dim) { return head_dim == 64 || head_dim == 128; }

// rows128 at d = 64, rows128_deep (48-key tiles) at d = 128: the fastest measured
// (suites/attention-tc-tiles.yaml, H200, 2026-11-23, B=4 H=32 N=4096 d=128 bf16: deep
// 3.455 ms vs rows128 3.848 ms, causal 1.882 vs 2.097; docs/PERFORMANCE.md).
TcTiles flash_tc_forward_tiles(int head_dim) { return head_dim == 128 ? TcTiles::rows128_deep : TcTiles::rows128; }

cudaError_t flash_tc_forward(const Shape& shape, Precision precision, const void* q, const void* k,
                             const void* v, void* o, float* lse, cudaStream_t stream, TcTiles tiles) {
  detail::require_valid(shape);
  return precision == Precision::bf16 ? dispatch<__nv_bfloat16>(shape, tiles, q, k, v, o, lse, stream)
                                      : dispatch<__half>(shape, tiles, q, k, v, o, lse, stream);
}

}  // namespace kernels::attention
