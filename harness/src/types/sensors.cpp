#include "types/sensors.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace harness {

bool is_limiting_reason(const std::string& name) {
  static constexpr std::array<std::string_view, 5> kLimiting = {"sw_power_cap", "hw_slowdown", "sw_thermal",
                                                                "hw_thermal", "hw_power_brake"};
  return std::find(kLimiting.begin(), kLimiting.end(), name) != kLimiting.end();
}

bool SensorStats::clock_fell() const {
  if (sm_mhz_limit > 0 && sm_mhz_median > 0 && sm_mhz_median < 0.95 * sm_mhz_limit) return true;
  return std::any_of(reasons.begin(), reasons.end(), is_limiting_reason);
}

std::optional<double> SensorStats::mean_power_w() const {
  if (energy_j && seconds > 0) return *energy_j / seconds;
  if (power_w_median > 0) return power_w_median;
  return std::nullopt;
}

}  // namespace harness
