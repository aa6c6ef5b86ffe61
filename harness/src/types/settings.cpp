#include "types/settings.hpp"

#include <algorithm>
#include <variant>

namespace harness {

std::string_view to_string(CacheMode mode) { return mode == CacheMode::hot ? "hot" : "cold"; }
std::string_view to_string(TimingMode mode) { return mode == TimingMode::graph ? "graph" : "events"; }
std::string_view to_string(RoundOrder order) { return order == RoundOrder::fixed ? "fixed" : "shuffled"; }
std::optional<RoundOrder> round_order_from_string(std::string_view name) {
  if (name == "shuffled") return RoundOrder::shuffled;
  if (name == "fixed") return RoundOrder::fixed;
  return std::nullopt;
}

std::string_view to_string(StoppingRule rule) {
  switch (rule) {
    case StoppingRule::noise: return "noise";
    case StoppingRule::entropy: return "entropy";
    case StoppingRule::samples: return "samples";
  }
  return "?";
}

bool is_tensor_core_dtype(std::string_view dtype) {
  // The gemm problem names its fp8 dtype "fp8_e4m3" (the tensor peaks' name too).
  for (std::string_view t : {"bf16", "f16", "fp16", "tf32", "fp8", "e4m3", "e5m2", "fp8_e4m3", "fp8_e5m2"})
    if (dtype == t) return true;
  return false;
}

std::string dtype_param(const Params& params) {
  if (!params.has("dtype")) return {};
  const auto* dtype = std::get_if<std::string>(&params.at("dtype"));
  return dtype ? *dtype : std::string();
}

bool steady_by_default(const Params& params) {
  const std::string dtype = dtype_param(params);
  return !dtype.empty() && is_tensor_core_dtype(dtype);
}

bool interleave_by_default(const Params& params) { return steady_by_default(params); }

std::optional<StoppingRule> stopping_rule_from_string(std::string_view name) {
  for (StoppingRule r : {StoppingRule::noise, StoppingRule::entropy, StoppingRule::samples})
    if (to_string(r) == name) return r;
  return std::nullopt;
}

}  // namespace harness
