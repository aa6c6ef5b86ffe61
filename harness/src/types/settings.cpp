#include "types/settings.hpp"

namespace harness {

std::string_view to_string(CacheMode mode) { return mode == CacheMode::hot ? "hot" : "cold"; }
std::string_view to_string(TimingMode mode) { return mode == TimingMode::graph ? "graph" : "events"; }

std::string_view to_string(StoppingRule rule) {
  switch (rule) {
    case StoppingRule::noise: return "noise";
    case StoppingRule::entropy: return "entropy";
    case StoppingRule::samples: return "samples";
  }
  return "?";
}

std::optional<StoppingRule> stopping_rule_from_string(std::string_view name) {
  for (StoppingRule r : {StoppingRule::noise, StoppingRule::entropy, StoppingRule::samples})
    if (to_string(r) == name) return r;
  return std::nullopt;
}

}  // namespace harness
