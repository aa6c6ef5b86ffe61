// Experiment switches: environment variables that a launcher reads once a process to force one
// of its choices (HARNESS_WGMMA_SPLITS=4, HARNESS_FWD_D64_KEYS=192, HARNESS_SKINNY_X=global, ...),
// for A/B runs of whole suites. Host code; each call site keeps its value in a function-local
// static and validates it against the choices it knows.
#pragma once

#include <cstdlib>
#include <cstring>

namespace kernels::arch {

// Whether the variable is set and not empty.
inline bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

// The variable as an integer (atoi: "abc" reads 0), or `otherwise` where it is unset or empty.
inline int env_int(const char* name, int otherwise = 0) {
  return env_set(name) ? std::atoi(std::getenv(name)) : otherwise;
}

// Whether the variable is set to exactly `value`.
inline bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

}  // namespace kernels::arch
