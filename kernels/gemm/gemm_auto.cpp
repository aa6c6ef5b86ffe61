#include "gemm/gemm_auto.hpp"

#include <algorithm>
#include <array>
#include <mutex>

#include <cuda_runtime.h>

namespace kernels::gemm {

namespace {

// The tile class of an (M, N) result: M <= 32: 32x64; else the largest tile whose output
// tiles fill the SMs, 64x64 if none does.
Tile tile_class(int M, int N, long long sms) {
  if (M <= 32) return Tile::t32x64;
  if (tile_count(Tile::t128x128, M, N) >= sms) return Tile::t128x128;
  if (tile_count(Tile::t128x64, M, N) >= sms) return Tile::t128x64;
  return Tile::t64x64;
}

// Slices for one resident wave of (tile, slice) blocks, each slice >= kSplitMinSlice long,
// at most kSplitMaxSplits and kSplitMaxWorkspaceBytes of panels; the count actually used
// after rounding slices to multiples of 8.
int wave_splits(Tile t, int M, int N, int K, long long sms) {
  const long long tiles = tile_count(t, M, N);
  const long long wave = sms * tile_blocks_per_sm(t);
  long long s = (wave + tiles - 1) / tiles;
  const long long panel = static_cast<long long>(M) * N * static_cast<long long>(sizeof(float));
  const long long by_workspace = static_cast<long long>(kSplitMaxWorkspaceBytes) / std::max(panel, 1LL);
  s = std::min<long long>({s, K / kSplitMinSlice, kSplitMaxSplits, by_workspace});
  // Rounding slices up to multiples of 8 may use fewer than asked; iterate to the count
  // that reproduces itself, so that the recorded count is the one gemm_splitk runs.
  int used = static_cast<int>(std::max<long long>(s, 1));
  for (int next = splitk_slices(K, used); next != used; next = splitk_slices(K, used)) used = next;
  return used;
}

// The column-block GEMV kernel's K slices (1 for the warp-per-row kernel: no slices).
int gemv_choice_splits(Layout layout, int M, int N, int K, int sm_count) {
  return gemv_uses_cols(layout, M, N) ? gemv_splits(M == 1 ? N : M, K, std::max(sm_count, 1)) : 1;
}

}  // namespace

AutoChoice choose_auto(Layout layout, int M, int N, int K, int sm_count) {
  const long long sms = std::max(sm_count, 1);
  AutoChoice c;
  c.layout = layout;
  if (M == 1 || N == 1) {
    c.kind = AutoKind::gemv;
    c.splits = gemv_choice_splits(layout, M, N, K, sm_count);
    return c;
  }
  if (K == 1) {
    c.kind = AutoKind::outer;
    return c;
  }
  c.tile = tile_class(M, N, sms);
  if (tile_count(c.tile, M, N) < sms && K >= kSplitMinK) {
    const int used = wave_splits(c.tile, M, N, K, sms);
    if (used >= 2) {
      c.kind = AutoKind::splitk;
      c.splits = used;
      return c;
    }
  }
  c.kind = AutoKind::tile;
  return c;
}

AutoChoice choose_splitk(Layout layout, int M, int N, int K, int sm_count) {
  const long long sms = std::max(sm_count, 1);
  AutoChoice c;
  c.layout = layout;
  c.tile = tile_class(M, N, sms);
  if (c.tile == Tile::t128x128) c.tile = Tile::t128x64;
  c.splits = wave_splits(c.tile, M, N, K, sms);
  c.kind = c.splits >= 2 ? AutoKind::splitk : AutoKind::tile;
  if (c.kind == AutoKind::tile) c.splits = 1;
  return c;
}

AutoChoice choose_gemv(Layout layout, int M, int N, int K, int sm_count) {
  AutoChoice c;
  c.layout = layout;
  c.kind = AutoKind::gemv;
  c.splits = gemv_choice_splits(layout, M, N, K, sm_count);
  return c;
}

std::string describe(const AutoChoice& c) {
  switch (c.kind) {
    case AutoKind::gemv: return c.splits > 1 ? "gemv splits=" + std::to_string(c.splits) : std::string("gemv");
    case AutoKind::outer: return "outer";
    case AutoKind::splitk:
      return std::string("splitk tile=") + tile_name(c.tile) + " splits=" + std::to_string(c.splits);
    case AutoKind::tile: return std::string("tile ") + tile_name(c.tile);
  }
  return "?";
}

std::size_t auto_workspace_bytes(const AutoChoice& c, int M, int N, int K) {
  switch (c.kind) {
    case AutoKind::gemv: return gemv_workspace_bytes(M, N, c.splits);
    case AutoKind::splitk: return splitk_workspace_bytes(M, N, K, c.splits);
    case AutoKind::outer:
    case AutoKind::tile: return 0;
  }
  return 0;
}

cudaError_t gemm_auto(const AutoChoice& c, int M, int N, int K, float alpha, const float* A,
                      const float* B, float beta, float* C, void* workspace,
                      std::size_t workspace_bytes, cudaStream_t stream) {
  switch (c.kind) {
    case AutoKind::gemv:
      return gemm_gemv(c.layout, M, N, K, alpha, A, B, beta, C, c.splits, workspace, workspace_bytes, stream);
    case AutoKind::outer: return gemm_outer(M, N, K, alpha, A, B, beta, C, stream);
    case AutoKind::splitk:
      return gemm_splitk(c.layout, c.tile, c.splits, M, N, K, alpha, A, B, beta, C, workspace, workspace_bytes,
                         stream);
    case AutoKind::tile: return gemm_tile(c.layout, c.tile, M, N, K, alpha, A, B, beta, C, stream);
  }
  return cudaErrorInvalidValue;
}

std::size_t gemm_auto_workspace_bytes(Layout layout, int M, int N, int K) {
  if (M < 1 || N < 1 || K < 1) return 0;
  return auto_workspace_bytes(choose_auto(layout, M, N, K, current_sm_count()), M, N, K);
}

cudaError_t gemm_auto(Layout layout, int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                      float* C, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  if (M < 1 || N < 1 || K < 1) return cudaErrorInvalidValue;
  const int sms = current_sm_count();
  if (sms < 1) return cudaErrorNoDevice;
  return gemm_auto(choose_auto(layout, M, N, K, sms), M, N, K, alpha, A, B, beta, C, workspace, workspace_bytes,
                   stream);
}

int current_sm_count() {
  // Up to 64 devices, each queried once (the attribute is constant for a device).
  static std::array<int, 64> cache{};
  static std::mutex mutex;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0) return 0;
  const std::lock_guard<std::mutex> lock(mutex);
  if (device < static_cast<int>(cache.size()) && cache[static_cast<std::size_t>(device)] > 0)
    return cache[static_cast<std::size_t>(device)];
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 0;
  if (device < static_cast<int>(cache.size())) cache[static_cast<std::size_t>(device)] = sms;
  return sms;
}

}  // namespace kernels::gemm
