#pragma once
// The events a child of the process pool (run/pool.hpp) sends its parent, one JSON line
// each in its events file; report/read_journal reads the result events back for --resume.
//   {"event":"environment","environment":{...}}   once, at start
//   {"event":"start","name":R}                     before each result
//   {"event":"result","result":{...}}              after it (the report's result object)
//   {"event":"idle"}                               after each batch
#include <string>

#include <nlohmann/json.hpp>

namespace harness::events {

inline constexpr const char* kEnvironment = "environment";
inline constexpr const char* kStart = "start";
inline constexpr const char* kResult = "result";
inline constexpr const char* kIdle = "idle";

// The kind of an event line ("" when it is none).
inline std::string kind(const nlohmann::json& line) {
  return line.is_object() && line.contains("event") && line["event"].is_string() ? line["event"].get<std::string>() : "";
}
inline nlohmann::json environment(nlohmann::json env) { return {{"event", kEnvironment}, {"environment", std::move(env)}}; }
inline nlohmann::json start(const std::string& name) { return {{"event", kStart}, {"name", name}}; }
inline nlohmann::json result(nlohmann::json result) { return {{"event", kResult}, {"result", std::move(result)}}; }
inline nlohmann::json idle() { return {{"event", kIdle}}; }

}  // namespace harness::events
