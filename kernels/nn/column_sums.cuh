#pragma once
// K column sums over (rows, cols) in one kernel, parallel over rows, deterministic: the
// reduction of the fused backward kernels (bias gradient, LayerNorm gamma / beta; see
// nn_fused.hpp). Internal to kernels/nn.
//
// V columns per thread (V = 16 / sizeof(S): one 16-byte load per row and operand, where
// cols % V == 0 and the operands are 16-byte aligned; else V = 1). Grid (ceil(cols / (32 V)),
// min(chunks, 65535)), block (32, 8); a chunk is kFusedChunkRows (64) rows. Block (bx, by)
// owns columns 32 V bx .. 32 V (bx + 1) - 1 and chunks by, by + gridDim.y, ...; thread (tx, ty)
// visits rows ty, ty + 8, ... of the chunk in columns c0 = V (32 bx + tx) .. c0 + V - 1 (a
// warp reads 32 V consecutive elements of a row: 512 bytes of bf16) and calls
// elem.template at<V>(r, i, c0, addends) (i = r * cols + c0), which may write per-element
// outputs and returns each element's K addends. Per chunk and column the 8 row-group sums
// are added in order through shared memory: that chunk's partial
// (partial[(k * chunks + chunk) * cols + c]), or the result itself when there is one chunk.
// With counters (ceil(cols / 32), zero on entry), the last block of each column tile to
// finish adds the tile's partials (chunks ty, ty + 8, ... in increasing order per thread,
// then the 8 sums in order) and resets its counter to zero; without, finish_column_sums
// (a second kernel, one thread per column) adds them in the same order: the same bits,
// whatever V (each column's additions are the same, in the same order).
#include <algorithm>
#include <cstddef>

#include <cuda_runtime.h>

#include "nn/nn_fused.hpp"

namespace kernels::nn::detail {

constexpr int kSumTile = 32, kSumRows = 8;

template <class P, int K>
struct ColumnOutputs {
  P* out[K];  // (cols) each
};
template <class P, int K>
struct Addends {
  P v[K];  // one element's contribution to each of the K sums
};

inline int fused_chunks(int rows) { return (rows + kFusedChunkRows - 1) / kFusedChunkRows; }

// Shared-memory slot of thread tx's e-th column: the 32 threads' columns of one e are 32
// consecutive words, so the stores and the sums below are free of bank conflicts.
__device__ __forceinline__ int slot(int tx, int e) { return e * kSumTile + tx; }

// Column (tx, e)'s 8 row-group sums of sum k (shared memory, after a barrier), added in order.
template <class P, int K, int V>
__device__ __forceinline__ P column_total(const P (&part)[K][kSumRows][kSumTile * V + 1], int k, int tx, int e) {
  P sum = P(0);
#pragma unroll
  for (int j = 0; j < kSumRows; ++j) sum += part[k][j][slot(tx, e)];
  return sum;
}

// This thread's K x V sums into its shared-memory slots (row group ty), for column_total.
template <class P, int K, int V>
__device__ __forceinline__ void stash(P (&part)[K][kSumRows][kSumTile * V + 1], const P (&acc)[K][V], int ty, int tx) {
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e) part[k][ty][slot(tx, e)] = acc[k][e];
}

template <class P, int K, int V>
__device__ __forceinline__ void zero(P (&acc)[K][V]) {
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e) acc[k][e] = P(0);
}

// kBatch: a full chunk's kFusedChunkRows / kSumRows rows of a thread are all read before the
// first addition (for an Elem whose at() only loads: nothing it stores can alias what the
// next row loads, so the loads can all be in flight at once); the same additions in the
// same order, so the same bits. Without it one row's load is in flight per thread (the
// loop's trip count is not a constant), which keeps too few bytes in flight to fill the
// memory system when the grid is a few hundred blocks (ncu on an H200, bias gradients of
// 8192 x 512 bf16: 15.6 us, DRAM 11% of peak, 24% occupancy). Batched, the step's 61 such
// launches took ~8% less (CUPTI, B = 4 N = 2048): the rest of their time is not the loads
// (the partials' tail, the fences and the launch; not profiled further).
// acc[k][e] += add[e].v[k]: one row's addends into the thread's sums.
template <class P, int K, int V>
__device__ __forceinline__ void accumulate(P (&acc)[K][V], const Addends<P, K> (&add)[V]) {
#pragma unroll
  for (int e = 0; e < V; ++e)
#pragma unroll
    for (int k = 0; k < K; ++k) acc[k][e] += add[e].v[k];
}

template <int K, int V, class P, class Elem, bool kBatch = false>
__device__ __forceinline__ void chunked_column_sums(const Elem& elem, const ColumnOutputs<P, K>& outs, P* partial,
                                                    unsigned* counters, int rows, int cols, int chunks) {
  __shared__ P part[K][kSumRows][kSumTile * V + 1];
  __shared__ bool last;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int c0 = (static_cast<int>(blockIdx.x) * kSumTile + tx) * V;  // V columns; cols % V == 0
  for (int chunk = static_cast<int>(blockIdx.y); chunk < chunks; chunk += static_cast<int>(gridDim.y)) {
    const int r1 = min(rows, (chunk + 1) * kFusedChunkRows);
    P acc[K][V];
    zero(acc);
    if (c0 < cols) {
      if (kBatch && r1 - chunk * kFusedChunkRows == kFusedChunkRows) {
        constexpr int kRowsPerThread = kFusedChunkRows / kSumRows;
        Addends<P, K> add[kRowsPerThread][V];
#pragma unroll
        for (int u = 0; u < kRowsPerThread; ++u) {
          const int r = chunk * kFusedChunkRows + ty + u * kSumRows;
          elem.template at<V>(r, static_cast<std::size_t>(r) * cols + c0, c0, add[u]);
        }
#pragma unroll
        for (int u = 0; u < kRowsPerThread; ++u) accumulate(acc, add[u]);
      } else {
        for (int r = chunk * kFusedChunkRows + ty; r < r1; r += kSumRows) {
          Addends<P, K> add[V];
          elem.template at<V>(r, static_cast<std::size_t>(r) * cols + c0, c0, add);
          accumulate(acc, add);
        }
      }
    }
    __syncthreads();  // part may still be read for the previous chunk
    stash(part, acc, ty, tx);
    __syncthreads();
    if (ty == 0 && c0 < cols)
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const P sum = column_total<P, K, V>(part, k, tx, e);
          if (chunks == 1) outs.out[k][c0 + e] = sum;
          else partial[(static_cast<std::size_t>(k) * chunks + chunk) * cols + c0 + e] = sum;
        }
  }
  if (chunks == 1 || counters == nullptr) return;  // one chunk: done; no counters: finish_column_sums
  // __threadfence: this block's partials are visible device-wide before its count; the last
  // block's reads bypass L1 (__ldcg).
  __threadfence();
  __syncthreads();
  if (tx == 0 && ty == 0) last = atomicAdd(&counters[blockIdx.x], 1u) == gridDim.y - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  // Chunk j outside, the K x V sums inside: K V independent loads in flight per step (this
  // tail runs in one block per column tile); each column still adds its chunks in increasing
  // order.
  P acc[K][V];
  zero(acc);
  if (c0 < cols)
    for (int j = ty; j < chunks; j += kSumRows)
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[k][e] += __ldcg(partial + (static_cast<std::size_t>(k) * chunks + j) * cols + c0 + e);
  stash(part, acc, ty, tx);
  __syncthreads();
  if (ty == 0 && c0 < cols)
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int e = 0; e < V; ++e) outs.out[k][c0 + e] = column_total<P, K, V>(part, k, tx, e);
  if (tx == 0 && ty == 0) counters[blockIdx.x] = 0u;
}

// The partials' sums without counters (chunks == 0: zeros), in the last block's order.
template <int K, class P>
__global__ void finish_column_sums(const P* __restrict__ partial, ColumnOutputs<P, K> outs, int chunks, int cols) {
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= cols) return;
  for (int k = 0; k < K; ++k) {
    P sum = P(0);
    for (int g = 0; g < kSumRows; ++g) {
      P acc = P(0);
      for (int j = g; j < chunks; j += kSumRows) acc += partial[(static_cast<std::size_t>(k) * chunks + j) * cols + c];
      sum += acc;
    }
    outs.out[k][c] = sum;
  }
}

inline dim3 column_sums_grid(int cols, int chunks, int v) {
  return dim3(static_cast<unsigned>((cols + kSumTile * v - 1) / (kSumTile * v)),
              static_cast<unsigned>(std::min(chunks, 65535)));
}
inline dim3 column_sums_block() { return dim3(kSumTile, kSumRows); }

// After the chunked kernel's launch: the second kernel where one is needed.
template <int K, class P>
cudaError_t finish_if_needed(const P* partial, const ColumnOutputs<P, K>& outs, unsigned* counters, int chunks,
                             int cols, cudaStream_t s) {
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess || chunks == 1 || (chunks > 1 && counters)) return e;
  constexpr int kThreadsPerBlock = 256;
  finish_column_sums<K, P><<<static_cast<unsigned>((cols + kThreadsPerBlock - 1) / kThreadsPerBlock),
                             kThreadsPerBlock, 0, s>>>(partial, outs, chunks, cols);
  return cudaGetLastError();
}

}  // namespace kernels::nn::detail
