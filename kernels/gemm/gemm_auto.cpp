#include "gemm/gemm_auto.hpp"

#include <algorithm>
#include <array>
#include <mutex>

#include <cuda_runtime.h>

namespace kernels::gemm {

namespace {

// The cost model behind the tile / split choice (gemm_auto.hpp states the rule). A candidate
// (tile T of bm x bn, splits s, slice = splitk_slice(K, s)) launches
//   blocks = tiles(T) * s,   tiles(T) = ceil(M / bm) * ceil(N / bn),
// and the busiest SM runs L = ceil(blocks / SMs) of them (the block scheduler spreads a grid
// round-robin; the GPU finishes when its busiest SM does), each 2 * bm * bn * slice FLOPs:
//   t_tiles  = L * 2 * bm * bn * slice / (rate(T) * occ) + ceil(L / b) * kBlockStartS,
//              b = min(L, resident blocks per SM of T), occ = (b == 1 ? kOneBlockRate : 1) *
//              min(1, b * warps per block / 4): one block alone hides less latency, and
//              fewer warps than the SM's 4 schedulers leave some idle; each round of b
//              resident blocks pays its pipeline fill and epilogue once;
//   t_reduce = s > 1: (s + 1) * M * N * 4 bytes / kPanelBytesPerS (panels written once,
//              read once, C written) + kLaunchS (the second kernel), else 0.
// Padding is priced in: a partial tile costs a whole one. On 132 SMs, 1024^3 in 64x64 (256
// tiles, L = 2, 1024 long) models 87 us (measured 87.5), in 128x128 split 4 (256 blocks, L =
// 2, slices of 256) 63 us with the reduce; 1023 x 1025 x 999 in 128x128: split 1 is 72
// blocks (L = 1, 999 long, 60 SMs idle), split 2 gains nothing (L = 2 of 504), split 5 has
// L = 3 of 200: 600 K steps per SM instead of 999.
//
// Rates: FLOP/s per SM of each tile kernel with >= 2 blocks per SM, from the H200 run of
// 2026-11-23 (reports/baselines/h200/2026-11-23/gemm-fp32-full.json.gz): 128x128 at 2048^3
// and 4096^3 (327 and 320 GFLOP/s per SM), 64x64 at 1024^3 (L = 2: 192) and in the split-K
// shapes (197 at 64 x 4096 x 4096), 32x64 at 32 x 4096 x 4096 (195), 128x64 at 1023 x 1025 x
// 999 (229, scalar loads); one block alone: 128x128 at 1023 x 1025 x 999 (72 tiles, 262 of
// 320). The rates' ratios carry over to other GPUs of this SM design; the overhead terms are
// absolute (an H200's), so on a much slower GPU splits are priced a little too high.
constexpr double kTileRate[] = {320e9, 229e9, 195e9, 195e9};  // in Tile's order
constexpr double kOneBlockRate = 0.82;
constexpr double kPanelBytesPerS = 3e12;  // the reduce's traffic, mostly L2 / HBM
constexpr double kLaunchS = 3e-6;
constexpr double kSchedulers = 4.0;     // warp schedulers per SM (sm_70 .. sm_90)
constexpr double kBlockStartS = 1e-6;   // a block's first K tile load and its epilogue

double rate(Tile t) { return kTileRate[static_cast<int>(t)]; }

// Modelled seconds of `tile` with `slices` K slices of `slice` (slices == 1: the plain tile).
double modelled_seconds(Tile t, int slices, int slice, int M, int N, long long sms) {
  const TileShape sh = tile_shape(t);
  const long long blocks = tile_count(t, M, N) * slices;
  const long long busiest = (blocks + sms - 1) / sms;
  const long long resident = std::min<long long>(busiest, tile_blocks_per_sm(t));
  const double flops = 2.0 * sh.bm * sh.bn * static_cast<double>(slice);
  // Fewer resident warps than the SM's 4 schedulers leave schedulers idle.
  const double warps = static_cast<double>(resident) * sh.threads / 32;
  const double occupancy = (resident == 1 ? kOneBlockRate : 1.0) * std::min(1.0, warps / kSchedulers);
  const long long rounds = (busiest + resident - 1) / resident;  // each fills its pipeline once
  double sec = static_cast<double>(busiest) * flops / (rate(t) * occupancy) + static_cast<double>(rounds) * kBlockStartS;
  if (slices > 1)
    sec += (slices + 1.0) * static_cast<double>(M) * N * sizeof(float) / kPanelBytesPerS + kLaunchS;
  return sec;
}

// The cheapest (tile, splits) under the model among every tile and the split counts
// min_splits .. min(K / kSplitMinSlice, kSplitMaxSplits, workspace cap) that gemm_splitk runs
// as asked (slices rounded to multiples of 8 can merge counts); splits > 1 only for K >=
// min_split_k. A candidate replaces the best only when modelled >= 2% faster, so ties keep
// the larger tile and the fewer splits (tiles in Tile's order, splits ascending). No
// candidate (min_splits 2 and K too short or the panels too big): the cheapest plain tile.
AutoChoice cheapest(Layout layout, int M, int N, int K, long long sms, int min_splits, int min_split_k) {
  AutoChoice best;
  best.layout = layout;
  double best_sec = 0.0;
  bool have = false;
  const long long panel = static_cast<long long>(M) * N * static_cast<long long>(sizeof(float));
  const long long by_workspace = static_cast<long long>(kSplitMaxWorkspaceBytes) / std::max(panel, 1LL);
  // At least 1: the plain tile is always a candidate (with min_splits 1).
  const long long max_splits = std::max<long long>(
      1, K >= min_split_k ? std::min<long long>({K / kSplitMinSlice, kSplitMaxSplits, by_workspace}) : 1);
  for (Tile t : {Tile::t128x128, Tile::t128x64, Tile::t64x64, Tile::t32x64}) {
    for (int s = min_splits; s <= max_splits; ++s) {
      if (s > 1 && splitk_slices(K, s) != s) continue;  // gemm_splitk would run fewer
      const double sec = modelled_seconds(t, s, s > 1 ? splitk_slice(K, s) : K, M, N, sms);
      if (!have || sec < 0.98 * best_sec) {
        have = true;
        best_sec = sec;
        best.tile = t;
        best.splits = s;
      }
    }
  }
  if (!have) return cheapest(layout, M, N, K, sms, 1, min_split_k);
  best.kind = best.splits > 1 ? AutoKind::splitk : AutoKind::tile;
  return best;
}

// The column-block GEMV kernel's K slices (1 for the warp-per-row kernel: no slices).
int gemv_choice_splits(Layout layout, int M, int N, int K, int sm_count) {
  return gemv_uses_cols(layout, M, N) ? gemv_splits(M == 1 ? N : M, K, std::max(sm_count, 1)) : 1;
}

}  // namespace

double auto_modelled_seconds(Tile tile, int splits, int M, int N, int K, int sm_count) {
  const int s = std::max(splits, 1);
  return modelled_seconds(tile, s, s > 1 ? splitk_slice(K, s) : K, M, N, std::max(sm_count, 1));
}

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
  return cheapest(layout, M, N, K, sms, 1, kSplitMinK);
}

AutoChoice choose_splitk(Layout layout, int M, int N, int K, int sm_count) {
  return cheapest(layout, M, N, K, std::max(sm_count, 1), 2, 1);
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

namespace {

// choose_auto searches ~250 (tile, splits) candidates (~2 us); the plain entry points below
// run once per GEMM of a model step, with a handful of shapes: remember the last 16 choices
// of this thread.
AutoChoice remembered_choice(Layout layout, int M, int N, int K, int sms) {
  struct Entry {
    Layout layout;
    int M, N, K, sms;
    AutoChoice choice;
  };
  thread_local std::array<Entry, 16> entries{};
  thread_local std::size_t used = 0, next = 0;
  for (std::size_t i = 0; i < used; ++i) {
    const Entry& e = entries[i];
    if (e.layout == layout && e.M == M && e.N == N && e.K == K && e.sms == sms) return e.choice;
  }
  const AutoChoice c = choose_auto(layout, M, N, K, sms);
  entries[next] = Entry{layout, M, N, K, sms, c};
  next = (next + 1) % entries.size();
  used = std::min(used + 1, entries.size());
  return c;
}

}  // namespace

std::size_t gemm_auto_workspace_bytes(Layout layout, int M, int N, int K) {
  if (M < 1 || N < 1 || K < 1) return 0;
  return auto_workspace_bytes(remembered_choice(layout, M, N, K, current_sm_count()), M, N, K);
}

cudaError_t gemm_auto(Layout layout, int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                      float* C, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  if (M < 1 || N < 1 || K < 1) return cudaErrorInvalidValue;
  const int sms = current_sm_count();
  if (sms < 1) return cudaErrorNoDevice;
  return gemm_auto(remembered_choice(layout, M, N, K, sms), M, N, K, alpha, A, B, beta, C, workspace,
                   workspace_bytes, stream);
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
