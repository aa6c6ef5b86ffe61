// The tf32 path of the Hopper wgmma GEMM (kernels/gemm/gemm_wgmma.hpp: gemm_wgmma_tf32) called
// directly: its workspace rule (host-side, runs everywhere), argument errors, every layout x
// every kernel path (GemmWgmmaTuning: clusters of 1/2, direct and TMA-store epilogue) at
// ragged sizes with beta 0 and != 0, a misaligned operand (the row-copy re-layout), against
// the double host reference on TF32-rounded inputs (gemm_cpu_ex) with the gemm problem's
// tf32 tolerance (plugins/gemm/gemm_tolerance.hpp: the hardware truncates where the reference
// rounds; the rule covers it). Then a timing printout (tf32 nt / nn at 4096^3 and 8192^3
// against cuBLAS tf32: printed, never asserted). Label `gpu`; the kernel tests skip on a
// device that is not compute capability 9.0, saying so.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gemm/gemm_cublas.hpp"
#include "gemm/gemm_reference.hpp"
#include "gemm/gemm_types.hpp"
#include "gemm/gemm_wgmma.hpp"
#include "gemm_test_support.hpp"
#include "gemm_tolerance.hpp"
#include "gpu_timing.hpp"
#include "test_support.hpp"

namespace {

namespace kg = kernels::gemm;
using harness::test::DeviceFloats;
using harness::test::have_device;
using harness::test::random_floats;
using kg::Layout;

bool hopper() {
  if (!have_device()) return false;
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
    return false;
  return major == 9 && minor == 0;
}

#define SKIP_WITHOUT_HOPPER() \
  if (!hopper()) GTEST_SKIP() << "no compute capability 9.0 device (wgmma is built for sm_90a only)"

constexpr Layout kLayouts[] = {Layout::nn, Layout::nt, Layout::tn, Layout::tt};

std::size_t floats(std::int64_t M, std::int64_t K) { return static_cast<std::size_t>(M) * static_cast<std::size_t>(K); }

// Host-side: which operands the tf32 path rewrites, and how large the workspace is.
TEST(GemmWgmmaTf32, WorkspaceRule) {
  // nt with K % 4 == 0: both operands K-major with 16-byte rows, read in place.
  EXPECT_EQ(kg::gemm_wgmma_tf32_workspace_bytes(false, true, 100, 200, 64), 0u);
  // nt with K % 4 != 0: both copied to rows of kpad = 64 floats.
  EXPECT_EQ(kg::gemm_wgmma_tf32_workspace_bytes(false, true, 100, 200, 61), floats(300, 64) * 4);
  // nn: B (K, N) transposed to (N, kpad); tn: A (K, M) to (M, kpad); tt: both.
  EXPECT_EQ(kg::gemm_wgmma_tf32_workspace_bytes(false, false, 100, 200, 64), floats(200, 64) * 4);
  EXPECT_EQ(kg::gemm_wgmma_tf32_workspace_bytes(true, true, 100, 200, 64), floats(100, 64) * 4);
  EXPECT_EQ(kg::gemm_wgmma_tf32_workspace_bytes(true, false, 100, 200, 63), floats(300, 64) * 4);
  // A misaligned base forces the copy of that operand even when the stride is fine.
  const float* odd = reinterpret_cast<const float*>(std::uintptr_t{4});
  EXPECT_EQ(kg::gemm_wgmma_tf32_workspace_bytes(false, true, 100, 200, 64, odd, nullptr), floats(100, 64) * 4);
  EXPECT_EQ(kg::gemm_wgmma_tf32_workspace_bytes(false, true, 0, 200, 64), 0u);
}

TEST(GemmWgmmaTf32, ErrorsAndNoAlignmentConstraint) {
  SKIP_WITHOUT_HOPPER();
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  for (Layout l : kLayouts)
    EXPECT_EQ(kg::gemm_wgmma_unsupported(dev, kg::a_transposed(l), kg::b_transposed(l), 61, 67, 63, 4), nullptr);
  EXPECT_NE(kg::gemm_wgmma_unsupported(dev, false, true, 64, 64, 64, 8), nullptr);
  DeviceFloats A(64 * 64), B(64 * 64), C(64 * 64), W(64 * 64);
  // Layout nn needs the transposed B in the workspace: none given, or too small.
  EXPECT_EQ(kg::gemm_wgmma_tf32(false, false, 64, 64, 64, 1.f, A.get(), B.get(), 0.f, C.get(), nullptr, 0, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_wgmma_tf32(false, false, 64, 64, 64, 1.f, A.get(), B.get(), 0.f, C.get(), W.get(), 64, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_wgmma_tf32(false, true, 64, 64, 64, 1.f, nullptr, B.get(), 0.f, C.get(), nullptr, 0, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_wgmma_tf32(false, true, 0, 64, 64, 1.f, A.get(), B.get(), 0.f, C.get(), nullptr, 0, nullptr),
            cudaErrorInvalidValue);
  kg::GemmWgmmaTuning bad;
  bad.cluster_m = 3;
  EXPECT_EQ(kg::gemm_wgmma_tf32(false, true, 64, 64, 64, 1.f, A.get(), B.get(), 0.f, C.get(), nullptr, 0, nullptr, bad),
            cudaErrorInvalidValue);
  // nt, K % 4 == 0: no workspace needed.
  EXPECT_EQ(kg::gemm_wgmma_tf32(false, true, 64, 64, 64, 1.f, A.get(), B.get(), 0.f, C.get(), nullptr, 0, nullptr),
            cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

constexpr auto tuning_of = harness::test::wgmma_tuning_of;

// One case against gemm_cpu_ex (tf32: inputs rounded to TF32, double sums). a_offset: floats
// by which A's base is shifted (1: not 16-byte aligned).
void check_case(Layout l, int M, int N, int K, float alpha, float beta, const kg::GemmWgmmaTuning& tuning,
                std::size_t a_offset = 0) {
  SCOPED_TRACE(std::string(kg::to_string(l)) + " " + std::to_string(M) + "x" + std::to_string(N) + "x" +
               std::to_string(K) + " beta " + std::to_string(beta) + " cluster " + std::to_string(tuning.cluster_m) +
               (tuning.tma_store ? " tma-store" : " direct") + " splits " + std::to_string(tuning.splits) +
               " a_offset " + std::to_string(a_offset));
  const bool ta = kg::a_transposed(l), tb = kg::b_transposed(l);
  const std::size_t mk = floats(M, K), kn = floats(K, N), mn = floats(M, N);
  DeviceFloats A(mk, a_offset), B(kn), C(mn);
  const auto ha = random_floats(mk, 11u + static_cast<unsigned>(M));
  const auto hb = random_floats(kn, 12u + static_cast<unsigned>(N));
  A.upload(ha);
  B.upload(hb);
  std::vector<float> want(mn, 0.f);
  if (beta != 0.f) {
    want = random_floats(mn, 13u + static_cast<unsigned>(K));
    C.upload(want);
  } else {
    ASSERT_EQ(cudaMemset(C.get(), 0xFF, mn * sizeof(float)), cudaSuccess);  // NaN: must not be read
  }
  // The rewritten operands and the split-K sums (by shape or tuning.splits); NaN-filled: the
  // kernel must zero the sums itself.
  const std::size_t bytes = kg::gemm_wgmma_tf32_workspace_bytes(ta, tb, M, N, K, A.get(), B.get(), tuning);
  DeviceFloats W(bytes / sizeof(float));
  if (bytes > 0) {
    ASSERT_EQ(cudaMemset(W.get(), 0xFF, bytes), cudaSuccess);
  }
  ASSERT_EQ(kg::gemm_wgmma_tf32(ta, tb, M, N, K, alpha, A.get(), B.get(), beta, C.get(), bytes > 0 ? W.get() : nullptr,
                                bytes, nullptr, tuning),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = C.download(mn);
  kg::gemm_cpu_ex(kg::TcDType::tf32, l, M, N, K, alpha, ha.data(), hb.data(), beta, want.data());
  const harness::Tolerance tol = plugins::gemm::tolerance_for(kg::TcDType::tf32, K, alpha, beta);
  std::size_t bad = 0, first = 0;
  double max_err = 0;
  for (std::size_t i = 0; i < mn; ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(err <= tol.abs + tol.rel * std::fabs(want[i])) && bad++ == 0) first = i;  // NaN counts
    if (!(err <= max_err)) max_err = err;
  }
  EXPECT_EQ(bad, 0u) << bad << " of " << mn << " off; first row " << first / N << " col " << first % N << ": got "
                     << got[first] << " want " << want[first] << "; max |err| " << max_err << " (abs tol "
                     << tol.abs << ")";
}

// Sizes: a single element; every tail in M, N and K (K % 4 != 0: the row copy); N % 4 == 0
// and K % 4 == 0 (nt in place, TMA-store epilogue); more 128 x 256 tiles than SMs (the
// persistent loop), an odd count of 128-row tiles (the cluster's second CTA out of bounds).
TEST(GemmWgmmaTf32, EveryLayoutEveryTuningRagged) {
  SKIP_WITHOUT_HOPPER();
  struct Shape {
    int M, N, K;
  };
  const Shape shapes[] = {{1, 1, 1}, {33, 300, 77}, {129, 264, 72}, {300, 520, 136}, {2200, 2056, 64}};
  for (int i = 0; i < 4; ++i)
    for (Layout l : kLayouts)
      for (const Shape& s : shapes) {
        check_case(l, s.M, s.N, s.K, 1.f, 0.f, tuning_of(i));
        check_case(l, s.M, s.N, s.K, 0.5f, -1.f, tuning_of(i));
      }
}

TEST(GemmWgmmaTf32, OddSizesAndMisalignedBase) {
  SKIP_WITHOUT_HOPPER();
  for (Layout l : kLayouts) {
    check_case(l, 127, 129, 4099, 1.f, 0.f, {});  // one tile, 129 K steps: split-K by shape
    kg::GemmWgmmaTuning unsplit;
    unsplit.splits = 1;
    check_case(l, 127, 129, 4099, 1.f, 0.f, unsplit);
    kg::GemmWgmmaTuning three;
    three.splits = 3;
    check_case(l, 131, 257, 97, 0.5f, -1.f, three);  // 4 K steps in 3 ranges, beta read by the finish pass
    check_case(l, 131, 257, 97, 1.f, 0.5f, {});
    check_case(l, 200, 136, 64, 1.f, 0.f, {}, 1);  // A + 1 float: copied even where K-major
  }
}

using harness::test::median_ms;  // printed, never asserted

TEST(GemmWgmmaTf32, TimingVsCublasPrintout) {
  SKIP_WITHOUT_HOPPER();
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  DeviceFloats cublas_ws(kg::kCublasWorkspaceBytes / sizeof(float));
  for (int S : {4096, 8192}) {
    const std::size_t n = floats(S, S);
    DeviceFloats A(n), B(n), C(n);
    A.upload(random_floats(n, 7));
    B.upload(random_floats(n, 8));
    for (Layout l : {Layout::nt, Layout::nn, Layout::tt}) {
      const bool ta = kg::a_transposed(l), tb = kg::b_transposed(l);
      const std::size_t bytes = kg::gemm_wgmma_tf32_workspace_bytes(ta, tb, S, S, S);
      DeviceFloats W(bytes / sizeof(float));
      for (bool tma_store : {true, false}) {
        kg::GemmWgmmaTuning t;
        t.tma_store = tma_store;
        cudaError_t e = cudaSuccess;
        const float ms = median_ms([&] {
          if (auto r = kg::gemm_wgmma_tf32(ta, tb, S, S, S, 1.f, A.get(), B.get(), 0.f, C.get(), W.get(), bytes,
                                           nullptr, t);
              r != cudaSuccess)
            e = r;
        });
        ASSERT_EQ(e, cudaSuccess);
        cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
        const float ms_ref = median_ms([&] {
          if (auto r = kg::gemm_cublas_ex(h, kg::TcDType::tf32, l, S, S, S, 1.f, A.get(), B.get(), 0.f, C.get(),
                                          nullptr, cublas_ws.get(), kg::kCublasWorkspaceBytes);
              r != CUBLAS_STATUS_SUCCESS)
            s = r;
        });
        ASSERT_EQ(s, CUBLAS_STATUS_SUCCESS);
        const double flop = 2.0 * S * static_cast<double>(S) * S;
        std::printf("[timing] tf32 %s %d^3 %s: wgmma %.3f ms %.1f TFLOP/s | cuBLAS %.3f ms %.1f TFLOP/s | %.1f%% of "
                    "cuBLAS%s\n",
                    std::string(kg::to_string(l)).c_str(), S, tma_store ? "tma-store" : "direct   ", ms,
                    flop / ms * 1e-9, ms_ref, flop / ms_ref * 1e-9, 100.0 * ms_ref / ms,
                    bytes > 0 ? " (incl. transpose pre-pass)" : "");
      }
    }
  }
  cublasDestroy(h);
}

}  // namespace
