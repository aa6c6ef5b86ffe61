#include "harness/workspace.hpp"

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/error.hpp"

namespace harness {

Workspace::~Workspace() { release(); }

void* Workspace::get(std::size_t slot, std::size_t bytes) {
  if (slots_.size() <= slot) slots_.resize(slot + 1);
  Slot& s = slots_[slot];
  if (s.bytes >= bytes && s.ptr) return s.ptr;
  if (s.ptr) HARNESS_CUDA(cudaFree(s.ptr));
  s = {};
  void* ptr = nullptr;
  const cudaError_t e = cudaMalloc(&ptr, bytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    throw OutOfMemory(fmt::format("out of memory (needs {:.2f} GiB, free {:.2f} GiB)",
                                  static_cast<double>(bytes) / kGiB, static_cast<double>(free_b) / kGiB));
  }
  HARNESS_CUDA(e);
  s = {ptr, bytes};
  peak_ = std::max(peak_, current_bytes());
  return ptr;
}

std::size_t Workspace::current_bytes() const {
  std::size_t total = 0;
  for (const auto& s : slots_) total += s.bytes;
  return total;
}

void Workspace::release() {
  for (auto& s : slots_) {
    if (s.ptr) HARNESS_CUDA_NOTHROW(cudaFree(s.ptr));
    s = {};
  }
}

}  // namespace harness
