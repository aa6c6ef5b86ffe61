// dtype fp8_e4m3 of the `attention` problem: the quantizing fill, the dequantized
// references' inputs, the tolerances and the Hopper FP8 variant (see attention_fp8.hpp).
#include "attention_fp8.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <fmt/format.h>

#include "attention_rules.hpp"
#include "harness/cuda_check.hpp"
#include "harness/random.hpp"

namespace plugins::attention {
namespace {

namespace attn = kernels::attention;

std::uint8_t quantize(float x, float scale) {
  return static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(x / scale, __NV_SATFINITE, __NV_E4M3));
}

}  // namespace

std::string fp8_config(const harness::Params& p) { return is_fp8(p) ? std::string(kFp8Config) : std::string(); }

harness::Fill fp8_fill(float scale, std::uint64_t stream, std::size_t head_elements) {
  return harness::custom_fill([scale, stream, head_elements](std::span<std::byte> bytes, std::uint64_t seed) {
    const std::size_t block = std::max<std::size_t>(head_elements, 1);
    std::vector<float> x(std::min(block, bytes.size()));
    for (std::size_t begin = 0, head = 0; begin < bytes.size(); begin += block, ++head) {
      const std::size_t n = std::min(block, bytes.size() - begin);
      harness::fill_normal(std::span<float>(x.data(), n), seed, (stream << 32) | head);
      for (std::size_t i = 0; i < n; ++i) bytes[begin + i] = static_cast<std::byte>(quantize(x[i], scale));
    }
  });
}

std::vector<float> fp8_dequantized(const void* bytes, std::size_t count, float scale) {
  const auto* q = static_cast<const std::uint8_t*>(bytes);
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    __nv_fp8_e4m3 v;
    v.__x = q[i];
    out[i] = scale * static_cast<float>(v);
  }
  return out;
}

harness::Tolerance fp8_o_tolerance() { return {0.375, 1.0 / 128, 0.07}; }
harness::Tolerance fp8_lse_tolerance(const attn::Shape& s) { return {2e-3 * relative_scale(s), 0.0}; }

std::optional<std::string> fp8_kernel_constraint(const attn::Shape& s, const char* variant) {
  if (const char* why = attn::flash_hopper_fp8_unsupported(s)) return fmt::format("{} (fp8_e4m3): {}", variant, why);
  return std::nullopt;
}

std::size_t fp8_workspace(const attn::Shape& s) {
  (void)harness::size_product("fp8 attention V^T workspace (B*Hkv*d*N bytes)", s.batch, s.kv_heads, s.head_dim,
                              s.seq_len + 15);
  return attn::flash_hopper_fp8_workspace_bytes(s);
}

void launch_fp8_forward(harness::LaunchContext& ctx, const attn::Shape& s) {
  void* vt = ctx.workspace->get(0, std::max<std::size_t>(attn::flash_hopper_fp8_workspace_bytes(s), 16));
  HARNESS_CUDA(attn::flash_hopper_forward_fp8(s, kFp8Scales, ctx.in<std::uint8_t>("Q"), ctx.in<std::uint8_t>("K"),
                                              ctx.in<std::uint8_t>("V"), ctx.out<__nv_bfloat16>("O"),
                                              ctx.out<float>("LSE"), vt, ctx.stream));
}

}  // namespace plugins::attention
