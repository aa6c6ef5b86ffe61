#pragma once
// Deterministic input generation: the same (seed, stream id) gives the same values on
// every machine (a counter-based generator, no std::distribution differences).
#include <cstdint>
#include <span>

namespace harness {

// Uniform in [lo, hi).
void fill_uniform(std::span<float> values, std::uint64_t seed, std::uint64_t stream, float lo, float hi);
// Standard normal N(0, 1) (Box-Muller on the same generator), times `scale`.
void fill_normal(std::span<float> values, std::uint64_t seed, std::uint64_t stream, float scale = 1.0f);

}  // namespace harness
