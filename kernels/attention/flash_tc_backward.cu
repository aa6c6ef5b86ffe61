// FlashAttention-2 backward on tensor cores, bf16 or f16 tensors, f32 accumulation.
//
// Three kernels:
//  1. preprocess: D = rowsum(dO * O) (f32, one warp per query row) and dQacc = 0.
//  2. main: one block per (key block of Bc = 16 kM kWarps keys, query head, b), kWarps warps,
//     each owning kM 16-key m-tiles. Shapes (TcTiles): rows64 = 4 warps x 16 keys (Bc 64);
//     rows128 = 4 warps x 32 keys (Bc 128, d = 64 only: every Q/dO fragment read from smem
//     feeds 4 MMAs instead of 2, the products being smem-bandwidth bound at 2); rows128_w8 =
//     8 warps x 16 keys (Bc 128); rows128_deep = rows128_w8 with Br = 64 at d = 128 (see
//     query_rows). Automatic: flash_tc_backward_tiles (rows128 at d = 64, rows128_deep at d = 128).
//     Bc = 128 halves, per key, the Q/dO/LSE/D traffic from L2 and the dQ atomics. dK, dV of those keys live in f32 registers for the whole block:
//     the block loops over the query blocks (Br rows) that can see the keys (causal: from
//     the block holding query k0 on). GQA (group > 1 query heads per kv head): each query
//     head of the group gets its own blocks, which add their scaled dK, dV into f32
//     sums by float2 atomics (a final pass rounds them to T). The kernel can also loop over
//     several heads of a group and sum them in registers (heads_per_block), but one block
//     holding a whole group leaves most SMs idle at small N (H 16, kv 2, B 4, N 1024: 64
//     blocks for 132 SMs, 0.58x SDPA at d = 64) and, under a causal mask, makes the
//     longest blocks `group` times longer, so the tail of the grid is too (0.54-0.86x SDPA
//     at GQA 8:1 causal, H200, 2026-11-23): one head per block makes GQA's grid MHA's.
//     Q, dO, LSE, D
//     of query block i+1 arrive by cp.async (2 stages) while block i is computed:
//       S^T  = K Q^T           A = K (ldmatrix from smem), B = Q (ldmatrix)
//       P^T  = exp2(S^T scale log2e - LSE log2e)    (0 where causal-masked or query >= N)
//       dV  += P^T dO          A = P^T from registers (rounded to T), B = dO (ldmatrix.trans)
//       dP^T = V dO^T          A = V (ldmatrix), B = dO (ldmatrix)
//       dS^T = P^T (dP^T - D)
//       dK  += dS^T Q          A = dS^T from registers, B = Q (ldmatrix.trans)
//       dQacc += dS K          dS^T goes through smem (every warp needs all Bc keys of
//                              it), A = dS via ldmatrix.trans, B = K (ldmatrix.trans);
//                              f32 float2 atomicAdd into a (B, H, N, d) workspace
//     dQ by atomics rather than a separate dQ pass: a second pass would recompute S and
//     dP (2 of the 5 products again, +40% FLOPs); the atomics cost Br*d/2 float2 adds per
//     query block per key block, spread over L2, which FA2 measured as the cheaper side.
//     dK = scale dK and dV are written once at the end, rounded to T.
//  3. convert: dQ = scale * dQacc rounded to T.
// Keys >= N are zero rows of K and V (zero-filled loads), so they add nothing to dQ and
// are never stored; queries >= N get LSE = +inf (P = 0) and D = 0.
// Br (queries per step): see query_rows below.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "attention.hpp"
#include "flash_tc_common.cuh"
#include "flash_tc_passes.hpp"

namespace kernels::attention {
namespace {

using tc::swz;

// Query rows per step (Br): 64 at d = 64 with one key m-tile per warp; 32 at d = 128 (dK
// and dV alone take 128 f32 registers) or with two m-tiles (S and dP: 64 more). rows128_deep
// takes 64 at d = 128 too (8 warps x 16 keys): S and dP are then 64 f32 per thread, and it
// fits in 253 registers without spills only with P and dS packed to T as soon as they are
// computed and the S/dP loop over d unrolled by 2 (fully unrolled it spills 8 bytes).
// Each K/V fragment a warp reads then feeds twice the MMAs, Q/dO/LSE/D tiles are loaded
// and synchronized on half as often per query, and dQ gets one atomic per element per 64
// queries' worth of keys instead of per 32.
template <int kD, int kM>
__host__ __device__ constexpr int query_rows(TcTiles tiles) {
  return (kD == 128 && tiles != TcTiles::rows128_deep) || kM == 2 ? 32 : 64;
}
template <int kBr> __host__ __device__ constexpr int ds_ld() { return kBr + 8; }  // padded dS^T rows: no bank conflicts

template <int kD, int kWarps, int kM, int kBr>
constexpr int backward_smem_bytes() {
  constexpr int kBc = 16 * kM * kWarps;
  return (2 * kBc * kD + 4 * kBr * kD + kBc * ds_ld<kBr>()) * 2 + 4 * kBr * 4;
}

// D[row] = dO[row] . O[row] in f32; dq_acc[row] = 0. One warp per row (B*H*N rows).
template <class T>
__global__ void preprocess_kernel(const T* __restrict__ d_o, const T* __restrict__ o, float* __restrict__ delta,
                                  float* __restrict__ dq_acc, std::int64_t rows, int d) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x & 31;
  const std::uint32_t* a = reinterpret_cast<const std::uint32_t*>(d_o + row * d);
  const std::uint32_t* b = reinterpret_cast<const std::uint32_t*>(o + row * d);
  float2* z = reinterpret_cast<float2*>(dq_acc + row * d);
  float sum = 0.0f;
  for (int c = lane; c < d / 2; c += 32) {
    const float2 x = arch::unpack2<T>(a[c]), y = arch::unpack2<T>(b[c]);
    sum = fmaf(x.x, y.x, fmaf(x.y, y.y, sum));
    z[c] = make_float2(0.0f, 0.0f);
  }
  sum = arch::warp_sum(sum);
  if (lane == 0) delta[row] = sum;
}

// dq = scale * dq_acc, rounded to T, two elements per thread and step. slices > 1: dq_acc holds
// that many partial sums, `pairs` float2 apart, added in the order 0, 1, ... (deterministic).
template <class T>
__global__ void convert_kernel(const float* __restrict__ dq_acc, T* __restrict__ dq, std::int64_t pairs, float scale,
                               int slices) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float2 x = reinterpret_cast<const float2*>(dq_acc)[i];
    for (int c = 1; c < slices; ++c) {
      const float2 y = reinterpret_cast<const float2*>(dq_acc)[i + c * pairs];
      x.x += y.x;
      x.y += y.y;
    }
    reinterpret_cast<std::uint32_t*>(dq)[i] = arch::pack2<T>(scale * x.x, scale * x.y);
  }
}

template <class T>
cudaError_t launch_preprocess(const void* d_o, const void* o, float* delta, float* dq_acc, std::int64_t rows, int d,
                              cudaStream_t stream) {
  constexpr int kRowsPerBlock = 8;
  preprocess_kernel<T><<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), 32 * kRowsPerBlock, 0,
                         stream>>>(static_cast<const T*>(d_o), static_cast<const T*>(o), delta, dq_acc, rows, d);
  return cudaGetLastError();
}
template <class T>
cudaError_t launch_convert(const float* from, void* to, std::int64_t elements, float factor, cudaStream_t stream,
                           int slices = 1) {
  const std::int64_t pairs = elements / 2;
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((pairs + 255) / 256, 65536));
  convert_kernel<T><<<blocks, 256, 0, stream>>>(from, static_cast<T*>(to), pairs, factor, slices);
  return cudaGetLastError();
}

template <class T, int kD, int kWarps, int kM, int kBr>
__global__ void __launch_bounds__(32 * kWarps)
    flash_tc_backward_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                             const T* __restrict__ d_o, const float* __restrict__ lse,
                             const float* __restrict__ delta, float* __restrict__ dq_acc, T* __restrict__ dk,
                             T* __restrict__ dv, float* __restrict__ dkv_acc, int heads, int group,
                             int heads_per_block, int n, float scale_log2, float scale, bool causal) {
  constexpr int kThreads = 32 * kWarps;
  constexpr int kBc = 16 * kM * kWarps;  // keys per block: 16 kM per warp
  constexpr int kLdS = ds_ld<kBr>();
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* ks = reinterpret_cast<T*>(smem_raw);  // (Bc, d)
  T* vs = ks + kBc * kD;                   // (Bc, d)
  T* qs = vs + kBc * kD;                   // 2 x (Br, d)
  T* dos = qs + 2 * kBr * kD;              // 2 x (Br, d)
  T* dss = dos + 2 * kBr * kD;             // (Bc, Br + 8): dS^T
  float* ls = reinterpret_cast<float*>(dss + kBc * kLdS);  // 2 x Br: LSE * log2(e)
  float* dl = ls + 2 * kBr;                                // 2 x Br: D

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  // blockIdx.y: (kv head, the block's share of its group's query heads)
  const int splits = group / heads_per_block;
  const int k0 = blockIdx.x * kBc, kvh = blockIdx.y / splits, b = blockIdx.z;
  const int h_first = kvh * group + (blockIdx.y % splits) * heads_per_block;
  const int kv_heads = heads / group;
  const std::int64_t kv_base = (static_cast<std::int64_t>(b) * kv_heads + kvh) * n * kD;
  const int qb_begin = causal ? k0 / kBr : 0;
  const int qb_count = (n + kBr - 1) / kBr - qb_begin;
  const int total = heads_per_block * qb_count;

  // Issues the loads of iteration `it` (query head h_first + it / qb_count, query block
  // qb_begin + it % qb_count) into stage `st`.
  auto issue = [&](int it, int st) {
    const int h = h_first + it / qb_count;
    const int q0 = (qb_begin + it % qb_count) * kBr;
    const std::int64_t row_base = (static_cast<std::int64_t>(b) * heads + h) * n;
    tc::load_tile<kBr, kD, kThreads>(qs + st * kBr * kD, q + row_base * kD, q0, n, tid);
    tc::load_tile<kBr, kD, kThreads>(dos + st * kBr * kD, d_o + row_base * kD, q0, n, tid);
    for (int i = tid; i < kBr; i += kThreads) {
      const bool valid = q0 + i < n;
      ls[st * kBr + i] = valid ? lse[row_base + q0 + i] * detail::kLog2e : INFINITY;
      dl[st * kBr + i] = valid ? delta[row_base + q0 + i] : 0.0f;
    }
  };

  tc::load_tile<kBc, kD, kThreads>(ks, k + kv_base, k0, n, tid);
  tc::load_tile<kBc, kD, kThreads>(vs, v + kv_base, k0, n, tid);
  issue(0, 0);
  arch::cp_async_commit();
  arch::cp_async_wait<0>();
  __syncthreads();

  float dka[kM][kD / 8][4], dva[kM][kD / 8][4];
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int c = 0; c < kD / 8; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e) dka[mi][c][e] = dva[mi][c][e] = 0.0f;
  const int wkey = warp * 16 * kM;  // this warp's first key in the block
  // Per-lane ldmatrix bases (tc::swz_step adds the 16-column step): A operands (this warp's
  // K / V rows), B operands with rows as n (Q / dO for S^T, dP^T) and transposed B operands
  // with rows as k (dO / Q for dV, dK; K for dQ).
  const int a_lane = swz<kD>(wkey + (lane & 15), (lane >> 4) * 8);
  const int b_lane = swz<kD>((lane & 7) + ((lane >> 4) << 3), ((lane >> 3) & 1) * 8);
  const int bt_lane = swz<kD>((lane & 7) + ((lane >> 3) & 1) * 8, (lane >> 4) * 8);
  // m-tile mi holds keys k0 + wkey + 16 mi + g (c0, c1) and + 8 (c2, c3)

  constexpr int kRowGroups = kBr / 16;            // dQ: warps over 16-row groups ...
  constexpr int kColSplit = kWarps / kRowGroups;  // ... and column slices of d
  constexpr int kCols = kD / kColSplit;
  static_assert(kRowGroups * kColSplit == kWarps && kCols % 16 == 0, "dQ split must cover the tile");
  const int dq_rows = (warp % kRowGroups) * 16, dq_col0 = (warp / kRowGroups) * kCols;

#pragma unroll 1
  for (int it = 0; it < total; ++it) {
    const int st = it & 1;
    if (it + 1 < total) issue(it + 1, st ^ 1);
    arch::cp_async_commit();
    const int h = h_first + it / qb_count;
    const int q0 = (qb_begin + it % qb_count) * kBr;
    const T* qt = qs + st * kBr * kD;
    const T* dot = dos + st * kBr * kD;
    const float* lt = ls + st * kBr;
    const float* dt = dl + st * kBr;

    // S^T = K Q^T and dP^T = V dO^T, (16 kM keys, Br queries) per warp: every Q / dO
    // fragment read from smem feeds 2 kM MMAs.
    float s[kM][kBr / 8][4], dp[kM][kBr / 8][4];
#pragma unroll
    for (int mi = 0; mi < kM; ++mi)
#pragma unroll
      for (int j = 0; j < kBr / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mi][j][e] = dp[mi][j][e] = 0.0f;
#pragma unroll(kD == 128 && kBr == 64 ? 2 : kD / 16)  // see query_rows
    for (int kk = 0; kk < kD / 16; ++kk) {
      std::uint32_t kf[kM][4], vf[kM][4];
#pragma unroll
      for (int mi = 0; mi < kM; ++mi) {
        arch::ldsm_x4(kf[mi], ks + tc::swz_step(a_lane, kk) + 16 * mi * kD);
        arch::ldsm_x4(vf[mi], vs + tc::swz_step(a_lane, kk) + 16 * mi * kD);
      }
#pragma unroll
      for (int np = 0; np < kBr / 16; ++np) {
        const int off = tc::swz_step(b_lane, kk) + np * 16 * kD;
        std::uint32_t qf[4], of[4];
        arch::ldsm_x4(qf, qt + off);
        arch::ldsm_x4(of, dot + off);
#pragma unroll
        for (int mi = 0; mi < kM; ++mi) {
          arch::mma_m16n8k16<T>(s[mi][2 * np], kf[mi], qf[0], qf[1]);
          arch::mma_m16n8k16<T>(s[mi][2 * np + 1], kf[mi], qf[2], qf[3]);
          arch::mma_m16n8k16<T>(dp[mi][2 * np], vf[mi], of[0], of[1]);
          arch::mma_m16n8k16<T>(dp[mi][2 * np + 1], vf[mi], of[2], of[3]);
        }
      }
    }

    // P^T and dS^T = P^T (dP^T - D), element (key k0 + wkey + 16 mi + g + 8*(e>>1),
    // query q0 + 8j + 2t + (e&1)), rounded to T straight into A fragments (16 queries each:
    // accumulator tiles 2kk, 2kk+1 are fragment kk), so S's and dP's f32 registers die here.
    const bool masked = causal && q0 < k0 + kBc - 1;
    std::uint32_t pa[kM][kBr / 16][4], da[kM][kBr / 16][4];
#pragma unroll
    for (int mi = 0; mi < kM; ++mi)
#pragma unroll
      for (int j = 0; j < kBr / 8; ++j) {
        float p[4], ds[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int qi = 8 * j + 2 * t + (e & 1);
          float x = s[mi][j][e] * scale_log2 - lt[qi];
          if (masked && k0 + wkey + 16 * mi + g + 8 * (e >> 1) > q0 + qi) x = -INFINITY;
          p[e] = arch::fast_exp2(x);
          ds[e] = p[e] * (dp[mi][j][e] - dt[qi]);
        }
        pa[mi][j / 2][2 * (j & 1)] = arch::pack2<T>(p[0], p[1]);
        pa[mi][j / 2][2 * (j & 1) + 1] = arch::pack2<T>(p[2], p[3]);
        da[mi][j / 2][2 * (j & 1)] = arch::pack2<T>(ds[0], ds[1]);
        da[mi][j / 2][2 * (j & 1) + 1] = arch::pack2<T>(ds[2], ds[3]);
      }

    // dV += P^T dO and dK += dS^T Q (unscaled), 16 queries per step; every dO / Q fragment
    // feeds 2 kM MMAs.
#pragma unroll
    for (int kk = 0; kk < kBr / 16; ++kk) {
#pragma unroll
      for (int mi = 0; mi < kM; ++mi) {
        // dS^T to smem for the dQ product (rows: this warp's keys, columns: queries).
        T* drow = dss + (wkey + 16 * mi + g) * kLdS + kk * 16 + 2 * t;
        *reinterpret_cast<std::uint32_t*>(drow) = da[mi][kk][0];
        *reinterpret_cast<std::uint32_t*>(drow + 8 * kLdS) = da[mi][kk][1];
        *reinterpret_cast<std::uint32_t*>(drow + 8) = da[mi][kk][2];
        *reinterpret_cast<std::uint32_t*>(drow + 8 * kLdS + 8) = da[mi][kk][3];
      }
#pragma unroll
      for (int c = 0; c < kD / 16; ++c) {
        const int off = tc::swz_step(bt_lane, c) + kk * 16 * kD;
        std::uint32_t of[4], qf[4];
        arch::ldsm_x4_t(of, dot + off);
        arch::ldsm_x4_t(qf, qt + off);
#pragma unroll
        for (int mi = 0; mi < kM; ++mi) {
          arch::mma_m16n8k16<T>(dva[mi][2 * c], pa[mi][kk], of[0], of[1]);
          arch::mma_m16n8k16<T>(dva[mi][2 * c + 1], pa[mi][kk], of[2], of[3]);
          arch::mma_m16n8k16<T>(dka[mi][2 * c], da[mi][kk], qf[0], qf[1]);
          arch::mma_m16n8k16<T>(dka[mi][2 * c + 1], da[mi][kk], qf[2], qf[3]);
        }
      }
    }
    __syncthreads();  // dS^T complete

    // dQacc (rows dq_rows.., columns dq_col0..) += dS K over the block's Bc keys.
    float dqa[kCols / 8][4];
#pragma unroll
    for (int c = 0; c < kCols / 8; ++c) dqa[c][0] = dqa[c][1] = dqa[c][2] = dqa[c][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      std::uint32_t a[4];
      arch::ldsm_x4_t(a, dss + (kk * 16 + (lane & 7) + ((lane >> 4) << 3)) * kLdS + dq_rows + ((lane >> 3) & 1) * 8);
#pragma unroll
      for (int c = 0; c < kCols / 16; ++c) {
        std::uint32_t kf[4];
        arch::ldsm_x4_t(kf, ks + tc::swz_step(bt_lane, dq_col0 / 16 + c) + kk * 16 * kD);
        arch::mma_m16n8k16<T>(dqa[2 * c], a, kf[0], kf[1]);
        arch::mma_m16n8k16<T>(dqa[2 * c + 1], a, kf[2], kf[3]);
      }
    }
    const std::int64_t row_base = (static_cast<std::int64_t>(b) * heads + h) * n;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = q0 + dq_rows + g + 8 * r;
      if (row >= n) continue;
      float* dst = dq_acc + (row_base + row) * kD + dq_col0 + 2 * t;
#pragma unroll
      for (int c = 0; c < kCols / 8; ++c)
        atomicAdd(reinterpret_cast<float2*>(dst + 8 * c), make_float2(dqa[c][2 * r], dqa[c][2 * r + 1]));
    }
    arch::cp_async_wait<0>();  // the next query block has landed ...
    __syncthreads();             // ... and dS^T / stage st are free again
  }

  // dK = scale * dK, dV: this warp's 16 kM keys, rows >= N not stored. With the group
  // split over blocks (dkv_acc set): added into the f32 sums (B, kv heads, N, d) x 2.
  const std::int64_t kv_elements = static_cast<std::int64_t>(gridDim.z) * kv_heads * n * kD;
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int key = k0 + wkey + 16 * mi + g + 8 * r;
      if (key >= n) continue;
      const std::int64_t at = kv_base + static_cast<std::int64_t>(key) * kD + 2 * t;
#pragma unroll
      for (int c = 0; c < kD / 8; ++c) {
        const float2 kx = make_float2(scale * dka[mi][c][2 * r], scale * dka[mi][c][2 * r + 1]);
        const float2 vx = make_float2(dva[mi][c][2 * r], dva[mi][c][2 * r + 1]);
        if (dkv_acc != nullptr) {
          atomicAdd(reinterpret_cast<float2*>(dkv_acc + at + 8 * c), kx);
          atomicAdd(reinterpret_cast<float2*>(dkv_acc + kv_elements + at + 8 * c), vx);
        } else {
          *reinterpret_cast<std::uint32_t*>(dk + at + 8 * c) = arch::pack2<T>(kx.x, kx.y);
          *reinterpret_cast<std::uint32_t*>(dv + at + 8 * c) = arch::pack2<T>(vx.x, vx.y);
        }
      }
    }
}

template <class T, int kD, int kWarps, int kM, TcTiles kTiles>
cudaError_t launch(const Shape& s, const void* q, const void* k, const void* v, const void* o, const float* lse,
                   const void* d_o, void* dq, void* dk, void* dv, void* workspace, cudaStream_t stream) {
  constexpr int kBr = query_rows<kD, kM>(kTiles);
  constexpr int smem = backward_smem_bytes<kD, kWarps, kM, kBr>();
  static const cudaError_t prepared =
      detail::prepare_kernel(flash_tc_backward_kernel<T, kD, kWarps, kM, kBr>, smem);
  if (prepared != cudaSuccess) return prepared;
  // Workspace: dq_acc (B, H, N, d), then with GQA the dK, dV sums (B, kv heads, N, d) x 2,
  // then D (B, H, N): flash_tc_backward_workspace_bytes.
  const int heads_per_block = 1;  // GQA: one query head per block (the kernel's header says why)
  const bool split_group = s.group() > heads_per_block;
  float* dq_acc = static_cast<float*>(workspace);
  float* dkv_acc = split_group ? dq_acc + s.q_elements() : nullptr;
  float* delta = dq_acc + s.q_elements() + (split_group ? 2 * s.kv_elements() : 0);
  if (split_group) {
    if (cudaError_t e = cudaMemsetAsync(dkv_acc, 0, 2 * s.kv_elements() * sizeof(float), stream); e != cudaSuccess)
      return e;
  }
  if (cudaError_t e = launch_preprocess<T>(d_o, o, delta, dq_acc, s.lse_elements(), kD, stream); e != cudaSuccess)
    return e;
  const float scale = s.effective_scale();
  constexpr int kBc = 16 * kM * kWarps;
  const int splits = s.group() / heads_per_block;
  const dim3 grid((s.seq_len + kBc - 1) / kBc, s.kv_heads * splits, s.batch);
  flash_tc_backward_kernel<T, kD, kWarps, kM, kBr><<<grid, 32 * kWarps, smem, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<const T*>(d_o), lse,
      delta, dq_acc, static_cast<T*>(dk), static_cast<T*>(dv), dkv_acc, s.heads, s.group(), heads_per_block,
      s.seq_len, scale * detail::kLog2e, scale, s.causal);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  auto convert = [&](const float* from, void* to, std::int64_t elements, float factor) {
    return launch_convert<T>(from, to, elements, factor, stream);
  };
  if (cudaError_t e = convert(dq_acc, dq, s.q_elements(), scale); e != cudaSuccess) return e;
  if (!split_group) return cudaSuccess;
  if (cudaError_t e = convert(dkv_acc, dk, s.kv_elements(), 1.0f); e != cudaSuccess) return e;  // scaled already
  return convert(dkv_acc + s.kv_elements(), dv, s.kv_elements(), 1.0f);
}

template <class T, int kD>
cudaError_t by_tiles(const Shape& s, TcTiles tiles, const void* q, const void* k, const void* v, const void* o,
                     const float* lse, const void* d_o, void* dq, void* dk, void* dv, void* ws, cudaStream_t stream) {
  if (tiles == TcTiles::automatic) tiles = flash_tc_backward_tiles(kD);
  switch (tiles) {
    case TcTiles::rows64: return launch<T, kD, 4, 1, TcTiles::rows64>(s, q, k, v, o, lse, d_o, dq, dk, dv, ws, stream);
    case TcTiles::rows128:  // 4 warps x 32 keys: d = 64 only (dK, dV would need 256 registers at d = 128)
      if constexpr (kD == 64)
        return launch<T, kD, 4, 2, TcTiles::rows128>(s, q, k, v, o, lse, d_o, dq, dk, dv, ws, stream);
      return cudaErrorInvalidValue;
    case TcTiles::rows128_deep:  // 64-query steps at d = 128; at d = 64 the same kernel as rows128_w8
      if constexpr (kD == 128)
        return launch<T, kD, 8, 1, TcTiles::rows128_deep>(s, q, k, v, o, lse, d_o, dq, dk, dv, ws, stream);
      return launch<T, kD, 8, 1, TcTiles::rows128_w8>(s, q, k, v, o, lse, d_o, dq, dk, dv, ws, stream);
    default: return launch<T, kD, 8, 1, TcTiles::rows128_w8>(s, q, k, v, o, lse, d_o, dq, dk, dv, ws, stream);
  }
}

template <class T>
cudaError_t dispatch(const Shape& s, TcTiles tiles, const void* q, const void* k, const void* v, const void* o, const float* lse,
                     const void* d_o, void* dq, void* dk, void* dv, void* ws, cudaStream_t stream) {
  switch (s.head_dim) {
    case 64: return by_tiles<T, 64>(s, tiles, q, k, v, o, lse, d_o, dq, dk, dv, ws, stream);
    case 128: return by_tiles<T, 128>(s, tiles, q, k, v, o, lse, d_o, dq, dk, dv, ws, stream);
    default:
      throw std::invalid_argument("attention: tensor-core flash kernels support head_dim 64, 128, not " +
                                  std::to_string(s.head_dim));
  }
}

}  // namespace

namespace detail {
cudaError_t tc_backward_preprocess(Precision precision, const void* d_o, const void* o, float* delta, float* dq_acc,
                                   std::int64_t rows, int head_dim, cudaStream_t stream) {
  return precision == Precision::bf16
             ? launch_preprocess<__nv_bfloat16>(d_o, o, delta, dq_acc, rows, head_dim, stream)
             : launch_preprocess<__half>(d_o, o, delta, dq_acc, rows, head_dim, stream);
}
cudaError_t tc_round(Precision precision, const float* from, void* to, std::int64_t elements, float factor,
                     cudaStream_t stream, int slices) {
  return precision == Precision::bf16 ? launch_convert<__nv_bfloat16>(from, to, elements, factor, stream, slices)
                                      : launch_convert<__half>(from, to, elements, factor, stream, slices);
}
}  // namespace detail

// The fastest measured shapes (docs/PERFORMANCE.md, suites/attention-tc-tiles.yaml, H200):
// d = 64 rows128 (128 keys, 4 warps x 32: 5.369 ms against rows64's 6.702 at B=4 H=32
// N=4096), d = 128 rows128_w8 (128 keys, 8 warps x 16: 12.249 against 12.694 ms).
// Their odd-size cases (N = 3, 13, 999, causal, GQA) are in suites/sanitizer.yaml.
// Since then rows128_deep (rows128_w8 with 64-query steps) measured 6-7% faster at d = 128
// (H200, 2026-11-23, B=4 H=32 N=4096 bf16: 10.989 vs 11.758 ms, causal 5.846 vs 6.305), so
// d = 128 takes it.
TcTiles flash_tc_backward_tiles(int head_dim) { return head_dim == 64 ? TcTiles::rows128 : TcTiles::rows128_deep; }

std::size_t flash_tc_backward_workspace_bytes(const Shape& shape) {
  const std::int64_t dkv_sums = shape.group() > 1 ? 2 * shape.kv_elements() : 0;  // GQA: launch() above
  return static_cast<std::size_t>(shape.q_elements() + dkv_sums + shape.lse_elements()) * sizeof(float);
}

cudaError_t flash_tc_backward(const Shape& shape, Precision precision, const void* q, const void* k, const void* v,
                              const void* o, const float* lse, const void* d_o, void* dq, void* dk, void* dv,
                              void* workspace, cudaStream_t stream, TcTiles tiles) {
  detail::require_valid(shape);
  return precision == Precision::bf16
             ? dispatch<__nv_bfloat16>(shape, tiles, q, k, v, o, lse, d_o, dq, dk, dv, workspace, stream)
             : dispatch<__half>(shape, tiles, q, k, v, o, lse, d_o, dq, dk, dv, workspace, stream);
}

}  // namespace kernels::attention
