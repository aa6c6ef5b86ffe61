#pragma once
// Hopper (sm_90a) tensor-core GEMM: TMA loads, wgmma.mma_async, warp specialization and a
// persistent tile scheduler. 16-bit inputs and output, f32 storage with tf32 math
// (gemm_wgmma_tf32), or fp8 e4m3 inputs with bf16 output (gemm_wgmma_fp8_e4m3); f32
// accumulation:
//
//   C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C, C row-major (leading dim N)
//
// Layout letters as cuBLAS's op(A), op(B), for row-major storage:
//   a_trans = false ('n'): A stored (M, K) row-major        a_trans = true ('t'): A stored (K, M)
//   b_trans = false ('n'): B stored (K, N) row-major        b_trans = true ('t'): B stored (N, K)
// All four layouts run: K-major operands (A 'n', B 't') natively, M/N-major ones (A 't',
// B 'n') through wgmma's transpose bits, which exist for 16-bit types.
//
// tf32 (gemm_wgmma_tf32): A, B, C float; wgmma m64n256k8.f32.tf32.tf32, the tensor core
// using the upper 19 bits of each float (TF32's 10 mantissa bits: truncation, where the mma
// kernel and the cpu reference round to nearest -- the gemm problem's tf32 tolerance covers
// the difference). PTX allows the transpose bits only for 16-bit types, so both tf32
// operands must be K-major in shared memory. Per layout:
//   nt  A (M, K), B (N, K): both K-major, read in place by TMA (K % 4 == 0);
//   nn  B (K, N) is transposed into the workspace as (N, K) first;
//   tn  A (K, M) is transposed into the workspace as (M, K) first;
//   tt  both.
// The transposes (gemm_transpose_f32, 8 bytes of traffic per element) run on the same
// stream inside the call, so a timing of the call includes them: at 8192^3 one 8192^2
// operand is 512 MB of traffic, ~0.15 ms at ~3.5 TB/s, against ~3 ms of GEMM. A K-major
// operand whose rows are not 16-byte aligned (K % 4 != 0) or whose base is not is copied
// row by row to a padded leading dimension (cudaMemcpy2DAsync) instead, so every shape
// runs. The rewritten operands have leading dimension kpad = round_up(K, 4).
//
// fp8 e4m3 (gemm_wgmma_fp8_e4m3): A (M, K) and B (N, K) in e4m3 (layout nt only: wgmma reads
// fp8 operands K-major only and has no transpose bits for them), per-tensor f32 scales,
//   C (M, N) bf16 = scale_a * scale_b * sum_k A[m, k] B[n, k],
// every product of a K step of 128 accumulated by the tensor cores (~14 significant bits),
// then added to an f32 accumulator on the CUDA cores (see gemm_wgmma.cu, "promotion").
// K % 16 == 0 (TMA: 16-byte row strides of 1-byte elements); M, N any (masked epilogue).
//
// beta == 0: C is written only, never read (BLAS semantics).
//
// Constraints (gemm_wgmma_unsupported says which one fails): a device of compute capability
// 9.0 (the kernel is built for sm_90a only); 2-byte elements (or 4: tf32, no alignment
// constraint; or 1: fp8 e4m3, layout nt and K % 16 == 0 only); M, N, K >= 1; the tensor
// memory accelerator (TMA) needs 16-byte aligned row strides, so the stored leading
// dimension of A and of B (K for A 'n' and B 't', M for A 't', N for B 'n') must be a
// multiple of 8 elements. C has no alignment constraint (the epilogue stores are
// predicated per element). Pointers A and B must be 16-byte aligned (cudaMalloc's are);
// the launch functions return cudaErrorInvalidValue otherwise.
//
// The launch functions are asynchronous on `stream`, allocate nothing, and return
// cudaErrorInvalidValue for bad arguments, cudaErrorNotSupported for a case
// gemm_wgmma_unsupported rejects, else the launch status.
#include <cstddef>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

namespace kernels::gemm {

// Kernel options (the defaults are the measured best on an H200; the others stay for A/B
// timing and for the tests that check every path):
//   cluster_m 0 (default): by shape, gemm_wgmma_cluster. 1: no clusters. 2: CTAs run in
//     clusters of 2 along M; each loads half of the shared B tile and multicasts it to both
//     (TMA .multicast::cluster), halving B's L2 -> SM traffic. It measured 1.7x slower on an
//     H200 (2026-11-23) while the consumers released a stage with a cluster-scope release
//     (mbarrier.arrive.release.cluster); with CTA-scope arrives (CUTLASS's consumer release),
//     bf16 nt on an H100 (2026-11-27, one test, back to back): 4096^3 746.3 against 739.6
//     TFLOP/s without clusters, 8192^3 776.6 against 731.4; but over the shape zoo's bf16
//     layer shapes at the sustained clock no gain (cuBLAS / wgmma geometric mean 0.898 with
//     clusters, 0.906 without), so the by-shape rule takes none (docs/PERFORMANCE.md, "GEMM
//     clusters with CTA-scope arrives").
//   tma_store: beta == 0 epilogue through shared memory and a TMA store (async: the next
//     tile's mainloop starts while the copy engine writes C); needs N % 8 == 0 and C 16-byte
//     aligned, else (and for beta != 0) the direct predicated register stores run.
//     Measured on an H200, bf16 nt: 4096^3 685 -> 754 TFLOP/s, 8192^3 731 -> 766.
//   cache_maps: keep encoded tensor maps in a small host cache keyed by (pointer, shape,
//     box, type) instead of encoding three per call. Off by default: on an H200 host a
//     launch call measured 4.0 us encoding and 4.2 us with the cache (200 calls each), so
//     encoding is not on the critical path (the kernel runs 180 us at 4096^3).
//   group_m: tile order: units of tiles are numbered in groups of group_m unit-rows
//     (column-major inside a group), so CTAs running at the same time share rows of A and
//     columns of B in L2. 132 concurrent 128 x 256 tiles at K = 4096 touch 16 MB of A and
//     16.5 MB of B with group_m 16, against 8 + 33 MB with 8. Measured on an H200, bf16 nt
//     (one run, median of 20): 4096^3 754 (8) -> 767 (16) TFLOP/s, 8192^3 766 -> 777;
//     group_m 4: 757 and 731.
//   max_ctas: > 0 caps the persistent grid at that many CTAs (diagnosis: does a smaller
//     grid change the speed?); 0: one CTA per SM (or as many clusters as fit).
//   splits: split-K. 0 (default): by shape, gemm_wgmma_splits, when the call's workspace
//     holds the split sums (else unsplit); 1: never; n > 1: n splits (at most one per K
//     step of 64 16-bit / 32 f32 / 128 fp8 elements, and at most SMs / output tiles: every
//     split of a tile runs at once), cudaErrorInvalidValue without the workspace.
//     HARNESS_WGMMA_SPLITS=n (n >= 1, read once per process) stands in for a tuning.splits of 0,
//     for A/B runs of whole suites (without the workspace: unsplit).
//   tile_n: the block tile's N. 0 (default): by shape, gemm_wgmma_tile_n; 256; 128 (16-bit
//     inputs only: cudaErrorInvalidValue for tf32 and fp8).
struct GemmWgmmaTuning {
  int cluster_m = 0;
  bool tma_store = true;
  bool cache_maps = false;
  int max_ctas = 0;
  int group_m = 16;
  int splits = 0;
  int tile_n = 0;
};

// The block tile's N of a call on `sms` SMs: 128 x 256 tiles, or 128 x 128 for 16-bit inputs
// (elem_bytes 2) when at most sms / 8 tiles of 128 x 256 exist, or when fewer than half the SMs
// would get a 128 x 256 tile but more than half get a 128 x 128 one (twice the tiles, each half
// the work; split-K slices half the size). tuning.tile_n decides when set; else
// HARNESS_WGMMA_TILE_N=128 or 256 (read once per process, 16-bit inputs only) for A/B runs of
// whole suites; else the shape. Host arithmetic only.
int gemm_wgmma_tile_n(int M, int N, int elem_bytes, int sms, const GemmWgmmaTuning& tuning = GemmWgmmaTuning{});

// The by-shape cluster size (cluster_m 0) of a call with `splits` split-K ranges on `sms` SMs:
// 1 or 2. HARNESS_WGMMA_CLUSTER=1 or 2 forces it (read once per process), for A/B runs.
int gemm_wgmma_cluster(int M, int N, int splits, int sms);

// Split-K, for shapes with few output tiles and a long K (a Linear layer's weight gradient
// X^T dY: M, N = 512..2048 and K = 8192 tokens give 8-32 tiles of 128 x 256 for 132 SMs; the
// fewest, 512 x 512, run as 16 tiles of 128 x 128: gemm_wgmma_tile_n).
// The K steps of each tile are cut into `splits` ranges, each a work unit of the persistent
// grid, summed inside the kernel: each split stores its f32 products to its own slice of the
// workspace, and once every split of the tile has (flags tagged per call: nothing to zero),
// each writes its share of C = alpha * sum + beta * C in the output type, summed in split
// order (the same bits on every call). No memset, no second launch (under CUDA graph capture a
// memset of the flags is captured before the kernel: replays repeat a launch's flag tag). Every split of a tile
// runs at once: the call keeps tiles x splits within the grid (fewer splits where a forced
// count asks for more).
// gemm_wgmma_splits: the by-shape count over the by-shape tiles (gemm_wgmma_tile_n), 1 (no
// split) unless fewer than half of the `sms` SMs would have a tile: then min(sms / tiles, K steps / 16, 16), or 1 if that is below 2.
// sums_into_c: the split sums go straight into an f32 C (gemm_wgmma_bf16_f32 with alpha 1,
// beta 0: no workspace), so K steps / 2 replaces
// K steps / 16 (measured: docs/PERFORMANCE.md, "GEMM at the training's shapes").
int gemm_wgmma_splits(int M, int N, int K, int elem_bytes, int sms, bool sums_into_c = false);

// How a call with a workspace (the harness's `wgmma` variant: a 16-bit, tf32 or fp8 C) runs on
// `sms` SMs, as the result's config: the tile count, clusters (cluster_m 2), and the split-K
// count it takes (gemm_wgmma_splits or HARNESS_WGMMA_SPLITS, lowered to what the grid holds,
// at most sms / cluster_m units) with the K steps each split gets, e.g. "128x256 tiles: 32 for
// 132 SMs; split-K 4 (128 K steps, 32 a split; summed in the kernel)". Empty for a degenerate
// shape or sms < 1. Host arithmetic only.
std::string gemm_wgmma_plan(int M, int N, int K, int elem_bytes, int sms, int cluster_m = 1);

// Workspace bytes of the split-K sums on the current device when the call splits (tuning.splits,
// at most one per K step, else gemm_wgmma_splits): one (128, tile N) f32 slice and an 8-byte flag
// per split and output tile (M tiles rounded up to even, for clusters); else 0.
std::size_t gemm_wgmma_splitk_workspace_bytes(int M, int N, int K, int elem_bytes,
                                              const GemmWgmmaTuning& tuning = GemmWgmmaTuning{});

// nullptr when gemm_wgmma_* can run this case on `device`, else the reason (a static
// string). elem_bytes: size of one input element (1 for fp8 e4m3, 2 for bf16 and f16, 4 for
// tf32).
const char* gemm_wgmma_unsupported(int device, bool a_trans, bool b_trans, int M, int N, int K,
                                   int elem_bytes);

// fp8's own rule, host arithmetic only (no device query, so it answers on any machine):
// nullptr for layout nt with K % 16 == 0, else the reason ("layout: ..." or "alignment: ...").
const char* gemm_wgmma_fp8_unsupported(bool a_trans, bool b_trans, int K);

// workspace (16-byte aligned, optional): gemm_wgmma_splitk_workspace_bytes(...) bytes for
// split-K; without it the GEMM runs unsplit (unless tuning.splits > 1 forces a split).
cudaError_t gemm_wgmma_bf16(bool a_trans, bool b_trans, int M, int N, int K, float alpha,
                            const __nv_bfloat16* A, const __nv_bfloat16* B, float beta,
                            __nv_bfloat16* C, cudaStream_t stream,
                            const GemmWgmmaTuning& tuning = GemmWgmmaTuning{}, void* workspace = nullptr,
                            std::size_t workspace_bytes = 0);

// bf16 with a bias added in the epilogue (a Linear layer's forward without a separate
// pass over C): C = alpha op(A) op(B) + bias[col] (+ beta C), bias (N) f32 added in f32
// before the rounding to bf16 (split-K: by the in-kernel sums). Same constraints, workspace
// and errors as gemm_wgmma_bf16; bias null: cudaErrorInvalidValue. An 8-byte aligned bias
// keeps the TMA-store epilogue (else the predicated stores run).
cudaError_t gemm_wgmma_bf16_bias(bool a_trans, bool b_trans, int M, int N, int K, float alpha,
                                 const __nv_bfloat16* A, const __nv_bfloat16* B, const float* bias, float beta,
                                 __nv_bfloat16* C, cudaStream_t stream,
                                 const GemmWgmmaTuning& tuning = GemmWgmmaTuning{}, void* workspace = nullptr,
                                 std::size_t workspace_bytes = 0);

// bf16 inputs, f32 C: C = alpha op(A) op(B) + beta C kept in f32 (never rounded to bf16):
// a weight gradient for an f32 master weight without the bf16 round trip and the cast after
// it. Same constraints, workspace and errors as gemm_wgmma_bf16 (the f32 epilogue of the tf32
// path: TMA store of 32-column boxes when N % 4 == 0). With alpha 1 and beta 0 (C 8-byte
// aligned) a split-K call adds its sums straight into C (zeroed first, f32 atomics) instead
// of through the workspace's slices; it needs no workspace then, and with tuning.splits 0 it splits by
// gemm_wgmma_splits(..., sums_into_c = true) whether or not a workspace is given.
cudaError_t gemm_wgmma_bf16_f32(bool a_trans, bool b_trans, int M, int N, int K, float alpha,
                                const __nv_bfloat16* A, const __nv_bfloat16* B, float beta, float* C,
                                cudaStream_t stream, const GemmWgmmaTuning& tuning = GemmWgmmaTuning{},
                                void* workspace = nullptr, std::size_t workspace_bytes = 0);

cudaError_t gemm_wgmma_f16(bool a_trans, bool b_trans, int M, int N, int K, float alpha,
                           const __half* A, const __half* B, float beta, __half* C,
                           cudaStream_t stream,
                           const GemmWgmmaTuning& tuning = GemmWgmmaTuning{}, void* workspace = nullptr,
                           std::size_t workspace_bytes = 0);

// fp8 e4m3, layout nt: A (M, K), B (N, K) row-major, C (M, N) bf16 = scale_a scale_b A B^T
// (beta 0: C written only). Workspace as for bf16 (split-K sums, elem_bytes 1).
cudaError_t gemm_wgmma_fp8_e4m3(int M, int N, int K, float scale_a, float scale_b, const __nv_fp8_e4m3* A,
                                const __nv_fp8_e4m3* B, __nv_bfloat16* C, cudaStream_t stream,
                                const GemmWgmmaTuning& tuning = GemmWgmmaTuning{}, void* workspace = nullptr,
                                std::size_t workspace_bytes = 0);

// Workspace bytes gemm_wgmma_tf32 uses: the rewritten operands (see the top: rows * kpad
// floats for each operand that is not read in place; 0 for layout nt with K % 4 == 0), then
// the split-K sums (gemm_wgmma_splitk_workspace_bytes). A, B: the operands (only their
// alignment is read); nullptr assumes 16-byte aligned.
std::size_t gemm_wgmma_tf32_workspace_bytes(bool a_trans, bool b_trans, int M, int N, int K,
                                            const float* A = nullptr, const float* B = nullptr,
                                            const GemmWgmmaTuning& tuning = GemmWgmmaTuning{});

// tf32 math on float storage. `workspace` (16-byte aligned) must hold the rewritten operands'
// part of gemm_wgmma_tf32_workspace_bytes(...) (cudaErrorInvalidValue if it is needed and
// missing or too small); the split-K part is optional, as for bf16.
cudaError_t gemm_wgmma_tf32(bool a_trans, bool b_trans, int M, int N, int K, float alpha, const float* A,
                            const float* B, float beta, float* C, void* workspace, std::size_t workspace_bytes,
                            cudaStream_t stream, const GemmWgmmaTuning& tuning = GemmWgmmaTuning{});

}  // namespace kernels::gemm
