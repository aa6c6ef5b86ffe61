#pragma once
// The pool of child processes behind --isolate (run/isolation.cpp: one child per case,
// restarted after a crash) and --devices (run/devices.cpp: one worker per device, fed
// case after case). Both start the same executable in the same child mode, talk the same
// protocol, and read it back with the same reader:
//
//   parent -> child: stdin, one line per batch: result names separated by tabs; the end
//                    of stdin ends the child.
//   child -> parent: JSON lines appended to its events file (types/events.hpp):
//     environment once, then start and result per result, idle after each batch
//
// Here: starting a child, the child's side (run_pool_child), following its events file
// (EventReader), and what is left when it ends (the last line of its stderr, how it ended).
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"

namespace harness {

// The last non-blank line of a text file ("" if none or unreadable): the error a dead
// child printed last.
std::string last_line(const std::string& path);

// "SIGSEGV (Segmentation fault)" for a signal number.
std::string describe_signal(int sig);

// How a waitpid status ended: "SIGKILL (Killed)" or "exit code 3".
std::string describe_status(int status);

// The complete lines appended to a file since the last call (a line still being written,
// without its '\n', waits for the next call).
class Follower {
 public:
  explicit Follower(std::string path) : path_(std::move(path)) {}
  std::vector<std::string> new_lines();
  // Forget what the file holds now: the next new_lines() starts at its current end.
  void skip_to_end();

 private:
  std::string path_;
  std::size_t offset_ = 0;
};

// The hidden option that starts the executable as a pool child writing to EVENTS.
inline constexpr const char* kPoolChildOption = "--pool-child";

struct ChildProcess {
  pid_t pid = -1;
  int stdin_fd = -1;  // the write end of the child's stdin
};
// Starts this executable with `argv` + {kPoolChildOption, events_path, "--quiet"}: stdout
// to /dev/null, stderr to `stderr_path` (truncated), stdin a pipe, `env` set in the child.
ChildProcess spawn_child(std::vector<std::string> argv, const std::string& events_path, const std::string& stderr_path,
                         const std::vector<std::pair<std::string, std::string>>& env = {});
// Writes one batch (the names, tab-separated, one line); false when the pipe is broken.
bool send_batch(const ChildProcess& child, const std::vector<const PlannedResult*>& batch);
// Closes the child's stdin: it ends after its current batch.
void close_input(ChildProcess& child);

// The parent's side: new events of a child as they are appended.
struct EventHandlers {
  std::function<void(nlohmann::json environment)> on_environment;
  std::function<void(const std::string& name)> on_start;
  std::function<void(Result result)> on_result;
  std::function<void()> on_idle;
};
class EventReader {
 public:
  explicit EventReader(std::string path) : follow_(std::move(path)) {}
  // Earlier lines belong to an earlier child (or run) on the same file.
  void skip_to_end() { follow_.skip_to_end(); }
  // Reads the complete lines appended since the last call and calls the handlers.
  void read(const EventHandlers& handlers);

 private:
  Follower follow_;
};

// The child's side (the executable started with kPoolChildOption): reads batches from
// stdin, runs each with `runner`, and writes the events. `environment` is sent first.
// After a fatal CUDA error it stops: with failure in a --devices worker (its launcher says
// so), cleanly in an --isolate child (its parent hands the rest of the case to a new one).
int run_pool_child(Runner& runner, const std::vector<PlannedResult>& planned, const std::string& events_path,
                   const nlohmann::json& environment);

// A temporary file "$TMPDIR/harness-<tag>-<pid>-XXXXXX", created empty.
std::string temp_file(const std::string& tag);

}  // namespace harness
