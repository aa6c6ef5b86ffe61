// A helper for profiling_nvtx_test: pushes a fixed tree of harness NVTX ranges, then
// times ranges in a loop. Prints "enabled=<0|1>" and "ns_per_range=<x>".
//   harness_nvtx_probe            (no tool: every range is a no-op)
//   NVTX_INJECTION64_PATH=libharness_nvtx_injection.so HARNESS_NVTX_LOG=log harness_nvtx_probe
#include <chrono>
#include <cstdio>
#include <utility>

#include "profile/nvtx.hpp"

int main() {
  using harness::NvtxPhase;
  using harness::NvtxRange;
  std::printf("enabled=%d\n", harness::nvtx_enabled() ? 1 : 0);

  harness::Params params;
  params.set("M", std::int64_t{4096});
  params.set("op", std::string("copy/x@y[0]*"));
  {
    NvtxRange suite("probe/suite@1", NvtxPhase::suite);
    NvtxRange c(harness::nvtx_case_name("square", "gemm", params), NvtxPhase::case_);
    for (const char* variant : {"tiled", "naive"}) {
      NvtxRange v(harness::nvtx_variant_name("gemm", variant, params), NvtxPhase::variant);
      { NvtxRange r("check", NvtxPhase::check); }
      { NvtxRange r("warmup", NvtxPhase::warmup); }
      {
        NvtxRange r("timed", NvtxPhase::timed);
        NvtxRange moved = std::move(r);  // the move pops once, at the end of this scope
      }
      NvtxRange p("profile", NvtxPhase::profile);
      p.end();
      p.end();  // idempotent
    }
  }
  // Without a tool the loop measures the no-op cost; with one, keep the log small.
  const int kLoops = harness::nvtx_enabled() ? 10 : 200000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kLoops; ++i) {
    NvtxRange step("step", NvtxPhase::step);
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / kLoops;
  std::printf("ns_per_range=%.2f\n", ns);
  return 0;
}
