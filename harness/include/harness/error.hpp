#pragma once
// Exceptions the harness throws, and the exit codes the CLI maps them to.
#include <stdexcept>
#include <string>

namespace harness {

// Documented exit codes of the `harness` executable.
enum ExitCode : int {
  kExitOk = 0,          // every result passed (or was skipped with a reason)
  kExitFailure = 1,     // a check failed, a variant errored, or compare found a regression
  kExitBadInput = 2,    // bad command line, suite, report or plugin: nothing was run; or a GPU run whose
                        // device could not be used (every CUDA result skipped; see --allow-skips)
};

// Anything the user gave us that is wrong: a suite, a parameter, a plugin, a path.
// The message is complete and one line ("suites/x.yaml:3:5: unknown key 'x'").
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failed CUDA runtime/library call, with the call site.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& what, int code, bool sticky)
      : std::runtime_error(what), code_(code), sticky_(sticky) {}
  int code() const noexcept { return code_; }
  // A sticky error (illegal address, device assert, ...) corrupts the CUDA context:
  // nothing more can run in this process.
  bool sticky() const noexcept { return sticky_; }

 private:
  int code_;
  bool sticky_;
};

// Raised by a launch function when the device has too little memory; the runner reports
// it as `skipped: out of memory (...)` rather than as an error.
class OutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace harness
