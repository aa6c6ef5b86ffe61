#pragma once
// --isolate: every case runs in a child process (the same executable, re-run with the
// same arguments plus the names of the results to produce). A child that dies (a signal,
// a kernel fault that corrupts its CUDA context) or outlives the watchdog costs only the
// result it was working on, recorded as `crashed: <reason>` or `timeout`; a fresh child
// takes the remaining variants of the case.
//
// Protocol: the child appends JSON lines to an events file,
//   {"event":"start","name":R}            before each result
//   {"event":"result","result":{...}}     after it (the report's result object)
// and the parent follows the file while it waits.
#include <string>
#include <vector>

#include "run/runner.hpp"

namespace harness {

struct IsolationOptions {
  std::vector<std::string> argv;   // the parent's arguments without --isolate/--out/--resume
  double timeout_override = 0;     // --timeout: seconds per result, over the suite's
};

class IsolatedRunner {
 public:
  explicit IsolatedRunner(IsolationOptions options) : options_(std::move(options)) {}
  std::vector<Result> run(const std::vector<PlannedResult>& planned, const RunObserver& observer);

 private:
  IsolationOptions options_;
};

// In the child: the hidden options that select its work.
inline constexpr const char* kChildEventsOption = "--isolate-child";
inline constexpr const char* kChildOnlyOption = "--isolate-only";

// Runs `planned` (already narrowed to the names in the --isolate-only file), writing events.
int run_isolated_child(Runner& runner, const std::vector<PlannedResult>& planned, const std::string& events_path);

// The names listed (one per line) in an --isolate-only file.
std::vector<std::string> read_name_list(const std::string& path);

}  // namespace harness
