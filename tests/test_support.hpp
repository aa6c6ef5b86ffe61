#pragma once
// Small helpers shared by the tests: is there a CUDA device, running the harness
// executable, reading files.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <cuda_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>

namespace harness::test {

// True when a CUDA device can be used. GPU tests skip themselves (GTEST_SKIP, with the
// reason) when this is false; the query's error (no driver, no device) is cleared.
inline bool have_device() {
  int n = 0;
  const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  (void)cudaGetLastError();
  return ok;
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command, capturing stdout+stderr.
inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/harness-test-" + std::to_string(::getpid()) + "-" + name;
}

}  // namespace harness::test
