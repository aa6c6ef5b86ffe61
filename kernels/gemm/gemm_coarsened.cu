// coarsened: 2D register blocking with warp tiling and double-buffered shared memory. The
// kernel is the tile of gemm_tile.cuh (its comment gives the tile shapes and the data path);
// this file instantiates it:
//
//   gemm_coarsened<BK>:  128x128 tiles, 256 threads (4 x 2 warps), K tiles of depth BK = 8
//                        (the default) or 16
//   gemm_tile(Tile, ..): the same kernel in 128x128, 128x64, 64x64 and 32x64 (BK = 8), the
//                        per-shape-class tiles of `auto` (gemm_auto.cpp): fewer, smaller
//                        blocks fill the GPU where a 128x128 grid would leave SMs idle.
//
// Registers: ptxas (CUDA 13, sm_90, -Xptxas -v), kVec / scalar paths, BK = 8 unless noted:
//   128x128 (cap 128):        125 / 127, no spills; BK=16: 128 / 128, the kVec path spills
//                             60 bytes (its staged A float4s): why BK = 8 is the default
//   128x64  (cap 168):        130 / 141, no spills
//   64x64   (cap 168):        141 / 157, no spills
//   32x64   (cap 168):        150 / 167, no spills
//   split-K partials (gemm_splitk.cu): 128x64 145 / 147, 64x64 149 / 151, 32x64 163 / 167,
//   no spills; 128x128 (cap 128, issue 14) 123-128 in every layout, no spills except the
//   scalar nn partial: 16 bytes (one float4 of the staged A). (At a 128 cap the smaller tiles spilled 28-160 bytes: more staged float4s
//   per thread.)
// Shared memory: 2 * BK * (BM + 4 + BN) * 4 bytes (16.6 KB for 128x128x8).
#include <cstdint>

#include "gemm/gemm.hpp"
#include "gemm/gemm_shapes.hpp"
#include "gemm/gemm_tile.cuh"

namespace kernels::gemm {
namespace {

template <int WarpsM, int WarpsN, int BK>
cudaError_t launch_full_k(int M, int N, int K, float alpha, const float* A, const float* B,
                          float beta, float* C, cudaStream_t stream) {
  if (!valid_args(M, N, K, A, B, C)) return cudaErrorInvalidValue;
  const tile::Args args{M, N, K, alpha, beta, A, B, C, nullptr, K};
  return tile::launch_tile<WarpsM, WarpsN, BK, false>(args, 1, gemm_vector_aligned(N, K, A, B, C),
                                                      stream);
}

// Any layout (the 8-deep tiles of `auto`).
template <int WarpsM, int WarpsN>
cudaError_t launch_full_k(Layout layout, int M, int N, int K, float alpha, const float* A, const float* B,
                          float beta, float* C, cudaStream_t stream) {
  if (!valid_args(M, N, K, A, B, C)) return cudaErrorInvalidValue;
  const tile::Args args{M, N, K, alpha, beta, A, B, C, nullptr, K};
  return tile::launch_tile<WarpsM, WarpsN, 8, false>(layout, args, 1,
                                                     tile_vector_aligned(layout, M, N, K, A, B, C), stream);
}

}  // namespace

template <int KTile>
cudaError_t gemm_coarsened(int M, int N, int K, float alpha, const float* A, const float* B,
                           float beta, float* C, cudaStream_t stream) {
  return launch_full_k<4, 2, KTile>(M, N, K, alpha, A, B, beta, C, stream);
}

template cudaError_t gemm_coarsened<8>(int, int, int, float, const float*, const float*, float,
                                       float*, cudaStream_t);
template cudaError_t gemm_coarsened<16>(int, int, int, float, const float*, const float*,
                                        float, float*, cudaStream_t);

cudaError_t gemm_coarsened(int M, int N, int K, float alpha, const float* A, const float* B,
                           float beta, float* C, cudaStream_t stream) {
  return launch_full_k<4, 2, 8>(M, N, K, alpha, A, B, beta, C, stream);
}

const char* tile_name(Tile t) {
  switch (t) {
    case Tile::t128x128: return "128x128";
    case Tile::t128x64: return "128x64";
    case Tile::t64x64: return "64x64";
    case Tile::t32x64: return "32x64";
  }
  return "?";
}

cudaError_t gemm_tile(Layout layout, Tile t, int M, int N, int K, float alpha, const float* A, const float* B,
                      float beta, float* C, cudaStream_t stream) {
  switch (t) {
    case Tile::t128x128: return launch_full_k<4, 2>(layout, M, N, K, alpha, A, B, beta, C, stream);
    case Tile::t128x64: return launch_full_k<4, 1>(layout, M, N, K, alpha, A, B, beta, C, stream);
    case Tile::t64x64: return launch_full_k<2, 1>(layout, M, N, K, alpha, A, B, beta, C, stream);
    case Tile::t32x64: return launch_full_k<1, 1>(layout, M, N, K, alpha, A, B, beta, C, stream);
  }
  return cudaErrorInvalidValue;
}

bool tile_vector_aligned(Layout layout, int M, int N, int K, const float* A, const float* B, const float* C) {
  const auto aligned = [](const float* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const int lda = a_transposed(layout) ? M : K;
  const int ldb = b_transposed(layout) ? K : N;
  return lda % 4 == 0 && ldb % 4 == 0 && N % 4 == 0 && aligned(A) && aligned(B) && aligned(C);
}

}  // namespace kernels::gemm
