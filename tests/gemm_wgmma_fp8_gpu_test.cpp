// dtype fp8_e4m3 on the GPU (issue 32 item 3): the Hopper wgmma kernel (gemm_wgmma_fp8_e4m3)
// and cuBLASLt's FP8 matmul (gemm_cublaslt_fp8_e4m3) on the gemm problem's inputs (the
// quantizing fill of plugins/gemm/gemm_fp8.hpp, scales 1/448 and 1/384), checked with the
// problem's fp8 tolerance (gemm_tolerance.hpp) against the double host reference on the
// dequantized inputs (gemm_cpu_fp8_e4m3; on sampled rows at 4096^3, where the whole product
// would take the host a minute) and against each other. Also argument errors, every kernel
// path (clusters of 1/2, direct and TMA-store epilogues, split-K), odd sizes, the harness's
// skip of a bad layout, and a timing printout (printed, never asserted). Label `gpu`; wgmma
// tests skip on a device that is not compute capability 9.0, cuBLASLt ones below 8.9.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gemm/gemm_cublas.hpp"
#include "gemm/gemm_cublaslt_fp8.hpp"
#include "gemm/gemm_reference.hpp"
#include "gemm/gemm_types.hpp"
#include "gemm/gemm_wgmma.hpp"
#include "gemm_fp8.hpp"
#include "gemm_params.hpp"
#include "gemm_test_support.hpp"
#include "gemm_tolerance.hpp"
#include "gpu_timing.hpp"
#include "test_support.hpp"

namespace {

namespace kg = kernels::gemm;
namespace pg = plugins::gemm;
using harness::test::have_device;

int compute_capability() { return have_device() ? pg::current_compute_capability().value_or(0) : 0; }

#define SKIP_WITHOUT_HOPPER() \
  if (compute_capability() != 90) GTEST_SKIP() << "no compute capability 9.0 device (wgmma is built for sm_90a only)"
#define SKIP_WITHOUT_FP8() \
  if (compute_capability() < 89) GTEST_SKIP() << "no device with FP8 tensor cores (compute capability >= 8.9)"

std::size_t elems(std::int64_t a, std::int64_t b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }

// Device bytes, freed on scope exit.
struct DeviceBytes {
  void* p = nullptr;
  explicit DeviceBytes(std::size_t n) { EXPECT_EQ(cudaMalloc(&p, std::max<std::size_t>(n, 16)), cudaSuccess); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  ~DeviceBytes() { cudaFree(p); }
  template <class T>
  T* as() const { return static_cast<T*>(p); }
};

// The problem's fp8 inputs: A (M, K) with scale_a, B (N, K) with scale_b (streams 1 and 2).
std::vector<std::uint8_t> fp8_input(std::size_t n, float scale, std::uint64_t stream, std::uint64_t seed) {
  std::vector<std::uint8_t> q(n);
  pg::fp8_fill(scale, stream).custom(std::as_writable_bytes(std::span<std::uint8_t>(q)), seed);
  return q;
}

struct Case {
  int M, N, K;
  std::vector<std::uint8_t> a, b;
  DeviceBytes da, db, dc;
  Case(int m, int n, int k, std::uint64_t seed)
      : M(m), N(n), K(k), a(fp8_input(elems(m, k), pg::kFp8ScaleA, 1, seed)),
        b(fp8_input(elems(n, k), pg::kFp8ScaleB, 2, seed)), da(a.size()), db(b.size()), dc(elems(m, n) * 2) {
    EXPECT_EQ(cudaMemcpy(da.p, a.data(), a.size(), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(db.p, b.data(), b.size(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  void poison() { EXPECT_EQ(cudaMemset(dc.p, 0xFF, elems(M, N) * 2), cudaSuccess); }  // NaN bf16
  std::vector<float> download() const {
    std::vector<__nv_bfloat16> h(elems(M, N));
    EXPECT_EQ(cudaMemcpy(h.data(), dc.p, h.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<float> f(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) f[i] = __bfloat162float(h[i]);
    return f;
  }
  // The double reference of rows [r0, r0 + rows) (A's rows are contiguous in layout nt).
  std::vector<float> reference_rows(int r0, int rows) const {
    std::vector<__nv_bfloat16> h(elems(rows, N));
    kg::gemm_cpu_fp8_e4m3(kg::Layout::nt, rows, N, K, pg::kFp8ScaleA, pg::kFp8ScaleB, a.data() + elems(r0, K),
                          b.data(), h.data());
    std::vector<float> f(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) f[i] = __bfloat162float(h[i]);
    return f;
  }
};

// Elements of got (rows [r0, r0 + rows) of an (M, N) result) outside the fp8 tolerance of want.
void expect_close(const std::vector<float>& got, std::size_t got_offset, const std::vector<float>& want, int N, int K,
                  const char* what) {
  const harness::Tolerance tol = pg::tolerance_for(kg::TcDType::fp8_e4m3, K, 1.0, 0.0);
  std::size_t bad = 0, first = 0;
  double max_err = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double err = std::fabs(static_cast<double>(got[got_offset + i]) - want[i]);
    if (!(err <= tol.abs + tol.rel * std::fabs(want[i])) && bad++ == 0) first = i;  // NaN counts
    if (!(err <= max_err)) max_err = err;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << want.size() << " off; first row " << first / N << " col "
                     << first % N << ": got " << got[got_offset + first] << " want " << want[first] << "; max |err| "
                     << max_err << " (abs tol " << tol.abs << ")";
}

cudaError_t run_wgmma(Case& c, const kg::GemmWgmmaTuning& tuning = {}, void* ws = nullptr, std::size_t ws_bytes = 0) {
  return kg::gemm_wgmma_fp8_e4m3(c.M, c.N, c.K, pg::kFp8ScaleA, pg::kFp8ScaleB, c.da.as<const __nv_fp8_e4m3>(),
                                 c.db.as<const __nv_fp8_e4m3>(), c.dc.as<__nv_bfloat16>(), nullptr, tuning, ws,
                                 ws_bytes);
}

// cuBLASLt with device scales and its recommended workspace.
struct Lt {
  cublasLtHandle_t handle = nullptr;
  DeviceBytes scales{32}, workspace{kg::kCublasWorkspaceBytes};  // scale_b 16 bytes after scale_a
  Lt() {
    EXPECT_EQ(cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS);
    const float s[5] = {pg::kFp8ScaleA, 0, 0, 0, pg::kFp8ScaleB};
    EXPECT_EQ(cudaMemcpy(scales.p, s, sizeof(s), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~Lt() { cublasLtDestroy(handle); }
  cublasStatus_t run(Case& c) const {
    return kg::gemm_cublaslt_fp8_e4m3(handle, c.M, c.N, c.K, scales.as<const float>(), scales.as<const float>() + 4,
                                      c.da.p, c.db.p, c.dc.as<__nv_bfloat16>(), nullptr, workspace.p,
                                      kg::kCublasWorkspaceBytes);
  }
};

TEST(GemmWgmmaFp8, Errors) {
  SKIP_WITHOUT_HOPPER();
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  EXPECT_EQ(kg::gemm_wgmma_unsupported(dev, false, true, 61, 67, 64, 1), nullptr);
  EXPECT_NE(kg::gemm_wgmma_unsupported(dev, false, false, 64, 64, 64, 1), nullptr);  // nn
  EXPECT_NE(kg::gemm_wgmma_unsupported(dev, false, true, 64, 64, 40, 1), nullptr);   // K % 16
  Case c(64, 64, 64, 1);
  EXPECT_EQ(kg::gemm_wgmma_fp8_e4m3(64, 64, 64, 1.f, 1.f, nullptr, c.db.as<const __nv_fp8_e4m3>(),
                                    c.dc.as<__nv_bfloat16>(), nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_wgmma_fp8_e4m3(64, 64, 40, 1.f, 1.f, c.da.as<const __nv_fp8_e4m3>(),
                                    c.db.as<const __nv_fp8_e4m3>(), c.dc.as<__nv_bfloat16>(), nullptr),
            cudaErrorNotSupported);
  EXPECT_EQ(run_wgmma(c), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

constexpr auto tuning_of = harness::test::wgmma_tuning_of;

// Every kernel path against the full double reference: a single tile's corner (1 x 8),
// tails in M, N and K (K % 128 != 0: TMA's zero fill), N odd (direct per-element stores),
// more tiles than SMs (the persistent loop), an odd tile count (a cluster's second CTA out
// of bounds), forced and by-shape split-K.
TEST(GemmWgmmaFp8, EveryTuningAgainstTheReference) {
  SKIP_WITHOUT_HOPPER();
  struct Shape {
    int M, N, K;
  };
  const Shape shapes[] = {{1, 8, 16}, {67, 35, 48}, {129, 264, 144}, {300, 520, 1008}, {2200, 2056, 256}};
  for (int i = 0; i < 4; ++i)
    for (const Shape& s : shapes) {
      SCOPED_TRACE(std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) + " tuning " +
                   std::to_string(i));
      Case c(s.M, s.N, s.K, 11 + i);
      c.poison();
      ASSERT_EQ(run_wgmma(c, tuning_of(i)), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      expect_close(c.download(), 0, c.reference_rows(0, s.M), s.N, s.K, "wgmma");
    }
  // Split-K: one tile, 64 K steps (by shape: several splits), and a forced 3-way split.
  for (int splits : {0, 3}) {
    Case c(127, 129, 8192, 5);
    kg::GemmWgmmaTuning t;
    t.splits = splits;
    const std::size_t bytes = kg::gemm_wgmma_splitk_workspace_bytes(c.M, c.N, c.K, 1, t);
    DeviceBytes ws(bytes);
    ASSERT_EQ(cudaMemset(ws.p, 0xFF, std::max<std::size_t>(bytes, 16)), cudaSuccess);  // the kernel zeroes it
    c.poison();
    ASSERT_EQ(run_wgmma(c, t, bytes > 0 ? ws.p : nullptr, bytes), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    expect_close(c.download(), 0, c.reference_rows(0, c.M), c.N, c.K, splits == 0 ? "split by shape" : "3 splits");
  }
}

// 4096^3 and the odd sizes: wgmma and cuBLASLt each against the double reference on 64
// sampled rows (the first and the last 32: the ragged last tile), and against each other
// everywhere. 4097 x 4095 x 4096: cuBLASLt's alignment rule refuses N odd; wgmma alone.
TEST(GemmWgmmaFp8, LargeAndOddAgainstReferenceAndCublasLt) {
  SKIP_WITHOUT_HOPPER();
  const Lt lt;
  struct Shape {
    int M, N, K;
  };
  for (const Shape s : {Shape{4096, 4096, 4096}, Shape{4097, 4104, 4096}, Shape{4097, 4095, 4096}}) {
    SCOPED_TRACE(std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K));
    Case c(s.M, s.N, s.K, 21);
    const bool cublas_ok = kg::gemm_cublaslt_fp8_unsupported(compute_capability(), s.M, s.N, s.K) == nullptr;
    EXPECT_EQ(cublas_ok, s.N % 8 == 0);
    std::vector<float> ref_lt;
    if (cublas_ok) {
      c.poison();
      ASSERT_EQ(lt.run(c), CUBLAS_STATUS_SUCCESS);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ref_lt = c.download();
    }
    c.poison();
    ASSERT_EQ(run_wgmma(c), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> got = c.download();
    for (int r0 : {0, s.M - 32}) {
      const auto want = c.reference_rows(r0, 32);
      expect_close(got, elems(r0, s.N), want, s.N, s.K, "wgmma vs double reference");
      if (cublas_ok) expect_close(ref_lt, elems(r0, s.N), want, s.N, s.K, "cuBLASLt vs double reference");
    }
    if (cublas_ok) expect_close(got, 0, ref_lt, s.N, s.K, "wgmma vs cuBLASLt");
  }
}

TEST(GemmCublasLtFp8, OddSizeAgainstTheReference) {
  SKIP_WITHOUT_FP8();
  const Lt lt;
  Case c(1023, 1032, 1008, 4);
  c.poison();
  ASSERT_EQ(lt.run(c), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_close(c.download(), 0, c.reference_rows(0, c.M), c.N, c.K, "cuBLASLt");
}

// Through the harness: fp8 checks pass at 4096^3 (reference: cuBLASLt) and at an odd size
// (reference: cpu), a bad layout skips with the reason, config records the scales.
TEST(GemmWgmmaFp8, HarnessRunChecksAndSkips) {
  SKIP_WITHOUT_HOPPER();
  const auto dir = std::filesystem::temp_directory_path() / ("gemm_fp8_gpu_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto suite = dir / "fp8.yaml";
  std::ofstream(suite) << "suite: fp8\nsettings: {warmup: 1, min_samples: 3, min_time: 0, max_time: 0.2}\ncases:\n"
                          "  - name: ok\n    problem: gemm\n    params:\n"
                          "      - {M: 4096, N: 4096, K: 4096, dtype: fp8_e4m3, layout: nt}\n"
                          "      - {M: 1023, N: 1025, K: 1008, dtype: fp8_e4m3, layout: nt}\n"
                          "    variants: [wgmma, cublas]\n"
                          "  - name: bad-layout\n    problem: gemm\n"
                          "    params: {M: 256, N: 256, K: 256, dtype: fp8_e4m3, layout: nn}\n"
                          "    variants: [wgmma, cublas]\n";
  const auto out = (dir / "fp8.json").string();
  const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + suite.string() +
                                            " --no-profile --allow-skips --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string report = harness::test::read_file(out);
  EXPECT_EQ(report.find("\"status\": \"failed\""), std::string::npos) << r.output;
  // The skip reasons, as the report records them.
  EXPECT_NE(report.find("wgmma: layout: fp8 wgmma reads both operands K-major only"), std::string::npos) << r.output;
  EXPECT_NE(report.find("cublas: layout: cuBLASLt's FP8 matmul takes the TN format only"), std::string::npos)
      << r.output;
  EXPECT_NE(report.find("N % 8"), std::string::npos) << r.output;  // cuBLASLt at N = 1025
  EXPECT_NE(report.find("scale_a=1/448 scale_b=1/384"), std::string::npos);
  std::size_t passed = 0;
  for (std::size_t at = report.find("\"status\": \"passed\""); at != std::string::npos;
       at = report.find("\"status\": \"passed\"", at + 1))
    ++passed;
  EXPECT_EQ(passed, 3u) << r.output;  // wgmma and cuBLASLt at 4096^3, wgmma at 1023 x 1025
  std::filesystem::remove_all(dir);
}

using harness::test::median_ms;  // printed, never asserted

TEST(GemmWgmmaFp8, TimingVsCublasLtAndBf16Printout) {
  SKIP_WITHOUT_HOPPER();
  const Lt lt;
  for (int S : {4096, 8192}) {
    Case c(S, S, S, 9);
    DeviceBytes a16(elems(S, S) * 2), b16(elems(S, S) * 2), c16(elems(S, S) * 2);
    ASSERT_EQ(cudaMemset(a16.p, 0x3c, elems(S, S) * 2), cudaSuccess);  // bf16 ~0.0115: any finite values do
    ASSERT_EQ(cudaMemset(b16.p, 0x3c, elems(S, S) * 2), cudaSuccess);
    cudaError_t e = cudaSuccess;
    const float ms = median_ms([&] {
      if (auto x = run_wgmma(c); x != cudaSuccess) e = x;
    });
    kg::GemmWgmmaTuning cluster;  // clusters of 2 along M sharing B (cuBLASLt's FP8 kernels run in clusters of 2)
    cluster.cluster_m = 2;
    const float ms_cluster = median_ms([&] {
      if (auto x = run_wgmma(c, cluster); x != cudaSuccess) e = x;
    });
    const float ms_bf16 = median_ms([&] {
      if (auto x = kg::gemm_wgmma_bf16(false, true, S, S, S, 1.f, a16.as<const __nv_bfloat16>(),
                                       b16.as<const __nv_bfloat16>(), 0.f, c16.as<__nv_bfloat16>(), nullptr);
          x != cudaSuccess)
        e = x;
    });
    ASSERT_EQ(e, cudaSuccess);
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    const float ms_lt = median_ms([&] {
      if (auto x = lt.run(c); x != CUBLAS_STATUS_SUCCESS) s = x;
    });
    ASSERT_EQ(s, CUBLAS_STATUS_SUCCESS);
    const double flop = 2.0 * S * static_cast<double>(S) * S;
    std::printf("[timing] fp8 nt %d^3: wgmma %.3f ms %.1f TFLOP/s | cuBLASLt fp8 %.3f ms %.1f TFLOP/s (%.2fx) | "
                "bf16 wgmma %.3f ms %.1f TFLOP/s (fp8 %.2fx) | fp8 wgmma cluster 2 %.3f ms %.1f TFLOP/s (%.2fx "
                "cuBLASLt)\n",
                S, ms, flop / ms * 1e-9, ms_lt, flop / ms_lt * 1e-9, ms_lt / ms, ms_bf16, flop / ms_bf16 * 1e-9,
                ms_bf16 / ms, ms_cluster, flop / ms_cluster * 1e-9, ms_lt / ms_cluster);
  }
}

}  // namespace
