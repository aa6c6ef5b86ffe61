// Deterministic split-K for few output tiles and long K (127x129x4099, 8192x64x8192,
// M = 16..128 batch-like rows): the (M, N) result has too few tiles to fill the SMs, so K is
// cut into S slices and grid z runs them side by side.
//
//   pass 1: tile_kernel<..., kPartial> (gemm_tile.cuh), grid (N tiles, M tiles, S): block
//           (x, y, z) sums A(tile rows, slice z) * B(slice z, tile cols) into panel z of the
//           workspace, P (S, M, N), raw sums (no alpha, beta);
//   pass 2: reduce_panels: C = alpha * (P[0] + P[1] + ... + P[S-1]) + beta * C, one thread
//           per 4 elements, the panels added in slice order.
// No atomics: the result is the same bits on every run (gemm_atomic's is not). Cost: the
// workspace round trip, S * M * N * 4 bytes written and read once, small next to the A and B
// traffic for the shapes that get here (auto prices it in: gemm_auto.cpp).
//
// Tiles: all four (gemm_shapes.hpp). 128x128 (issue 14: `auto` splits it for the squares of
// under one wave, 1000^3-1024^3 and 128 x 4096 x 4096) keeps the 128-register cap of two
// blocks per SM; ptxas: see gemm_coarsened.cu (its scalar nn partial spills 16 bytes, the
// float4 ones none).
//
// Slices are multiples of 8 (the tile's K depth, hence of 4: a float4 of A never straddles
// two slices).
#include <cstddef>
#include <cstdint>

#include "gemm/common.cuh"
#include "gemm/gemm.hpp"
#include "gemm/gemm_shapes.hpp"
#include "gemm/gemm_tile.cuh"

namespace kernels::gemm {
namespace {

constexpr int kSliceMultiple = 8;

// (count) elements, one thread per 4: float4 when count % 4 == 0 and P, C are 16-byte
// aligned (every panel then starts aligned too), else element by element.
template <bool kVec>
__global__ void reduce_kernel(long long count, int slices, float alpha, const float* __restrict__ P,
                              float beta, float* __restrict__ C) {
  const long long i = 4 * (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x);
  if (i >= count) return;
  if constexpr (kVec) {
    float4 s = *reinterpret_cast<const float4*>(P + i);
    for (int z = 1; z < slices; ++z) {
      const float4 p = *reinterpret_cast<const float4*>(P + static_cast<long long>(z) * count + i);
      s.x += p.x;
      s.y += p.y;
      s.z += p.z;
      s.w += p.w;
    }
    float4 out = make_float4(alpha * s.x, alpha * s.y, alpha * s.z, alpha * s.w);
    if (beta != 0.0f) {
      const float4 old = *reinterpret_cast<const float4*>(C + i);
      out = make_float4(fmaf(beta, old.x, out.x), fmaf(beta, old.y, out.y), fmaf(beta, old.z, out.z),
                        fmaf(beta, old.w, out.w));
    }
    *reinterpret_cast<float4*>(C + i) = out;
  } else {
    for (long long e = i; e < i + 4 && e < count; ++e) {
      float s = P[e];
      for (int z = 1; z < slices; ++z) s += P[static_cast<long long>(z) * count + e];
      C[e] = epilogue(s, alpha, beta, C + e);
    }
  }
}

template <int WarpsM, int WarpsN>
cudaError_t launch_partials(Layout layout, const tile::Args& args, int slices, bool vec, cudaStream_t stream) {
  return tile::launch_tile<WarpsM, WarpsN, 8, true>(layout, args, slices, vec, stream);
}

}  // namespace

cudaError_t reduce_panels(long long count, int slices, float alpha, const float* P, float beta,
                          float* C, cudaStream_t stream) {
  if (count < 1 || slices < 1 || P == nullptr || C == nullptr) return cudaErrorInvalidValue;
  constexpr int kThreads = 256;
  const long long quads = (count + 3) / 4;
  const auto blocks = static_cast<unsigned>((quads + kThreads - 1) / kThreads);
  if (count % 4 == 0 && aligned16(P) && aligned16(C)) {
    reduce_kernel<true><<<blocks, kThreads, 0, stream>>>(count, slices, alpha, P, beta, C);
  } else {
    reduce_kernel<false><<<blocks, kThreads, 0, stream>>>(count, slices, alpha, P, beta, C);
  }
  return cudaGetLastError();
}

int splitk_slice(int K, int splits) {
  if (K < 1 || splits < 1) return K;
  const int even = (K + splits - 1) / splits;
  return (even + kSliceMultiple - 1) / kSliceMultiple * kSliceMultiple;
}

int splitk_slices(int K, int splits) {
  if (K < 1 || splits < 1) return 1;
  const int slice = splitk_slice(K, splits);
  return (K + slice - 1) / slice;
}

std::size_t splitk_workspace_bytes(int M, int N, int K, int splits) {
  const int s = splitk_slices(K, splits);
  if (M < 1 || N < 1 || s <= 1) return 0;
  return static_cast<std::size_t>(s) * static_cast<std::size_t>(M) * static_cast<std::size_t>(N) *
         sizeof(float);
}

cudaError_t gemm_splitk(Layout layout, Tile t, int splits, int M, int N, int K, float alpha, const float* A,
                        const float* B, float beta, float* C, void* workspace, std::size_t workspace_bytes,
                        cudaStream_t stream) {
  if (!valid_args(M, N, K, A, B, C) || splits < 1) return cudaErrorInvalidValue;
  const int slices = splitk_slices(K, splits);
  if (slices <= 1) return gemm_tile(layout, t, M, N, K, alpha, A, B, beta, C, stream);
  if (slices > 65535) return cudaErrorInvalidValue;  // grid z
  auto* P = static_cast<float*>(workspace);
  if (P == nullptr || !aligned16(P) || workspace_bytes < splitk_workspace_bytes(M, N, K, splits))
    return cudaErrorInvalidValue;
  const tile::Args args{M, N, K, 1.0f, 0.0f, A, B, nullptr, P, splitk_slice(K, splits)};
  // The panels P + z * M * N are 16-byte aligned for float4 stores when N % 4 == 0.
  const bool vec = tile_vector_aligned(layout, M, N, K, A, B, C);
  cudaError_t e = cudaErrorInvalidValue;
  switch (t) {
    case Tile::t128x128: e = launch_partials<4, 2>(layout, args, slices, vec, stream); break;
    case Tile::t128x64: e = launch_partials<4, 1>(layout, args, slices, vec, stream); break;
    case Tile::t64x64: e = launch_partials<2, 1>(layout, args, slices, vec, stream); break;
    case Tile::t32x64: e = launch_partials<1, 1>(layout, args, slices, vec, stream); break;
  }
  if (e != cudaSuccess) return e;
  return reduce_panels(static_cast<long long>(M) * N, slices, alpha, P, beta, C, stream);
}

}  // namespace kernels::gemm
