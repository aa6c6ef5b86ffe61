#include "arch/tma_map.hpp"

#include <array>
#include <cstddef>
#include <mutex>

#include <cuda_runtime_api.h>

namespace kernels::arch {

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

bool encode_tensor_map(CUtensorMap* map, CUtensorMapDataType type, int rank, const void* base,
                       const std::uint64_t* dims, const std::uint64_t* strides, const std::uint32_t* box,
                       CUtensorMapSwizzle swizzle) {
  const auto encode = tensor_map_encoder();
  if (encode == nullptr || rank < 1 || rank > 5) return false;
  cuuint64_t d[5];
  cuuint64_t s[4];
  cuuint32_t b[5];
  cuuint32_t e[5];
  for (int i = 0; i < rank; ++i) {
    d[i] = dims[i];
    b[i] = box[i];
    e[i] = 1;
    if (i + 1 < rank) s[i] = strides[i];
  }
  return encode(map, type, static_cast<cuuint32_t>(rank), const_cast<void*>(base), d, s, b, e,
                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// A map is a pure function of its key (type, rank, address, dims, strides, box, swizzle),
// so a hit can never be stale, even when memory is freed and reallocated at the same
// address. 64 slots, replaced round robin; a mutex makes it thread-safe.
bool encode_tensor_map_cached(CUtensorMap* map, CUtensorMapDataType type, int rank, const void* base,
                              const std::uint64_t* dims, const std::uint64_t* strides, const std::uint32_t* box,
                              CUtensorMapSwizzle swizzle) {
  struct Key {
    CUtensorMapDataType type{};
    int rank = 0;
    const void* base = nullptr;
    std::array<std::uint64_t, 5> dims{};
    std::array<std::uint64_t, 4> strides{};
    std::array<std::uint32_t, 5> box{};
    CUtensorMapSwizzle swizzle{};
    bool operator==(const Key&) const = default;
  };
  struct Slot {
    Key key;
    CUtensorMap map{};
    bool used = false;
  };
  if (rank < 1 || rank > 5) return false;
  Key key{type, rank, base, {}, {}, {}, swizzle};
  for (int i = 0; i < rank; ++i) {
    key.dims[static_cast<std::size_t>(i)] = dims[i];
    key.box[static_cast<std::size_t>(i)] = box[i];
    if (i + 1 < rank) key.strides[static_cast<std::size_t>(i)] = strides[i];
  }
  static std::mutex mu;
  static std::array<Slot, 64> slots;
  static std::size_t next = 0;
  std::lock_guard<std::mutex> lock(mu);
  for (const Slot& s : slots) {
    if (s.used && s.key == key) {
      *map = s.map;
      return true;
    }
  }
  if (!encode_tensor_map(map, type, rank, base, dims, strides, box, swizzle)) return false;
  slots[next] = Slot{key, *map, true};
  next = (next + 1) % slots.size();
  return true;
}

}  // namespace kernels::arch
