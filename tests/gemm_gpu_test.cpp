// Every CUDA GEMM kernel of kernels/gemm, called directly (no harness runner), against the
// host reference up to 1000^3 and against cuBLAS at 2048^3, with the gemm problem's own
// tolerance. Label `gpu`: skipped with "no CUDA device" where there is none.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "gemm/gemm.hpp"
#include "gemm/gemm_cublas.hpp"
#include "gemm_tolerance.hpp"
#include "gemm_test_support.hpp"
#include "test_support.hpp"

namespace {

namespace kg = kernels::gemm;

using harness::test::have_device;

#define SKIP_WITHOUT_DEVICE() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device"

using harness::test::DeviceFloats;
using harness::test::random_floats;

using LaunchFn = std::function<cudaError_t(int, int, int, float, const float*, const float*,
                                           float, float*, cudaStream_t)>;

struct Kernel {
  std::string name;
  LaunchFn launch;
};

void PrintTo(const Kernel& k, std::ostream* os) { *os << k.name; }

std::vector<Kernel> cuda_kernels() {
  return {
      {"naive", kg::gemm_naive},
      {"atomic", [](int M, int N, int K, float a, const float* A, const float* B, float b,
                    float* C, cudaStream_t s) { return kg::gemm_atomic(M, N, K, a, A, B, b, C, s); }},
      {"atomic_3splits",
       [](int M, int N, int K, float a, const float* A, const float* B, float b, float* C,
          cudaStream_t s) { return kg::gemm_atomic(M, N, K, a, A, B, b, C, s, 3); }},
      {"tiled8", kg::gemm_tiled<8>},
      {"tiled16", kg::gemm_tiled<16>},
      {"tiled32", kg::gemm_tiled<32>},
      {"vectorized", kg::gemm_vectorized},
      {"coarsened", [](int M, int N, int K, float a, const float* A, const float* B, float b,
                       float* C, cudaStream_t s) { return kg::gemm_coarsened(M, N, K, a, A, B, b, C, s); }},
      {"coarsened_k16", kg::gemm_coarsened<16>},
  };
}

// Mismatches of `got` against `want` under the gemm problem's tolerance, with the first
// few described; NaN (from a kernel that read a beta == 0 C) counts as a mismatch.
std::string compare(const std::vector<float>& got, const std::vector<float>& want, int N,
                    int K, float alpha, float beta) {
  const auto tol = plugins::gemm::tolerance_for(K, alpha, beta);
  std::size_t bad = 0;
  double worst = 0;
  std::ostringstream out;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - want[i]);
    if (!(err <= tol.abs + tol.rel * std::abs(want[i]))) {  // NaN fails too
      if (bad < 5)
        out << " C(" << i / N << "," << i % N << ") got " << got[i] << " want " << want[i] << ";";
      ++bad;
    }
    if (std::isfinite(err)) worst = std::max(worst, err);
  }
  if (bad == 0) return {};
  return std::to_string(bad) + " of " + std::to_string(want.size()) +
         " outside tolerance (abs " + std::to_string(tol.abs) + ", max err " +
         std::to_string(worst) + "):" + out.str();
}

struct Shape {
  int M, N, K;
  float alpha, beta;
};

std::string shape_name(const Shape& s) {
  auto num = [](float v) {
    std::string t = std::to_string(static_cast<int>(std::lround(v * 100)));
    for (auto& ch : t)
      if (ch == '-') ch = 'm';
    return t;
  };
  return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) + "_a" +
         num(s.alpha) + "_b" + num(s.beta);
}

void PrintTo(const Shape& s, std::ostream* os) { *os << shape_name(s); }

struct Inputs {
  std::vector<float> A, B, C;  // C: the initial C (all NaN when beta == 0)
};

Inputs make_inputs(const Shape& s, std::uint32_t seed) {
  const std::size_t mn = static_cast<std::size_t>(s.M) * s.N;
  Inputs in{random_floats(static_cast<std::size_t>(s.M) * s.K, seed),
            random_floats(static_cast<std::size_t>(s.K) * s.N, seed + 1),
            random_floats(mn, seed + 2)};
  // BLAS semantics: with beta == 0, C must not be read; NaN makes any read visible.
  if (s.beta == 0.0f) in.C.assign(mn, std::numeric_limits<float>::quiet_NaN());
  return in;
}

// Runs `launch` on fresh device copies of `in` (pointers offset by `misalign` floats).
std::vector<float> run(const LaunchFn& launch, const Shape& s, const Inputs& in,
                       std::size_t misalign = 0) {
  DeviceFloats a(in.A.size(), misalign), b(in.B.size(), misalign), c(in.C.size(), misalign);
  a.upload(in.A);
  b.upload(in.B);
  c.upload(in.C);
  EXPECT_EQ(launch(s.M, s.N, s.K, s.alpha, a.get(), b.get(), s.beta, c.get(), nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return c.download(in.C.size());
}

std::vector<float> cpu_reference(const Shape& s, const Inputs& in) {
  auto c = in.C;
  kg::gemm_cpu(s.M, s.N, s.K, s.alpha, in.A.data(), in.B.data(), s.beta, c.data());
  return c;
}

// ---------------------------------------------------------------------------------------
// Every kernel x shape against the host reference.

using KernelShape = std::tuple<Kernel, Shape>;

class GemmVsCpu : public ::testing::TestWithParam<KernelShape> {};

TEST_P(GemmVsCpu, MatchesReference) {
  SKIP_WITHOUT_DEVICE();
  const auto& [kernel, s] = GetParam();
  const Inputs in = make_inputs(s, 42);
  const auto want = cpu_reference(s, in);
  const auto got = run(kernel.launch, s, in);
  EXPECT_EQ(compare(got, want, s.N, s.K, s.alpha, s.beta), "") << kernel.name << " " << shape_name(s);
}

const Shape kShapes[] = {
    {1, 1, 1, 1.0f, 0.0f},          {17, 33, 9, 1.0f, 0.0f},
    {17, 33, 9, -1.5f, 0.5f},       {129, 65, 257, 1.0f, 0.0f},
    {129, 65, 257, 0.75f, -2.0f},   {33, 35, 37, 1.0f, 1.0f},   // K, N odd: scalar paths
    {64, 66, 64, 1.0f, 0.0f},       // N % 4 == 2
    {64, 64, 63, 1.0f, 0.0f},       // K % 4 == 3
    {300, 200, 1, 2.0f, 0.0f},      // K = 1
    {2048, 64, 2048, 1.0f, 0.0f},   // tall-skinny
    {1000, 1000, 1000, 1.0f, 0.0f}, {1000, 1000, 1000, -0.5f, 1.5f},
};

std::string kernel_shape_name(const ::testing::TestParamInfo<KernelShape>& param_info) {
  return std::get<0>(param_info.param).name + "_" + shape_name(std::get<1>(param_info.param));
}

std::string kernel_name(const ::testing::TestParamInfo<Kernel>& param_info) {
  return param_info.param.name;
}

INSTANTIATE_TEST_SUITE_P(All, GemmVsCpu,
                         ::testing::Combine(::testing::ValuesIn(cuda_kernels()),
                                            ::testing::ValuesIn(kShapes)),
                         kernel_shape_name);

// ---------------------------------------------------------------------------------------
// float4 kernels given pointers that are not 16-byte aligned (shapes that are): they must
// take their scalar path, not fault or misread.

class GemmMisaligned : public ::testing::TestWithParam<Kernel> {};

TEST_P(GemmMisaligned, FallsBackToScalar) {
  SKIP_WITHOUT_DEVICE();
  const Kernel& kernel = GetParam();
  const Shape s{96, 128, 64, 1.0f, 0.5f};
  const Inputs in = make_inputs(s, 7);
  const auto want = cpu_reference(s, in);
  const auto got = run(kernel.launch, s, in, /*misalign=*/1);
  EXPECT_EQ(compare(got, want, s.N, s.K, s.alpha, s.beta), "") << kernel.name;
}

INSTANTIATE_TEST_SUITE_P(Vector, GemmMisaligned,
                         ::testing::Values(Kernel{"vectorized", kg::gemm_vectorized},
                                           Kernel{"coarsened_k8", kg::gemm_coarsened<8>},
                                           Kernel{"coarsened_k16", kg::gemm_coarsened<16>}),
                         kernel_name);

TEST(GemmAligned, Predicate) {
  alignas(16) static float buf[16];
  EXPECT_TRUE(kg::gemm_vector_aligned(8, 4, buf, buf, buf));
  EXPECT_FALSE(kg::gemm_vector_aligned(6, 4, buf, buf, buf));
  EXPECT_FALSE(kg::gemm_vector_aligned(8, 5, buf, buf, buf));
  EXPECT_FALSE(kg::gemm_vector_aligned(8, 4, buf + 1, buf, buf));
}

// ---------------------------------------------------------------------------------------
// Larger than the host reference is used for: against cuBLAS.

class Cublas {
 public:
  Cublas() { EXPECT_EQ(cublasCreate(&handle_), CUBLAS_STATUS_SUCCESS); }
  ~Cublas() { cublasDestroy(handle_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  LaunchFn launch() const {
    return [h = handle_](int M, int N, int K, float a, const float* A, const float* B, float b,
                         float* C, cudaStream_t s) {
      return kg::gemm_cublas(h, M, N, K, a, A, B, b, C, s) == CUBLAS_STATUS_SUCCESS
                 ? cudaSuccess
                 : cudaErrorUnknown;
    };
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

TEST(GemmCublas, MatchesCpuReference) {
  SKIP_WITHOUT_DEVICE();
  Cublas cublas;
  for (const Shape s : {Shape{129, 65, 257, 1.0f, 0.0f}, Shape{257, 129, 511, -0.5f, 1.5f},
                        Shape{1000, 1000, 1000, 1.0f, 0.0f}}) {
    const Inputs in = make_inputs(s, 3);
    EXPECT_EQ(compare(run(cublas.launch(), s, in), cpu_reference(s, in), s.N, s.K, s.alpha, s.beta), "")
        << shape_name(s);
  }
}

class GemmVsCublas : public ::testing::TestWithParam<Kernel> {};

TEST_P(GemmVsCublas, At2048) {
  SKIP_WITHOUT_DEVICE();
  const Kernel& kernel = GetParam();
  Cublas cublas;
  for (const Shape s : {Shape{2048, 2048, 2048, 1.0f, 0.0f}, Shape{2048, 2048, 2048, 1.25f, -0.5f}}) {
    const Inputs in = make_inputs(s, 9);
    const auto want = run(cublas.launch(), s, in);
    EXPECT_EQ(compare(run(kernel.launch, s, in), want, s.N, s.K, s.alpha, s.beta), "")
        << kernel.name << " " << shape_name(s);
  }
}

INSTANTIATE_TEST_SUITE_P(All, GemmVsCublas, ::testing::ValuesIn(cuda_kernels()), kernel_name);

// ---------------------------------------------------------------------------------------
// Argument errors come back as cudaErrorInvalidValue before any launch (no device needed).

TEST(GemmArgs, InvalidValue) {
  float* p = reinterpret_cast<float*>(std::uintptr_t{256});  // never dereferenced
  for (const Kernel& k : cuda_kernels()) {
    EXPECT_EQ(k.launch(0, 1, 1, 1.0f, p, p, 0.0f, p, nullptr), cudaErrorInvalidValue) << k.name;
    EXPECT_EQ(k.launch(1, 1, -3, 1.0f, p, p, 0.0f, p, nullptr), cudaErrorInvalidValue) << k.name;
    EXPECT_EQ(k.launch(1, 1, 1, 1.0f, nullptr, p, 0.0f, p, nullptr), cudaErrorInvalidValue) << k.name;
  }
}

}  // namespace
