#include "models/allocator.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

#include "models/check.hpp"

namespace models {

std::size_t CachingAllocator::size_class(std::size_t bytes) {
  constexpr std::size_t kMin = 512, kMiB = std::size_t{1} << 20;
  if (bytes <= kMin) return kMin;
  if (bytes <= kMiB) {
    std::size_t c = kMin;
    while (c < bytes) c <<= 1;
    return c;
  }
  return (bytes + kMiB - 1) / kMiB * kMiB;
}

CachingAllocator::~CachingAllocator() {
  capturing_ = false;
  release_private_pool();
  release_cached();
}

void CachingAllocator::begin_capture() {
  if (capturing_) throw std::logic_error("CachingAllocator: a capture is already open");
  if (!private_.empty()) throw std::logic_error("CachingAllocator: the private pool of an earlier capture is still reserved");
  capturing_ = true;
}

void CachingAllocator::end_capture() noexcept { capturing_ = false; }

void CachingAllocator::release_private_pool() noexcept {
  if (capturing_) return;
  for (auto& [c, list] : private_free_) {
    auto& shared = free_[c];
    shared.insert(shared.end(), list.begin(), list.end());
  }
  private_free_.clear();
  private_.clear();  // blocks still in use go to the shared lists when freed
}

void* CachingAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  ++stats_.requests;
  const std::size_t c = size_class(bytes);
  void* p = nullptr;
  if (capturing_) {  // the pool's own free blocks first
    auto pit = private_free_.find(c);
    if (pit != private_free_.end() && !pit->second.empty()) {
      p = pit->second.back();
      pit->second.pop_back();
      ++stats_.cache_hits;
      stats_.bytes_in_use += c;
      if (stats_.bytes_in_use > stats_.peak_bytes_in_use) stats_.peak_bytes_in_use = stats_.bytes_in_use;
      return p;
    }
  }
  auto it = free_.find(c);
  if (it != free_.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    ++stats_.cache_hits;
  } else {
    cudaError_t e = cudaMalloc(&p, c);
    ++stats_.cuda_malloc_calls;
    if (e == cudaErrorMemoryAllocation && !capturing_) {
      (void)cudaGetLastError();  // clear the (non-sticky) error
      release_cached();
      e = cudaMalloc(&p, c);
      ++stats_.cuda_malloc_calls;
    }
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      std::size_t free_b = 0, total_b = 0;
      (void)cudaMemGetInfo(&free_b, &total_b);
      throw OutOfMemory("out of memory: the model needs " + std::to_string(c >> 20) +
                                 " MiB more (in use " + std::to_string(stats_.bytes_in_use >> 20) +
                                 " MiB, free " + std::to_string(free_b >> 20) + " MiB)");
    }
    if (e != cudaSuccess)
      detail::throw_cuda_error(e, capturing_ ? "cudaMalloc (during a CUDA graph capture)" : "cudaMalloc", __FILE__,
                               __LINE__);
    stats_.bytes_reserved += c;
    if (stats_.bytes_reserved > stats_.peak_bytes_reserved) stats_.peak_bytes_reserved = stats_.bytes_reserved;
  }
  if (capturing_) private_.insert(p);  // may throw bad_alloc: the capture fails cleanly
  stats_.bytes_in_use += c;
  if (stats_.bytes_in_use > stats_.peak_bytes_in_use) stats_.peak_bytes_in_use = stats_.bytes_in_use;
  return p;
}

void CachingAllocator::deallocate(void* ptr, std::size_t bytes) noexcept {
  if (ptr == nullptr) return;
  const std::size_t c = size_class(bytes);
  stats_.bytes_in_use -= c;
  try {
    if (capturing_ || private_.count(ptr) != 0) {
      private_.insert(ptr);
      private_free_[c].push_back(ptr);
    } else {
      free_[c].push_back(ptr);
    }
  } catch (...) {  // no memory for the list entry: give the block back instead (leaked while capturing)
    if (capturing_) return;
    private_.erase(ptr);
    MODELS_CUDA_NOTHROW(cudaFree(ptr));
    ++stats_.cuda_free_calls;
    stats_.bytes_reserved -= c;
  }
}

void CachingAllocator::release_cached() noexcept {
  if (capturing_) return;
  for (auto& [c, list] : free_) {
    for (void* p : list) {
      MODELS_CUDA_NOTHROW(cudaFree(p));
      ++stats_.cuda_free_calls;
      stats_.bytes_reserved -= c;
    }
    list.clear();
  }
}

}  // namespace models
