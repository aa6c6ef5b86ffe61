#pragma once
// Helpers of the GEMM GPU tests (gemm_gpu_test, gemm_auto_gpu_test, the wgmma tests): device
// floats with optional misalignment, seeded uniform inputs in [-1, 1), wgmma's kernel paths.
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gemm/gemm_wgmma.hpp"

namespace harness::test {

// Device floats, freed on scope exit. `offset` floats of slack in front let a test hand a
// kernel a pointer that is not 16-byte aligned (one more float behind keeps a vector load
// of the last element in bounds of the allocation).
class DeviceFloats {
 public:
  explicit DeviceFloats(std::size_t n, std::size_t offset = 0) : offset_(offset) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&base_), (n + offset + 1) * sizeof(float)), cudaSuccess);
  }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  ~DeviceFloats() { cudaFree(base_); }
  float* get() const { return base_ + offset_; }
  void upload(const std::vector<float>& v) {
    ASSERT_EQ(cudaMemcpy(get(), v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<float> download(std::size_t n) const {
    std::vector<float> v(n);
    EXPECT_EQ(cudaMemcpy(v.data(), get(), n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }

 private:
  float* base_ = nullptr;
  std::size_t offset_;
};

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// The wgmma kernel paths the GPU tests cover, i = 0..3: clusters of 1 (even i) or 2 (odd),
// direct epilogue with tile-row group 3 (i < 2) or TMA store with group 16.
inline kernels::gemm::GemmWgmmaTuning wgmma_tuning_of(int i) {
  kernels::gemm::GemmWgmmaTuning t;
  t.cluster_m = (i & 1) != 0 ? 2 : 1;
  t.tma_store = (i & 2) != 0;
  t.group_m = (i & 2) != 0 ? 16 : 3;
  return t;
}

}  // namespace harness::test
