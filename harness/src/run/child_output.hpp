#pragma once
// Reading what a child process of the harness (an --isolate child, a --devices worker)
// leaves behind: its event journal as it grows, the last line of its stderr, and how it
// ended. Shared by run/isolation.cpp and run/devices.cpp.
#include <cstddef>
#include <string>
#include <vector>

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

}  // namespace harness
