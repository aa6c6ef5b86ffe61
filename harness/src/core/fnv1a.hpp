#pragma once
// FNV-1a, 64 bits (Fowler, Noll, Vo): a fingerprint of bytes, for content hashes and seeds
// derived from names; not against an adversary.
#include <cstdint>
#include <string_view>

namespace harness {

inline constexpr std::uint64_t kFnv1aOffset = 0xcbf29ce484222325ull;

// The hash of `bytes`, continuing from `h` (the offset basis for a fresh hash).
inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h = kFnv1aOffset) {
  for (const char ch : bytes) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ull;
  return h;
}

}  // namespace harness
