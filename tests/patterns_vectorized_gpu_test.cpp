// The 16-byte-load top rungs (reduce/vectorized, histogram/privatized_vectorized, the
// scan block scan of hierarchical and decoupled_lookback) called directly at pointers
// off a 16-byte boundary (x + 1 .. x + 3 elements): the scalar head, the vector body and
// the scalar tail all run, which the registry path (aligned allocations) does not reach.
// Label gpu; skips without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include <cuda_runtime_api.h>

#include "histogram/histogram.hpp"
#include "reduce/reduce.hpp"
#include "scan/scan.hpp"
#include "test_support.hpp"

namespace {

using harness::test::have_device;

// Device copy of a host vector, freed at scope end.
template <class T>
struct DeviceBuffer {
  T* p = nullptr;
  explicit DeviceBuffer(std::size_t n) { EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T) + 64), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(p); }
};

std::vector<unsigned> words(std::size_t n, unsigned seed) {
  std::vector<unsigned> v(n);
  std::uint64_t z = seed;
  for (auto& w : v) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    w = static_cast<unsigned>(z >> 33);
  }
  return v;
}

const std::size_t kSizes[] = {1, 2, 3, 5, 17, 1009, 4097, 65537, (1u << 20) + 3};

TEST(PatternsVectorizedGpu, ReduceVectorizedAtEveryOffset) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  namespace kr = kernels::reduce;
  for (std::size_t n : kSizes)
    for (std::size_t off = 0; off < 4; ++off) {
      const std::vector<unsigned> u = words(n, static_cast<unsigned>(n + off));
      DeviceBuffer<unsigned> x(n + off), out(1);
      DeviceBuffer<unsigned char> scratch(kr::workspace_bytes(kr::Algo::vectorized, n, kr::Elem::u32));
      ASSERT_EQ(cudaMemcpy(x.p + off, u.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(kr::launch(kr::Algo::vectorized, kr::Op::sum, kr::Elem::u32, x.p + off, out.p, n, scratch.p, nullptr),
                cudaSuccess);
      unsigned got = 0;
      ASSERT_EQ(cudaMemcpy(&got, out.p, 4, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(got, kr::reduce_cpu_u32_sum(u.data(), n)) << "n " << n << " offset " << off;
      // max over floats made of the same bits (finite: clear the exponent's top bit)
      std::vector<float> f(n);
      for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<float>(u[i] % 100000) - 50000.0f;
      ASSERT_EQ(cudaMemcpy(x.p + off, f.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(kr::launch(kr::Algo::vectorized, kr::Op::max, kr::Elem::f32, x.p + off, out.p, n, scratch.p, nullptr),
                cudaSuccess);
      float fmax = 0;
      ASSERT_EQ(cudaMemcpy(&fmax, out.p, 4, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(fmax, kr::reduce_cpu_f32(kr::Op::max, f.data(), n)) << "n " << n << " offset " << off;
    }
}

TEST(PatternsVectorizedGpu, HistogramPrivatizedVectorizedAtEveryOffset) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  namespace kh = kernels::histogram;
  for (std::size_t n : kSizes)
    for (std::size_t off = 0; off < 16; off += 5) {  // 0, 5, 10, 15
      std::vector<unsigned char> bytes(n);
      const std::vector<unsigned> u = words(n, static_cast<unsigned>(3 * n + off));
      for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(i % 7 == 0 ? 'e' : u[i] & 0xFF);
      DeviceBuffer<unsigned char> x(n + off);
      DeviceBuffer<unsigned> counts(256);
      ASSERT_EQ(cudaMemcpy(x.p + off, bytes.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
      for (kh::Bins bins : {kh::Bins::bytes, kh::Bins::letters}) {
        const int b = kh::bin_count(bins);
        ASSERT_EQ(kh::launch(kh::Algo::privatized_vectorized, bins, x.p + off, n, counts.p, nullptr), cudaSuccess);
        std::vector<unsigned> got(b), want(b);
        ASSERT_EQ(cudaMemcpy(got.data(), counts.p, b * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        kh::histogram_cpu(bins, bytes.data(), n, want.data());
        EXPECT_EQ(got, want) << "n " << n << " offset " << off << " bins " << b;
      }
    }
}

TEST(PatternsVectorizedGpu, ScanCoarsenedTilesAtEveryOffset) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  namespace ks = kernels::scan;
  for (std::size_t n : kSizes)
    for (std::size_t off : {0, 1, 3})
      for (ks::Algo algo : {ks::Algo::hierarchical, ks::Algo::decoupled_lookback}) {
        const std::vector<unsigned> u = words(n, static_cast<unsigned>(7 * n + off));
        DeviceBuffer<unsigned> x(n + off), y(n + off);
        DeviceBuffer<unsigned char> scratch(ks::workspace_bytes(algo, n) + 16);
        ASSERT_EQ(cudaMemcpy(x.p + off, u.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_EQ(ks::launch(algo, ks::Elem::u32, x.p + off, y.p + off, n, scratch.p, nullptr), cudaSuccess);
        std::vector<unsigned> got(n), want(n);
        ASSERT_EQ(cudaMemcpy(got.data(), y.p + off, n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        ks::scan_cpu_u32(u.data(), want.data(), n);
        EXPECT_EQ(got, want) << "n " << n << " offset " << off << " algo " << static_cast<int>(algo);
      }
}

}  // namespace
