#pragma once
// The process's NCCL communicator and the collectives on it. No NCCL type leaks out of
// this header, so that its users compile where NCCL is missing (every call then throws
// with nccl_build_missing()'s reason).
//
// Bootstrap: rank 0 asks NCCL for a unique id and writes it (atomically: a temporary file,
// then rename) to the RankEnv's id file; the other ranks poll for it. The communicator is
// non-blocking (config.blocking = 0), so every wait polls ncclCommGetAsyncError against a
// deadline (HARNESS_NCCL_TIMEOUT seconds, default 120): a peer that never comes or dies
// mid-collective makes the others abort the communicator (ncclCommAbort) and end with a
// message that says so, never hang. A watchdog thread keeps that deadline for collectives
// whose completion the harness waits for outside this code (its stream synchronizations).
#include <cstddef>
#include <memory>
#include <string>

#include <cuda_runtime_api.h>

#include "nccl/collectives.hpp"
#include "nccl/nccl_fill.cuh"

namespace kernels::nccl {

class World {
 public:
  static World& get();  // reads the rank variables; creates nothing yet
  const RankEnv& env() const { return env_; }
  // Creates the communicator on the current CUDA device (once); throws std::runtime_error.
  void ensure_initialized();
  // Enqueues one collective on `stream` (in-place: send == recv, or the slice of it that
  // NCCL's in-place convention names). Throws std::runtime_error with NCCL's reason.
  void run(Collective c, Dtype t, const void* send, void* recv, const Counts& k, cudaStream_t stream);
  double deadline_s() const { return deadline_s_; }
  ~World();

 private:
  World();
  struct State;
  RankEnv env_;
  double deadline_s_ = 120;
  std::unique_ptr<State> state_;
};

}  // namespace kernels::nccl
