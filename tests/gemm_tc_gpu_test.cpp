// The tensor-core GEMMs (`mma`, `auto` (wgmma or mma by shape), and `cublas` in every dtype) against the problem's
// reference (the double host reference up to 2^30 multiply-adds, cuBLAS above) through the
// registry, in every dtype x layout at odd sizes (partial tiles in M, N and K, unaligned
// rows: the scalar load path) and aligned ones (the cp.async path), with beta 0 and != 0;
// then 4097x4095x4093, and gemm_mma called directly (argument errors, a misaligned
// pointer), and gemm_mma_tile with each tile configuration (large, medium, small) in every
// dtype and layout, fast and scalar path, against the host reference. Label `gpu`:
// skipped with "no CUDA device" where there is none.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "family_support.hpp"
#include "gemm/gemm_lowp.hpp"
#include "gemm/gemm_mma.hpp"
#include "gemm/gemm_reference.hpp"
#include "test_support.hpp"

namespace {

namespace kg = kernels::gemm;
using harness::test::have_device;

#define SKIP_WITHOUT_DEVICE() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device"

harness::Params params(std::int64_t M, std::int64_t N, std::int64_t K, const std::string& dtype,
                       const std::string& layout, double beta = 0.0) {
  harness::Params p;
  p.set("M", M);
  p.set("N", N);
  p.set("K", K);
  p.set("beta", beta);
  p.set("dtype", dtype);
  p.set("layout", layout);
  return harness::test::params_of(harness::test::problem_named("gemm"), p);
}

// Runs the reference variant and each of `names`, compares with the problem's tolerance;
// returns how many ran (a constraint skip prints its reason and does not count).
int check(const harness::Params& p, const std::vector<std::string>& names) {
  const harness::Problem& problem = harness::test::problem_named("gemm");
  const harness::Variant* ref = harness::Registry::instance().find_variant("gemm", problem.reference_variant(p));
  EXPECT_NE(ref, nullptr);
  auto inst = problem.make_instance(p, 2024);
  inst->prepare(harness::Backend::cpu);
  inst->prepare(harness::Backend::cuda);
  harness::Workspace ref_ws;
  const auto want = harness::test::run_once(*ref, *inst, p, &ref_ws);
  int ran = 0;
  for (const auto& name : names) {
    const harness::Variant* v = harness::Registry::instance().find_variant("gemm", name);
    EXPECT_NE(v, nullptr) << name;
    if (v->constraint) {
      if (const auto why = v->constraint(p)) {
        std::printf("  gemm/%s at %s: skipped: %s\n", name.c_str(), p.describe().c_str(), why->c_str());
        continue;
      }
    }
    harness::Workspace ws;
    const auto got = harness::test::run_once(*v, *inst, p, &ws);
    const auto r = harness::compare_outputs(got, want, problem.tolerance(p));
    EXPECT_TRUE(r.passed) << "gemm/" << name << " vs " << ref->name << " at " << p.describe() << ": " << r.summary();
    ++ran;
  }
  return ran;
}

const char* kDtypes[] = {"tf32", "bf16", "f16"};
const char* kLayouts[] = {"nn", "nt", "tn", "tt"};

TEST(GemmTcGpu, OddAndAlignedSizesEveryDtypeAndLayout) {
  SKIP_WITHOUT_DEVICE();
  struct Shape {
    int M, N, K;
    double beta;
  };
  // 1x1x1; primes (every tail, unaligned rows); 67x35x33 with beta; 256x384x320 aligned
  // (cp.async path, several tiles and k tiles); 130x136x72 aligned with partial tiles.
  const Shape shapes[] = {{1, 1, 1, 0}, {67, 35, 33, 0.5}, {131, 257, 97, 0}, {256, 384, 320, 0},
                          {130, 136, 72, -1.0}, {16, 4099, 8, 0}};
  for (const char* d : kDtypes)
    for (const char* l : kLayouts)
      for (const Shape& s : shapes)
        EXPECT_EQ(check(params(s.M, s.N, s.K, d, l, s.beta), {"mma", "cublas", "auto"}), 3);
  // f32: cublas and auto (FP32 kernels) in every layout (mma skips: no FP32 tensor-core path).
  for (const char* l : kLayouts) EXPECT_EQ(check(params(67, 35, 33, "f32", l, 0.5), {"mma", "cublas", "auto"}), 2);
}

bool is_hopper() {
  int dev = 0, major = 0, minor = 0;
  return cudaGetDevice(&dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess && major == 9 &&
         minor == 0;
}

// wgmma in tf32 through the registry (its workspace from the harness): every layout at odd
// sizes (K % 4 != 0: the row copy; nn, tn, tt: the transposes), against the cpu reference up
// to 2^30 multiply-adds and cuBLAS tf32 above, with the problem's tf32 tolerance. Off
// Hopper the variant skips (its reason printed) and nothing runs.
TEST(GemmTcGpu, WgmmaTf32OddSizesEveryLayout) {
  SKIP_WITHOUT_DEVICE();
  const int expect = is_hopper() ? 1 : 0;
  struct Shape {
    int M, N, K;
    double beta;
  };
  const Shape shapes[] = {{1, 1, 1, 0},      {67, 35, 33, 0.5},   {131, 257, 97, 0}, {256, 384, 320, 0},
                          {130, 136, 72, -1}, {127, 129, 4099, 0}, {16, 4099, 8, 0}};
  for (const char* l : kLayouts) {
    for (const Shape& s : shapes) EXPECT_EQ(check(params(s.M, s.N, s.K, "tf32", l, s.beta), {"wgmma"}), expect);
    EXPECT_EQ(check(params(4097, 4095, 4093, "tf32", l), {"wgmma"}), expect);
  }
}

// Above the cpu limit: cuBLAS in the same dtype is the reference.
TEST(GemmTcGpu, Odd4097x4095x4093) {
  SKIP_WITHOUT_DEVICE();
  for (const char* d : kDtypes)
    for (const char* l : {"nn", "tt"}) EXPECT_EQ(check(params(4097, 4095, 4093, d, l), {"mma"}), 1);
}

TEST(GemmTcGpu, MmaDirectCalls) {
  SKIP_WITHOUT_DEVICE();
  const int M = 40, N = 48, K = 64;  // leading dimensions aligned; the pointer is not
  std::vector<__nv_bfloat16> A(M * K + 1), B(K * N + 1);
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = __float2bfloat16(static_cast<float>((i * 7) % 13) / 8.0f - 0.75f);
  for (std::size_t i = 0; i < B.size(); ++i) B[i] = __float2bfloat16(static_cast<float>((i * 5) % 11) / 8.0f - 0.6f);
  __nv_bfloat16 *dA = nullptr, *dB = nullptr, *dC = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dA), A.size() * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dB), B.size() * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dC), M * N * 2), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dA, A.data(), A.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dB, B.data(), B.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_TRUE(kg::gemm_mma_fast_path(kg::TcDType::bf16, kg::Layout::nn, M, N, K, dA, dB));
  EXPECT_FALSE(kg::gemm_mma_fast_path(kg::TcDType::bf16, kg::Layout::nn, M, N, K, dA + 1, dB));
  // Argument errors, nothing launched.
  EXPECT_EQ(kg::gemm_mma(kg::TcDType::f32, kg::Layout::nn, M, N, K, 1, dA, dB, 0, dC, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_mma(kg::TcDType::bf16, kg::Layout::nn, 0, N, K, 1, dA, dB, 0, dC, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_mma(kg::TcDType::bf16, kg::Layout::nn, M, N, K, 1, nullptr, dB, 0, dC, nullptr),
            cudaErrorInvalidValue);
  // A misaligned A pointer (the scalar path), through the models' entry point.
  ASSERT_EQ(kg::gemm_bf16(kg::Layout::nn, M, N, K, 1.0f, dA + 1, dB, 0.0f, dC, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<__nv_bfloat16> got(M * N), want(M * N);
  ASSERT_EQ(cudaMemcpy(got.data(), dC, got.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  kg::gemm_cpu_ex(kg::TcDType::bf16, kg::Layout::nn, M, N, K, 1.0f, A.data() + 1, B.data(), 0.0f, want.data());
  int bad = 0;
  for (int i = 0; i < M * N; ++i) {
    const float g = __bfloat162float(got[i]), w = __bfloat162float(want[i]);
    if (std::abs(g - w) > 2.0f / 256.0f * std::abs(w) + 1e-3f) ++bad;
  }
  EXPECT_EQ(bad, 0);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
}

// Every tile configuration, forced, on shapes that exercise it: several k tiles beyond the
// stage count, partial tiles in M, N and K, beta != 0, unaligned rows (scalar path: large
// falls back to medium there) and K = 1. Inputs are multiples of 1/8 in [-0.75, 0.75], so
// every product and FP32 partial sum is exact and the kernel's result must equal the
// reference's single rounding (the tolerance only absorbs a last-bit difference).
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(p); }
};

std::vector<unsigned char> encode(kg::TcDType d, const std::vector<float>& v) {
  std::vector<unsigned char> out(v.size() * kg::element_bytes(d));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (d == kg::TcDType::bf16) {
      const __nv_bfloat16 x = __float2bfloat16(v[i]);
      std::memcpy(out.data() + 2 * i, &x, 2);
    } else if (d == kg::TcDType::f16) {
      const __half x = __float2half(v[i]);
      std::memcpy(out.data() + 2 * i, &x, 2);
    } else {
      std::memcpy(out.data() + 4 * i, &v[i], 4);
    }
  }
  return out;
}

float decode(kg::TcDType d, const unsigned char* p) {
  if (d == kg::TcDType::bf16) {
    __nv_bfloat16 x;
    std::memcpy(&x, p, 2);
    return __bfloat162float(x);
  }
  if (d == kg::TcDType::f16) {
    __half x;
    std::memcpy(&x, p, 2);
    return __half2float(x);
  }
  float x;
  std::memcpy(&x, p, 4);
  return x;
}

// Elements of C that differ from the reference beyond a last-bit rounding difference; -1 on a CUDA error.
int tile_mismatches(kg::MmaTile tile, kg::TcDType d, kg::Layout l, int M, int N, int K, float beta) {
  std::vector<float> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(K) * N), c(static_cast<std::size_t>(M) * N);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7) % 13) / 8.0f - 0.75f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 5) % 11) / 8.0f - 0.625f;
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>((i * 3) % 7) / 8.0f - 0.375f;
  const auto ha = encode(d, a), hb = encode(d, b), hc = encode(d, c);
  DeviceBuffer da(ha.size()), db(hb.size()), dc(hc.size());
  if (cudaMemcpy(da.p, ha.data(), ha.size(), cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(db.p, hb.data(), hb.size(), cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(dc.p, hc.data(), hc.size(), cudaMemcpyHostToDevice) != cudaSuccess)
    return -1;
  if (kg::gemm_mma_tile(tile, d, l, M, N, K, 1.0f, da.p, db.p, beta, dc.p, nullptr) != cudaSuccess ||
      cudaDeviceSynchronize() != cudaSuccess)
    return -1;
  std::vector<unsigned char> got(hc.size()), want = hc;
  if (cudaMemcpy(got.data(), dc.p, got.size(), cudaMemcpyDeviceToHost) != cudaSuccess) return -1;
  kg::gemm_cpu_ex(d, l, M, N, K, 1.0f, ha.data(), hb.data(), beta, want.data());
  const int eb = kg::element_bytes(d);
  int bad = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const float g = decode(d, got.data() + i * eb), w = decode(d, want.data() + i * eb);
    if (!(std::abs(g - w) <= std::abs(w) / 128.0f + 1e-6f)) ++bad;
  }
  return bad;
}

TEST(GemmTcGpu, EveryTileConfigEveryDtypeAndLayout) {
  SKIP_WITHOUT_DEVICE();
  struct Shape {
    int M, N, K;
    float beta;
  };
  // 136x264x520: aligned (cp.async path), 2 x 2 large tiles, 9 (17 for tf32) k tiles with a
  // tail; 67x35x133: unaligned rows (scalar path) with beta; 9x300x1: K = 1, one partial k tile.
  const Shape shapes[] = {{136, 264, 520, 0.0f}, {67, 35, 133, 0.5f}, {9, 300, 1, -1.0f}};
  const kg::TcDType dtypes[] = {kg::TcDType::tf32, kg::TcDType::bf16, kg::TcDType::f16};
  const kg::Layout layouts[] = {kg::Layout::nn, kg::Layout::nt, kg::Layout::tn, kg::Layout::tt};
  const kg::MmaTile tiles[] = {kg::MmaTile::large, kg::MmaTile::medium, kg::MmaTile::small, kg::MmaTile::automatic};
  for (const auto tile : tiles)
    for (const auto d : dtypes)
      for (const auto l : layouts)
        for (const Shape& s : shapes)
          EXPECT_EQ(tile_mismatches(tile, d, l, s.M, s.N, s.K, s.beta), 0)
              << "tile " << static_cast<int>(tile) << " dtype " << static_cast<int>(d) << " layout "
              << static_cast<int>(l) << " at " << s.M << "x" << s.N << "x" << s.K;
}

// The shape rule of MmaTile::automatic on a 132-SM GPU (H100 SXM / H200).
TEST(GemmTcGpu, PickTileByShape) {
  EXPECT_EQ(kg::gemm_mma_pick_tile(8192, 8192, 132), kg::MmaTile::large);   // 2048 large tiles
  EXPECT_EQ(kg::gemm_mma_pick_tile(4096, 4096, 132), kg::MmaTile::large);   // 512
  EXPECT_EQ(kg::gemm_mma_pick_tile(2048, 2048, 132), kg::MmaTile::medium);  // 128 large, 256 medium
  EXPECT_EQ(kg::gemm_mma_pick_tile(1024, 1024, 132), kg::MmaTile::small);   // 64 medium
  EXPECT_EQ(kg::gemm_mma_pick_tile(64, 8192, 132), kg::MmaTile::small);     // 64 medium, 128 small
  EXPECT_EQ(kg::gemm_mma_pick_tile(128, 4096, 132), kg::MmaTile::small);
  EXPECT_EQ(kg::gemm_mma_pick_tile(4096, 4096, 1 << 20), kg::MmaTile::small);
}

}  // namespace
