#pragma once
// The result's "integrity" object (types/integrity.hpp) in the report, and back.
#include <nlohmann/json.hpp>

#include "types/integrity.hpp"

namespace harness {

nlohmann::json integrity_to_json(const Integrity& in);
// Lenient, as the rest of the decoder: missing or mistyped fields keep their defaults.
Integrity integrity_from_json(const nlohmann::json& result);

}  // namespace harness
