#pragma once
// The JSON of a result's sensors (NVML over the timed batches) and of its steady warm-up:
// results[].sensors and results[].steady of the report (reports/schema.json).
#include <nlohmann/json.hpp>

#include "types/sensors.hpp"

namespace harness {

nlohmann::json sensors_to_json(const SensorStats& s);
SensorStats sensors_from_json(const nlohmann::json& j);
nlohmann::json steady_to_json(const SteadyState& s);
SteadyState steady_from_json(const nlohmann::json& j);

}  // namespace harness
