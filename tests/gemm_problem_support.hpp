#pragma once
// The registered gemm problem and its parameters, as the host tests of the gemm plugin
// (gemm_plugin_test, gemm_tc_cpu_test, gemm_fp8_cpu_test) build them.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "harness/registry.hpp"

namespace harness::test {

inline const harness::Problem& gemm_problem() {
  const harness::Problem* p = harness::Registry::instance().find_problem("gemm");
  EXPECT_NE(p, nullptr);
  return *p;
}

// (M, N, K, dtype, layout, alpha, beta), the rest at the problem's defaults.
inline harness::Params gemm_params(std::int64_t M, std::int64_t N, std::int64_t K, const char* dtype = "f32",
                                   const char* layout = "nn", double alpha = 1.0, double beta = 0.0) {
  harness::Params p;
  p.set("M", M);
  p.set("N", N);
  p.set("K", K);
  p.set("alpha", alpha);
  p.set("beta", beta);
  p.set("dtype", std::string(dtype));
  p.set("layout", std::string(layout));
  return harness::with_defaults(gemm_problem().params(), p);
}

}  // namespace harness::test
