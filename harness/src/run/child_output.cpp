#include "run/child_output.hpp"

#include <sys/wait.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

namespace harness {

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

std::string describe_signal(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return fmt::format("SIG{} ({})", abbrev ? abbrev : std::to_string(sig), strsignal(sig));
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return describe_signal(WTERMSIG(status));
  return fmt::format("exit code {}", WEXITSTATUS(status));
}

std::vector<std::string> Follower::new_lines() {
  std::ifstream in(path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines;
  std::size_t start = 0, nl;
  while ((nl = chunk.find('\n', start)) != std::string::npos) {
    lines.push_back(chunk.substr(start, nl - start));
    start = nl + 1;
  }
  offset_ += start;
  return lines;
}

void Follower::skip_to_end() {
  std::ifstream in(path_, std::ios::binary | std::ios::ate);
  if (in) offset_ = static_cast<std::size_t>(in.tellg());
}

}  // namespace harness
