// FlashAttention-2 backward in FP32 on CUDA cores.
//
// Pre-pass: D = rowsum(dO * O) per query row (B, H, N) into the workspace.
// Main pass: one block per (K/V tile of kBc keys, query head h, batch b). K_j and V_j stay
// in shared memory and dK_j, dV_j accumulate in registers while the block walks the Q
// tiles i (kBr queries each; causal: only tiles that reach the diagonal or below):
//   S^T  = K_j Q_i^T                     (Bc, Br)   recomputed, never stored globally
//   P^T  = exp2(S^T * scale*log2e - LSE_i * log2e)   (masked: 0)
//   dP^T = V_j dO_i^T,  dS^T = P^T * (dP^T - D_i)
//   dV_j += P^T dO_i,   dK_j += dS^T Q_i      (scale applied once at the end)
//   dQ_i += scale * dS K_j                    atomicAdd into dQ (zeroed first): every
//                                              K/V block of the head adds its share.
// GQA/MQA: the H/Hkv query heads of a kv head each run their own blocks, so dK and dV
// are accumulated with atomics into zeroed buffers when H > Hkv (plain stores when equal).
//
// Thread tiling as in the forward: 128 threads = 16 row groups (ty) x 8 lanes (tx).
//   S^T, dP^T:  keys c_i = ty + 16 i (i < kRk), queries r_j = tx + 8 j (j < kCq)
//   dK, dV:     keys c_i, head-dim columns 32 h + 4 tx + e
//   dQ tile:    queries kRq*ty .. kRq*ty + kRq-1 (contiguous), columns 32 h + 4 tx + e
// P^T and dS^T go through shared memory (row stride kBr + 8: conflict-free stores and
// float4 reads), K, V, Q, dO tiles at stride d + 4.
#include <cmath>

#include "attention.hpp"
#include "attention_common.cuh"
#include "flash_backward_tiles.cuh"

namespace kernels::attention {
namespace {

using detail::cp_async_tile;
using detail::dot4;
using detail::get;
using detail::atomic_add_vec;
using detail::stage_query_tile;
using detail::zero2;

constexpr int kThreads = 128;

template <int kD, int kRk, int kCq, int kMinBlocks>
struct BwdConfig {
  static constexpr int D = kD;
  static constexpr int Rk = kRk;            // keys per thread in S^T / dK / dV
  static constexpr int Cq = kCq;            // queries per thread in S^T
  static constexpr int MinBlocks = kMinBlocks;
  static constexpr int Bc = 16 * kRk;       // keys per block
  static constexpr int Br = 8 * kCq;        // queries per Q tile
  static constexpr int Rq = Br / 16;        // dQ rows per thread
  static constexpr int Dh = kD / 32;
  static constexpr int Ld = kD + 4;         // K, V, Q, dO tiles
  static constexpr int LdP = Br + 8;        // P^T, dS^T tiles
  static constexpr int SmemFloats = 2 * Bc * Ld + 2 * Br * Ld + 2 * Bc * LdP + 2 * Br;
  static constexpr int SmemBytes = SmemFloats * 4;
  static_assert(Rq == 2 || Rq == 4, "dQ rows per thread are read as float2/float4");
};

// d=32, 64: 64 keys x 64 queries, 107 KB (d=64) shared -> 2 blocks/SM.
// d=128:    32 keys x 32 queries (dK + dV alone are 2*2*16 registers), 78 KB -> 2 blocks/SM.
using Bwd32 = BwdConfig<32, 4, 8, 2>;
using Bwd64 = BwdConfig<64, 4, 8, 2>;
using Bwd128 = BwdConfig<128, 2, 4, 2>;

template <int kN>
struct RowVec;
template <>
struct RowVec<4> {
  __device__ static void load(const float* p, float (&x)[4]) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
  }
};
template <>
struct RowVec<2> {
  __device__ static void load(const float* p, float (&x)[2]) {
    const float2 v = *reinterpret_cast<const float2*>(p);
    x[0] = v.x, x[1] = v.y;
  }
};

template <class C>
__global__ void __launch_bounds__(kThreads, C::MinBlocks)
    flash_backward_kernel(const float* __restrict__ q, const float* __restrict__ k,
                          const float* __restrict__ v, const float* __restrict__ lse,
                          const float* __restrict__ d_o, const float* __restrict__ delta,
                          float* __restrict__ dq, float* __restrict__ dk,
                          float* __restrict__ dv, int heads, int group, int n, float scale,
                          bool causal) {
  constexpr int D = C::D, Rk = C::Rk, Cq = C::Cq, Bc = C::Bc, Br = C::Br, Rq = C::Rq,
                Dh = C::Dh, Ld = C::Ld, LdP = C::LdP;
  const float scale_log2 = scale * detail::kLog2e;
  extern __shared__ float4 smem4[];
  const detail::BwdSmem<Bc, Br, Ld, LdP, true> sm(reinterpret_cast<float*>(smem4));
  // K, V (Bc, D); Q, dO (Br, D); P^T, dS^T (Bc, Br); LSE * log2e, D (Br).
  float *Ks = sm.k, *Vs = sm.v, *Qs = sm.q, *dOs = sm.d_o, *PTs = sm.p_t, *dSTs = sm.ds_t,
        *lse2s = sm.lse2, *deltas = sm.delta;

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int tx = lane & 7;
  const int ty = (tid >> 5) * 4 + (lane >> 3);
  const int k0 = blockIdx.x * Bc;
  const int h = blockIdx.y;
  const int b = blockIdx.z;
  const std::int64_t row_base = (static_cast<std::int64_t>(b) * heads + h) * n;  // LSE, D
  const std::int64_t q_base = row_base * D;
  const std::int64_t kv_base =
      (static_cast<std::int64_t>(b) * (heads / group) + h / group) * n * D;
  const float* qh = q + q_base;
  const float* doh = d_o + q_base;
  float* dqh = dq + q_base;

  cp_async_tile<Bc, D, Ld, kThreads>(Ks, k + kv_base, k0, n, tid);
  cp_async_tile<Bc, D, Ld, kThreads>(Vs, v + kv_base, k0, n, tid);
  arch::cp_async_commit();

  float dk_acc[Rk][Dh * 4], dv_acc[Rk][Dh * 4];
  zero2(dk_acc, dv_acc);

  // Causal: queries before k0 see none of these keys.
  const int first_tile = causal ? k0 / Br : 0;
  for (int r0 = first_tile * Br; r0 < n; r0 += Br) {
    stage_query_tile<Br, D, Ld, kThreads>(sm, qh, doh, lse, delta, row_base, r0, n, tid, 0.0f);

    // S^T = K Q^T and dP^T = V dO^T over the head dim, 4 at a time.
    float st[Rk][Cq], dpt[Rk][Cq];
    zero2(st, dpt);
#pragma unroll 1
    for (int kk = 0; kk < D; kk += 4) {
      float4 kf[Rk], vf[Rk];
#pragma unroll
      for (int i = 0; i < Rk; ++i) {
        kf[i] = *reinterpret_cast<const float4*>(Ks + (ty + 16 * i) * Ld + kk);
        vf[i] = *reinterpret_cast<const float4*>(Vs + (ty + 16 * i) * Ld + kk);
      }
#pragma unroll
      for (int j = 0; j < Cq; ++j) {
        const float4 qf = *reinterpret_cast<const float4*>(Qs + (tx + 8 * j) * Ld + kk);
        const float4 of = *reinterpret_cast<const float4*>(dOs + (tx + 8 * j) * Ld + kk);
#pragma unroll
        for (int i = 0; i < Rk; ++i) {
          st[i][j] = dot4(kf[i], qf, st[i][j]);
          dpt[i][j] = dot4(vf[i], of, dpt[i][j]);
        }
      }
    }
    // P^T, dS^T -> shared. Masked: keys or queries past N, and keys after the query.
    const bool need_mask = (k0 + Bc > n) || (r0 + Br > n) || (causal && k0 + Bc - 1 > r0);
#pragma unroll
    for (int i = 0; i < Rk; ++i)
#pragma unroll
      for (int j = 0; j < Cq; ++j) {
        const int rl = tx + 8 * j;
        float p = arch::fast_exp2(fmaf(st[i][j], scale_log2, -lse2s[rl]));
        if (need_mask) {
          const int key = k0 + ty + 16 * i;
          const int query = r0 + rl;
          if (key >= n || query >= n || (causal && key > query)) p = 0.0f;
        }
        PTs[(ty + 16 * i) * LdP + rl] = p;
        dSTs[(ty + 16 * i) * LdP + rl] = p * (dpt[i][j] - deltas[rl]);
      }
    __syncthreads();

    // dV += P^T dO and dK += dS^T Q over the tile's queries, 4 at a time.
#pragma unroll 1
    for (int rr = 0; rr < Br; rr += 4) {
      float4 pf[Rk], sf[Rk];
#pragma unroll
      for (int i = 0; i < Rk; ++i) {
        pf[i] = *reinterpret_cast<const float4*>(PTs + (ty + 16 * i) * LdP + rr);
        sf[i] = *reinterpret_cast<const float4*>(dSTs + (ty + 16 * i) * LdP + rr);
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        float4 of[Dh], qf[Dh];
#pragma unroll
        for (int hh = 0; hh < Dh; ++hh) {
          of[hh] = *reinterpret_cast<const float4*>(dOs + (rr + u) * Ld + 32 * hh + 4 * tx);
          qf[hh] = *reinterpret_cast<const float4*>(Qs + (rr + u) * Ld + 32 * hh + 4 * tx);
        }
#pragma unroll
        for (int i = 0; i < Rk; ++i) {
          const float p = get(pf[i], u);
          const float ds = get(sf[i], u);
#pragma unroll
          for (int hh = 0; hh < Dh; ++hh) {
            dv_acc[i][4 * hh + 0] = fmaf(p, of[hh].x, dv_acc[i][4 * hh + 0]);
            dv_acc[i][4 * hh + 1] = fmaf(p, of[hh].y, dv_acc[i][4 * hh + 1]);
            dv_acc[i][4 * hh + 2] = fmaf(p, of[hh].z, dv_acc[i][4 * hh + 2]);
            dv_acc[i][4 * hh + 3] = fmaf(p, of[hh].w, dv_acc[i][4 * hh + 3]);
            dk_acc[i][4 * hh + 0] = fmaf(ds, qf[hh].x, dk_acc[i][4 * hh + 0]);
            dk_acc[i][4 * hh + 1] = fmaf(ds, qf[hh].y, dk_acc[i][4 * hh + 1]);
            dk_acc[i][4 * hh + 2] = fmaf(ds, qf[hh].z, dk_acc[i][4 * hh + 2]);
            dk_acc[i][4 * hh + 3] = fmaf(ds, qf[hh].w, dk_acc[i][4 * hh + 3]);
          }
        }
      }
    }

    // dQ_i += scale * dS K_j: rows Rq*ty.., summed over the tile's keys.
    {
      float dq_acc[Rq][Dh * 4];
#pragma unroll
      for (int a = 0; a < Rq; ++a)
#pragma unroll
        for (int c = 0; c < Dh * 4; ++c) dq_acc[a][c] = 0.0f;
#pragma unroll 4
      for (int c = 0; c < Bc; ++c) {
        float ds[Rq];
        RowVec<Rq>::load(dSTs + c * LdP + Rq * ty, ds);
#pragma unroll
        for (int hh = 0; hh < Dh; ++hh) {
          const float4 kf = *reinterpret_cast<const float4*>(Ks + c * Ld + 32 * hh + 4 * tx);
#pragma unroll
          for (int a = 0; a < Rq; ++a) {
            dq_acc[a][4 * hh + 0] = fmaf(ds[a], kf.x, dq_acc[a][4 * hh + 0]);
            dq_acc[a][4 * hh + 1] = fmaf(ds[a], kf.y, dq_acc[a][4 * hh + 1]);
            dq_acc[a][4 * hh + 2] = fmaf(ds[a], kf.z, dq_acc[a][4 * hh + 2]);
            dq_acc[a][4 * hh + 3] = fmaf(ds[a], kf.w, dq_acc[a][4 * hh + 3]);
          }
        }
      }
#pragma unroll
      for (int a = 0; a < Rq; ++a) {
        const int row = r0 + Rq * ty + a;
        if (row >= n) continue;
#pragma unroll
        for (int hh = 0; hh < Dh; ++hh)
          atomic_add_vec(dqh + static_cast<std::int64_t>(row) * D + 32 * hh + 4 * tx,
                      make_float4(scale * dq_acc[a][4 * hh], scale * dq_acc[a][4 * hh + 1],
                                  scale * dq_acc[a][4 * hh + 2], scale * dq_acc[a][4 * hh + 3]));
      }
    }
    __syncthreads();  // Q, dO, P^T, dS^T are overwritten by the next tile
  }

  // dK = scale * (dS^T Q), dV = P^T dO for this block's keys.
#pragma unroll
  for (int i = 0; i < Rk; ++i) {
    const int key = k0 + ty + 16 * i;
    if (key >= n) continue;
    float* dkr = dk + kv_base + static_cast<std::int64_t>(key) * D;
    float* dvr = dv + kv_base + static_cast<std::int64_t>(key) * D;
#pragma unroll
    for (int hh = 0; hh < Dh; ++hh) {
      const float4 kx = make_float4(scale * dk_acc[i][4 * hh], scale * dk_acc[i][4 * hh + 1],
                                    scale * dk_acc[i][4 * hh + 2], scale * dk_acc[i][4 * hh + 3]);
      const float4 vx = make_float4(dv_acc[i][4 * hh], dv_acc[i][4 * hh + 1],
                                    dv_acc[i][4 * hh + 2], dv_acc[i][4 * hh + 3]);
      const int col = 32 * hh + 4 * tx;
      if (group == 1) {
        *reinterpret_cast<float4*>(dkr + col) = kx;
        *reinterpret_cast<float4*>(dvr + col) = vx;
      } else {
        atomic_add_vec(dkr + col, kx);
        atomic_add_vec(dvr + col, vx);
      }
    }
  }
}

// The tensors of one backward pass. delta: D = rowsum(dO * O), (B, H, N), in the workspace.
struct BwdTensors {
  const float *q, *k, *v, *lse, *d_o;
  float *delta, *dq, *dk, *dv;
};

// Launches one backward kernel over (key blocks of kBc, grid_heads, B) with kThreads threads
// and kSmemBytes of dynamic shared memory (the opt-in is set once per kernel).
template <auto kKernel, int kBc, int kSmemBytes>
cudaError_t launch_bwd_kernel(const Shape& s, int grid_heads, const BwdTensors& t,
                              cudaStream_t stream) {
  static const cudaError_t prepared = detail::prepare_kernel(kKernel, kSmemBytes);
  if (prepared != cudaSuccess) return prepared;
  const dim3 grid((s.seq_len + kBc - 1) / kBc, grid_heads, s.batch);
  kKernel<<<grid, kThreads, kSmemBytes, stream>>>(t.q, t.k, t.v, t.lse, t.d_o, t.delta, t.dq,
                                                   t.dk, t.dv, s.heads, s.group(), s.seq_len,
                                                   s.effective_scale(), s.causal);
  return cudaGetLastError();
}

// CUDA cores: one block per (key block, query head, b).
template <class C>
cudaError_t launch_backward(const Shape& s, const BwdTensors& t, cudaStream_t stream) {
  return launch_bwd_kernel<flash_backward_kernel<C>, C::Bc, C::SmemBytes>(s, s.heads, t, stream);
}

// ---- 3xTF32 on tensor cores (flash_backward_tf32x3) ----
// FP32 tensors, every product by the 3xTF32 split (attention_common.cuh), f32
// accumulation. One block per (key block of Bc = 64 keys, kv head, b): 4 warps x 16 keys.
// dK and dV of the block's keys stay in f32 registers while the block loops over every
// query head of the kv head's group (GQA sums in registers: no dK/dV atomics) and over
// the query tiles of Br queries that can see the keys (causal: from the tile holding k0):
//   S^T  = K Q^T,  dP^T = V dO^T   A = K, V rows of the warp's 16 keys, B = Q, dO rows
//   P^T  = exp2(S^T scale log2e - LSE log2e)  (0 where masked), dS^T = P^T (dP^T - D)
//   dV  += P^T dO, dK += dS^T Q     A = P^T, dS^T straight from the accumulators (k
//                                   permutation), B = dO, Q rows 2t, 2t + 1
//   dQ  += scale dS K               dS^T goes through smem (every warp needs all 64 keys);
//                                   warps split the (Br, d) tile, float2 atomicAdd to dQ
// dQ by atomics rather than a second pass that would recompute S and dP (+40% products),
// as in the tensor-core backward (flash_tc_backward.cu).
// Br = 64 at d <= 64; 32 at d = 128 (dK + dV alone are 128 f32 registers per thread).
// Shared memory, row stride d + 4 for K, V, Q, dO (A/B fragment loads at rows g, cols t:
// banks 4g + t; rows 2t, 2t + 1, col g: 8t + g, 8t + 4 + g) and Br + 4 for dS^T.
// d = 128: 108 KB, d = 64: 86 KB -> 2 blocks (8 warps) per SM.
template <int kD>
struct Tf32Bwd {
  static constexpr int Bc = 64;
  static constexpr int Br = kD == 128 ? 32 : 64;
  static constexpr int Ld = kD + 4, LdS = Br + 4;
  static constexpr int RowGroups = Br / 16;          // dQ: warps as RowGroups x ColGroups
  static constexpr int ColGroups = 4 / RowGroups;
  static constexpr int Dq = kD / ColGroups;          // dQ columns per warp
  static constexpr int SmemBytes = (2 * Bc * Ld + 2 * Br * Ld + Bc * LdS + 2 * Br) * 4;
};

template <int kD>
__global__ void __launch_bounds__(kThreads, 2)
    flash_backward_tf32x3_kernel(const float* __restrict__ q, const float* __restrict__ k,
                                 const float* __restrict__ v, const float* __restrict__ lse,
                                 const float* __restrict__ d_o, const float* __restrict__ delta,
                                 float* __restrict__ dq, float* __restrict__ dk, float* __restrict__ dv,
                                 int heads, int group, int n, float scale, bool causal) {
  using C = Tf32Bwd<kD>;
  constexpr int Bc = C::Bc, Br = C::Br, Ld = C::Ld, LdS = C::LdS, Dq = C::Dq;
  using detail::split_tf32;
  using detail::Tf32x2;
  const float scale_log2 = scale * detail::kLog2e;
  extern __shared__ float4 smem4[];
  const detail::BwdSmem<Bc, Br, Ld, LdS, false> sm(reinterpret_cast<float*>(smem4));
  // K, V (Bc, d); Q, dO (Br, d); dS^T (Bc, Br); LSE * log2e (+inf past N), D (Br).
  float *Ks = sm.k, *Vs = sm.v, *Qs = sm.q, *dOs = sm.d_o, *dSTs = sm.ds_t, *lse2s = sm.lse2,
        *deltas = sm.delta;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int k0 = blockIdx.x * Bc, hk = blockIdx.y, b = blockIdx.z;
  const int kv_heads = heads / group;
  const std::int64_t kv_base = (static_cast<std::int64_t>(b) * kv_heads + hk) * n * kD;
  cp_async_tile<Bc, kD, Ld, kThreads>(Ks, k + kv_base, k0, n, tid);
  cp_async_tile<Bc, kD, Ld, kThreads>(Vs, v + kv_base, k0, n, tid);
  arch::cp_async_commit();

  float dk_acc[kD / 8][4], dv_acc[kD / 8][4];
  zero2(dk_acc, dv_acc);

  const int wkey = 16 * warp;                          // the warp's first key in the block
  const float* ka = Ks + (wkey + g) * Ld + t;          // A elements of K (row g; g + 8 at +8 rows)
  const float* va = Vs + (wkey + g) * Ld + t;
  const int dq_row = 16 * (warp % C::RowGroups), dq_col = Dq * (warp / C::RowGroups);
  const int first_tile = causal ? k0 / Br : 0;

  for (int hq = hk * group; hq < (hk + 1) * group; ++hq) {
    const std::int64_t row_base = (static_cast<std::int64_t>(b) * heads + hq) * n;  // LSE, D
    const float* qh = q + row_base * kD;
    const float* doh = d_o + row_base * kD;
    float* dqh = dq + row_base * kD;
#pragma unroll 1
    for (int r0 = first_tile * Br; r0 < n; r0 += Br) {
      stage_query_tile<Br, kD, Ld, kThreads>(sm, qh, doh, lse, delta, row_base, r0, n, tid, INFINITY);

      // S^T and dP^T, (16 keys, Br queries) per warp.
      float st[Br / 8][4], dpt[Br / 8][4];
      zero2(st, dpt);
#pragma unroll 2
      for (int kk = 0; kk < kD / 8; ++kk) {
        const int c = 8 * kk;
        const Tf32x2 ak[4] = {split_tf32(ka[c]), split_tf32(ka[8 * Ld + c]), split_tf32(ka[c + 4]),
                              split_tf32(ka[8 * Ld + c + 4])};
        const Tf32x2 av[4] = {split_tf32(va[c]), split_tf32(va[8 * Ld + c]), split_tf32(va[c + 4]),
                              split_tf32(va[8 * Ld + c + 4])};
#pragma unroll
        for (int j = 0; j < Br / 8; ++j) {
          const float* qb = Qs + (8 * j + g) * Ld + c + t;
          const float* ob = dOs + (8 * j + g) * Ld + c + t;
          detail::mma_3xtf32(st[j], ak, split_tf32(qb[0]), split_tf32(qb[4]));
          detail::mma_3xtf32(dpt[j], av, split_tf32(ob[0]), split_tf32(ob[4]));
        }
      }
      // P^T into st, dS^T into dpt (and smem). e: key wkey + g + 8 (e >> 1), query 8j + 2t + (e & 1).
      const bool need_mask = k0 + Bc > n || (causal && k0 + Bc - 1 > r0);
#pragma unroll
      for (int j = 0; j < Br / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int ql = 8 * j + 2 * t + (e & 1);
          float p = arch::fast_exp2(fmaf(st[j][e], scale_log2, -lse2s[ql]));
          if (need_mask) {
            const int key = k0 + wkey + g + 8 * (e >> 1);
            if (key >= n || (causal && key > r0 + ql)) p = 0.0f;
          }
          st[j][e] = p;
          dpt[j][e] = p * (dpt[j][e] - deltas[ql]);
        }
        *reinterpret_cast<float2*>(dSTs + (wkey + g) * LdS + 8 * j + 2 * t) = make_float2(dpt[j][0], dpt[j][1]);
        *reinterpret_cast<float2*>(dSTs + (wkey + g + 8) * LdS + 8 * j + 2 * t) = make_float2(dpt[j][2], dpt[j][3]);
      }
      // dV += P^T dO, dK += dS^T Q over the tile's queries, 8 per step (queries 2t, 2t + 1).
#pragma unroll
      for (int j = 0; j < Br / 8; ++j) {
        const Tf32x2 ap[4] = {split_tf32(st[j][0]), split_tf32(st[j][2]), split_tf32(st[j][1]), split_tf32(st[j][3])};
        const Tf32x2 as[4] = {split_tf32(dpt[j][0]), split_tf32(dpt[j][2]), split_tf32(dpt[j][1]),
                              split_tf32(dpt[j][3])};
        const float* ob = dOs + (8 * j + 2 * t) * Ld + g;
        const float* qb = Qs + (8 * j + 2 * t) * Ld + g;
#pragma unroll
        for (int dn = 0; dn < kD / 8; ++dn) {
          detail::mma_3xtf32(dv_acc[dn], ap, split_tf32(ob[8 * dn]), split_tf32(ob[Ld + 8 * dn]));
          detail::mma_3xtf32(dk_acc[dn], as, split_tf32(qb[8 * dn]), split_tf32(qb[Ld + 8 * dn]));
        }
      }
      __syncthreads();  // dS^T complete

      // dQ[dq_row.., dq_col..] += scale dS K over the block's 64 keys (keys 2t, 2t + 1 per step).
      {
        float dq_acc[Dq / 8][4];
#pragma unroll
        for (int c = 0; c < Dq / 8; ++c) dq_acc[c][0] = dq_acc[c][1] = dq_acc[c][2] = dq_acc[c][3] = 0.0f;
#pragma unroll 2
        for (int kc = 0; kc < Bc / 8; ++kc) {
          const float* sa = dSTs + (8 * kc + 2 * t) * LdS + dq_row + g;
          const Tf32x2 a[4] = {split_tf32(sa[0]), split_tf32(sa[8]), split_tf32(sa[LdS]), split_tf32(sa[LdS + 8])};
          const float* kb = Ks + (8 * kc + 2 * t) * Ld + dq_col + g;
#pragma unroll
          for (int dn = 0; dn < Dq / 8; ++dn)
            detail::mma_3xtf32(dq_acc[dn], a, split_tf32(kb[8 * dn]), split_tf32(kb[Ld + 8 * dn]));
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int row = r0 + dq_row + g + 8 * r;
          if (row >= n) continue;
          float* dqr = dqh + static_cast<std::int64_t>(row) * kD + dq_col + 2 * t;
#pragma unroll
          for (int dn = 0; dn < Dq / 8; ++dn)
            atomic_add_vec(dqr + 8 * dn, make_float2(scale * dq_acc[dn][2 * r], scale * dq_acc[dn][2 * r + 1]));
        }
      }
      __syncthreads();  // Q, dO, dS^T, LSE, D are overwritten by the next tile
    }
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int key = k0 + wkey + g + 8 * r;
    if (key >= n) continue;
    float* dkr = dk + kv_base + static_cast<std::int64_t>(key) * kD + 2 * t;
    float* dvr = dv + kv_base + static_cast<std::int64_t>(key) * kD + 2 * t;
#pragma unroll
    for (int dn = 0; dn < kD / 8; ++dn) {
      *reinterpret_cast<float2*>(dkr + 8 * dn) = make_float2(scale * dk_acc[dn][2 * r], scale * dk_acc[dn][2 * r + 1]);
      *reinterpret_cast<float2*>(dvr + 8 * dn) = make_float2(dv_acc[dn][2 * r], dv_acc[dn][2 * r + 1]);
    }
  }
}

// 3xTF32: one block per (key block, kv head, b).
template <int kD>
cudaError_t launch_backward_tf32x3(const Shape& s, const BwdTensors& t, cudaStream_t stream) {
  using C = Tf32Bwd<kD>;
  return launch_bwd_kernel<flash_backward_tf32x3_kernel<kD>, C::Bc, C::SmemBytes>(s, s.kv_heads, t,
                                                                                 stream);
}

// What both backward passes do before their kernel: validate the shape, D = rowsum(dO * O)
// into the workspace, and zero dQ (accumulated over key blocks by atomics) and, with
// zero_kv, dK and dV (accumulated by atomics over the query heads of a kv head).
cudaError_t backward_prologue(const Shape& s, const float* o, const BwdTensors& t, bool zero_kv,
                              cudaStream_t stream) {
  detail::require_valid(s);
  if (!flash_supported(s.head_dim))
    throw std::invalid_argument("attention: flash kernels support head_dim 32, 64, 128, not " +
                                std::to_string(s.head_dim));
  cudaError_t e = detail::launch_row_dot(t.d_o, o, t.delta, s.lse_elements(), s.head_dim, stream);
  if (e != cudaSuccess) return e;
  e = cudaMemsetAsync(t.dq, 0, static_cast<std::size_t>(s.q_elements()) * sizeof(float), stream);
  if (e != cudaSuccess || !zero_kv) return e;
  const std::size_t kv_bytes = static_cast<std::size_t>(s.kv_elements()) * sizeof(float);
  if ((e = cudaMemsetAsync(t.dk, 0, kv_bytes, stream)) != cudaSuccess) return e;
  return cudaMemsetAsync(t.dv, 0, kv_bytes, stream);
}

}  // namespace

std::size_t flash_backward_workspace_bytes(const Shape& s) {
  return static_cast<std::size_t>(s.lse_elements()) * sizeof(float);
}

cudaError_t flash_backward(const Shape& s, const float* q, const float* k, const float* v,
                           const float* o, const float* lse, const float* d_o, float* dq,
                           float* dk, float* dv, float* workspace, cudaStream_t stream) {
  const BwdTensors t{q, k, v, lse, d_o, workspace, dq, dk, dv};
  // dK, dV accumulate only when several query heads share a kv head.
  const cudaError_t e = backward_prologue(s, o, t, s.group() > 1, stream);
  if (e != cudaSuccess) return e;
  switch (s.head_dim) {
    case 32: return launch_backward<Bwd32>(s, t, stream);
    case 64: return launch_backward<Bwd64>(s, t, stream);
    default: return launch_backward<Bwd128>(s, t, stream);
  }
}

cudaError_t flash_backward_tf32x3(const Shape& s, const float* q, const float* k, const float* v,
                                  const float* o, const float* lse, const float* d_o, float* dq,
                                  float* dk, float* dv, float* workspace, cudaStream_t stream) {
  const BwdTensors t{q, k, v, lse, d_o, workspace, dq, dk, dv};
  // dK, dV are stored once per key (GQA summed in registers).
  const cudaError_t e = backward_prologue(s, o, t, /*zero_kv=*/false, stream);
  if (e != cudaSuccess) return e;
  switch (s.head_dim) {
    case 32: return launch_backward_tf32x3<32>(s, t, stream);
    case 64: return launch_backward_tf32x3<64>(s, t, stream);
    default: return launch_backward_tf32x3<128>(s, t, stream);
  }
}

}  // namespace kernels::attention
