#pragma once
// `auto`: one FP32 GEMM entry point that picks a kernel by shape (gemm.hpp's conventions:
// C = alpha * op(A) * op(B) + beta * C, C (M, N) row-major, any M, N, K >= 1, every layout of
// gemm_types.hpp with the operands read in place: gemm_shapes.hpp). The choice is a pure
// function of (layout, M, N, K, SM count), so a report that records describe(choice) (the
// variant's config), the layout and the GPU reproduces the run; the layout changes only
// which GEMV kernel runs (and so its K slices), never the tile or the split:
//
//   M == 1 or N == 1           gemv   (gemm_gemv.cu; M == 1 splits K over grid y)
//   K == 1                     outer  (rank-1 update, gemm_outer)
//   else                       the (tile, splits) of least modelled time (gemm_auto.cpp has
//                              the model and its calibration): tiles 128x128, 128x64, 64x64,
//                              32x64; splits 1 (tile) or 2 .. min(K / 64, 64, 64 MiB of panels)
//                              (splitk, deterministic, K >= 256 only). With T = bm x bn,
//                                tiles = ceil(M / bm) * ceil(N / bn), blocks = tiles * splits,
//                                L = ceil(blocks / SMs)  (blocks on the busiest SM),
//                                t = L * 2 bm bn slice / (rate(T) * occupancy)
//                                    + splits > 1: (splits + 1) M N 4 bytes / 3 TB/s + 3 us,
//                              so the choice weighs the tile's speed (128x128 does the most
//                              FMAs per load: ~1.6x 64x64's FLOP rate per SM) against wave
//                              quantization over the SMs (a partial last round of blocks
//                              costs a whole one) and the split's panel traffic. E.g. on 132
//                              SMs: 1024^3 -> 128x128 split 4 (256 blocks, 2 per SM), not
//                              64x64 (256 tiles but the slow tile); 4096^3 -> 128x128 (1024
//                              tiles, 3.9 waves of 264); 128 x 4096 x 4096 -> 128x128 split 8;
//                              8192 x 64 x 8192 -> 128x64 split 4 (a 128-wide tile would be
//                              half padding). The rates are from one H200 run; the choices
//                              it predicts are stated, not yet all measured (PERFORMANCE.md).
#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

#include "gemm/gemm_shapes.hpp"
#include "gemm/gemm_types.hpp"

namespace kernels::gemm {

enum class AutoKind { gemv, outer, splitk, tile };

struct AutoChoice {
  AutoKind kind = AutoKind::tile;
  Layout layout = Layout::nn;  // how A and B are stored (every kernel reads them in place)
  Tile tile = Tile::t128x128;  // splitk, tile
  int splits = 1;              // splitk: K slices asked for; gemv (M == 1): K slices
};

inline constexpr int kSplitMinK = 256;
inline constexpr int kSplitMinSlice = 64;
inline constexpr int kSplitMaxSplits = 64;
inline constexpr std::size_t kSplitMaxWorkspaceBytes = std::size_t{64} << 20;

AutoChoice choose_auto(Layout layout, int M, int N, int K, int sm_count);
inline AutoChoice choose_auto(int M, int N, int K, int sm_count) { return choose_auto(Layout::nn, M, N, K, sm_count); }
// The kernels of `auto` on their own (the gemm variants `splitk` and `gemv`):
// choose_splitk: auto's model restricted to splits >= 2 (and without its K >= 256
//   condition): the cheapest split at any shape; where no split is possible (K < 128, or
//   two panels above 64 MiB) the cheapest plain tile (kind tile).
// choose_gemv: gemv with auto's K slices (only M == 1 or N == 1 can run it).
AutoChoice choose_splitk(Layout layout, int M, int N, int K, int sm_count);
AutoChoice choose_gemv(Layout layout, int M, int N, int K, int sm_count);
inline AutoChoice choose_splitk(int M, int N, int K, int sm_count) {
  return choose_splitk(Layout::nn, M, N, K, sm_count);
}
inline AutoChoice choose_gemv(int M, int N, int K, int sm_count) { return choose_gemv(Layout::nn, M, N, K, sm_count); }
// The model's seconds for `tile` with `splits` K slices (1: the plain tile) at (M, N, K) on
// sm_count SMs (gemm_auto.cpp): what choose_auto minimises; exposed for tests and reports.
double auto_modelled_seconds(Tile tile, int splits, int M, int N, int K, int sm_count);
// "gemv splits=17", "outer", "splitk tile=64x64 splits=22", "tile 128x128".
std::string describe(const AutoChoice& choice);
// Workspace bytes the choice needs at (M, N, K) (0 for tile, outer, gemv without slices).
std::size_t auto_workspace_bytes(const AutoChoice& choice, int M, int N, int K);

// Runs `choice` (from choose_auto(M, N, K, SMs of the current device)); `workspace` must hold
// auto_workspace_bytes(choice, M, N, K), 16-byte aligned.
cudaError_t gemm_auto(const AutoChoice& choice, int M, int N, int K, float alpha, const float* A,
                      const float* B, float beta, float* C, void* workspace,
                      std::size_t workspace_bytes, cudaStream_t stream);

// The multiprocessor count of the current device (cached per device; 0 on error).
int current_sm_count();

// The plain entry point for callers outside the harness (models/): choose_auto(layout, M, N,
// K, SMs of the current device) and run it. C (M, N) = alpha op(A) op(B) + beta C, FP32,
// row-major storage, A 'n' (M, K) / 't' (K, M), B 'n' (K, N) / 't' (N, K); beta == 0: C is
// not read. `workspace` (16-byte aligned, the caller's: nothing is allocated) must hold
// gemm_auto_workspace_bytes(layout, M, N, K) bytes (0 for most shapes: split-K and sliced
// GEMV need it; at most kSplitMaxWorkspaceBytes for split-K). Asynchronous on `stream`;
// cudaErrorInvalidValue for bad arguments or too little workspace, cudaErrorNoDevice
// without a device.
std::size_t gemm_auto_workspace_bytes(Layout layout, int M, int N, int K);
cudaError_t gemm_auto(Layout layout, int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                      float* C, void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace kernels::gemm
