#pragma once
// The process's NCCL communicator and the collectives on it. No NCCL type leaks out of
// this header, so that its users compile where NCCL is missing (every call then throws
// with nccl_build_missing()'s reason).
//
// Bootstrap: rank 0 asks NCCL for two unique ids and writes them (atomically: a temporary
// file, then rename) to the RankEnv's id file; the other ranks poll for it. Two
// communicators, because neither kind alone both keeps a deadline and enqueues fast:
//  - the roll call, non-blocking (config.blocking = 0): its init polls
//    ncclCommGetAsyncError against a deadline (HARNESS_NCCL_TIMEOUT seconds, default 120),
//    so a rank that never comes is an exception with the reason, never a hang. Nothing
//    runs on it afterwards.
//  - the working communicator, blocking (as nccl-tests' and torch.distributed's): created
//    once the roll call proved every rank present. On a non-blocking communicator every
//    collective is a group that NCCL hands to a fresh thread (ncclGroupEnd returns
//    ncclInProgress), which cost ~100 us of host time per op on an H200 pair: an 8-byte
//    all_reduce read 127 us where torch read 40.
// A watchdog thread keeps the deadline for everything that can block after the roll call:
// the working communicator's init, every enqueue (a lazy connection waits for its peer)
// and the completion the harness waits for outside this code (its stream
// synchronizations). Past it, or on an asynchronous NCCL error, the rank aborts the
// communicator and ends with a message that says so.
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
  // A barrier across the ranks, as nccl-tests' before its timed loop: an all_reduce of one
  // int on `stream`, then cudaStreamSynchronize, so that on return every rank has reached
  // it and this rank's stream is idle (the ranks leave within the host's wake-up jitter,
  // a few us). Throws std::runtime_error with NCCL's or CUDA's reason.
  void barrier(cudaStream_t stream);
  double deadline_s() const { return deadline_s_; }
  ~World();

 private:
  World();
  void start_watchdog();
  // Runs `nccl_calls(comm)` (the enqueue of one operation) under the watchdog's deadline,
  // then records the completion event the watchdog follows.
  template <class Enqueue>
  void enqueue(const char* name, cudaStream_t stream, Enqueue&& nccl_calls);
  struct State;
  RankEnv env_;
  double deadline_s_ = 120;
  std::unique_ptr<State> state_;
};

}  // namespace kernels::nccl
