#pragma once
// A collective problem's barrier across its ranks (Problem::collective_at: NCCL). Where a
// problem registers one, the runner times its CUDA variants as nccl-tests does: warm-up,
// then per sample the barrier, K back-to-back launches between one pair of CUDA events,
// and time per op = elapsed / K (measure/collective.hpp). Without a barrier each launch of
// a rank would be timed alone, and a sample would hold the time the rank waited for its
// slowest peer (the ranks' skew) instead of the operation.
//
// A free function rather than a virtual of Problem or Instance, so that the plugin ABI
// (include/harness/plugin.hpp) stays as it is.
#include <functional>
#include <string>

#include <cuda_runtime_api.h>

namespace harness {

// Returns once every rank of the job has called it and `stream` is idle; throws
// CudaError with the reason when the ranks cannot meet.
using RankBarrier = std::function<void(cudaStream_t stream)>;

// Registers the barrier of `problem` (at a plugin's registration; a later call replaces it).
void set_rank_barrier(const std::string& problem, RankBarrier barrier);
// The barrier registered for `problem`, or nullptr.
const RankBarrier* rank_barrier(const std::string& problem);

}  // namespace harness
