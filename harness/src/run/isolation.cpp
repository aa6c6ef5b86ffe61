#include "run/isolation.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "run/child_output.hpp"
#include "report/report.hpp"

namespace harness {

namespace {

using Clock = std::chrono::steady_clock;

std::string temp_file(const std::string& tag) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = fmt::format("{}/harness-{}-{}-XXXXXX", dir ? dir : "/tmp", tag, getpid());
  const int fd = mkstemp(path.data());
  if (fd < 0) throw InputError(fmt::format("cannot create a temporary file in {}: {}", dir ? dir : "/tmp", std::strerror(errno)));
  close(fd);
  return path;
}

pid_t spawn_child(const std::vector<std::string>& argv, const std::string& stderr_path) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    const int err = open(stderr_path.c_str(), O_WRONLY | O_TRUNC);
    if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
    if (err >= 0) dup2(err, STDERR_FILENO);
    execv("/proc/self/exe", args.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

std::vector<std::string> read_name_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot read the result list", path));
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) names.push_back(line);
  return names;
}

int run_isolated_child(Runner& runner, const std::vector<PlannedResult>& planned, const std::string& events_path) {
  Journal events(events_path);
  RunObserver observer;
  observer.on_start = [&](const std::string& name, std::size_t, std::size_t) {
    events.append({{"event", "start"}, {"name", name}});
  };
  observer.on_result = [&](const Result& r, std::size_t, std::size_t) {
    events.append({{"event", "result"}, {"result", result_to_json(r)}});
  };
  runner.run(planned, observer);
  return kExitOk;
}

std::vector<Result> IsolatedRunner::run(const std::vector<PlannedResult>& planned, const RunObserver& observer) {
  std::vector<Result> results;
  const std::string events_path = temp_file("events");
  const std::string names_path = temp_file("names");
  const std::string stderr_path = temp_file("stderr");
  std::size_t index = 0;

  for (std::size_t i = 0; i < planned.size();) {
    // One case at a time: its results share inputs and the reference.
    std::vector<const PlannedResult*> remaining;
    for (const Case* c = planned[i].c; i < planned.size() && planned[i].c == c; ++i) remaining.push_back(&planned[i]);

    while (!remaining.empty()) {
      {
        std::ofstream names(names_path, std::ios::trunc);
        for (const auto* p : remaining) names << p->name << '\n';
      }
      { std::ofstream truncate(events_path, std::ios::trunc); }
      std::vector<std::string> argv = options_.argv;
      argv.insert(argv.end(), {kChildEventsOption, events_path, kChildOnlyOption, names_path, "--quiet"});
      const pid_t pid = spawn_child(argv, stderr_path);

      Follower follow(events_path);
      const std::size_t results_before = results.size();
      const PlannedResult* running = nullptr;
      auto started = Clock::now();
      int status = 0;
      bool exited = false, timed_out = false;
      auto drain = [&] {
        for (const auto& line : follow.new_lines()) {
          const auto ev = nlohmann::json::parse(line, nullptr, false);
          if (ev.is_discarded()) continue;
          if (ev.value("event", "") == "start") {
            for (const auto* p : remaining)
              if (p->name == ev.value("name", "")) running = p;
            started = Clock::now();
            if (running && observer.on_start) observer.on_start(running->name, index + 1, planned.size());
          } else if (ev.value("event", "") == "result") {
            Result r = result_from_json(ev["result"]);
            std::erase_if(remaining, [&](const PlannedResult* p) { return p->name == r.name; });
            running = nullptr;
            ++index;
            if (observer.on_result) observer.on_result(r, index, planned.size());
            results.push_back(std::move(r));
          }
        }
      };
      while (!exited) {
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) exited = true;
        drain();
        if (exited) break;
        const double limit = running ? (options_.timeout_override > 0 ? options_.timeout_override : running->c->settings.timeout) : 0;
        if (limit > 0 && std::chrono::duration<double>(Clock::now() - started).count() > limit) {
          kill(pid, SIGKILL);
          waitpid(pid, &status, 0);
          exited = timed_out = true;
          drain();
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (remaining.empty()) break;
      // A child that stopped cleanly after a fault it recorded itself (its CUDA context
      // was lost) made progress: a fresh child takes the rest.
      const bool clean_exit = !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (clean_exit && !running && results.size() > results_before) continue;

      // The child ended with work left: the result it was on (or the first one left, if
      // it died before announcing any) is the casualty; a fresh child takes the rest.
      const PlannedResult* victim = running ? running : remaining.front();
      Result r = unfinished_result(*victim);
      if (timed_out) {
        const double limit = options_.timeout_override > 0 ? options_.timeout_override : victim->c->settings.timeout;
        r.status = Status::timeout;
        r.reason = fmt::format("timeout: still running after {:g} s (killed)", limit);
      } else {
        r.status = Status::crashed;
        const std::string err = last_line(stderr_path);
        if (WIFSIGNALED(status))
          r.reason = fmt::format("crashed: {}", describe_signal(WTERMSIG(status)));
        else if (clean_exit)
          r.reason = "crashed: the isolated process ended without producing this result";
        else
          r.reason = fmt::format("crashed: the isolated process exited with code {}", WEXITSTATUS(status));
        if (!err.empty()) r.reason += ": " + err;
      }
      std::erase_if(remaining, [&](const PlannedResult* p) { return p == victim; });
      ++index;
      if (observer.on_result) observer.on_result(r, index, planned.size());
      results.push_back(std::move(r));
    }
  }
  std::remove(events_path.c_str());
  std::remove(names_path.c_str());
  std::remove(stderr_path.c_str());
  return results;
}

}  // namespace harness
