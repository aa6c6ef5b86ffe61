#include "harness/random.hpp"

#include <cmath>
#include <numbers>

namespace harness {
namespace {

// SplitMix64 of (seed, stream, index): counter-based, so any element can be generated
// independently and the sequence is identical everywhere.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) with 24 random bits (exactly representable as float).
double unit(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  const std::uint64_t bits = mix(mix(seed ^ mix(stream)) + i);
  return static_cast<double>(bits >> 40) * (1.0 / 16777216.0);
}

}  // namespace

void fill_uniform(std::span<float> values, std::uint64_t seed, std::uint64_t stream, float lo, float hi) {
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(lo + (hi - lo) * unit(seed, stream, i));
}

void fill_normal(std::span<float> values, std::uint64_t seed, std::uint64_t stream, float scale) {
  for (std::size_t i = 0; i < values.size(); i += 2) {
    // Box-Muller: two uniforms give two independent normals.
    const double u1 = 1.0 - unit(seed, stream, i);  // (0, 1]
    const double u2 = unit(seed, stream, i + 1);
    const double r = std::sqrt(-2.0 * std::log(u1));
    values[i] = static_cast<float>(scale * r * std::cos(2 * std::numbers::pi * u2));
    if (i + 1 < values.size()) values[i + 1] = static_cast<float>(scale * r * std::sin(2 * std::numbers::pi * u2));
  }
}

}  // namespace harness
