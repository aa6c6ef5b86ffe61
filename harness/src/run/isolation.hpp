#pragma once
// --isolate: every case runs in a child process (the same executable, re-run with the
// same arguments plus the names of the results to produce). A child that dies (a signal,
// a kernel fault that corrupts its CUDA context) or outlives the watchdog costs only the
// result it was working on, recorded as `crashed: <reason>` or `timeout`; a fresh child
// takes the remaining variants of the case.
//
// The children are the process pool's (run/pool.hpp): the case's remaining results go to
// the child as one batch on its stdin, and the parent follows its events file.
#include <functional>
#include <string>
#include <vector>

#include "run/runner.hpp"

namespace harness {

struct IsolationOptions {
  std::vector<std::string> argv;   // the parent's arguments without --isolate/--out/--resume
  double timeout_override = 0;     // --timeout: seconds per result, over the suite's
};

struct ChildRun;

class IsolatedRunner {
 public:
  explicit IsolatedRunner(IsolationOptions options) : options_(std::move(options)) {}
  std::vector<Result> run(const std::vector<PlannedResult>& planned, const RunObserver& observer);

 private:
  struct Sink {
    std::function<void(const std::string& name)> start;
    std::function<void(Result)> result;
  };
  // One child for what is left of a case; the results it produced leave `remaining`.
  ChildRun run_child(std::vector<const PlannedResult*>& remaining, const Sink& deliver);
  double limit_of(const PlannedResult& p) const;

  IsolationOptions options_;
  std::string events_path_, stderr_path_;
};

}  // namespace harness
