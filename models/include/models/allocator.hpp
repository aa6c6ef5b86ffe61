#pragma once
// A caching device allocator for the engine's tensors: freed blocks go to a free list of
// their size class and are handed out again, so that a steady-state training step (the
// same shapes every step) makes no cudaMalloc and no cudaFree at all.
//
// Size classes: requests are rounded up to a power of two from 512 B to 1 MiB, above
// that to a multiple of 1 MiB. A request takes a cached block of exactly its class, else
// calls cudaMalloc; when cudaMalloc fails, every cached block is released and the call
// retried once before OutOfMemory is thrown.
//
// Single-stream semantics: every kernel that touches engine memory runs on one stream, so
// a block freed on the host while a kernel still reads it can be reused at once: the next
// kernel that writes it is ordered after the reader on the same stream.
//
// CUDA graph capture (a private pool): between begin_capture() and end_capture() every
// block handed out or given back joins the capture's pool; its free blocks are handed out
// again only inside that capture (safe: the captured kernels form one stream-ordered
// chain). After end_capture() the pool's blocks stay reserved, so the replayed graph keeps
// writing addresses no one else holds, until release_private_pool() (the graph is
// destroyed) returns them to the shared free lists. During a capture nothing is given back
// to the driver (cudaFree synchronizes, which would invalidate the capture).
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace models {

struct AllocatorStats {
  std::uint64_t requests = 0;         // allocate() calls
  std::uint64_t cache_hits = 0;       // served from a free list
  std::uint64_t cuda_malloc_calls = 0;
  std::uint64_t cuda_free_calls = 0;
  std::size_t bytes_in_use = 0;       // handed out (rounded sizes)
  std::size_t peak_bytes_in_use = 0;
  std::size_t bytes_reserved = 0;     // obtained from cudaMalloc and not yet freed
  std::size_t peak_bytes_reserved = 0;
};

class CachingAllocator {
 public:
  CachingAllocator() = default;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  ~CachingAllocator();

  // At least `bytes` of device memory, 256-byte aligned (nullptr for 0 bytes).
  void* allocate(std::size_t bytes);
  // Back to the free list of its class (not to the driver).
  void deallocate(void* ptr, std::size_t bytes) noexcept;
  // cudaFree every cached block of the shared free lists (blocks in use and the private
  // pool's stay valid). Nothing happens during a capture.
  void release_cached() noexcept;

  // The capture's private pool (see above). begin_capture throws std::logic_error when a
  // capture is already open or a pool is still reserved.
  void begin_capture();
  void end_capture() noexcept;
  bool capturing() const { return capturing_; }
  void release_private_pool() noexcept;
  std::size_t private_pool_blocks() const { return private_.size(); }

  const AllocatorStats& stats() const { return stats_; }
  // Peaks restart from the current values (e.g. after setup, before the timed steps).
  void reset_peaks() {
    stats_.peak_bytes_in_use = stats_.bytes_in_use;
    stats_.peak_bytes_reserved = stats_.bytes_reserved;
  }
  static std::size_t size_class(std::size_t bytes);

 private:
  std::unordered_map<std::size_t, std::vector<void*>> free_;
  AllocatorStats stats_;
  bool capturing_ = false;
  std::unordered_set<void*> private_;                                // the pool's blocks, free or in use
  std::unordered_map<std::size_t, std::vector<void*>> private_free_;  // its free blocks by class
};

}  // namespace models
