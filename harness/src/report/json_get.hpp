#pragma once
// Typed, forgiving lookups into JSON read from files: a missing key or a value of the
// wrong type gives nullopt (or the fallback), never a library exception. The one set of
// JSON path helpers of the report readers (decode_report, result_from_json, compare's
// environment warnings).
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace harness::json_get {

// The value at a path of object keys; nullptr when a step is missing or not an object.
inline const nlohmann::json* at(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  const nlohmann::json* p = &j;
  for (const char* k : keys) {
    if (!p->is_object()) return nullptr;
    const auto it = p->find(k);
    if (it == p->end()) return nullptr;
    p = &*it;
  }
  return p;
}

inline std::optional<std::string> str(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  const nlohmann::json* p = at(j, keys);
  if (!p || !p->is_string()) return std::nullopt;
  return p->get<std::string>();
}

inline std::string str_or(const nlohmann::json& j, std::initializer_list<const char*> keys, std::string fallback = "") {
  return str(j, keys).value_or(std::move(fallback));
}

inline std::optional<double> num(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  const nlohmann::json* p = at(j, keys);
  if (!p || !p->is_number()) return std::nullopt;
  return p->get<double>();
}

inline double num_or(const nlohmann::json& j, std::initializer_list<const char*> keys, double fallback = 0) {
  return num(j, keys).value_or(fallback);
}

inline std::optional<bool> boolean(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  const nlohmann::json* p = at(j, keys);
  if (!p || !p->is_boolean()) return std::nullopt;
  return p->get<bool>();
}

// A count: a non-negative number that fits std::size_t, else the fallback.
inline std::size_t count_or(const nlohmann::json& j, std::initializer_list<const char*> keys, std::size_t fallback = 0) {
  const auto v = num(j, keys);
  if (!v || !(*v >= 0) || !(*v < 1.8e19)) return fallback;
  return static_cast<std::size_t>(*v);
}

}  // namespace harness::json_get
