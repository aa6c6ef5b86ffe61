#pragma once
// Timing printouts of GPU tests (printed, never asserted): the median of 20 launches after
// 3 warm-ups, a pair of cudaEvents on the default stream around each launch.
#include <algorithm>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace harness::test {

template <typename F>
float median_ms(F&& launch) {
  cudaEvent_t a, b;
  EXPECT_EQ(cudaEventCreate(&a), cudaSuccess);
  EXPECT_EQ(cudaEventCreate(&b), cudaSuccess);
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> t;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace harness::test
