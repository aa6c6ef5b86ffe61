// The Hopper FP8 (e4m3) attention forward on a device (label gpu), through the registry as
// the runner drives it: `flash_wgmma` and `flash` at dtype fp8_e4m3 against the double host
// reference on the dequantized inputs (cpu, or cpu_sampled above its limit), with the
// operands' own tolerances (O: element bound and rel L2; LSE: tight), at odd sizes (N = 1,
// 13, 200, 300, 1000: partial key tiles, V^T padding, causal, GQA/MQA), a longer causal GQA
// case, and the launch function's refusals. Off sm_90 the variants skip with their reason
// and nothing runs; without a device every test skips with "no CUDA device".
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "attention/attention.hpp"
#include "attention_fp8.hpp"
#include "attention_test_support.hpp"
#include "family_support.hpp"
#include "harness/check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/registry.hpp"
#include "test_support.hpp"

namespace {

namespace attn = kernels::attention;
using harness::test::have_device;

#define SKIP_WITHOUT_DEVICE() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device"

harness::Params params(int b, int h, int hkv, int n, bool causal) {
  return harness::test::attention_params(b, h, hkv, n, 128, causal, "fp8_e4m3");
}

// Runs the reference and `variant`; true when the variant ran (false: its skip, printed).
bool check(const char* variant, const harness::Params& p) {
  const harness::Problem& problem = harness::test::problem_named("attention");
  const auto& reg = harness::Registry::instance();
  const harness::Variant* v = reg.find_variant("attention", variant);
  EXPECT_NE(v, nullptr);
  if (const auto why = v->constraint(p)) {
    std::printf("  attention/%s at %s: skipped: %s\n", variant, p.describe().c_str(), why->c_str());
    return false;
  }
  const harness::Variant* ref = reg.find_variant("attention", problem.reference_variant(p));
  auto inst = problem.make_instance(p, 4242);
  inst->prepare(harness::Backend::cpu);
  inst->prepare(harness::Backend::cuda);
  const auto want = harness::test::run_once(*ref, *inst, p);
  harness::Workspace ws;
  const auto got = harness::test::run_once(*v, *inst, p, &ws);
  const auto r = harness::compare_outputs(got, want, problem.tolerance(p));
  const double o_l2 = harness::compare_outputs({got[0]}, {want[0]}, {}).rel_l2_error;
  EXPECT_TRUE(r.passed) << variant << " at " << p.describe() << ": " << r.summary();
  std::printf("  attention/%s at %s: O rel L2 %.3g; %s\n", variant, p.describe().c_str(), o_l2, r.summary().c_str());
  return true;
}

TEST(AttentionFp8Gpu, ForwardMatchesTheReferenceAtOddSizes) {
  SKIP_WITHOUT_DEVICE();
  struct Case {
    int b, h, hkv, n;
    bool causal;
  };
  int ran = 0;
  for (const Case& c : {Case{1, 2, 2, 1, false}, Case{1, 2, 1, 13, true}, Case{2, 4, 2, 200, false},
                        Case{1, 4, 1, 300, true}, Case{1, 2, 2, 1000, false}, Case{2, 3, 3, 129, true}})
    for (const char* v : {"flash_wgmma", "flash"}) ran += check(v, params(c.b, c.h, c.hkv, c.n, c.causal)) ? 1 : 0;
  if (ran == 0) GTEST_SKIP() << "the FP8 Hopper kernel cannot run here (reasons above)";
  EXPECT_EQ(ran, 12);
}

// Several query and key tiles, persistent rounds, GQA, the sampled reference.
TEST(AttentionFp8Gpu, LongerRowsCausalGqaAgainstSampledRows) {
  SKIP_WITHOUT_DEVICE();
  if (!check("flash_wgmma", params(2, 8, 2, 2048, true))) GTEST_SKIP() << "the FP8 Hopper kernel cannot run here";
  EXPECT_TRUE(check("flash_wgmma", params(1, 16, 16, 4096, false)));
}

TEST(AttentionFp8Gpu, LaunchRefusesBadScalesAndMisalignedPointers) {
  SKIP_WITHOUT_DEVICE();
  attn::Shape s;
  s.batch = 1, s.heads = 1, s.kv_heads = 1, s.seq_len = 64, s.head_dim = 128;
  if (const char* why = attn::flash_hopper_fp8_unsupported(s)) GTEST_SKIP() << why;
  harness::DeviceBuffer<std::uint8_t> q(64 * 128 + 16), k(64 * 128), v(64 * 128),
      vt(attn::flash_hopper_fp8_workspace_bytes(s));
  harness::DeviceBuffer<std::uint16_t> o(64 * 128);
  harness::DeviceBuffer<float> lse(64);
  EXPECT_THROW((void)attn::flash_hopper_forward_fp8(s, {1.0f, 0.0f, 1.0f}, q.data(), k.data(), v.data(), o.data(),
                                                    lse.data(), vt.data(), nullptr),
               std::invalid_argument);
  EXPECT_EQ(attn::flash_hopper_forward_fp8(s, {}, q.data() + 1, k.data(), v.data(), o.data(), lse.data(), vt.data(),
                                           nullptr),
            cudaErrorMisalignedAddress);
  s.head_dim = 64;
  EXPECT_THROW((void)attn::flash_hopper_forward_fp8(s, {}, q.data(), k.data(), v.data(), o.data(), lse.data(),
                                                    vt.data(), nullptr),
               std::invalid_argument);
}

}  // namespace
