// coarsened: 2D register blocking with warp tiling and double-buffered shared memory.
//
// A block of 256 threads computes the (128, 128) tile of C at (blockIdx.y*128, blockIdx.x*128)
// and walks K in tiles of depth BK (8 or 16):
//
//   As[buf][k][m] = A(row0 + m, k0 + k)   (BK, 128) : A stored transposed, so that the
//                                          8 values of A a thread needs at one k are two
//                                          float4 reads along m
//   Bs[buf][k][n] = B(k0 + k, col0 + n)   (BK, 128)
//
// Thread layout (why: every shared-memory read of a warp is a broadcast or one contiguous
// 128-byte row, so each costs a single wavefront):
//   8 warps as 4 (along M) x 2 (along N); warp w owns the (32, 64) sub-tile at
//   (32 * (w / 2), 64 * (w % 2)). Lane l owns the rows  tm + {0..3} and tm + 16 + {0..3},
//   tm = 4 * (l / 8), and the columns tn + {0..3} and tn + 32 + {0..3}, tn = 4 * (l % 8),
//   of its warp's sub-tile: an 8 x 8 block of C in 64 registers, built as 8 x 8 outer
//   products per k from 2 float4 of As (4 distinct float4 per warp: a broadcast) and 2
//   float4 of Bs (8 distinct float4 per warp: one 128-byte row).
//   Per k and thread: 4 LDS.128 for 64 FFMA.
//
// Pipeline: the global loads of K tile t+1 are issued before the FMAs of tile t and land
// in the other shared buffer after them, so their latency hides behind BK x 64 FMAs per
// thread; one __syncthreads per K tile.
//
// Global loads: the A tile (128, BK) is 128*BK/4 float4 (row m, float4 q along k), staged
// through registers because it is transposed on the way into shared memory; the B tile
// (BK, 128) is BK*32 float4, a warp reading one 512-byte row of B. With kVec
// (gemm_vector_aligned) these are 16-byte loads, B going global -> shared by cp.async
// (no registers), and C is written with 16-byte stores; without kVec, the same layout with
// element-wise bounds-checked accesses staged through registers.
//
// Registers: 64 accumulators + 16 fragment values + the staged A (and B) float4s:
// __launch_bounds__(256, 2) caps the kernel at 128 registers so that two blocks (16 warps)
// fit on an SM. ptxas (CUDA 13, sm_90): BK=8 uses 125-127 registers without spills;
// BK=16 spills ~64 bytes in its kVec path, which is why BK=8 is the default.
// Shared memory: 2 * BK * (132 + 128) * 4 bytes = 16.6 KB (BK=8), 33.3 KB (BK=16).
#include <cstddef>

#include "gemm/common.cuh"
#include "gemm/gemm.hpp"

namespace kernels::gemm {
namespace {

constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kThreads = 256;
// As rows padded by 4 floats: keeps 16-byte alignment of As[k][m..m+3] and spreads the
// transposing scalar stores over the banks (conflict-free at BK=8: a warp stores rows
// k, k+4 of 16 consecutive m, at banks m + 16 * (k / 4); 2-way at BK=16).
constexpr int kAStride = kBM + 4;

// 16-byte asynchronous global -> shared copy (sm_80+), bypassing registers and L1. With
// `inside` false it reads nothing and writes 16 zero bytes (src-size 0).
__device__ __forceinline__ void cp_async16(void* smem, const float* gmem, bool inside) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int src_bytes = inside ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

template <int BK, bool kVec>
__global__ void __launch_bounds__(kThreads, 2)
    coarsened_kernel(int M, int N, int K, float alpha, const float* __restrict__ A,
                     const float* __restrict__ B, float beta, float* __restrict__ C) {
  static_assert(BK % 4 == 0 && (kBM * BK / 4) % kThreads == 0 && (kBN * BK / 4) % kThreads == 0);
  constexpr int kALoads = kBM * BK / 4 / kThreads;  // float4 of A per thread per K tile
  constexpr int kBLoads = kBN * BK / 4 / kThreads;  // float4 of B per thread per K tile
  constexpr int kAQuads = BK / 4;                   // float4 per row of the A tile
  constexpr int kBQuads = kBN / 4;                  // float4 per row of the B tile

  __shared__ __align__(16) float As[2][BK][kAStride];
  __shared__ __align__(16) float Bs[2][BK][kBN];

  const int tid = static_cast<int>(threadIdx.x);
  const int row0 = static_cast<int>(blockIdx.y) * kBM;
  const int col0 = static_cast<int>(blockIdx.x) * kBN;

  // This thread's share of the tile loads: float4 number f = tid + i * 256.
  //   A: row f / kAQuads of the tile, columns k0 + 4 * (f % kAQuads) .. +3
  //   B: row k0 + f / kBQuads, columns 4 * (f % kBQuads) .. +3 of the tile
  float4 ra[kALoads];
  float4 rb[kVec ? 1 : kBLoads];  // kVec: B goes global -> shared by cp.async instead
  auto load_tiles = [&](int k0, int buf) {
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      const int f = tid + i * kThreads;
      ra[i] = load4<kVec>(A, M, K, row0 + f / kAQuads, k0 + 4 * (f % kAQuads));
    }
#pragma unroll
    for (int i = 0; i < kBLoads; ++i) {
      const int f = tid + i * kThreads;
      const int k = k0 + f / kBQuads;
      const int n = col0 + 4 * (f % kBQuads);
      if constexpr (kVec) {
        const bool inside = k < K && n < N;
        cp_async16(&Bs[buf][f / kBQuads][4 * (f % kBQuads)],
                   inside ? B + static_cast<std::size_t>(k) * N + n : B, inside);
      } else {
        rb[i] = load4<false>(B, K, N, k, n);
      }
    }
    if constexpr (kVec) cp_async_commit();
  };
  auto store_tiles = [&](int buf) {
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      const int f = tid + i * kThreads;
      const int m = f / kAQuads;
      const int k = 4 * (f % kAQuads);
      As[buf][k + 0][m] = ra[i].x;
      As[buf][k + 1][m] = ra[i].y;
      As[buf][k + 2][m] = ra[i].z;
      As[buf][k + 3][m] = ra[i].w;
    }
    if constexpr (kVec) {
      cp_async_wait_all();
    } else {
#pragma unroll
      for (int i = 0; i < kBLoads; ++i) {
        const int f = tid + i * kThreads;
        *reinterpret_cast<float4*>(&Bs[buf][f / kBQuads][4 * (f % kBQuads)]) = rb[i];
      }
    }
  };

  const int warp = tid / 32;
  const int lane = tid % 32;
  const int tm = 32 * (warp / 2) + 4 * (lane / 8);  // rows tm..tm+3, tm+16..tm+19
  const int tn = 64 * (warp % 2) + 4 * (lane % 8);  // cols tn..tn+3, tn+32..tn+35

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  const int k_tiles = (K + BK - 1) / BK;
  load_tiles(0, 0);
  store_tiles(0);
  __syncthreads();

  for (int t = 0; t < k_tiles; ++t) {
    const int buf = t & 1;
    const bool more = t + 1 < k_tiles;
    if (more) load_tiles((t + 1) * BK, buf ^ 1);  // in flight during the FMAs below

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

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = row0 + tm + (i < 4 ? i : 12 + i);  // i = 4..7 -> tm + 16..19
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float4 v = make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2],
                                   acc[i][4 * h + 3]);
      store4<kVec>(C, M, N, r, col0 + tn + 32 * h, v, alpha, beta);
    }
  }
}

template <int BK>
cudaError_t launch(int M, int N, int K, float alpha, const float* A, const float* B,
                   float beta, float* C, cudaStream_t stream) {
  if (!valid_args(M, N, K, A, B, C)) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>((N + kBN - 1) / kBN),
                  static_cast<unsigned>((M + kBM - 1) / kBM));
  if (gemm_vector_aligned(N, K, A, B, C)) {
    coarsened_kernel<BK, true><<<grid, kThreads, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
  } else {
    coarsened_kernel<BK, false><<<grid, kThreads, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
  }
  return cudaGetLastError();
}

}  // namespace

template <int KTile>
cudaError_t gemm_coarsened(int M, int N, int K, float alpha, const float* A, const float* B,
                           float beta, float* C, cudaStream_t stream) {
  return launch<KTile>(M, N, K, alpha, A, B, beta, C, stream);
}

template cudaError_t gemm_coarsened<8>(int, int, int, float, const float*, const float*, float,
                                       float*, cudaStream_t);
template cudaError_t gemm_coarsened<16>(int, int, int, float, const float*, const float*,
                                        float, float*, cudaStream_t);

cudaError_t gemm_coarsened(int M, int N, int K, float alpha, const float* A, const float* B,
                           float beta, float* C, cudaStream_t stream) {
  return launch<8>(M, N, K, alpha, A, B, beta, C, stream);
}

}  // namespace kernels::gemm
