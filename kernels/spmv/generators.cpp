// The named matrix structures of generators.hpp.
#include "spmv/generators.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace kernels::spmv {
namespace {

// splitmix64: a counter-based generator, so that any element's value is a function of
// (seed, index) alone.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
double unit(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }  // [0, 1)
float value(std::uint64_t seed, std::uint64_t index) {
  return static_cast<float>(2.0 * unit(mix(mix(seed ^ 0x5350'4d56ull) + index)) - 1.0);
}

constexpr std::uint64_t kStructureSalt = 0x726f'776c'656eull;  // row lengths: no seed

// Rank of a row in the power-law order: k = (row * P + 7) mod n, a permutation when P
// and n are coprime (P a prime; n a multiple of it falls back to P = 1).
std::int64_t powerlaw_rank(std::int64_t row, std::int64_t n) {
  constexpr std::int64_t P = 1000003;
  const std::int64_t p = n % P == 0 ? 1 : P;
  // row < 2^31 and p < 2^20: the product fits 64 bits.
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(p) + 7) %
                                   static_cast<std::uint64_t>(n));
}

std::int32_t length_of(const GenSpec& s, std::int64_t row) {
  switch (s.structure) {
    case Structure::laplace2d: {
      const std::int64_t g = s.n, i = row / g, j = row % g;
      return static_cast<std::int32_t>(1 + (i > 0) + (i + 1 < g) + (j > 0) + (j + 1 < g));
    }
    case Structure::laplace3d: {
      const std::int64_t g = s.n, i = row / (g * g), j = (row / g) % g, k = row % g;
      return static_cast<std::int32_t>(1 + (i > 0) + (i + 1 < g) + (j > 0) + (j + 1 < g) + (k > 0) + (k + 1 < g));
    }
    case Structure::random: {
      const double mean = s.density * static_cast<double>(s.n);
      const auto len = static_cast<std::int64_t>(std::floor(unit(mix(kStructureSalt + row)) * (2 * mean + 1)));
      return static_cast<std::int32_t>(std::min<std::int64_t>(len, s.n));
    }
    case Structure::powerlaw: {
      const std::int64_t k = powerlaw_rank(row, s.n);
      const double m = static_cast<double>(std::min(s.max_row, s.n));
      // (k + 1)^1.5 > m: no tail (most rows; skips the pow).
      const double kp1 = static_cast<double>(k + 1);
      const std::int64_t tail = kp1 * kp1 * kp1 > m * m ? 0 : static_cast<std::int64_t>(std::floor(m / std::pow(kp1, 1.5)));
      const std::int64_t base = 1 + static_cast<std::int64_t>(mix(kStructureSalt ^ row) % 4);
      return static_cast<std::int32_t>(std::min<std::int64_t>(base + tail, s.n));
    }
    case Structure::blockdiag: {
      const std::int64_t start = row / s.block * s.block;
      return static_cast<std::int32_t>(std::min(start + s.block, s.n) - start);
    }
  }
  return 0;
}

}  // namespace

std::int64_t rows_of(const GenSpec& s) {
  if (s.structure == Structure::laplace2d) return s.n * s.n;
  if (s.structure == Structure::laplace3d) return s.n * s.n * s.n;
  return s.n;
}

std::vector<std::int32_t> row_lengths(const GenSpec& s) {
  const std::int64_t rows = rows_of(s);
  std::vector<std::int32_t> len(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) len[static_cast<std::size_t>(r)] = length_of(s, r);
  return len;
}

std::int64_t nnz_of(const GenSpec& s) {
  switch (s.structure) {  // closed forms where there is one
    case Structure::laplace2d: return s.n * s.n * 5 - 4 * s.n;
    case Structure::laplace3d: return s.n * s.n * s.n * 7 - 6 * s.n * s.n;
    case Structure::blockdiag: {
      const std::int64_t full = s.n / s.block, rest = s.n % s.block;
      return full * s.block * s.block + rest * rest;
    }
    default: break;
  }
  std::int64_t total = 0;
  for (std::int64_t r = 0; r < rows_of(s); ++r) total += length_of(s, r);
  return total;
}

Csr generate(const GenSpec& s, std::uint64_t seed) {
  const std::int64_t rows64 = rows_of(s);
  const std::int64_t nnz = nnz_of(s);
  if (rows64 > INT32_MAX || nnz > INT32_MAX) throw std::invalid_argument("matrix too large for 32-bit indices");
  Csr a;
  a.rows = a.cols = static_cast<std::int32_t>(rows64);
  const auto len = row_lengths(s);
  a.row_ptr.assign(len.size() + 1, 0);
  std::partial_sum(len.begin(), len.end(), a.row_ptr.begin() + 1);
  a.col.resize(static_cast<std::size_t>(nnz));
  a.val.resize(static_cast<std::size_t>(nnz));
  const std::int64_t g = s.n;
  for (std::int32_t r = 0; r < a.rows; ++r) {
    std::int32_t* c = a.col.data() + a.row_ptr[r];
    float* v = a.val.data() + a.row_ptr[r];
    const std::int32_t L = len[r];
    switch (s.structure) {
      case Structure::laplace2d:
      case Structure::laplace3d: {
        // Neighbours in increasing column order: -plane, -row, -1, self, +1, +row, +plane.
        const bool three = s.structure == Structure::laplace3d;
        const std::int64_t plane = g * g;
        const std::int64_t i = three ? r / plane : 0, j = three ? (r / g) % g : r / g, k = r % g;
        std::int32_t m = 0;
        auto put = [&](std::int64_t colv, float x) { c[m] = static_cast<std::int32_t>(colv); v[m] = x; ++m; };
        if (three && i > 0) put(r - plane, -1.0f);
        if (j > 0) put(r - g, -1.0f);
        if (k > 0) put(r - 1, -1.0f);
        put(r, three ? 6.0f : 4.0f);
        if (k + 1 < g) put(r + 1, -1.0f);
        if (j + 1 < g) put(r + g, -1.0f);
        if (three && i + 1 < g) put(r + plane, -1.0f);
        break;
      }
      case Structure::random:
      case Structure::powerlaw:
        // One column per stratum [q n / L, (q + 1) n / L): distinct and sorted.
        for (std::int32_t q = 0; q < L; ++q) {
          const std::int64_t lo = q * s.n / L, hi = (q + 1) * s.n / L;
          const std::uint64_t h = mix(mix(seed + 0x636f6cull) + static_cast<std::uint64_t>(a.row_ptr[r] + q));
          c[q] = static_cast<std::int32_t>(lo + static_cast<std::int64_t>(h % static_cast<std::uint64_t>(hi - lo)));
        }
        break;
      case Structure::blockdiag: {
        const std::int64_t start = static_cast<std::int64_t>(r) / s.block * s.block;
        for (std::int32_t q = 0; q < L; ++q) c[q] = static_cast<std::int32_t>(start + q);
        break;
      }
    }
    if (s.structure != Structure::laplace2d && s.structure != Structure::laplace3d)
      for (std::int32_t q = 0; q < L; ++q) v[q] = value(seed, static_cast<std::uint64_t>(a.row_ptr[r] + q));
  }
  return a;
}

}  // namespace kernels::spmv
