#pragma once
// CUDA events for the samples of one batch (a start and a stop per sample), created once
// and reused batch after batch: measure.cpp's timed batches and the traced round
// (traced_round.hpp) record theirs alike.
#include <cstddef>
#include <vector>

#include <cuda_runtime_api.h>

#include "harness/cuda_check.hpp"

namespace harness {

struct EventPool {
  std::vector<cudaEvent_t> start, stop;
  EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  ~EventPool() {
    for (auto e : start) HARNESS_CUDA_NOTHROW(cudaEventDestroy(e));
    for (auto e : stop) HARNESS_CUDA_NOTHROW(cudaEventDestroy(e));
  }
  // At least n pairs.
  void reserve(std::size_t n) {
    while (start.size() < n) {
      cudaEvent_t a, b;
      HARNESS_CUDA(cudaEventCreate(&a));
      start.push_back(a);
      HARNESS_CUDA(cudaEventCreate(&b));
      stop.push_back(b);
    }
  }
  // Seconds between start[i] and stop[i] (both recorded and complete).
  double seconds(std::size_t i) const {
    float ms = 0;
    HARNESS_CUDA(cudaEventElapsedTime(&ms, start[i], stop[i]));
    return static_cast<double>(ms) * 1e-3;
  }
};

}  // namespace harness
