#include "report/sensors_json.hpp"

#include "report/json_get.hpp"

namespace harness {

nlohmann::json sensors_to_json(const SensorStats& s) {
  nlohmann::json reason_samples = nlohmann::json::object();
  for (const auto& [name, n] : s.reason_samples) reason_samples[name] = n;
  return {{"source", s.source},
          {"samples", s.samples},
          {"period_s", s.period_s},
          {"sm_clock_mhz", {{"min", s.sm_mhz_min}, {"median", s.sm_mhz_median}, {"max", s.sm_mhz_max}, {"limit", s.sm_mhz_limit}}},
          {"power_w", {{"min", s.power_w_min}, {"median", s.power_w_median}, {"max", s.power_w_max}}},
          {"temperature_c_max", s.temp_c_max},
          {"throttle_reasons", s.reasons},
          {"throttle_reason_samples", reason_samples},
          {"energy_j", s.energy_j ? nlohmann::json(*s.energy_j) : nlohmann::json(nullptr)},
          {"energy_source", s.energy_source},
          {"seconds", s.seconds},
          {"clock_fell", s.clock_fell()}};
}

SensorStats sensors_from_json(const nlohmann::json& j) {
  using namespace json_get;
  SensorStats s;
  s.source = str_or(j, {"source"}, "nvml");
  s.samples = count_or(j, {"samples"});
  s.period_s = num_or(j, {"period_s"});
  s.sm_mhz_min = num_or(j, {"sm_clock_mhz", "min"});
  s.sm_mhz_median = num_or(j, {"sm_clock_mhz", "median"});
  s.sm_mhz_max = num_or(j, {"sm_clock_mhz", "max"});
  s.sm_mhz_limit = num_or(j, {"sm_clock_mhz", "limit"});
  s.power_w_min = num_or(j, {"power_w", "min"});
  s.power_w_median = num_or(j, {"power_w", "median"});
  s.power_w_max = num_or(j, {"power_w", "max"});
  s.temp_c_max = num_or(j, {"temperature_c_max"});
  if (const auto* r = at(j, {"throttle_reasons"}); r && r->is_array())
    for (const auto& name : *r)
      if (name.is_string()) s.reasons.push_back(name.get<std::string>());
  if (const auto* r = at(j, {"throttle_reason_samples"}); r && r->is_object())
    for (const auto& [name, n] : r->items()) s.reason_samples[name] = count_or(*r, {name.c_str()});
  s.energy_j = num(j, {"energy_j"});
  s.energy_source = str_or(j, {"energy_source"});
  s.seconds = num_or(j, {"seconds"});
  return s;
}

nlohmann::json steady_to_json(const SteadyState& s) {
  return {{"reached", s.reached},         {"seconds", s.seconds},
          {"max_seconds", s.max_seconds}, {"clock_source", s.clock_source},
          {"burst_median_s", s.burst_median_s}, {"burst_samples", s.burst_samples},
          {"burst_mhz", s.burst_mhz},     {"settled_mhz", s.settled_mhz}};
}

SteadyState steady_from_json(const nlohmann::json& j) {
  using namespace json_get;
  SteadyState s;
  s.reached = boolean(j, {"reached"}).value_or(false);
  s.seconds = num_or(j, {"seconds"});
  s.max_seconds = num_or(j, {"max_seconds"});
  s.clock_source = str_or(j, {"clock_source"});
  s.burst_median_s = num_or(j, {"burst_median_s"});
  s.burst_samples = count_or(j, {"burst_samples"});
  s.burst_mhz = num_or(j, {"burst_mhz"});
  s.settled_mhz = num_or(j, {"settled_mhz"});
  return s;
}

}  // namespace harness
