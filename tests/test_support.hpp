#pragma once
// Small helpers shared by the tests: is there a CUDA device, running the harness
// executable, reading files.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

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

// Sets an environment variable for the scope (nullptr: unsets it), restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The number of visible CUDA devices (0 where the query fails; its error is cleared).
inline int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
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

// How often `what` occurs in `text` (overlapping counted).
inline std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// Removes a report written by `harness run --out out` and its journal.
inline void remove_report(const std::string& out) {
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

// `command` (the harness executable and its arguments) as rank 0 of a 2-rank job whose
// rank 1 never starts: NCCL id through id_file, a 5 s NCCL timeout. The result and the
// seconds it took.
struct TimedResult {
  CommandResult result;
  double seconds = 0;
};
inline TimedResult run_rank0_without_rank1(const std::string& command, const std::string& id_file) {
  const auto t0 = std::chrono::steady_clock::now();
  TimedResult t;
  t.result = run_command("HARNESS_RANK=0 HARNESS_WORLD_SIZE=2 HARNESS_NCCL_ID_FILE=" + id_file +
                         " HARNESS_NCCL_TIMEOUT=5 " + command);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

}  // namespace harness::test
