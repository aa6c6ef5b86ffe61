#include "run/isolation.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "run/pool.hpp"

namespace harness {

using Clock = std::chrono::steady_clock;

// One child's life: it runs what is left of the case until it ends or outlives its limit.
struct ChildRun {
  const PlannedResult* running = nullptr;
  Clock::time_point started = Clock::now();
  int status = 0;
  bool timed_out = false;
  std::size_t produced = 0;
};

namespace {

// The result a child left unfinished: timed out, or crashed with how it ended.
Result casualty(const PlannedResult& victim, const ChildRun& run, double limit, const std::string& stderr_path) {
  Result r = unfinished_result(victim);
  if (run.timed_out) {
    r.status = Status::timeout;
    r.reason = fmt::format("timeout: still running after {:g} s (killed)", limit);
    return r;
  }
  r.status = Status::crashed;
  const bool clean_exit = WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0;
  const std::string err = last_line(stderr_path);
  if (WIFSIGNALED(run.status))
    r.reason = fmt::format("crashed: {}", describe_signal(WTERMSIG(run.status)));
  else if (clean_exit)
    r.reason = "crashed: the isolated process ended without producing this result";
  else
    r.reason = fmt::format("crashed: the isolated process exited with code {}", WEXITSTATUS(run.status));
  if (!err.empty()) r.reason += ": " + err;
  return r;
}

}  // namespace

ChildRun IsolatedRunner::run_child(std::vector<const PlannedResult*>& remaining, const Sink& deliver) {
  if (std::FILE* truncate = std::fopen(events_path_.c_str(), "w")) std::fclose(truncate);
  ChildProcess child = spawn_child(options_.argv, events_path_, stderr_path_);
  send_batch(child, remaining);
  close_input(child);
  EventReader events(events_path_);
  ChildRun run;
  EventHandlers handlers;
  handlers.on_start = [&](const std::string& name) {
    for (const auto* p : remaining)
      if (p->name == name) run.running = p;
    run.started = Clock::now();
    if (run.running) deliver.start(run.running->name);
  };
  handlers.on_result = [&](Result r) {
    std::erase_if(remaining, [&](const PlannedResult* p) { return p->name == r.name; });
    run.running = nullptr;
    ++run.produced;
    deliver.result(std::move(r));
  };
  for (;;) {
    const bool exited = waitpid(child.pid, &run.status, WNOHANG) == child.pid;
    events.read(handlers);
    if (exited) break;
    const double limit = run.running ? limit_of(*run.running) : 0;
    if (limit > 0 && std::chrono::duration<double>(Clock::now() - run.started).count() > limit) {
      kill(child.pid, SIGKILL);
      waitpid(child.pid, &run.status, 0);
      run.timed_out = true;
      events.read(handlers);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return run;
}

double IsolatedRunner::limit_of(const PlannedResult& p) const {
  return options_.timeout_override > 0 ? options_.timeout_override : p.c->settings.timeout;
}

std::vector<Result> IsolatedRunner::run(const std::vector<PlannedResult>& planned, const RunObserver& observer) {
  std::vector<Result> results;
  events_path_ = temp_file("events");
  stderr_path_ = temp_file("stderr");
  std::size_t index = 0;
  Sink deliver;
  deliver.start = [&](const std::string& name) {
    if (observer.on_start) observer.on_start(name, index + 1, planned.size());
  };
  deliver.result = [&](Result r) {
    ++index;
    if (observer.on_result) observer.on_result(r, index, planned.size());
    results.push_back(std::move(r));
  };
  for (std::size_t i = 0; i < planned.size();) {
    // One case at a time: its results share inputs and the reference.
    std::vector<const PlannedResult*> remaining;
    for (const Case* c = planned[i].c; i < planned.size() && planned[i].c == c; ++i) remaining.push_back(&planned[i]);
    while (!remaining.empty()) {
      const ChildRun run = run_child(remaining, deliver);
      if (remaining.empty()) break;
      // A child that stopped cleanly after a fault it recorded itself (its CUDA context
      // was lost) made progress: a fresh child takes the rest.
      const bool clean_exit = !run.timed_out && WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0;
      if (clean_exit && !run.running && run.produced > 0) continue;
      // The child ended with work left: the result it was on (or the first one left, if
      // it died before announcing any) is the casualty; a fresh child takes the rest.
      const PlannedResult* victim = run.running ? run.running : remaining.front();
      Result r = casualty(*victim, run, limit_of(*victim), stderr_path_);
      std::erase_if(remaining, [&](const PlannedResult* p) { return p == victim; });
      deliver.result(std::move(r));
    }
  }
  std::remove(events_path_.c_str());
  std::remove(stderr_path_.c_str());
  return results;
}

}  // namespace harness
