#include "harness/random.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <thread>
#include <vector>

#include "operands/fill.hpp"

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

std::uint64_t bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) { return mix(mix(seed ^ mix(stream)) + i); }

// Uniform in [0, 1) with 24 random bits (exactly representable as float).
double unit(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  return static_cast<double>(bits(seed, stream, i) >> 40) * (1.0 / 16777216.0);
}

// Element i of a normal sequence: Box-Muller on the pair (i & ~1, i | 1).
double normal_at(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  const std::uint64_t even = i & ~std::uint64_t{1};
  const double u1 = 1.0 - unit(seed, stream, even);  // (0, 1]
  const double u2 = unit(seed, stream, even + 1);
  const double r = std::sqrt(-2.0 * std::log(u1));
  return r * ((i & 1) ? std::sin(2 * std::numbers::pi * u2) : std::cos(2 * std::numbers::pi * u2));
}

// Runs body(begin, end) over [0, n) in chunks on the host's threads (inline when small).
template <class Body>
void parallel_for(std::size_t n, Body&& body) {
  constexpr std::size_t kSerialBelow = std::size_t{1} << 18;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (n < kSerialBelow || threads == 1) {
    body(std::size_t{0}, n);
    return;
  }
  const std::size_t chunk = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    if (b < e) pool.emplace_back([&body, b, e] { body(b, e); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace

void fill_uniform(std::span<float> values, std::uint64_t seed, std::uint64_t stream, float lo, float hi) {
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(lo + (hi - lo) * unit(seed, stream, i));
}

void fill_normal(std::span<float> values, std::uint64_t seed, std::uint64_t stream, float scale) {
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(scale * normal_at(seed, stream, i));
}

void fill_elements(std::span<std::byte> elements, DType dtype, const Fill& fill, std::uint64_t seed,
                   std::uint64_t stream) {
  if (fill.kind == Fill::Kind::custom) {
    if (fill.custom) fill.custom(elements, seed);
    return;
  }
  const std::size_t width = size_of(dtype), n = elements.size() / width;
  // The value of element i of a sequence (block b: stream << 32 | b, index within it).
  auto value = [&](std::uint64_t s, std::uint64_t i) -> double {
    switch (fill.kind) {
      case Fill::Kind::uniform:
        // Computed in float as fill_uniform does, so f32 operands match it bit for bit.
        return static_cast<float>(static_cast<float>(fill.a) +
                                  (static_cast<float>(fill.b) - static_cast<float>(fill.a)) * unit(seed, s, i));
      case Fill::Kind::normal: return static_cast<float>(fill.a * normal_at(seed, s, i));
      case Fill::Kind::integers: {
        const auto lo = static_cast<std::int64_t>(fill.a), hi = static_cast<std::int64_t>(fill.b);
        const std::uint64_t range = static_cast<std::uint64_t>(hi - lo) + 1;  // 0: all 2^64 values
        const std::uint64_t r = bits(seed, s, i);
        return static_cast<double>(lo + static_cast<std::int64_t>(range ? r % range : r));
      }
      case Fill::Kind::custom: break;
    }
    return 0;
  };
  parallel_for(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint64_t s = fill.block ? ((stream << 32) | (i / fill.block)) : stream;
      const std::uint64_t k = fill.block ? i % fill.block : i;
      store_from_double(elements.data() + i * width, dtype, value(s, k));
    }
  });
}

}  // namespace harness
