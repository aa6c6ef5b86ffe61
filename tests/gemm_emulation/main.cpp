// Driver of tests/gemm_emulation/run.sh: the kernels of kernels/gemm behind `auto`, run by the
// host emulation (emu.hpp), against gemm_cpu with the gemm problem's tolerance rule.
// Exit status 1 on any mismatch or launch error.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>
#include "gemm/common.cuh"
#include "gemm/gemm.hpp"
#include "gemm/gemm_auto.hpp"
namespace kernels::gemm {
bool gemm_vector_aligned(int N, int K, const float* A, const float* B, const float* C) {
  auto al = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return N % 4 == 0 && K % 4 == 0 && al(A) && al(B) && al(C);
}
}
namespace kg = kernels::gemm;
struct S { int M, N, K; float alpha, beta; };
std::vector<float> rnd(size_t n, unsigned seed) { std::mt19937 g(seed); std::uniform_real_distribution<float> d(-1, 1); std::vector<float> v(n); for (auto& x : v) x = d(g); return v; }
int failures = 0;
// Runs `f` on copies of the inputs placed at offset `mis` floats in 16-byte aligned buffers.
template <class F>
void check(const char* what, const S& s, size_t ws_bytes, F f) {
  for (size_t mis : {0, 1}) {
    auto A = rnd((size_t)s.M * s.K, 1), B = rnd((size_t)s.K * s.N, 2), C = rnd((size_t)s.M * s.N, 3);
    if (s.beta == 0) C.assign(C.size(), std::numeric_limits<float>::quiet_NaN());
    auto want = C;
    kg::gemm_cpu(s.M, s.N, s.K, s.alpha, A.data(), B.data(), s.beta, want.data(), 2);
    auto buf = [&](const std::vector<float>& v) { float* p = static_cast<float*>(std::aligned_alloc(16, (v.size() + 8) * 4)); std::memcpy(p + mis, v.data(), v.size() * 4); return p; };
    float *a = buf(A), *b = buf(B), *c = buf(C);
    void* ws = ws_bytes ? std::aligned_alloc(256, (ws_bytes + 255) / 256 * 256) : nullptr;
    if (ws) for (size_t i = 0; i < ws_bytes / 4; ++i) static_cast<float*>(ws)[i] = std::numeric_limits<float>::quiet_NaN();
    cudaError_t e = f(a + mis, b + mis, c + mis, ws, ws_bytes);
    double tol_abs = 1.19e-7 * (std::fabs(s.alpha) * (4.0 * s.K + 8 * std::sqrt((double)s.K)) + 4 * std::fabs(s.beta));
    size_t bad = 0; std::string first;
    for (size_t i = 0; i < want.size(); ++i) {
      double err = std::fabs((double)c[mis + i] - want[i]);
      if (!(err <= tol_abs + 4 * 5.96e-8 * std::fabs(want[i]))) { if (!bad++) first = std::to_string(i / s.N) + "," + std::to_string(i % s.N) + " got " + std::to_string(c[mis + i]) + " want " + std::to_string(want[i]); }
    }
    if (e != cudaSuccess || bad) { ++failures; std::printf("FAIL %s %dx%dx%d a=%g b=%g mis=%zu: err=%d bad=%zu first %s\n", what, s.M, s.N, s.K, s.alpha, s.beta, mis, (int)e, bad, first.c_str()); }
    std::free(a); std::free(b); std::free(c); std::free(ws);
  }
}
int main(int argc, char**) {
  const kg::Tile tiles[] = {kg::Tile::t128x128, kg::Tile::t128x64, kg::Tile::t64x64, kg::Tile::t32x64};
  const S shapes[] = {{1, 1, 1, 1, 0}, {33, 65, 70, 1, 0}, {129, 130, 1027, -0.5f, 1.5f}, {200, 64, 600, 1, 0}, {31, 257, 205, 1, 0.5f}, {64, 128, 64, 1, 0}};
  if (argc == 1) for (const S& s : shapes) for (kg::Tile t : tiles) {
    check((std::string("tile ") + kg::tile_name(t)).c_str(), s, 0, [&](const float* A, const float* B, float* C, void*, size_t) { return kg::gemm_tile(t, s.M, s.N, s.K, s.alpha, A, B, s.beta, C, nullptr); });
    for (int sp : {2, 3, 7}) {
      check((std::string("splitk ") + kg::tile_name(t) + " " + std::to_string(sp)).c_str(), s, kg::splitk_workspace_bytes(s.M, s.N, s.K, sp),
            [&](const float* A, const float* B, float* C, void* ws, size_t wb) { return kg::gemm_splitk(t, sp, s.M, s.N, s.K, s.alpha, A, B, s.beta, C, ws, wb, nullptr); });
    }
  }
  std::printf("tiles done, failures %d\n", failures);
  const S gv[] = {{1, 1, 1, 1, 0}, {1, 4097, 33, 1, 0}, {4097, 1, 31, 1, 0}, {1, 130, 5000, 2, -1}, {3, 1, 5000, 1, 0.5f}, {1, 1, 7000, 1, 0}, {1, 256, 1024, 1, 0}, {64, 1, 256, 1, 0}};
  for (const S& s : gv) for (int sp : {1, 5, 64}) {
    const int used = s.M == 1 ? sp : 1;
    check(("gemv " + std::to_string(sp)).c_str(), s, kg::gemv_workspace_bytes(s.M, s.N, used),
          [&](const float* A, const float* B, float* C, void* ws, size_t wb) { return kg::gemm_gemv(s.M, s.N, s.K, s.alpha, A, B, s.beta, C, used, ws, wb, nullptr); });
  }
  for (const S& s : {S{1, 1, 1, 1, 0}, S{300, 201, 1, 2, 0.5f}, S{5, 256, 1, 1, 0}})
    check("outer", s, 0, [&](const float* A, const float* B, float* C, void*, size_t) { return kg::gemm_outer(s.M, s.N, s.K, s.alpha, A, B, s.beta, C, nullptr); });
  const S au[] = {{1, 1, 1, 1, 0}, {1, 4097, 33, 1, 0}, {4097, 1, 31, 1, 0}, {127, 129, 4099, 1, 0}, {33, 65, 3000, 1, 0.5f}, {16, 100, 1500, 1, 0}, {300, 200, 1, 2, 0.5f},
                   {253, 129, 2337, 1, 0.5f}};  // 128x128 split-K (issue 14)
  for (const S& s : au) {
    const kg::AutoChoice c = kg::choose_auto(s.M, s.N, s.K, 132);
    check(("auto " + kg::describe(c)).c_str(), s, kg::auto_workspace_bytes(c, s.M, s.N, s.K),
          [&](const float* A, const float* B, float* C, void* ws, size_t wb) { return kg::gemm_auto(c, s.M, s.N, s.K, s.alpha, A, B, s.beta, C, ws, wb, nullptr); });
    std::printf("auto %dx%dx%d: %s\n", s.M, s.N, s.K, kg::describe(c).c_str());
  }
  std::printf("failures %d\n", failures);
  return failures != 0;
}
