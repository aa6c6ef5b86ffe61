// The CSR and COO SpMV kernels (see spmv.hpp). Data path: every kernel reads A once from
// global memory, x through the read-only cache (__ldg; x is gathered by column index, so
// its locality is the matrix's), and writes y once (atomics for COO and the merge carries).
#include <algorithm>

#include "spmv/spmv.hpp"

namespace kernels::spmv {
namespace {

constexpr int kBlock = 256;

bool valid(const CsrView& a) {
  return a.rows >= 0 && a.cols >= 0 && a.nnz >= 0 && (a.rows == 0 || a.row_ptr != nullptr) &&
         (a.nnz == 0 || (a.col != nullptr && a.val != nullptr));
}

unsigned blocks_for(std::int64_t threads) { return static_cast<unsigned>((threads + kBlock - 1) / kBlock); }

// COO: thread k does y[row[k]] += val[k] * x[col[k]]. Coalesced reads of row/col/val;
// contended atomics on long rows.
__global__ void coo_kernel(std::int32_t nnz, const std::int32_t* __restrict__ row, const std::int32_t* __restrict__ col,
                           const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // nnz near 2^31: no wrap
  if (k < nnz) atomicAdd(&y[row[k]], val[k] * __ldg(&x[col[k]]));
}

// CSR scalar: thread r walks row r. Neighbouring threads read different rows: strided,
// uncoalesced loads of col/val, and a warp waits for its longest row (divergence).
__global__ void csr_scalar_kernel(std::int32_t rows, const std::int32_t* __restrict__ row_ptr,
                                  const std::int32_t* __restrict__ col, const float* __restrict__ val,
                                  const float* __restrict__ x, float* __restrict__ y) {
  const std::int32_t r = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= rows) return;
  float sum = 0;
  for (std::int32_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += val[k] * __ldg(&x[col[k]]);
  y[r] = sum;
}

// CSR vector: a group of LANES consecutive lanes per row; lane l sums elements l, l +
// LANES, ... (coalesced within the group), then a shuffle tree reduces the group (width
// LANES). Every lane reaches the shuffles (no early return): the mask is the full warp.
template <int LANES>
__global__ void csr_vector_kernel(std::int32_t rows, const std::int32_t* __restrict__ row_ptr,
                                  const std::int32_t* __restrict__ col, const float* __restrict__ val,
                                  const float* __restrict__ x, float* __restrict__ y) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t r = t / LANES;
  const int lane = static_cast<int>(t % LANES);
  float sum = 0;
  if (r < rows) {
    const std::int32_t end = row_ptr[r + 1];
    for (std::int32_t k = row_ptr[r] + lane; k < end; k += LANES) sum += val[k] * __ldg(&x[col[k]]);
  }
#pragma unroll
  for (int off = LANES / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, LANES);
  if (r < rows && lane == 0) y[r] = sum;
}

// Merge-path SpMV (Merrill & Garland, SC'16), the balanced CSR variant. Why merge-based
// rather than CSR-adaptive: it needs no per-matrix row binning and balances any row
// length distribution exactly -- each thread gets kItems steps of the merge of the row
// ends (row_ptr[1..rows]) with the non-zero indices 0..nnz-1 -- so a row of 10^5 elements
// is spread over 10^5 / kItems threads while short rows cost one step each.
//   1. partition: the merge-path coordinate (row, nnz index) where each block's share
//      begins, by binary search on its diagonal (a thread per block boundary);
//   2. main: each thread searches its own diagonal inside its block's range (about
//      log2(kBlock * kItems) steps), then walks kItems steps: a non-zero adds to the running
//      sum, a row end writes y[row] = sum (the share of the row seen by this thread) and
//      restarts the sum. What is left at the end (a row that continues in the next
//      thread) is the thread's carry (row, partial sum);
//   3. fix-up: every carry is atomically added to its row (after 2 wrote every row).
// Loads of col/val are per thread contiguous (kItems apart between lanes); Merrill stages
// them through shared memory to coalesce, which this version leaves out for clarity.
constexpr int kItems = 8;

struct Coord {
  std::int32_t row, k;
};

// The coordinate of diagonal d: rows finished + non-zeros consumed = d, searched with x
// (rows finished) in [lo, hi]. row_end[i] = row_ptr[i + 1].
__device__ Coord merge_search(std::int64_t d, std::int32_t lo, std::int32_t hi, std::int32_t nnz,
                              const std::int32_t* __restrict__ row_ptr) {
  std::int64_t x_min = max(static_cast<std::int64_t>(lo), d - nnz);
  std::int64_t x_max = min(static_cast<std::int64_t>(hi), d);
  while (x_min < x_max) {
    const std::int64_t pivot = (x_min + x_max) >> 1;
    // row_end[pivot] <= (d - pivot - 1): that row ended before this diagonal's non-zero.
    if (row_ptr[pivot + 1] <= d - pivot - 1) x_min = pivot + 1;
    else x_max = pivot;
  }
  return {static_cast<std::int32_t>(x_min), static_cast<std::int32_t>(d - x_min)};
}

__global__ void merge_partition_kernel(std::int32_t rows, std::int32_t nnz, std::int32_t tiles,
                                       const std::int32_t* __restrict__ row_ptr, std::int32_t* __restrict__ tile_row) {
  const std::int32_t t = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t > tiles) return;
  const std::int64_t total = static_cast<std::int64_t>(rows) + nnz;
  const std::int64_t d = min(static_cast<std::int64_t>(t) * kBlock * kItems, total);
  tile_row[t] = merge_search(d, 0, rows, nnz, row_ptr).row;
}

__global__ void merge_kernel(std::int32_t rows, std::int32_t nnz, const std::int32_t* __restrict__ tile_row,
                             const std::int32_t* __restrict__ row_ptr, const std::int32_t* __restrict__ col,
                             const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y,
                             std::int32_t* __restrict__ carry_row, float* __restrict__ carry_val) {
  const std::int64_t total = static_cast<std::int64_t>(rows) + nnz;
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t d0 = min(t * kItems, total), d1 = min(d0 + kItems, total);
  Coord c = merge_search(d0, tile_row[blockIdx.x], tile_row[blockIdx.x + 1], nnz, row_ptr);
  float sum = 0;
  bool partial = false;  // non-zeros of the current row were added since its start here
  for (std::int64_t step = d0; step < d1; ++step) {
    if (c.k < row_ptr[c.row + 1]) {  // c.row < rows here: every non-zero belongs to a row
      sum += val[c.k] * __ldg(&x[col[c.k]]);
      ++c.k;
      partial = true;
    } else {
      y[c.row] = sum;
      sum = 0;
      partial = false;
      ++c.row;
    }
  }
  carry_row[t] = partial ? c.row : -1;
  carry_val[t] = sum;
}

__global__ void merge_fixup_kernel(std::int64_t threads, const std::int32_t* __restrict__ carry_row,
                                   const float* __restrict__ carry_val, float* __restrict__ y) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < threads && carry_row[t] >= 0) atomicAdd(&y[carry_row[t]], carry_val[t]);
}

struct MergeLayout {
  std::int64_t threads, tiles;
  std::size_t tile_off, row_off, val_off, bytes;
};
MergeLayout merge_layout(std::int64_t rows, std::int64_t nnz) {
  MergeLayout m{};
  const std::int64_t total = rows + nnz;
  m.tiles = (total + static_cast<std::int64_t>(kBlock) * kItems - 1) / (static_cast<std::int64_t>(kBlock) * kItems);
  m.threads = m.tiles * kBlock;
  auto align = [](std::size_t b) { return (b + 255) / 256 * 256; };
  m.tile_off = 0;
  m.row_off = align(static_cast<std::size_t>(m.tiles + 1) * sizeof(std::int32_t));
  m.val_off = m.row_off + align(static_cast<std::size_t>(m.threads) * sizeof(std::int32_t));
  m.bytes = m.val_off + align(static_cast<std::size_t>(m.threads) * sizeof(float));
  return m;
}

}  // namespace

cudaError_t coo_atomic(const CsrView& a, const std::int32_t* coo_row, const float* x, float* y, cudaStream_t stream) {
  if (!valid(a) || (a.nnz > 0 && coo_row == nullptr)) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  if (const cudaError_t e = cudaMemsetAsync(y, 0, static_cast<std::size_t>(a.rows) * sizeof(float), stream); e != cudaSuccess)
    return e;
  if (a.nnz == 0) return cudaSuccess;
  coo_kernel<<<blocks_for(a.nnz), kBlock, 0, stream>>>(a.nnz, coo_row, a.col, a.val, x, y);
  return cudaGetLastError();
}

cudaError_t csr_scalar(const CsrView& a, const float* x, float* y, cudaStream_t stream) {
  if (!valid(a)) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  csr_scalar_kernel<<<blocks_for(a.rows), kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y);
  return cudaGetLastError();
}

int csr_vector_lanes(std::int64_t rows, std::int64_t nnz) {
  const double mean = rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0;
  int lanes = 2;
  while (lanes < 32 && lanes < mean) lanes *= 2;
  return lanes;
}

cudaError_t csr_vector(const CsrView& a, int lanes, const float* x, float* y, cudaStream_t stream) {
  if (!valid(a)) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  const unsigned grid = blocks_for(static_cast<std::int64_t>(a.rows) * lanes);
  switch (lanes) {
    case 1: csr_vector_kernel<1><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    case 2: csr_vector_kernel<2><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    case 4: csr_vector_kernel<4><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    case 8: csr_vector_kernel<8><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    case 16: csr_vector_kernel<16><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    case 32: csr_vector_kernel<32><<<grid, kBlock, 0, stream>>>(a.rows, a.row_ptr, a.col, a.val, x, y); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

std::size_t csr_merge_workspace_bytes(std::int64_t rows, std::int64_t nnz) { return merge_layout(rows, nnz).bytes; }

cudaError_t csr_merge(const CsrView& a, void* workspace, const float* x, float* y, cudaStream_t stream) {
  if (!valid(a) || workspace == nullptr) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  const MergeLayout m = merge_layout(a.rows, a.nnz);
  auto* base = static_cast<char*>(workspace);
  auto* tile_row = reinterpret_cast<std::int32_t*>(base + m.tile_off);
  auto* carry_row = reinterpret_cast<std::int32_t*>(base + m.row_off);
  auto* carry_val = reinterpret_cast<float*>(base + m.val_off);
  merge_partition_kernel<<<blocks_for(m.tiles + 1), kBlock, 0, stream>>>(a.rows, a.nnz, static_cast<std::int32_t>(m.tiles),
                                                                         a.row_ptr, tile_row);
  merge_kernel<<<static_cast<unsigned>(m.tiles), kBlock, 0, stream>>>(a.rows, a.nnz, tile_row, a.row_ptr, a.col, a.val, x,
                                                                      y, carry_row, carry_val);
  merge_fixup_kernel<<<blocks_for(m.threads), kBlock, 0, stream>>>(m.threads, carry_row, carry_val, y);
  return cudaGetLastError();
}

}  // namespace kernels::spmv
