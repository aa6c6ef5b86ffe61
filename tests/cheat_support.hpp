#pragma once
// Shared by cheat_test.cpp and cheat_gpu_test.cpp: the harness executable, the cheating
// plugin, and a result of a report by variant.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace harness::test {

inline const std::string kHarnessExe = HARNESS_EXE;
inline const std::string kCheatPlugin = " --plugin " HARNESS_BINARY_DIR "/plugins/cheat_plugin.so ";

inline nlohmann::json result_of(const nlohmann::json& report, const std::string& variant) {
  for (const auto& r : report["results"])
    if (r["variant"] == variant) return r;
  ADD_FAILURE() << "no result for " << variant;
  return nlohmann::json::object();
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace harness::test
