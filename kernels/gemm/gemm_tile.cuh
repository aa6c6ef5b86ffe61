#pragma once
// The register-blocked, warp-tiled GEMM tile of `coarsened`, `auto` and split-K (internal
// to kernels/gemm), parameterised by the number of warps along M and N and by the operand
// layout (nn, nt, tn, tt: gemm_types.hpp; C always row-major):
//
//   BM = 32 * WarpsM, BN = 64 * WarpsN, 32 * WarpsM * WarpsN threads, K tiles of depth BK.
//   Instantiated: 4x2 warps (128x128, 256 threads: `coarsened`), 4x1 (128x64), 2x1 (64x64),
//   1x1 (32x64, one warp: M <= 32).
//
// A block computes the (BM, BN) tile of C at (blockIdx.y*BM, blockIdx.x*BN) over the K
// range [k_begin, k_end) of its slice, k_begin = blockIdx.z * k_slice (one slice, the
// whole of K, for plain launches; split-K gives each blockIdx.z one slice):
//
//   As[buf][k][m] = op(A)(row0 + m, k0 + k)   (BK, BM): k-major, so that the 8 values of A
//                                              a thread needs at one k are two float4 reads
//                                              along m
//   Bs[buf][k][n] = op(B)(k0 + k, col0 + n)   (BK, BN)
//
// Thread layout (why: every shared-memory read of a warp is a broadcast or one contiguous
// 128-byte row, so each costs a single wavefront): warp w owns the (32, 64) sub-tile at
// (32 * (w / WarpsN), 64 * (w % WarpsN)). Lane l owns the rows tm + {0..3}, tm + 16 + {0..3},
// tm = 4 * (l / 8), and the columns tn + {0..3}, tn + 32 + {0..3}, tn = 4 * (l % 8): an 8 x 8
// block of C in 64 registers, built as 8 x 8 outer products per k from 2 float4 of As (4
// distinct float4 per warp: a broadcast) and 2 float4 of Bs (8 distinct float4 per warp: one
// 128-byte row). Per k and thread: 4 LDS.128 for 64 FFMA.
//
// Pipeline: the global loads of K tile t+1 are issued before the FMAs of tile t and land in
// the other shared buffer after them (their latency hides behind BK x 64 FMAs per thread);
// one __syncthreads per K tile.
//
// Global loads (OperandTile below), per operand by how it is stored (kTA, kTB: the layout's
// letters, gemm_types.hpp):
//   K contiguous (A 'n' (M, K), B 't' (N, K)): the (rows, BK) tile is rows*BK/4 float4
//     along k, staged through registers because it is transposed on the way into shared
//     memory (4 scalar stores each);
//   rows contiguous (A 't' (K, M), B 'n' (K, N)): BK*rows/4 float4 along m or n, stored as
//     they are (with kVec global -> shared by cp.async, no registers).
// Either way the operand lands in the same k-major shared layout Xs[k][r], so the FMA loop
// is one code for all four layouts. With kVec (tile_vector_aligned: every stored leading
// dimension and N % 4 == 0, 16-byte aligned pointers; split-K slices multiples of BK) these
// are 16-byte loads and C is written with 16-byte stores; without kVec, the same layout
// with element-wise bounds-checked accesses staged through registers.
//
// Epilogue: kPartial false: C = alpha * acc + beta * C. kPartial true (split-K): the raw
// sums go to the slice's (M, N) panel of the workspace, P + blockIdx.z * M * N, and a
// second kernel (gemm_splitk.cu) adds the panels in slice order and applies alpha, beta.
//
// Registers: 64 accumulators + 16 fragment values + the staged A (and B) float4s;
// __launch_bounds__(threads, tile_min_blocks(threads)) caps 128x128 at 128 registers (two
// blocks per SM, as `coarsened` always had) and the smaller tiles at 168 (their extra staged
// float4s spilled at 128; they serve shapes with few tiles, where occupancy is not the
// limit). ptxas counts: see gemm_coarsened.cu.
// Shared memory: 2 * BK * (BM + 4 + BN) * 4 bytes (16.6 KB for 128x128x8).
#include <cstddef>

#include "arch/sm80_cp_async.cuh"
#include "gemm/common.cuh"
#include "gemm/gemm_shapes.hpp"
#include "gemm/gemm_types.hpp"

namespace kernels::gemm::tile {

// P(r, c .. c+3) of a row-major matrix with `rows` rows and leading dimension ld, zeros
// where r >= rows or a column >= col_end. kVec: one 16-byte load; the caller guarantees
// ld % 4 == 0, c % 4 == 0, col_end % 4 == 0 and a 16-byte aligned P.
template <bool kVec>
__device__ __forceinline__ float4 load4_range(const float* __restrict__ P, int rows, int ld,
                                              int col_end, int r, int c) {
  if (r >= rows) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const float* p = P + static_cast<std::size_t>(r) * ld + c;
  if constexpr (kVec) {
    return c < col_end ? *reinterpret_cast<const float4*>(p) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  } else {
    return make_float4(c < col_end ? p[0] : 0.0f, c + 1 < col_end ? p[1] : 0.0f,
                       c + 2 < col_end ? p[2] : 0.0f, c + 3 < col_end ? p[3] : 0.0f);
  }
}

// One operand's (R, BK) tile of K tile [k0, k0 + BK) into Xs[k][r] (R = BM for A, BN for B),
// rows [r0, r0 + R) of op(X): see "Global loads" above. kKContig: X stored (rows, K),
// leading dimension K; else X stored (K, rows), leading dimension rows. Elements at
// r >= rows or k >= k_end read as 0.
template <int R, int BK, int kThreads, bool kKContig, bool kVec>
struct OperandTile {
  static constexpr int kLoads = R * BK / 4 / kThreads;  // float4 per thread per K tile
  static constexpr bool kAsync = kVec && !kKContig;     // cp.async straight into shared
  static_assert(BK % 4 == 0 && (R * BK / 4) % kThreads == 0);
  float4 reg[kAsync ? 1 : kLoads];

  // float4 number f = tid + i * kThreads: kKContig: row f / (BK / 4), k quad f % (BK / 4);
  // else: k row f / (R / 4), r quad f % (R / 4).
  template <int kStride>
  __device__ __forceinline__ void load(const float* __restrict__ X, int rows, int K, int k_end, int r0, int k0,
                                       float (*Xs)[kStride], int tid) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int f = tid + i * kThreads;
      if constexpr (kKContig) {
        reg[i] = load4_range<kVec>(X, rows, K, k_end, r0 + f / (BK / 4), k0 + 4 * (f % (BK / 4)));
      } else {
        const int k = k0 + f / (R / 4);
        const int r = r0 + 4 * (f % (R / 4));
        if constexpr (kAsync) {
          const bool inside = k < k_end && r < rows;
          // Outside the matrix: nothing read, 16 zero bytes written (src-size 0).
          arch::cp_async16(&Xs[f / (R / 4)][4 * (f % (R / 4))],
                           inside ? X + static_cast<std::size_t>(k) * rows + r : X, inside);
        } else {
          reg[i] = load4_range<false>(X, k_end, rows, rows, k, r);
        }
      }
    }
  }
  // The staged registers into Xs (the cp.async part lands by itself: the caller waits).
  template <int kStride>
  __device__ __forceinline__ void store(float (*Xs)[kStride], int tid) const {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int f = tid + i * kThreads;
      if constexpr (kKContig) {
        const int r = f / (BK / 4);
        const int k = 4 * (f % (BK / 4));
        Xs[k + 0][r] = reg[i].x;
        Xs[k + 1][r] = reg[i].y;
        Xs[k + 2][r] = reg[i].z;
        Xs[k + 3][r] = reg[i].w;
      } else if constexpr (!kAsync) {
        *reinterpret_cast<float4*>(&Xs[f / (R / 4)][4 * (f % (R / 4))]) = reg[i];
      }
    }
  }
};

struct Args {
  int M, N, K;
  float alpha, beta;
  const float* A;
  const float* B;
  float* C;        // kPartial false: the result
  float* P;        // kPartial true: (slices, M, N) partial sums
  int k_slice;     // K range of blockIdx.z: [z * k_slice, min(K, (z + 1) * k_slice))
};

template <int WarpsM, int WarpsN>
struct Config {
  static constexpr int kBM = 32 * WarpsM;
  static constexpr int kBN = 64 * WarpsN;
  static constexpr int kThreads = 32 * WarpsM * WarpsN;
  static constexpr int kMinBlocks = tile_min_blocks(kThreads);  // see gemm_shapes.hpp
};

// Plain launches write C; split-K slice z writes its panel P + z * M * N (beta = 0 there:
// store4 then never reads it).
template <bool kPartial>
__device__ __forceinline__ float* C_or_panel(const Args& args) {
  if constexpr (kPartial) {
    return args.P + static_cast<std::size_t>(blockIdx.z) * static_cast<std::size_t>(args.M) *
                        static_cast<std::size_t>(args.N);
  } else {
    return args.C;
  }
}

// kTA: A stored (K, M) (layout 't'); kTB: B stored (N, K) (layout 't').
template <int WarpsM, int WarpsN, int BK, bool kVec, bool kPartial, bool kTA = false, bool kTB = false>
__global__ void __launch_bounds__(Config<WarpsM, WarpsN>::kThreads, Config<WarpsM, WarpsN>::kMinBlocks)
    tile_kernel(Args args) {
  using Cfg = Config<WarpsM, WarpsN>;
  constexpr int kBM = Cfg::kBM, kBN = Cfg::kBN, kThreads = Cfg::kThreads;
  // Rows of an operand that is transposed on the way in (A 'n', B 't') are padded by 4 floats:
  // keeps 16-byte alignment of Xs[k][r..r+3] and spreads the transposing scalar stores over
  // the banks (stride = 4 mod 32: conflict-free at BK=8, a warp storing rows k, k+4 of 16
  // consecutive r at banks r + 16 * (k / 4)). A keeps its padding in every layout.
  constexpr int kAStride = kBM + 4;
  constexpr int kBStride = kBN + (kTB ? 4 : 0);

  __shared__ __align__(16) float As[2][BK][kAStride];
  __shared__ __align__(16) float Bs[2][BK][kBStride];

  const int M = args.M, N = args.N, K = args.K;
  const float* __restrict__ A = args.A;
  const float* __restrict__ B = args.B;
  const int tid = static_cast<int>(threadIdx.x);
  const int row0 = static_cast<int>(blockIdx.y) * kBM;
  const int col0 = static_cast<int>(blockIdx.x) * kBN;
  // Plain launches: the whole of K (kept a compile-time fact: one register less, which is
  // the difference between 0 and 16 bytes of spills at 128x128 without kVec).
  const int k_begin = kPartial ? static_cast<int>(blockIdx.z) * args.k_slice : 0;
  const int k_end = kPartial ? min(K, k_begin + args.k_slice) : K;

  // This thread's share of the tile loads (OperandTile): A (BM, BK) of op(A), B (BN, BK) of
  // op(B)^T, both into the k-major shared tiles.
  OperandTile<kBM, BK, kThreads, !kTA, kVec> a_tile;
  OperandTile<kBN, BK, kThreads, kTB, kVec> b_tile;
  constexpr bool kAsync = decltype(a_tile)::kAsync || decltype(b_tile)::kAsync;
  auto load_tiles = [&](int k0, int buf) {
    a_tile.load(A, M, K, k_end, row0, k0, As[buf], tid);
    b_tile.load(B, N, K, k_end, col0, k0, Bs[buf], tid);
    if constexpr (kAsync) arch::cp_async_commit();
  };
  auto store_tiles = [&](int buf) {
    a_tile.store(As[buf], tid);
    b_tile.store(Bs[buf], tid);
    if constexpr (kAsync) arch::cp_async_wait<0>();
  };

  const int warp = tid / 32;
  const int lane = tid % 32;
  const int tm = 32 * (warp / WarpsN) + 4 * (lane / 8);  // rows tm..tm+3, tm+16..tm+19
  const int tn = 64 * (warp % WarpsN) + 4 * (lane % 8);  // cols tn..tn+3, tn+32..tn+35

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  const int k_tiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
  load_tiles(k_begin, 0);
  store_tiles(0);
  __syncthreads();

  for (int t = 0; t < k_tiles; ++t) {
    const int buf = t & 1;
    const bool more = t + 1 < k_tiles;
    if (more) load_tiles(k_begin + (t + 1) * BK, buf ^ 1);  // in flight during the FMAs below

#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[buf][k][tm]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[buf][k][tm + 16]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][k][tn]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][k][tn + 32]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }

    // Buffer buf ^ 1 was last read in iteration t - 1, which every thread finished before
    // the barrier that ended it; the barrier below publishes it for iteration t + 1.
    if (more) store_tiles(buf ^ 1);
    __syncthreads();
  }

  float* out = C_or_panel<kPartial>(args);
  const float alpha = kPartial ? 1.0f : args.alpha;
  const float beta = kPartial ? 0.0f : args.beta;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = row0 + tm + (i < 4 ? i : 12 + i);  // i = 4..7 -> tm + 16..19
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float4 v = make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2],
                                   acc[i][4 * h + 3]);
      store4<kVec>(out, M, N, r, col0 + tn + 32 * h, v, alpha, beta);
    }
  }
}

// Launches one configuration over a grid of (N tiles, M tiles, slices).
template <int WarpsM, int WarpsN, int BK, bool kPartial, bool kTA = false, bool kTB = false>
cudaError_t launch_tile(const Args& args, int slices, bool vec, cudaStream_t stream) {
  using Cfg = Config<WarpsM, WarpsN>;
  const dim3 grid(static_cast<unsigned>((args.N + Cfg::kBN - 1) / Cfg::kBN),
                  static_cast<unsigned>((args.M + Cfg::kBM - 1) / Cfg::kBM), static_cast<unsigned>(slices));
  if (vec) {
    tile_kernel<WarpsM, WarpsN, BK, true, kPartial, kTA, kTB><<<grid, Cfg::kThreads, 0, stream>>>(args);
  } else {
    tile_kernel<WarpsM, WarpsN, BK, false, kPartial, kTA, kTB><<<grid, Cfg::kThreads, 0, stream>>>(args);
  }
  return cudaGetLastError();
}

// The same for a runtime layout (the four instantiations).
template <int WarpsM, int WarpsN, int BK, bool kPartial>
cudaError_t launch_tile(Layout layout, const Args& args, int slices, bool vec, cudaStream_t stream) {
  switch (layout) {
    case Layout::nn: return launch_tile<WarpsM, WarpsN, BK, kPartial, false, false>(args, slices, vec, stream);
    case Layout::nt: return launch_tile<WarpsM, WarpsN, BK, kPartial, false, true>(args, slices, vec, stream);
    case Layout::tn: return launch_tile<WarpsM, WarpsN, BK, kPartial, true, false>(args, slices, vec, stream);
    case Layout::tt: return launch_tile<WarpsM, WarpsN, BK, kPartial, true, true>(args, slices, vec, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace kernels::gemm::tile
