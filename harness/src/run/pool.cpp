#include "run/pool.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "report/report.hpp"
#include "types/events.hpp"

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

std::string temp_file(const std::string& tag) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = fmt::format("{}/harness-{}-{}-XXXXXX", dir ? dir : "/tmp", tag, getpid());
  const int fd = mkstemp(path.data());
  if (fd < 0) throw InputError(fmt::format("cannot create a temporary file in {}: {}", dir ? dir : "/tmp", std::strerror(errno)));
  close(fd);
  return path;
}

ChildProcess spawn_child(std::vector<std::string> argv, const std::string& events_path, const std::string& stderr_path,
                         const std::vector<std::pair<std::string, std::string>>& env) {
  { std::ofstream truncate(stderr_path, std::ios::trunc); }
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe failed: {}", std::strerror(errno)));
  argv.insert(argv.end(), {kPoolChildOption, events_path, "--quiet"});
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    close(fds[1]);
    const int devnull = open("/dev/null", O_WRONLY);
    const int err = open(stderr_path.c_str(), O_WRONLY | O_TRUNC);
    if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
    if (err >= 0) dup2(err, STDERR_FILENO);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    execv("/proc/self/exe", args.data());
    _exit(127);
  }
  close(fds[0]);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return {pid, fds[1]};
}

bool send_batch(const ChildProcess& child, const std::vector<const PlannedResult*>& batch) {
  std::string line;
  for (const auto* p : batch) line += (line.empty() ? "" : "\t") + p->name;
  line += '\n';
  return write(child.stdin_fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
}

void close_input(ChildProcess& child) {
  if (child.stdin_fd >= 0) close(child.stdin_fd);
  child.stdin_fd = -1;
}

void EventReader::read(const EventHandlers& h) {
  for (const auto& line : follow_.new_lines()) {
    auto ev = nlohmann::json::parse(line, nullptr, false);
    if (ev.is_discarded()) continue;
    const std::string kind = events::kind(ev);
    if (kind == events::kEnvironment && h.on_environment) h.on_environment(std::move(ev["environment"]));
    else if (kind == events::kStart && h.on_start) h.on_start(ev.value("name", ""));
    else if (kind == events::kResult && h.on_result) h.on_result(result_from_json(ev["result"]));
    else if (kind == events::kIdle && h.on_idle) h.on_idle();
  }
}

namespace {

std::vector<std::string> split_tabs(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, '\t')) out.push_back(item);
  return out;
}

// Test hook: HARNESS_TEST_WORKER_DIE=<label>:<n> kills this worker (SIGKILL) as its n-th
// result starts, as an outside kill would (the first worker of that device only).
int die_at_result() {
  const char* die = std::getenv("HARNESS_TEST_WORKER_DIE");
  if (!die) return -1;
  const std::string spec = die;
  const char* label = std::getenv("HARNESS_DEVICE_LABEL");
  const auto colon = spec.rfind(':');
  const char* generation = std::getenv("HARNESS_WORKER_GENERATION");  // a restarted worker lives
  if (label && colon != std::string::npos && spec.substr(0, colon) == label && generation && std::string(generation) == "0")
    return std::atoi(spec.c_str() + colon + 1);
  return -1;
}

}  // namespace

int run_pool_child(Runner& runner, const std::vector<PlannedResult>& planned, const std::string& events_path,
                   const nlohmann::json& environment) {
  Journal out(events_path);
  out.append(events::environment(environment));
  const int die_at = die_at_result();
  int started = 0;
  RunObserver observer;
  observer.on_start = [&](const std::string& name, std::size_t, std::size_t) {
    out.append(events::start(name));
    if (++started == die_at) raise(SIGKILL);
  };
  observer.on_result = [&](const Result& r, std::size_t, std::size_t) {
    out.append(events::result(result_to_json(r)));
  };
  std::map<std::string, const PlannedResult*> by_name;
  for (const auto& p : planned) by_name[p.name] = &p;
  const bool device_worker = std::getenv("HARNESS_DEVICE_LABEL") != nullptr;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::vector<PlannedResult> batch;
    for (const auto& name : split_tabs(line))
      if (auto it = by_name.find(name); it != by_name.end()) batch.push_back(*it->second);
    runner.run(batch, observer);
    out.append(events::idle());
    if (runner.fatal_cuda_error()) return device_worker ? kExitFailure : kExitOk;
  }
  return kExitOk;
}

}  // namespace harness
