#pragma once
// Move-only RAII device allocation for plugins: typed, checked, poisonable.
#include <cstddef>
#include <span>
#include <utility>

#include <cuda_runtime_api.h>

#include "harness/cuda_check.hpp"
#include "harness/problem.hpp"

namespace harness {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) HARNESS_CUDA(cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes()));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = std::exchange(other.ptr_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { reset(); }

  void reset() noexcept {
    if (ptr_) HARNESS_CUDA_NOTHROW(cudaFree(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T* data() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(std::span<const T> host) {
    HARNESS_CUDA(cudaMemcpy(ptr_, host.data(), host.size_bytes(), cudaMemcpyHostToDevice));
  }
  void upload_async(std::span<const T> host, cudaStream_t stream) {
    HARNESS_CUDA(cudaMemcpyAsync(ptr_, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, stream));
  }
  void copy_from_async(const DeviceBuffer& other, cudaStream_t stream) {
    HARNESS_CUDA(cudaMemcpyAsync(ptr_, other.data(), bytes(), cudaMemcpyDeviceToDevice, stream));
  }
  void download(std::span<T> host) const {
    HARNESS_CUDA(cudaMemcpy(host.data(), ptr_, host.size_bytes(), cudaMemcpyDeviceToHost));
  }
  void poison(cudaStream_t stream) {
    HARNESS_CUDA(cudaMemsetAsync(ptr_, kPoisonByte, bytes(), stream));
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace harness
