#pragma once
// Reduction of n elements to one value (the ECE 408 notes, section 2.1): sum over f32 or
// over 32-bit integers (as uint32, wrapping modulo 2^32: the bits of an int32 sum with
// two's-complement wrap-around), and max over f32.
//
// The ladder (each rung fixes something of the previous one):
//   interleaved   stride-doubling tree in shared memory, `t % (2s) == 0` active: divergent
//                 warps and bank conflicts                                       (rung 1)
//   sequential    contiguous halving, `t < s` active: whole warps retire          (rung 2)
//   first_add     each thread adds two elements while loading: no idle half      (rung 3)
//   coarsened     each thread sums many elements (block-strided, coalesced) first (rung 4)
//   warp_shuffle  the tree's last five levels in registers with __shfl_down_sync   (rung 5)
// Rungs 1-5 combine block results by reducing the per-block partials again with the
// same kernel (a recursion of levels, each a launch) until one value is left. The two
// ways of combining, on the rung-5 block:
//   atomic_blocks  grid capped at kMaxBlocks, each block atomically folds into out
//   two_pass       grid capped at kMaxBlocks, partials, then one block reduces them
// And the top variant (beyond the notes), what a bandwidth-bound reduction needs:
//   vectorized     16-byte loads, kUnroll of them in flight per thread, grid = kBlocksPerSm
//                  x SM count (grid-stride), scalar head/tail for any alignment and n,
//                  shuffles, partials folded by a second one-block kernel (deterministic)
#include <cstddef>

#include <cuda_runtime_api.h>

namespace kernels::reduce {

enum class Algo { interleaved, sequential, first_add, coarsened, warp_shuffle, atomic_blocks, two_pass, vectorized };
enum class Op { sum, max };
enum class Elem { f32, u32 };  // u32 also carries i32 sums (same bits, wrap-around)

inline constexpr int kThreads = 256;     // threads per block, every rung
inline constexpr int kCoarse = 16;       // rung 4+: elements per thread before the tree
inline constexpr int kMaxBlocks = 1024;  // atomic_blocks / two_pass grid cap
inline constexpr int kUnroll = 4;        // vectorized: independent 16-byte loads per thread
inline constexpr int kBlocksPerSm = 8;   // vectorized: grid = 8 x SM count (a full SM: 64 warps)

// vectorized's largest grid on the current device (kBlocksPerSm x SMs; 0 on error).
unsigned vector_max_blocks();

// Scratch bytes `algo` needs for n elements (partials of every level).
std::size_t workspace_bytes(Algo algo, std::size_t n, Elem elem);

// out[0] = op over x[0..n), n >= 1. `x` and `out` are device pointers of `elem`
// (float or uint32). `scratch`: at least workspace_bytes(...) device bytes.
// Returns the first launch error.
cudaError_t launch(Algo algo, Op op, Elem elem, const void* x, void* out, std::size_t n, void* scratch,
                   cudaStream_t stream);

// cub::DeviceReduce (Sum or Max). With scratch == nullptr, *scratch_bytes gets the
// temporary storage size and nothing runs.
cudaError_t launch_cub(Op op, Elem elem, const void* x, void* out, std::size_t n, void* scratch,
                       std::size_t* scratch_bytes, cudaStream_t stream);

// Host references. Sums of floats: pairwise in double, rounded once to float (error far
// below float's unit roundoff); integer sums in uint32 (wrap); max: plain loop.
float reduce_cpu_f32(Op op, const float* x, std::size_t n);
unsigned reduce_cpu_u32_sum(const unsigned* x, std::size_t n);

}  // namespace kernels::reduce
