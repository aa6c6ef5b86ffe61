// Merge-path CSR SpMV (Merrill & Garland, "Merge-based parallel sparse matrix-vector
// multiplication", SC'16), the balanced CSR variant (see spmv.hpp).
//
// The work is the merge of two sorted lists: A = the row ends (row_ptr[1..rows]) and B =
// the non-zero indices 0..nnz-1; a merge step either consumes a non-zero (adds val * x)
// or a row end (the row is finished). The rows + nnz steps are cut into tiles of kTile
// steps, one block each, and a tile into kItems steps per thread, so a row of 10^5
// elements is spread over ~10^5 / kItems threads while each short row costs one step.
// Merge-path coordinate (r, k) at diagonal d: r rows finished, k = d - r non-zeros
// consumed; the smallest r with row_ptr[r + 1] > d - r - 1.
//
// Data path of a block (kThreads = 128 threads, kItems = 7 steps each, kTile = 896):
//   1. warp 0 / warp 1 find the tile's start / end coordinate (r0, k0) / (r1, k1) by a
//      32-ary search of row_ptr (a ballot of 32 probes per step: ~log32(rows) dependent
//      loads instead of log2(rows));
//   2. stage through shared memory, coalesced: s_prod[i] = val[k0 + i] * x[col[k0 + i]]
//      for the tile's k1 - k0 non-zeros (x gathered through the read-only path; val, col
//      and row_ptr read once, streaming, so that x keeps the L2), and s_row_end[i] =
//      row_ptr[r0 + i + 1] for its r1 - r0 + 1 rows;
//   3. every thread searches its own diagonal in shared memory (binary, ~10 steps) and
//      walks kItems steps: a row end stores the running sum into s_y and restarts it;
//   4. a segmented scan of the threads' carries (the partial sum of the row in progress
//      at a thread's end; a thread that ended a row starts a new segment) gives every
//      thread what earlier threads of the block added to its first finished row;
//   5. s_y (the tile's finished rows r0 .. r1-1) is written to y coalesced; the last
//      thread's carry (row r1, partial) goes to the workspace.
// Fix-up (second kernel): for each run of tiles carrying the same row, the first tile of
// the run sums the run's carries in order and adds them to that row, which the tile that
// finished it has written. Deterministic: no atomics, fixed summation order.
#include <climits>

#include "spmv/spmv.hpp"

namespace kernels::spmv {
namespace {

constexpr int kThreads = 128;
constexpr int kItems = 7;
constexpr int kTile = kThreads * kItems;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFull = 0xffffffffu;

// The merge-path row of diagonal d (see above), a whole warp searching 32-ary: each step
// probes 32 evenly spaced rows of [lo, hi); the predicate "row p finished before the
// diagonal's non-zero" is true on a prefix, so its count narrows the range 32-fold.
__device__ std::int32_t warp_merge_search(std::int64_t d, std::int32_t rows, std::int32_t nnz,
                                          const std::int32_t* __restrict__ row_ptr) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  std::int64_t lo = max(std::int64_t{0}, d - nnz), hi = min(d, static_cast<std::int64_t>(rows));
  while (lo < hi) {  // the answer lies in [lo, hi]
    const std::int64_t chunk = (hi - lo + 31) / 32;
    const std::int64_t p = lo + (lane + 1) * chunk - 1;
    const bool done = p < hi && __ldg(&row_ptr[p + 1]) <= d - p - 1;
    const int c = __popc(__ballot_sync(kFull, done));
    const std::int64_t next_lo = lo + c * chunk;
    hi = min(lo + (c + 1) * chunk - 1, hi);
    lo = next_lo;
  }
  return static_cast<std::int32_t>(lo);
}

__global__ void __launch_bounds__(kThreads)
    merge_kernel(std::int32_t rows, std::int32_t nnz, const std::int32_t* __restrict__ row_ptr,
                 const std::int32_t* __restrict__ col, const float* __restrict__ val, const float* __restrict__ x,
                 float* __restrict__ y, std::int32_t* __restrict__ carry_row, float* __restrict__ carry_val) {
  __shared__ std::int32_t s_row_end[kTile + 1];  // row ends of the tile's rows r0 .. r1 (global k)
  __shared__ float s_prod[kTile];                // val * x of the tile's non-zeros k0 .. k1-1
  __shared__ float s_y[kTile];                   // sums of the rows finished in the tile
  __shared__ std::int32_t s_coord[2];
  __shared__ int s_warp_flag[kWarps];
  __shared__ float s_warp_val[kWarps];

  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const std::int64_t total = static_cast<std::int64_t>(rows) + nnz;
  const std::int64_t d0 = min(static_cast<std::int64_t>(blockIdx.x) * kTile, total);
  const std::int64_t d1 = min(d0 + kTile, total);
  if (warp < 2) {
    const std::int32_t r = warp_merge_search(warp == 0 ? d0 : d1, rows, nnz, row_ptr);
    if (lane == 0) s_coord[warp] = r;
  }
  __syncthreads();
  const std::int32_t r0 = s_coord[0], r1 = s_coord[1];
  const std::int32_t k0 = static_cast<std::int32_t>(d0 - r0), k1 = static_cast<std::int32_t>(d1 - r1);
  const int tile_rows = r1 - r0, tile_nnz = k1 - k0;  // tile_rows + tile_nnz = d1 - d0 <= kTile

#pragma unroll
  for (int j = 0; j < kItems; ++j) {  // independent loads in flight: kItems per thread
    const int i = tid + j * kThreads;
    if (i < tile_nnz) s_prod[i] = __ldcs(&val[k0 + i]) * __ldg(&x[__ldcs(&col[k0 + i])]);
  }
#pragma unroll
  for (int j = 0; j <= kItems; ++j) {  // tile_rows + 1 <= kTile + 1 entries
    const int i = tid + j * kThreads;
    // Row r1 == rows (the last tile) has no end: a sentinel no non-zero index reaches.
    if (i <= tile_rows) s_row_end[i] = r0 + i < rows ? __ldcs(&row_ptr[r0 + i + 1]) : INT_MAX;
  }
  __syncthreads();

  // This thread's steps: [td, td + steps) of the tile; its start by binary search.
  const int tile_items = tile_rows + tile_nnz;
  const int td = min(tid * kItems, tile_items);
  int lo = max(0, td - tile_nnz), hi = min(td, tile_rows);
  while (lo < hi) {
    const int p = (lo + hi) >> 1;
    if (s_row_end[p] <= k0 + (td - p - 1)) lo = p + 1;
    else hi = p;
  }
  int xr = lo;                 // local row (r0 + xr)
  int k = k0 + (td - lo);      // global non-zero index
  const int steps = min(kItems, tile_items - td);
  float sum = 0;
  int first = -1;              // the first row this thread finished (local), -1: none
#pragma unroll
  for (int s = 0; s < kItems; ++s) {
    if (s < steps) {
      if (k < s_row_end[xr]) {  // xr <= tile_rows: the entry exists
        sum += s_prod[k - k0];
        ++k;
      } else {
        s_y[xr] = sum;
        if (first < 0) first = xr;
        sum = 0;
        ++xr;
      }
    }
  }

  // Segmented inclusive scan of (f, v) over the block: v = partial of the row in progress
  // at a thread's end, f = the thread finished a row (what came before does not reach
  // past it). Combining earlier (f1, v1) with later (f2, v2): (f1 | f2, f2 ? v2 : v1 + v2).
  int f = first >= 0;
  float v = sum;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const float vu = __shfl_up_sync(kFull, v, off);
    const int fu = __shfl_up_sync(kFull, f, off);
    if (lane >= off) {
      if (!f) v = vu + v;
      f |= fu;
    }
  }
  if (lane == 31) {
    s_warp_flag[warp] = f;
    s_warp_val[warp] = v;
  }
  // Exclusive within the warp: lane - 1's inclusive.
  float ev = __shfl_up_sync(kFull, v, 1);
  int ef = __shfl_up_sync(kFull, f, 1);
  if (lane == 0) ev = 0, ef = 0;
  __syncthreads();
  float wv = 0;  // what the earlier warps carry into this one
  for (int w = 0; w < warp; ++w) wv = s_warp_flag[w] ? s_warp_val[w] : wv + s_warp_val[w];
  if (first >= 0) s_y[first] = (ef ? ev : wv + ev) + s_y[first];
  if (tid == kThreads - 1) {  // its end is the tile's end (r1, k1)
    carry_row[blockIdx.x] = r1;
    carry_val[blockIdx.x] = f ? v : wv + v;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int i = tid + j * kThreads;
    if (i < tile_rows) y[r0 + i] = s_y[i];
  }
}

// A thread per tile: the first tile of a run carrying row r (its predecessor carries
// another row) adds the run's carries, in tile order, to y[r].
__global__ void merge_fixup_kernel(std::int32_t tiles, std::int32_t rows, const std::int32_t* __restrict__ carry_row,
                                   const float* __restrict__ carry_val, float* __restrict__ y) {
  const std::int32_t b = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (b >= tiles) return;
  const std::int32_t r = carry_row[b];
  if (r >= rows || (b > 0 && carry_row[b - 1] == r)) return;
  float s = 0;
  for (std::int32_t t = b; t < tiles && carry_row[t] == r; ++t) s += carry_val[t];
  y[r] += s;
}

struct MergeLayout {
  std::int64_t tiles;
  std::size_t val_off, bytes;
};
MergeLayout merge_layout(std::int64_t rows, std::int64_t nnz) {
  MergeLayout m{};
  m.tiles = (rows + nnz + kTile - 1) / kTile;
  auto align = [](std::size_t b) { return (b + 255) / 256 * 256; };
  m.val_off = align(static_cast<std::size_t>(m.tiles) * sizeof(std::int32_t));
  m.bytes = m.val_off + align(static_cast<std::size_t>(m.tiles) * sizeof(float));
  return m;
}

bool valid(const CsrView& a) {
  return a.rows >= 0 && a.cols >= 0 && a.nnz >= 0 && (a.rows == 0 || a.row_ptr != nullptr) &&
         (a.nnz == 0 || (a.col != nullptr && a.val != nullptr));
}

}  // namespace

std::size_t csr_merge_workspace_bytes(std::int64_t rows, std::int64_t nnz) { return merge_layout(rows, nnz).bytes; }

cudaError_t csr_merge(const CsrView& a, void* workspace, const float* x, float* y, cudaStream_t stream) {
  if (!valid(a) || workspace == nullptr) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  const MergeLayout m = merge_layout(a.rows, a.nnz);
  if (m.tiles > INT32_MAX) return cudaErrorInvalidValue;
  auto* base = static_cast<char*>(workspace);
  auto* carry_row = reinterpret_cast<std::int32_t*>(base);
  auto* carry_val = reinterpret_cast<float*>(base + m.val_off);
  const auto tiles = static_cast<std::int32_t>(m.tiles);
  merge_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(a.rows, a.nnz, a.row_ptr, a.col, a.val, x, y,
                                                                      carry_row, carry_val);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  merge_fixup_kernel<<<static_cast<unsigned>((tiles + 255) / 256), 256, 0, stream>>>(tiles, a.rows, carry_row, carry_val, y);
  return cudaGetLastError();
}

}  // namespace kernels::spmv
