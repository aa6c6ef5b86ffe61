// The Hopper wgmma GEMM (kernels/gemm/gemm_wgmma.cu) called directly, against cublasGemmEx in
// the same dtype (f32 compute, no reduced-precision split-K reduction), in every layout, beta
// 0 and 1, at ragged shapes, every kernel path (GemmWgmmaTuning), plus 3 rows of each case
// against a double-precision host product; timing printouts at 4096^3 and 8192^3 (tunings,
// host launch cost, against cuBLAS: printed only, never asserted).
// Label `gpu`: skips without a device, and the kernel tests skip on a GPU that is not
// compute capability 9.0, saying so.
//
// Tolerance: both sides accumulate in f32 and round once to the output type, so they may
// differ by the rounding of the output (one unit in the last place, two allowed) plus
// f32 summation-order noise: |ours - cublas| <= rtol * |cublas| + 1e-2 with rtol = 2^-7
// (bf16, 8 significand bits) or 2^-9 (f16, 11 bits). A wrong layout, a missed K tile or a
// swizzle error gives errors of order sqrt(K) instead.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gemm/gemm_wgmma.hpp"
#include "gpu_timing.hpp"
#include "test_support.hpp"

namespace {

namespace kg = kernels::gemm;
using harness::test::have_device;

// Skips unless the current device can run the kernel at all (compute capability 9.0).
#define SKIP_WITHOUT_HOPPER()                                                          \
  do {                                                                                 \
    if (!have_device()) GTEST_SKIP() << "no CUDA device";                              \
    int dev_ = 0, major_ = 0, minor_ = 0;                                              \
    ASSERT_EQ(cudaGetDevice(&dev_), cudaSuccess);                                      \
    ASSERT_EQ(cudaDeviceGetAttribute(&major_, cudaDevAttrComputeCapabilityMajor, dev_), \
              cudaSuccess);                                                            \
    ASSERT_EQ(cudaDeviceGetAttribute(&minor_, cudaDevAttrComputeCapabilityMinor, dev_), \
              cudaSuccess);                                                            \
    if (major_ != 9 || minor_ != 0)                                                    \
      GTEST_SKIP() << "wgmma needs compute capability 9.0 (Hopper); this device is "   \
                   << major_ << "." << minor_;                                         \
  } while (0)

template <typename T>
class DeviceBuf {
 public:
  explicit DeviceBuf(std::size_t n) : n_(n) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(n, 1) * sizeof(T)),
              cudaSuccess);
  }
  DeviceBuf(const DeviceBuf&) = delete;
  DeviceBuf& operator=(const DeviceBuf&) = delete;
  ~DeviceBuf() { cudaFree(p_); }
  T* get() const { return p_; }
  void upload(const std::vector<T>& v) {
    ASSERT_EQ(cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  std::vector<T> download() const {
    std::vector<T> v(n_);
    EXPECT_EQ(cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
float to_f(__half x) { return __half2float(x); }
template <typename T>
T from_f(float x) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(x);
  else
    return __float2bfloat16_rn(x);
}

// Uniform [-1, 1) values from a 64-bit xorshift (fast enough for 16M-element matrices).
template <typename T>
std::vector<T> random_matrix(std::size_t n, std::uint64_t seed) {
  std::vector<T> v(n);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x = from_f<T>(static_cast<float>((s >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f);
  }
  return v;
}

template <typename T>
constexpr cudaDataType_t cuda_type() {
  return std::is_same_v<T, __half> ? CUDA_R_16F : CUDA_R_16BF;
}

// Row-major C (M, N) = alpha op(A) op(B) + beta C through column-major cuBLAS:
// C^T (N, M) = op(B)^T op(A)^T. Stored B 'n' (K, N) row-major is op(B)^T column-major
// (OP_N, ld N); B 't' (N, K) is op(B) column-major, so OP_T, ld K. A 'n' (M, K) is op(A)^T
// (OP_N, ld K); A 't' (K, M) is op(A) (OP_T, ld M).
template <typename T>
cublasStatus_t cublas_ref(cublasHandle_t h, bool ta, bool tb, int M, int N, int K, float alpha,
                          const T* A, const T* B, float beta, T* C) {
  return cublasGemmEx(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                      &alpha, B, cuda_type<T>(), tb ? K : N, A, cuda_type<T>(), ta ? M : K, &beta,
                      C, cuda_type<T>(), N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// The same with bf16 A, B and an f32 C (f32 compute): the reference of gemm_wgmma_bf16_f32.
cublasStatus_t cublas_ref_bf16_f32(cublasHandle_t h, bool ta, bool tb, int M, int N, int K, const __nv_bfloat16* A,
                                   const __nv_bfloat16* B, float* C) {
  const float one = 1.0f, zero = 0.0f;
  return cublasGemmEx(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &one, B,
                      CUDA_R_16BF, tb ? K : N, A, CUDA_R_16BF, ta ? M : K, &zero, C, CUDA_R_32F, N,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// gemm_wgmma_bf16_f32 against cuBLAS with an f32 C: both sum in f32 and never round to bf16,
// so they differ by summation order only (a wrong layout or a dropped K tile is off by O(1)).
bool f32_sums_agree(float got, float want) { return std::fabs(got - want) <= 1e-3 + 1e-4 * std::fabs(want); }

// ws: the split-K workspace (none: the call runs unsplit unless tuning.splits forces a split).
template <typename T>
cudaError_t ours(bool ta, bool tb, int M, int N, int K, float alpha, const T* A, const T* B,
                 float beta, T* C, const kg::GemmWgmmaTuning& tuning = {}, void* ws = nullptr,
                 std::size_t ws_bytes = 0) {
  if constexpr (std::is_same_v<T, __half>)
    return kg::gemm_wgmma_f16(ta, tb, M, N, K, alpha, A, B, beta, C, nullptr, tuning, ws, ws_bytes);
  else
    return kg::gemm_wgmma_bf16(ta, tb, M, N, K, alpha, A, B, beta, C, nullptr, tuning, ws, ws_bytes);
}

// bf16 with the bias epilogue (gemm_wgmma_bf16_bias).
cudaError_t ours_bias(bool ta, bool tb, int M, int N, int K, float alpha, const __nv_bfloat16* A,
                      const __nv_bfloat16* B, const float* bias, float beta, __nv_bfloat16* C,
                      const kg::GemmWgmmaTuning& tuning = {}, void* ws = nullptr, std::size_t ws_bytes = 0) {
  return kg::gemm_wgmma_bf16_bias(ta, tb, M, N, K, alpha, A, B, bias, beta, C, nullptr, tuning, ws, ws_bytes);
}

// Every kernel path: clusters of 1 and 2, direct and TMA-store epilogue (the defaults are
// one of these four), the tensor-map cache on in two of them.
kg::GemmWgmmaTuning tuning_of(int i) {
  kg::GemmWgmmaTuning t;
  t.cluster_m = (i & 1) != 0 ? 2 : 1;
  t.tma_store = (i & 2) != 0;
  t.cache_maps = (i & 1) != 0;
  t.group_m = (i & 2) != 0 ? 16 : 3;
  return t;
}
std::string tuning_name(const kg::GemmWgmmaTuning& t) {
  return std::string("cluster ") + (t.cluster_m == 0 ? std::string("by-shape") : std::to_string(t.cluster_m)) +
         (t.tma_store ? " tma-store" : " direct-store") + (t.cache_maps ? " map-cache" : "") +
         (t.max_ctas > 0 ? " max-ctas " + std::to_string(t.max_ctas) : "") +
         (t.group_m != kg::GemmWgmmaTuning{}.group_m ? " group-m " + std::to_string(t.group_m)
                                                     : "") +
         (t.splits > 0 ? " splits " + std::to_string(t.splits) : "") +
         (t.tile_n > 0 ? " tile-n " + std::to_string(t.tile_n) : "");
}

// Row m of alpha op(A) op(B) + beta C0 in double, from the host copies (layouts as in the
// kernel's header; loops ordered so the inner one walks memory contiguously).
template <typename T>
std::vector<double> cpu_row(bool ta, bool tb, int M, int N, int K, float alpha,
                            const std::vector<T>& A, const std::vector<T>& B, float beta,
                            const std::vector<T>& C0, int m) {
  std::vector<double> a(K), row(N, 0.0);
  for (int k = 0; k < K; ++k)
    a[k] = to_f(ta ? A[static_cast<std::size_t>(k) * M + m] : A[static_cast<std::size_t>(m) * K + k]);
  if (tb) {
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) row[n] += a[k] * to_f(B[static_cast<std::size_t>(n) * K + k]);
  } else {
    for (int k = 0; k < K; ++k)
      for (int n = 0; n < N; ++n) row[n] += a[k] * to_f(B[static_cast<std::size_t>(k) * N + n]);
  }
  for (int n = 0; n < N; ++n) {
    row[n] *= alpha;
    if (beta != 0.f) row[n] += static_cast<double>(beta) * to_f(C0[static_cast<std::size_t>(m) * N + n]);
  }
  return row;
}

std::string layout_name(bool ta, bool tb) {
  return std::string(1, ta ? 't' : 'n') + std::string(1, tb ? 't' : 'n');
}

int round8(int x) { return (x + 7) / 8 * 8; }

// A bf16 matrix's bits, for bit-for-bit comparisons.
std::vector<std::uint16_t> bits_of(const std::vector<__nv_bfloat16>& v) {
  std::vector<std::uint16_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(std::uint16_t));
  return b;
}

class GemmWgmma : public ::testing::Test {
 protected:
  void SetUp() override {
    if (have_device()) {
      ASSERT_EQ(cublasCreate(&handle_), CUBLAS_STATUS_SUCCESS);
    }
  }
  void TearDown() override {
    if (handle_ != nullptr) cublasDestroy(handle_);
  }

  // One case: returns nothing, records failures with the case in the message.
  template <typename T>
  void check_case(bool ta, bool tb, int M, int N, int K, float alpha, float beta,
                  const kg::GemmWgmmaTuning& tuning = {}) {
    const std::string what = std::string(std::is_same_v<T, __half> ? "f16" : "bf16") + " " +
                             layout_name(ta, tb) + " " + std::to_string(M) + "x" +
                             std::to_string(N) + "x" + std::to_string(K) + " beta " +
                             std::to_string(beta) + " " + tuning_name(tuning) +
                             (bias_ ? bias_offset_ ? " bias (4-byte aligned)" : " bias" : "");
    SCOPED_TRACE(what);
    int dev = 0;
    ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
    const char* why = kg::gemm_wgmma_unsupported(dev, ta, tb, M, N, K, 2);
    ASSERT_EQ(why, nullptr) << why;
    const std::size_t mk = static_cast<std::size_t>(M) * K, kn = static_cast<std::size_t>(K) * N,
                      mn = static_cast<std::size_t>(M) * N;
    DeviceBuf<T> A(mk), B(kn), C(mn), R(mn);
    const auto ha = random_matrix<T>(mk, 1u + M);
    const auto hb = random_matrix<T>(kn, 2u + N);
    A.upload(ha);
    B.upload(hb);
    std::vector<T> c0;
    if (beta != 0.f) {
      c0 = random_matrix<T>(mn, 3u + K);
      C.upload(c0);
      R.upload(c0);
    } else {
      // NaN everywhere: beta == 0 must never read C.
      ASSERT_EQ(cudaMemset(C.get(), 0xFF, mn * sizeof(T)), cudaSuccess);
      ASSERT_EQ(cudaMemset(R.get(), 0, mn * sizeof(T)), cudaSuccess);
    }
    // The split-K workspace the call asks for (none unless the shape or tuning.splits
    // splits), filled with NaN: the kernel must zero the sums itself.
    const std::size_t ws_bytes = kg::gemm_wgmma_splitk_workspace_bytes(M, N, K, 2, tuning);
    DeviceBuf<unsigned char> ws(ws_bytes);
    ASSERT_EQ(cudaMemset(ws.get(), 0xFF, std::max<std::size_t>(ws_bytes, 1)), cudaSuccess);
    // bias_: a bias of N values in [-1, 1) (bias_offset_: at an address 4 bytes past an 8-byte
    // boundary, which the TMA-store epilogue's pair loads refuse: the direct stores run).
    std::vector<float> hbias(bias_ ? static_cast<std::size_t>(N) : 0);
    DeviceBuf<float> dbias(static_cast<std::size_t>(N) + 1);
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      if (bias_) {
        const auto r = random_matrix<__nv_bfloat16>(hbias.size(), 5u + N);
        for (std::size_t i = 0; i < hbias.size(); ++i) hbias[i] = to_f(r[i]) + 0.25f;
        ASSERT_EQ(cudaMemcpy(dbias.get() + bias_offset_, hbias.data(), hbias.size() * sizeof(float),
                             cudaMemcpyHostToDevice),
                  cudaSuccess);
        ASSERT_EQ(ours_bias(ta, tb, M, N, K, alpha, A.get(), B.get(), dbias.get() + bias_offset_, beta, C.get(),
                            tuning, ws_bytes > 0 ? ws.get() : nullptr, ws_bytes),
                  cudaSuccess);
      }
    }
    if (!bias_) {
      ASSERT_EQ(ours<T>(ta, tb, M, N, K, alpha, A.get(), B.get(), beta, C.get(), tuning,
                        ws_bytes > 0 ? ws.get() : nullptr, ws_bytes),
                cudaSuccess);
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    // The reference reduces in f32 throughout: without this flag cuBLAS may split K and
    // reduce the partial sums in the 16-bit output type (bf16 errors of several ulp, seen
    // at bf16 tt 1032x777x1000 on an H200).
    ASSERT_EQ(cublasSetMathMode(handle_, static_cast<cublasMath_t>(
                                             CUBLAS_DEFAULT_MATH |
                                             CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
              CUBLAS_STATUS_SUCCESS);
    const cublasStatus_t st =
        cublas_ref<T>(handle_, ta, tb, M, N, K, alpha, A.get(), B.get(), beta, R.get());
    ASSERT_EQ(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = C.download();
    const auto want = R.download();
    const float rtol = std::is_same_v<T, __half> ? 1.0f / 512 : 1.0f / 128;
    std::size_t bad = 0, first_bad = 0;
    double max_err = 0, max_ref = 0;
    for (std::size_t i = 0; i < mn; ++i) {
      const float r = to_f(want[i]), g = to_f(got[i]), w = r + (bias_ ? hbias[i % static_cast<std::size_t>(N)] : 0.0f);
      const double err = std::fabs(static_cast<double>(g) - w);
      max_ref = std::max(max_ref, std::fabs(static_cast<double>(w)));
      // With a bias the reference rounds twice: cuBLAS rounds A B to bf16 (r), the bias is added
      // after; ours rounds A B + bias once. Where the bias cancels much of A B, r's rounding
      // (half an ulp of |r|) is large next to |w|: the bound takes both roundings.
      const double bound = rtol * (std::fabs(w) + (bias_ ? std::fabs(r) : 0.0)) + 1e-2;
      if (!(err <= bound)) {  // NaN counts as bad
        if (bad++ == 0) first_bad = i;
      }
      if (err > max_err || std::isnan(err)) max_err = err;
    }
    EXPECT_GT(max_ref, 0.1) << "the reference is all (near) zero: the check would be empty";
    // Independent of cuBLAS: rows 0, M/2, M-1 against a double-precision host product.
    std::size_t cpu_bad = 0;
    std::string cpu_first;
    for (int m : {0, M / 2, M - 1}) {
      const std::vector<double> want_row = cpu_row(ta, tb, M, N, K, alpha, ha, hb, beta, c0, m);
      for (int n = 0; n < N; ++n) {
        const double w = want_row[n] + (bias_ ? hbias[static_cast<std::size_t>(n)] : 0.0);
        const double g = to_f(got[static_cast<std::size_t>(m) * N + n]);
        if (!(std::fabs(g - w) <= rtol * std::fabs(w) + 1e-2) && cpu_bad++ == 0)
          cpu_first = "row " + std::to_string(m) + " col " + std::to_string(n) + ": got " +
                      std::to_string(g) + " want " + std::to_string(w);
      }
    }
    EXPECT_EQ(cpu_bad, 0u) << cpu_bad << " elements of 3 rows off the double host product; first "
                           << cpu_first;
    EXPECT_EQ(bad, 0u) << bad << " of " << mn << " elements off; first at row "
                       << first_bad / N << " col " << first_bad % N << ": got "
                       << to_f(got[first_bad]) << " want " << to_f(want[first_bad]) << " (+ bias)"
                       << "; max |err| " << max_err;
  }

  template <typename T>
  void check_all_layouts(int M, int N, int K, const kg::GemmWgmmaTuning& tuning = {}) {
    for (int l = 0; l < 4; ++l) {
      const bool ta = (l & 2) != 0, tb = (l & 1) != 0;
      // The stored leading dimensions must be multiples of 8 (TMA): round up the ones this
      // layout needs (K unless the layout is tn), keep the other sizes ragged.
      const int m = ta ? round8(M) : M, n = tb ? N : round8(N);
      const int k = (ta && !tb) ? K : round8(K);
      check_case<T>(ta, tb, m, n, k, 1.0f, 0.0f, tuning);
      check_case<T>(ta, tb, m, n, k, 0.5f, 1.0f, tuning);
    }
  }

  cublasHandle_t handle_ = nullptr;
  bool bias_ = false;     // check_case through gemm_wgmma_bf16_bias (bf16 only)
  int bias_offset_ = 0;   // floats past the bias buffer's (aligned) start
};

TEST_F(GemmWgmma, UnsupportedCasesSayWhy) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  int dev = 0, major = 0, minor = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), cudaSuccess);
  const char* w = kg::gemm_wgmma_unsupported(dev, false, true, 256, 256, 256, 2);
  if (major != 9 || minor != 0) {
    ASSERT_NE(w, nullptr);
    EXPECT_NE(std::string(w).find("Hopper"), std::string::npos) << w;
    GTEST_SKIP() << "not compute capability 9.0: checked only the 'not Hopper' reason";
  }
  EXPECT_EQ(w, nullptr) << w;
  EXPECT_NE(kg::gemm_wgmma_unsupported(dev, false, true, 256, 256, 256, 8), nullptr);  // tf32 (4): gemm_wgmma_tf32_gpu_test
  EXPECT_NE(kg::gemm_wgmma_unsupported(dev, false, true, 0, 256, 256, 2), nullptr);
  // Leading dimensions not a multiple of 8 elements, per layout.
  for (auto [ta, tb, M, N, K] : {std::tuple{false, true, 64, 64, 60}, {true, true, 60, 64, 64},
                                 {false, false, 64, 60, 64}, {true, false, 64, 60, 64}}) {
    const char* r = kg::gemm_wgmma_unsupported(dev, ta, tb, M, N, K, 2);
    ASSERT_NE(r, nullptr) << layout_name(ta, tb) << " " << M << "x" << N << "x" << K;
    EXPECT_NE(std::string(r).find("alignment"), std::string::npos) << r;
  }
  // Ragged sizes that are no stored leading dimension are accepted: M for A 'n', N for
  // B 't', K for layout tn (A stored (K, M), B stored (K, N)).
  EXPECT_EQ(kg::gemm_wgmma_unsupported(dev, false, true, 129, 257, 72, 2), nullptr);
  EXPECT_EQ(kg::gemm_wgmma_unsupported(dev, true, false, 64, 64, 61, 2), nullptr);
  // The launch functions refuse the same cases and bad arguments without launching.
  DeviceBuf<__nv_bfloat16> A(64 * 64), B(64 * 64), C(64 * 64);
  EXPECT_EQ(kg::gemm_wgmma_bf16(false, true, 64, 64, 60, 1.f, A.get(), B.get(), 0.f, C.get(),
                                nullptr),
            cudaErrorNotSupported);
  EXPECT_EQ(kg::gemm_wgmma_bf16(false, true, 64, 64, 64, 1.f, nullptr, B.get(), 0.f, C.get(),
                                nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kg::gemm_wgmma_bf16(false, true, 64, 64, 64, 1.f, A.get() + 1, B.get(), 0.f,
                                C.get(), nullptr),
            cudaErrorInvalidValue);  // not 16-byte aligned
  kg::GemmWgmmaTuning odd_tile;
  odd_tile.tile_n = 192;  // 128 or 256 only
  EXPECT_EQ(kg::gemm_wgmma_bf16(false, true, 64, 64, 64, 1.f, A.get(), B.get(), 0.f, C.get(), nullptr, odd_tile),
            cudaErrorInvalidValue);
  DeviceBuf<float> Af(64 * 64), Bf(64 * 64), Cf(64 * 64);
  kg::GemmWgmmaTuning narrow;
  narrow.tile_n = 128;  // 16-bit inputs only
  EXPECT_EQ(kg::gemm_wgmma_tf32(false, true, 64, 64, 64, 1.f, Af.get(), Bf.get(), 0.f, Cf.get(), nullptr, 0, nullptr,
                                narrow),
            cudaErrorInvalidValue);
}

// Split-K: forced split counts at ragged shapes (K ranges of unequal length, M and N tails,
// odd N: the scalar stores), both 16-bit types, every layout, beta 0 and 1 (the in-kernel
// sums read C), clusters of 1 and 2; then the shapes the by-shape rule splits (a Linear
// layer's weight gradient at 8192 tokens), against cuBLAS and the double host rows.
TEST_F(GemmWgmma, SplitKEveryLayoutRaggedAndByShape) {
  SKIP_WITHOUT_HOPPER();
  for (int splits : {2, 3, 7}) {
    kg::GemmWgmmaTuning t;
    t.splits = splits;
    t.cluster_m = splits == 3 ? 2 : 1;
    t.tile_n = splits == 2 ? 256 : 0;  // by shape these few tiles are 128 x 128
    check_all_layouts<__nv_bfloat16>(129, 257, 1000, t);
    check_all_layouts<__half>(67, 35, 520, t);
  }
  {
    kg::GemmWgmmaTuning t;
    t.splits = 40;  // more splits than K steps (8): one step each
    check_case<__nv_bfloat16>(false, true, 100, 60, 512, 1.0f, 0.0f, t);
  }
  int dev = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  for (auto [M, N] : {std::pair{512, 512}, {512, 2048}, {2048, 512}}) {
    EXPECT_GT(kg::gemm_wgmma_splits(M, N, 8192, 2, sms), 1) << M << "x" << N << "x8192";
    check_case<__nv_bfloat16>(true, false, M, N, 8192, 1.0f, 0.0f);  // tn: dW = X^T dY
  }
  // A forced split without the workspace is refused, not run unsplit.
  DeviceBuf<__nv_bfloat16> A(64 * 512), B(64 * 512), C(64 * 64);
  kg::GemmWgmmaTuning t;
  t.splits = 2;
  EXPECT_EQ(kg::gemm_wgmma_bf16(false, true, 64, 64, 512, 1.f, A.get(), B.get(), 0.f, C.get(), nullptr, t),
            cudaErrorInvalidValue);
}

// The in-kernel split sums (reduce_splits) through one workspace over several calls: the
// flags left by a call hold that call's tag, so the next call must wait for its own splits,
// not take the old slices. Three calls on one workspace, inputs X, Y, X: the first and the
// third equal bit for bit (the splits are summed in a fixed order), the second differs from
// them and equals a call of its own on a fresh NaN-filled workspace. Forced 2 and 5 splits,
// by shape (512 x 512 x 8192 tn: 8 splits), and clusters of 2.
TEST_F(GemmWgmma, SplitKWorkspaceReusedAcrossCallsIsDeterministic) {
  SKIP_WITHOUT_HOPPER();
  const int M = 512, N = 512, K = 8192;
  const std::size_t mk = static_cast<std::size_t>(M) * K, kn = static_cast<std::size_t>(K) * N,
                    mn = static_cast<std::size_t>(M) * N;
  DeviceBuf<__nv_bfloat16> X(mk), Y(mk), B(kn), C(mn);
  X.upload(random_matrix<__nv_bfloat16>(mk, 21u));
  Y.upload(random_matrix<__nv_bfloat16>(mk, 22u));
  B.upload(random_matrix<__nv_bfloat16>(kn, 23u));
  for (int mode = 0; mode < 4; ++mode) {
    kg::GemmWgmmaTuning t;
    t.splits = mode == 0 ? 0 : mode == 2 ? 5 : 2;
    t.cluster_m = mode == 3 ? 2 : 1;
    SCOPED_TRACE(tuning_name(t));
    const std::size_t ws_bytes = kg::gemm_wgmma_splitk_workspace_bytes(M, N, K, 2, t);
    ASSERT_GT(ws_bytes, 0u);
    DeviceBuf<unsigned char> ws(ws_bytes), fresh(ws_bytes);
    ASSERT_EQ(cudaMemset(ws.get(), 0xFF, ws_bytes), cudaSuccess);
    ASSERT_EQ(cudaMemset(fresh.get(), 0xFF, ws_bytes), cudaSuccess);
    auto call = [&](const __nv_bfloat16* A, void* w) {
      EXPECT_EQ(cudaMemset(C.get(), 0xFF, mn * sizeof(__nv_bfloat16)), cudaSuccess);
      EXPECT_EQ(kg::gemm_wgmma_bf16(true, false, M, N, K, 1.f, A, B.get(), 0.f, C.get(), nullptr, t, w, ws_bytes),
                cudaSuccess);
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      return C.download();
    };
    const auto first = call(X.get(), ws.get());
    const auto second = call(Y.get(), ws.get());
    const auto third = call(X.get(), ws.get());
    const auto alone = call(Y.get(), fresh.get());
    EXPECT_TRUE(bits_of(first) == bits_of(third)) << "X twice on one workspace: different bits";
    EXPECT_TRUE(bits_of(second) == bits_of(alone)) << "Y after X differs from Y on a fresh workspace";
    EXPECT_FALSE(bits_of(first) == bits_of(second)) << "X and Y gave the same C: the old slices were read";
    std::size_t nonfinite = 0;
    for (const auto& v : second) nonfinite += std::isfinite(to_f(v)) ? 0 : 1;
    EXPECT_EQ(nonfinite, 0u);
  }
}

// The in-kernel split sums in a CUDA graph: a replay repeats the captured launch and its flag
// tag, so the captured memset must clear the flags every time. One 512 x 512 x 8192 tn call
// (8 splits by shape) captured on a NaN-filled workspace, replayed four times with A's
// contents switched between X and Y before each replay: every replay equals, bit for bit, an
// eager call on the same input.
TEST_F(GemmWgmma, SplitKUnderCudaGraphReplays) {
  SKIP_WITHOUT_HOPPER();
  const int M = 512, N = 512, K = 8192;
  const std::size_t mk = static_cast<std::size_t>(M) * K, kn = static_cast<std::size_t>(K) * N,
                    mn = static_cast<std::size_t>(M) * N;
  DeviceBuf<__nv_bfloat16> A(mk), X(mk), Y(mk), B(kn), C(mn);
  X.upload(random_matrix<__nv_bfloat16>(mk, 31u));
  Y.upload(random_matrix<__nv_bfloat16>(mk, 32u));
  B.upload(random_matrix<__nv_bfloat16>(kn, 33u));
  const kg::GemmWgmmaTuning t;
  const std::size_t ws_bytes = kg::gemm_wgmma_splitk_workspace_bytes(M, N, K, 2, t);
  ASSERT_GT(ws_bytes, 0u);
  DeviceBuf<unsigned char> ws(ws_bytes), eager_ws(ws_bytes);
  ASSERT_EQ(cudaMemset(ws.get(), 0xFF, ws_bytes), cudaSuccess);
  ASSERT_EQ(cudaMemset(eager_ws.get(), 0xFF, ws_bytes), cudaSuccess);
  auto eager = [&](const __nv_bfloat16* in) {
    EXPECT_EQ(cudaMemset(C.get(), 0xFF, mn * sizeof(__nv_bfloat16)), cudaSuccess);
    EXPECT_EQ(kg::gemm_wgmma_bf16(true, false, M, N, K, 1.f, in, B.get(), 0.f, C.get(), nullptr, t, eager_ws.get(),
                                  ws_bytes),
              cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return bits_of(C.download());
  };
  const auto want_x = eager(X.get()), want_y = eager(Y.get());
  ASSERT_FALSE(want_x == want_y);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const cudaError_t captured =
      kg::gemm_wgmma_bf16(true, false, M, N, K, 1.f, A.get(), B.get(), 0.f, C.get(), stream, t, ws.get(), ws_bytes);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(captured, cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int replay = 0; replay < 4; ++replay) {
    const bool y = replay % 2 == 1;
    ASSERT_EQ(cudaMemcpy(A.get(), (y ? Y : X).get(), mk * sizeof(__nv_bfloat16), cudaMemcpyDeviceToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemset(C.get(), 0xFF, mn * sizeof(__nv_bfloat16)), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_TRUE(bits_of(C.download()) == (y ? want_y : want_x)) << "replay " << replay << (y ? " (Y)" : " (X)");
  }
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(GemmWgmma, Bf16SmallAndRaggedEveryLayout) {
  SKIP_WITHOUT_HOPPER();
  for (auto [M, N, K] : {std::tuple{1, 1, 8}, {64, 64, 16}, {129, 257, 72}, {1000, 8, 64},
                         {33, 300, 520}, {256, 512, 1024}, {40, 48, 61}, {33, 300, 77}})
    check_all_layouts<__nv_bfloat16>(M, N, K);
}

// The bias epilogue (gemm_wgmma_bf16_bias: a Linear layer's forward) on every path: the
// TMA-store epilogue (N % 8 == 0) and the direct stores (N % 8 != 0, beta != 0, a bias at a
// 4-byte boundary), clusters of 1 and 2, split-K (the bias added by the in-kernel sums), every
// layout; against cuBLAS + the bias and the double host rows + the bias. A null bias is refused.
TEST_F(GemmWgmma, Bf16BiasEpilogueEveryPath) {
  SKIP_WITHOUT_HOPPER();
  bias_ = true;
  for (int i = 0; i < 8; ++i) {
    kg::GemmWgmmaTuning t = tuning_of(i & 3);
    t.tile_n = i < 4 ? 128 : 256;
    for (auto [M, N, K] : {std::tuple{33, 300, 77}, {129, 264, 72}, {1025, 776, 1000}})
      check_all_layouts<__nv_bfloat16>(M, N, K, t);
  }
  kg::GemmWgmmaTuning split;
  split.splits = 3;
  check_all_layouts<__nv_bfloat16>(129, 257, 1000, split);
  split.tile_n = 256;
  check_all_layouts<__nv_bfloat16>(129, 257, 1000, split);
  check_case<__nv_bfloat16>(false, false, 8192, 512, 512, 1.0f, 0.0f);  // the Transformer's Linear, nn
  bias_offset_ = 1;
  check_case<__nv_bfloat16>(false, false, 257, 264, 136, 1.0f, 0.0f);
  DeviceBuf<__nv_bfloat16> A(64 * 64), B(64 * 64), C(64 * 64);
  EXPECT_EQ(kg::gemm_wgmma_bf16_bias(false, false, 64, 64, 64, 1.f, A.get(), B.get(), nullptr, 0.f, C.get(), nullptr),
            cudaErrorInvalidValue);
}

// bf16 inputs with an f32 C (gemm_wgmma_bf16_f32: a weight gradient for an f32 master
// weight) in every layout, the TMA-store epilogue (N % 4 == 0) and the direct stores, split-K
// (straight into C: alpha 1, beta 0), against cublasGemmEx with an f32 C (f32 compute) and the
// double host rows: both sides sum in f32 and never round to bf16, so they differ by f32
// summation order only (|diff| <= 1e-3 + 1e-4 |ref|; a wrong layout or a dropped K tile is off
// by O(1)).
TEST_F(GemmWgmma, Bf16InputsF32OutputEveryLayoutAndPath) {
  SKIP_WITHOUT_HOPPER();
  auto run = [&](bool ta, bool tb, int M, int N, int K, const kg::GemmWgmmaTuning& tuning) {
    SCOPED_TRACE(layout_name(ta, tb) + " " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) +
                 " " + tuning_name(tuning));
    const std::size_t mk = static_cast<std::size_t>(M) * K, kn = static_cast<std::size_t>(K) * N,
                      mn = static_cast<std::size_t>(M) * N;
    DeviceBuf<__nv_bfloat16> A(mk), B(kn);
    DeviceBuf<float> C(mn), R(mn);
    const auto ha = random_matrix<__nv_bfloat16>(mk, 11u + M), hb = random_matrix<__nv_bfloat16>(kn, 12u + N);
    A.upload(ha);
    B.upload(hb);
    ASSERT_EQ(cudaMemset(C.get(), 0xFF, mn * sizeof(float)), cudaSuccess);  // NaN: every element must be written
    const std::size_t ws_bytes = kg::gemm_wgmma_splitk_workspace_bytes(M, N, K, 2, tuning);
    DeviceBuf<unsigned char> ws(ws_bytes);
    ASSERT_EQ(kg::gemm_wgmma_bf16_f32(ta, tb, M, N, K, 1.0f, A.get(), B.get(), 0.0f, C.get(), nullptr, tuning,
                                      ws_bytes > 0 ? ws.get() : nullptr, ws_bytes),
              cudaSuccess);
    ASSERT_EQ(cublas_ref_bf16_f32(handle_, ta, tb, M, N, K, A.get(), B.get(), R.get()), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = C.download(), want = R.download();
    std::size_t bad = 0;
    for (std::size_t i = 0; i < mn; ++i)
      if (!f32_sums_agree(got[i], want[i]) && bad++ == 0)
        ADD_FAILURE() << "element " << i << ": got " << got[i] << " want " << want[i];
    EXPECT_EQ(bad, 0u);
    for (int m : {0, M - 1}) {
      const std::vector<double> row = cpu_row(ta, tb, M, N, K, 1.0f, ha, hb, 0.0f, std::vector<__nv_bfloat16>{}, m);
      for (int n = 0; n < N; ++n)
        ASSERT_NEAR(got[static_cast<std::size_t>(m) * N + n], row[static_cast<std::size_t>(n)],
                    1e-3 + 1e-4 * std::fabs(row[static_cast<std::size_t>(n)]))
            << "row " << m << " col " << n;
    }
  };
  kg::GemmWgmmaTuning split;
  split.splits = 3;
  kg::GemmWgmmaTuning split256 = split;
  split256.tile_n = 256;
  kg::GemmWgmmaTuning wide = tuning_of(1);
  wide.tile_n = 256;
  for (int l = 0; l < 4; ++l) {
    const bool ta = (l & 2) != 0, tb = (l & 1) != 0;
    for (auto [M, N, K] : {std::tuple{72, 40, 130}, {136, 264, 1000}, {512, 2048, 8192}, {264, 34, 72}}) {
      const int m = ta ? round8(M) : M, n = tb ? N : round8(N), k = (ta && !tb) ? K : round8(K);
      run(ta, tb, m, n, k, {});
      run(ta, tb, m, n, k, tuning_of(1));
      run(ta, tb, m, n, k, wide);  // by shape these are 128 x 128 tiles
    }
    run(ta, tb, 136, 264, 1000, split);
    run(ta, tb, 136, 264, 1000, split256);
  }
}

TEST_F(GemmWgmma, Bf16LargeRaggedEveryLayout) {
  SKIP_WITHOUT_HOPPER();
  check_all_layouts<__nv_bfloat16>(4095, 4097, 4096);
}

// The non-default paths too (cluster 1/2 x direct/TMA-store epilogue x tiles of 128 x 128 and
// 128 x 256), at shapes with an odd number of 128-row tiles (the second CTA of the last cluster
// is out of bounds), N a multiple of 8 (TMA store) and not, and more tiles than SMs.
TEST_F(GemmWgmma, EveryTuningRaggedEveryLayout) {
  SKIP_WITHOUT_HOPPER();
  for (int i = 0; i < 8; ++i) {
    kg::GemmWgmmaTuning t = tuning_of(i & 3);
    t.tile_n = i < 4 ? 128 : 256;
    for (auto [M, N, K] : {std::tuple{33, 300, 77}, {1025, 777, 1000}, {129, 264, 72},
                           {2200, 2056, 256}})
      check_all_layouts<__nv_bfloat16>(M, N, K, t);
    check_all_layouts<__half>(1025, 520, 136, t);
  }
}

TEST_F(GemmWgmma, F16RaggedEveryLayout) {
  SKIP_WITHOUT_HOPPER();
  for (auto [M, N, K] : {std::tuple{129, 257, 72}, {1000, 8, 64}, {1025, 777, 1000}})
    check_all_layouts<__half>(M, N, K);
}

// Timing printout (no assertion on speed).
using harness::test::median_ms;

// Median time of cuBLAS's product (printed, never asserted); a failing call's status in *status.
template <typename T>
float cublas_ms(cublasHandle_t h, bool ta, bool tb, int M, int N, int K, const T* A, const T* B, T* C,
                cublasStatus_t* status) {
  *status = CUBLAS_STATUS_SUCCESS;
  return median_ms([&] {
    if (cublasStatus_t r = cublas_ref<T>(h, ta, tb, M, N, K, 1.f, A, B, 0.f, C); r != CUBLAS_STATUS_SUCCESS)
      *status = r;
  });
}

template <typename T>
void time_case(cublasHandle_t h, bool ta, bool tb, int S, const kg::GemmWgmmaTuning& tuning = {},
               bool with_cublas = true) {
  const std::size_t n = static_cast<std::size_t>(S) * S;
  DeviceBuf<T> A(n), B(n), C(n);
  A.upload(random_matrix<T>(n, 7));
  B.upload(random_matrix<T>(n, 8));
  cudaError_t e = cudaSuccess;
  const float ms_ours = median_ms([&] {
    if (cudaError_t r = ours<T>(ta, tb, S, S, S, 1.f, A.get(), B.get(), 0.f, C.get(), tuning);
        r != cudaSuccess)
      e = r;
  });
  ASSERT_EQ(e, cudaSuccess);
  const double flop = 2.0 * S * static_cast<double>(S) * S;
  if (!with_cublas) {
    std::printf("[timing] %s %s %d^3 %-32s: wgmma %.3f ms %.1f TFLOP/s\n",
                std::is_same_v<T, __half> ? "f16 " : "bf16", layout_name(ta, tb).c_str(), S,
                tuning_name(tuning).c_str(), ms_ours, flop / ms_ours * 1e-9);
    return;
  }
  cublasStatus_t s;
  const float ms_ref = cublas_ms<T>(h, ta, tb, S, S, S, A.get(), B.get(), C.get(), &s);
  ASSERT_EQ(s, CUBLAS_STATUS_SUCCESS);
  std::printf("[timing] %s %s %d^3: wgmma %.3f ms %.1f TFLOP/s | cuBLAS %.3f ms %.1f TFLOP/s | "
              "%.1f%% of cuBLAS\n",
              std::is_same_v<T, __half> ? "f16 " : "bf16", layout_name(ta, tb).c_str(), S,
              ms_ours, flop / ms_ours * 1e-9, ms_ref, flop / ms_ref * 1e-9,
              100.0 * ms_ref / ms_ours);
}

// Every tuning at bf16 nt, then the defaults against cuBLAS.
TEST_F(GemmWgmma, TimingTuningsPrintout) {
  SKIP_WITHOUT_HOPPER();
  for (int S : {4096, 8192}) {
    kg::GemmWgmmaTuning t;  // defaults
    time_case<__nv_bfloat16>(handle_, false, true, S, t, false);
    t.cache_maps = true;
    time_case<__nv_bfloat16>(handle_, false, true, S, t, false);
    t.cache_maps = false;
    t.tma_store = false;
    time_case<__nv_bfloat16>(handle_, false, true, S, t, false);
    t.tma_store = true;
    for (int g : {4, 8}) {  // raster group: L2 reuse
      t.group_m = g;
      time_case<__nv_bfloat16>(handle_, false, true, S, t, false);
    }
    t.group_m = kg::GemmWgmmaTuning{}.group_m;
    t.cluster_m = 2;
    for (int cap : {0, 128, 112}) {  // is the cluster grid oversubscribed?
      t.max_ctas = cap;
      time_case<__nv_bfloat16>(handle_, false, true, S, t, false);
    }
  }
}

// Host cost of one launch call (tensor maps cached or encoded each call): mean wall time of
// 200 calls on a stream kept busy, so the launch queue never blocks the host.
TEST_F(GemmWgmma, HostLaunchCostPrintout) {
  SKIP_WITHOUT_HOPPER();
  const int S = 4096;
  const std::size_t n = static_cast<std::size_t>(S) * S;
  DeviceBuf<__nv_bfloat16> A(n), B(n), C(n);
  for (bool cache : {true, false}) {
    kg::GemmWgmmaTuning t;
    t.cache_maps = cache;
    ASSERT_EQ(ours<__nv_bfloat16>(false, true, S, S, S, 1.f, A.get(), B.get(), 0.f, C.get(), t),
              cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i)
      ASSERT_EQ(ours<__nv_bfloat16>(false, true, S, S, S, 1.f, A.get(), B.get(), 0.f, C.get(), t),
                cudaSuccess);
    const auto t1 = std::chrono::steady_clock::now();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::printf("[host] launch call, maps %s: %.2f us per call\n", cache ? "cached " : "encoded",
                std::chrono::duration<double, std::micro>(t1 - t0).count() / 200);
  }
}

// One default launch at 4096^3 bf16 nt, for profilers (ncu --kernel-name regex:gemm_wgmma).
TEST_F(GemmWgmma, ProfileOnce4096) {
  SKIP_WITHOUT_HOPPER();
  const int S = 4096;
  const std::size_t n = static_cast<std::size_t>(S) * S;
  DeviceBuf<__nv_bfloat16> A(n), B(n), C(n);
  A.upload(random_matrix<__nv_bfloat16>(n, 7));
  B.upload(random_matrix<__nv_bfloat16>(n, 8));
  ASSERT_EQ(ours<__nv_bfloat16>(false, true, S, S, S, 1.f, A.get(), B.get(), 0.f, C.get()),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_F(GemmWgmma, TimingVsCublasPrintout) {
  SKIP_WITHOUT_HOPPER();
  for (int S : {4096, 8192}) {
    for (int l = 0; l < 4; ++l) time_case<__nv_bfloat16>(handle_, (l & 2) != 0, (l & 1) != 0, S);
    time_case<__half>(handle_, false, true, S);
  }
}

// Split-K at the weight-gradient shapes of the Transformer benchmark (dW = X^T dY, layout
// tn, K = 8192 tokens): unsplit, by shape, and cuBLAS.
TEST_F(GemmWgmma, SplitKTimingPrintout) {
  SKIP_WITHOUT_HOPPER();
  const int K = 8192;
  for (const auto& shape : {std::pair{512, 512}, {512, 2048}, {2048, 512}, {512, 6880}}) {
    const int M = shape.first, N = shape.second;  // plain locals: the lambdas below capture them
    const std::size_t mk = static_cast<std::size_t>(M) * K, kn = static_cast<std::size_t>(K) * N;
    DeviceBuf<__nv_bfloat16> A(mk), B(kn), C(static_cast<std::size_t>(M) * N);
    A.upload(random_matrix<__nv_bfloat16>(mk, 7));
    B.upload(random_matrix<__nv_bfloat16>(kn, 8));
    const std::size_t ws_bytes = kg::gemm_wgmma_splitk_workspace_bytes(M, N, K, 2);
    DeviceBuf<unsigned char> ws(ws_bytes);
    cudaError_t e = cudaSuccess;
    kg::GemmWgmmaTuning unsplit;
    unsplit.splits = 1;
    const float ms_one = median_ms([&] {
      if (auto r = ours<__nv_bfloat16>(true, false, M, N, K, 1.f, A.get(), B.get(), 0.f, C.get(), unsplit);
          r != cudaSuccess)
        e = r;
    });
    const float ms_split = median_ms([&] {
      if (auto r = ours<__nv_bfloat16>(true, false, M, N, K, 1.f, A.get(), B.get(), 0.f, C.get(), {},
                                       ws_bytes > 0 ? ws.get() : nullptr, ws_bytes);
          r != cudaSuccess)
        e = r;
    });
    ASSERT_EQ(e, cudaSuccess);
    cublasStatus_t s;
    const float ms_ref = cublas_ms<__nv_bfloat16>(handle_, true, false, M, N, K, A.get(), B.get(), C.get(), &s);
    ASSERT_EQ(s, CUBLAS_STATUS_SUCCESS);
    int dev = 0, sms = 0;
    ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
    const double flop = 2.0 * M * static_cast<double>(N) * K;
    std::printf("[splitk] bf16 tn %dx%dx%d: unsplit %.1f us %.0f TFLOP/s | %d splits %.1f us %.0f TFLOP/s | "
                "cuBLAS %.1f us %.0f TFLOP/s | split %.0f%% of cuBLAS\n",
                M, N, K, ms_one * 1e3, flop / ms_one * 1e-9, kg::gemm_wgmma_splits(M, N, K, 2, sms),
                ms_split * 1e3, flop / ms_split * 1e-9, ms_ref * 1e3, flop / ms_ref * 1e-9,
                100.0 * ms_ref / ms_split);
  }
}

// The weight gradient into an f32 master weight (gemm_wgmma_bf16_f32, alpha 1, beta 0: sums
// straight into C) at the counts of both split rules: the workspace rule (>= 16 K steps per
// split, forced through tuning.splits) and the by-shape count of this case (>= 2, no
// workspace), beside cuBLAS with an f32 C. Checked against cuBLAS (f32 sums both sides:
// |diff| <= 1e-3 + 1e-4 |ref|), timed and printed (no assertion on speed).
TEST_F(GemmWgmma, SplitKIntoF32CTimingPrintout) {
  SKIP_WITHOUT_HOPPER();
  int dev = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  for (const auto& shape : {std::tuple{512, 512, 8192}, {2048, 512, 8192}, {512, 512, 1300}, {2048, 512, 1300}}) {
    // Plain locals: the lambdas below capture them (clang refuses structured bindings there).
    const int M = std::get<0>(shape), N = std::get<1>(shape), K = std::get<2>(shape);
    const std::size_t mk = static_cast<std::size_t>(M) * K, kn = static_cast<std::size_t>(K) * N,
                      mn = static_cast<std::size_t>(M) * N;
    DeviceBuf<__nv_bfloat16> A(mk), B(kn);
    DeviceBuf<float> C(mn), R(mn);
    A.upload(random_matrix<__nv_bfloat16>(mk, 17u + M));
    B.upload(random_matrix<__nv_bfloat16>(kn, 18u + N));
    kg::GemmWgmmaTuning workspace_rule;
    workspace_rule.splits = kg::gemm_wgmma_splits(M, N, K, 2, sms);
    const std::size_t ws_bytes = kg::gemm_wgmma_splitk_workspace_bytes(M, N, K, 2, workspace_rule);
    DeviceBuf<unsigned char> ws(std::max<std::size_t>(ws_bytes, 1));
    cudaError_t e = cudaSuccess;
    auto run = [&](const kg::GemmWgmmaTuning& t, void* w, std::size_t wb) {
      if (auto r = kg::gemm_wgmma_bf16_f32(true, false, M, N, K, 1.f, A.get(), B.get(), 0.f, C.get(), nullptr, t, w, wb);
          r != cudaSuccess)
        e = r;
    };
    auto reference = [&] {
      if (cublas_ref_bf16_f32(handle_, true, false, M, N, K, A.get(), B.get(), R.get()) != CUBLAS_STATUS_SUCCESS)
        e = cudaErrorUnknown;
    };
    reference();
    ASSERT_EQ(cudaMemset(C.get(), 0xFF, mn * sizeof(float)), cudaSuccess);
    run({}, nullptr, 0);  // the by-shape count of this case, no workspace
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(e, cudaSuccess);
    const auto got = C.download(), want = R.download();
    std::size_t bad = 0;
    for (std::size_t i = 0; i < mn; ++i)
      if (!f32_sums_agree(got[i], want[i])) ++bad;
    EXPECT_EQ(bad, 0u) << M << "x" << N << "x" << K;
    const float ms_workspace_rule = median_ms([&] { run(workspace_rule, ws.get(), ws_bytes); });
    const float ms_into_c = median_ms([&] { run({}, nullptr, 0); });
    const float ms_ref = median_ms(reference);
    ASSERT_EQ(e, cudaSuccess);
    std::printf("[splitk-f32] bf16 tn %dx%dx%d, f32 C: workspace rule %d splits %.1f us | into C %d splits %.1f us | "
                "cuBLAS (f32 C) %.1f us | into C %.0f%% of cuBLAS\n",
                M, N, K, workspace_rule.splits, ms_workspace_rule * 1e3, kg::gemm_wgmma_splits(M, N, K, 2, sms, true),
                ms_into_c * 1e3, ms_ref * 1e3, 100.0 * ms_ref / ms_into_c);
  }
}
}  // namespace
