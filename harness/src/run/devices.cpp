// --devices: the launcher and its workers (see devices.hpp).
#include "run/devices.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "harness/error.hpp"
#include "report/report.hpp"
#include "run/child_output.hpp"
#include "core/suggest.hpp"

namespace harness {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 6 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<WorkerDevice> cpu_workers(int n) {
  std::vector<WorkerDevice> out;
  for (int i = 0; i < n; ++i) out.push_back({fmt::format("cpu:{}", i), "", -1});
  return out;
}

struct Worker {
  WorkerDevice device;
  int rank = 0;
  pid_t pid = -1;
  int stdin_fd = -1;
  std::string events_path, stderr_path;
  std::unique_ptr<Follower> follow;
  bool alive = false, idle = false, started_env = false;
  bool stopped_by_us = false;  // killed because a peer left the collective it was in
  int restarts = 0;
  std::vector<const PlannedResult*> batch;  // the case it is working on, what is left of it
  const PlannedResult* running = nullptr;
  Clock::time_point started;
};

}  // namespace

std::vector<WorkerDevice> parse_devices(const std::string& spec, int gpu_count) {
  if (spec.rfind("cpu:", 0) == 0) {
    const std::string n = spec.substr(4);
    if (!all_digits(n) || std::stoi(n) < 1 || std::stoi(n) > 64)
      throw InputError(fmt::format("--devices {}: cpu:N needs a worker count from 1 to 64", spec));
    return cpu_workers(std::stoi(n));
  }
  if (spec == "all") {
    if (const char* fake = std::getenv("HARNESS_FAKE_DEVICES"); fake && *fake) {
      if (!all_digits(fake) || std::atoi(fake) < 1)
        throw InputError(fmt::format("HARNESS_FAKE_DEVICES={}: expected a worker count", fake));
      return cpu_workers(std::atoi(fake));
    }
    if (gpu_count <= 0)
      throw InputError("--devices all: this machine has no CUDA device (use --devices cpu:N for CPU-only workers)");
    std::vector<WorkerDevice> out;
    for (int i = 0; i < gpu_count; ++i) out.push_back({fmt::format("cuda:{}", i), std::to_string(i), i});
    return out;
  }
  std::vector<WorkerDevice> out;
  std::set<int> seen;
  for (const auto& item : split(spec, ',')) {
    if (!all_digits(item))
      throw InputError(fmt::format("--devices {}: '{}' is not a device index; expected all, a list like 0,1 or cpu:N{}",
                                   spec, item, did_you_mean(item, {"all"})));
    const int i = std::stoi(item);
    if (i >= gpu_count)
      throw InputError(gpu_count == 0 ? fmt::format("--devices {}: no CUDA device {}: this machine has none", spec, i)
                                      : fmt::format("--devices {}: no CUDA device {}: this machine has {} (0 to {})", spec, i,
                                                    gpu_count, gpu_count - 1));
    if (!seen.insert(i).second) throw InputError(fmt::format("--devices {}: device {} is listed twice", spec, i));
    out.push_back({fmt::format("cuda:{}", i), std::to_string(i), i});
  }
  if (out.empty()) throw InputError("--devices: empty list; expected all, a list like 0,1 or cpu:N");
  return out;
}

double estimated_seconds(const Work& w) {
  const double flops = std::isfinite(w.flops) ? w.flops : 0;
  const double bytes = std::isfinite(w.bytes) ? w.bytes : 0;
  return std::max(flops / 50e12, bytes / 2e12) + 1e-3;
}

std::vector<std::vector<const PlannedResult*>> shard_order(const std::vector<PlannedResult>& planned) {
  std::vector<std::vector<const PlannedResult*>> collective, groups;
  for (const auto& p : planned) {
    auto& list = p.c->problem->collective_at(p.c->params) ? collective : groups;
    if (list.empty() || list.back().front()->c != p.c) list.emplace_back();
    list.back().push_back(&p);
  }
  auto estimate = [](const std::vector<const PlannedResult*>& g) {
    return estimated_seconds(g.front()->c->problem->work(g.front()->c->params)) * static_cast<double>(g.size());
  };
  std::stable_sort(groups.begin(), groups.end(), [&](const auto& a, const auto& b) { return estimate(a) > estimate(b); });
  collective.insert(collective.end(), groups.begin(), groups.end());
  return collective;
}

Result merge_collective(const std::vector<Result>& per_rank, const std::vector<std::string>& devices) {
  if (per_rank.empty()) throw std::logic_error("merge_collective: no ranks");
  Result merged = per_rank.front();
  nlohmann::json ranks = nlohmann::json::array();
  double sum = 0;
  int timed = 0;
  std::string where;
  for (std::size_t i = 0; i < per_rank.size(); ++i) {
    const Result& r = per_rank[i];
    const std::string dev = i < devices.size() ? devices[i] : r.device;
    where += (i ? "," : "") + dev;
    nlohmann::json e = {{"rank", i}, {"device", dev}, {"status", std::string(to_string(r.status))}};
    if (r.status != Status::passed && merged.status == Status::passed) {
      merged.status = r.status;
      merged.reason = fmt::format("rank {} ({}): {}", i, dev, r.reason);
    }
    if (r.timing) {
      const double t = r.timing->stats.median;
      const double bytes = r.extra.is_object() ? r.extra.value("bytes", 0.0) : 0.0;
      const double factor = r.extra.is_object() ? r.extra.value("bus_factor", 0.0) : 0.0;
      e["median_s"] = t;
      if (t > 0 && bytes > 0) {
        e["algbw_gbps"] = bytes / t / 1e9;
        e["busbw_gbps"] = bytes / t / 1e9 * factor;
      }
      sum += t;
      ++timed;
    }
    ranks.push_back(std::move(e));
  }
  merged.device = where;
  if (!merged.extra.is_object()) merged.extra = nlohmann::json::object();
  merged.extra["ranks"] = std::move(ranks);
  merged.extra["world_size"] = per_rank.size();
  if (timed == static_cast<int>(per_rank.size()) && merged.timing) {
    // nccl-tests' default (-a 1): the time per op is the mean over ranks.
    const double t = sum / timed;
    const double bytes = merged.extra.value("bytes", 0.0);
    const double factor = merged.extra.value("bus_factor", 0.0);
    merged.extra["time_s"] = t;
    if (t > 0 && bytes > 0) {
      merged.extra["algbw_gbps"] = bytes / t / 1e9;
      merged.extra["busbw_gbps"] = bytes / t / 1e9 * factor;
    }
  }
  return merged;
}

std::vector<std::string> worker_journals(const std::string& journal_path) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  const fs::path j(journal_path);
  const fs::path dir = j.has_parent_path() ? j.parent_path() : fs::path(".");
  const std::string prefix = j.filename().string() + ".";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.find(".stderr") == std::string::npos && name.find(".ncclid") == std::string::npos)
      out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

int run_device_worker(Runner& runner, const std::vector<PlannedResult>& planned, const std::string& events_path,
                      const nlohmann::json& environment) {
  Journal events(events_path);
  events.append({{"event", "environment"}, {"environment", environment}});
  // Test hook: HARNESS_TEST_WORKER_DIE=<label>:<n> kills this worker (SIGKILL) as its
  // n-th result starts, as an outside kill would (the first worker of that device only).
  int die_at = -1;
  if (const char* die = std::getenv("HARNESS_TEST_WORKER_DIE")) {
    const std::string spec = die;
    const char* label = std::getenv("HARNESS_DEVICE_LABEL");
    const auto colon = spec.rfind(':');
    const char* generation = std::getenv("HARNESS_WORKER_GENERATION");  // a restarted worker lives
    if (label && colon != std::string::npos && spec.substr(0, colon) == label && generation && std::string(generation) == "0") die_at = std::atoi(spec.c_str() + colon + 1);
  }
  int started = 0;
  RunObserver observer;
  observer.on_start = [&](const std::string& name, std::size_t, std::size_t) {
    events.append({{"event", "start"}, {"name", name}});
    if (++started == die_at) raise(SIGKILL);
  };
  observer.on_result = [&](const Result& r, std::size_t, std::size_t) {
    events.append({{"event", "result"}, {"result", result_to_json(r)}});
  };
  std::map<std::string, const PlannedResult*> by_name;
  for (const auto& p : planned) by_name[p.name] = &p;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::vector<PlannedResult> batch;
    for (const auto& name : split(line, '\t'))
      if (auto it = by_name.find(name); it != by_name.end()) batch.push_back(*it->second);
    runner.run(batch, observer);
    events.append({{"event", "idle"}});
    if (runner.fatal_cuda_error()) return kExitFailure;  // a fresh worker takes the rest
  }
  return kExitOk;
}

LaunchOutcome launch_workers(const std::vector<WorkerDevice>& devices, const std::vector<PlannedResult>& planned,
                             const LaunchOptions& options, const RunObserver& observer) {
  LaunchOutcome out;
  const int world = static_cast<int>(devices.size());
  const std::string id_file = options.journal_path + ".ncclid";
  std::vector<Worker> workers(devices.size());
  for (int i = 0; i < world; ++i) {
    workers[i].device = devices[i];
    workers[i].rank = i;
    std::string tag = devices[i].label;
    std::replace(tag.begin(), tag.end(), ':', '-');
    workers[i].events_path = options.journal_path + "." + tag;
    workers[i].stderr_path = workers[i].events_path + ".stderr";
  }
  std::size_t index = 0;
  const std::size_t total = planned.size();

  auto spawn = [&](Worker& w) {
    { std::ofstream touch(w.events_path, std::ios::app); }
    { std::ofstream truncate(w.stderr_path, std::ios::trunc); }
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe failed: {}", std::strerror(errno)));
    std::vector<std::string> argv = options.argv;
    argv.insert(argv.end(), {kWorkerEventsOption, w.events_path, "--quiet"});
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
      const int err = open(w.stderr_path.c_str(), O_WRONLY | O_TRUNC);
      if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
      if (err >= 0) dup2(err, STDERR_FILENO);
      setenv("CUDA_VISIBLE_DEVICES", w.device.visible.c_str(), 1);
      setenv("HARNESS_DEVICE_LABEL", w.device.label.c_str(), 1);
      setenv("HARNESS_WORKER_GENERATION", std::to_string(w.restarts).c_str(), 1);
      setenv("HARNESS_RANK", std::to_string(w.rank).c_str(), 1);
      setenv("HARNESS_WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("HARNESS_NCCL_ID_FILE", id_file.c_str(), 1);
      execv("/proc/self/exe", args.data());
      _exit(127);
    }
    close(fds[0]);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    w.pid = pid;
    w.stdin_fd = fds[1];
    w.alive = true;
    w.idle = true;
    w.stopped_by_us = false;
    w.running = nullptr;
    w.batch.clear();
    w.follow = std::make_unique<Follower>(w.events_path);
    w.follow->skip_to_end();  // earlier lines belong to an earlier worker (or run) on this device
  };
  auto send = [&](Worker& w, const std::vector<const PlannedResult*>& batch) {
    std::string line;
    for (const auto* p : batch) line += (line.empty() ? "" : "\t") + p->name;
    line += '\n';
    w.batch = batch;
    w.idle = false;
    w.started = Clock::now();
    if (write(w.stdin_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      out.messages.push_back(fmt::format("{}: could not hand out work: {}", w.device.label, std::strerror(errno)));
  };
  auto stop = [&](Worker& w) {
    if (w.stdin_fd >= 0) close(w.stdin_fd);
    w.stdin_fd = -1;
  };

  std::remove(id_file.c_str());
  for (auto& w : workers) spawn(w);

  auto groups = shard_order(planned);
  std::map<std::string, const PlannedResult*> by_name;
  for (const auto& p : planned) by_name[p.name] = &p;
  std::size_t next = 0;
  // Collective results in flight: name -> result per rank.
  std::map<std::string, std::vector<std::optional<Result>>> gathered;
  auto deliver = [&](Result r) {
    ++index;
    if (observer.on_result) observer.on_result(r, index, total);
    out.results.push_back(std::move(r));
  };
  auto limit_of = [&](const PlannedResult* p) { return options.timeout_override > 0 ? options.timeout_override : p->c->settings.timeout; };

  // Reads a worker's new events; returns false when nothing changed.
  auto drain = [&](Worker& w) {
    for (const auto& line : w.follow->new_lines()) {
      const auto ev = nlohmann::json::parse(line, nullptr, false);
      if (ev.is_discarded()) continue;
      const std::string kind = ev.value("event", "");
      if (kind == "environment") {
        nlohmann::json env = ev["environment"];
        env["device"] = w.device.label;
        env["rank"] = w.rank;
        if (!w.started_env) out.environments.push_back(std::move(env));
        w.started_env = true;
      } else if (kind == "start") {
        for (const auto* p : w.batch)
          if (p->name == ev.value("name", "")) w.running = p;
        w.started = Clock::now();
        if (w.running && observer.on_start) observer.on_start(fmt::format("{} [{}]", w.running->name, w.device.label), index + 1, total);
      } else if (kind == "result") {
        Result r = result_from_json(ev["result"]);
        r.device = w.device.label;
        std::erase_if(w.batch, [&](const PlannedResult* p) { return p->name == r.name; });
        w.running = nullptr;
        {
          const auto found = by_name.find(r.name);
          const PlannedResult* p = found == by_name.end() ? nullptr : found->second;
          if (p && p->c->problem->collective_at(p->c->params)) {
            auto& slot = gathered[r.name];
            slot.resize(workers.size());
            slot[w.rank] = std::move(r);
            if (std::all_of(slot.begin(), slot.end(), [](const auto& x) { return x.has_value(); })) {
              std::vector<Result> ranks;
              std::vector<std::string> labels;
              for (std::size_t k = 0; k < slot.size(); ++k) {
                ranks.push_back(*slot[k]);
                labels.push_back(workers[k].device.label);
              }
              const std::string name = ranks.front().name;
              gathered.erase(name);
              deliver(merge_collective(ranks, labels));
            }
            continue;
          }
        }
        deliver(std::move(r));
      } else if (kind == "idle") {
        w.idle = true;
        w.running = nullptr;
      }
    }
  };

  // A worker ended or was killed: account for the result it was running (the rest of its
  // batch stays in w.batch for the caller to requeue or give up).
  auto bury = [&](Worker& w, int status, bool timed_out) {
    w.alive = false;
    stop(w);
    drain(w);
    const std::string err = last_line(w.stderr_path);
    std::string how = timed_out        ? "killed after the time limit"
                      : w.stopped_by_us ? "stopped by the launcher: a peer left the collective it was in"
                                        : describe_status(status);
    if (w.running) {
      Result r = unfinished_result(*w.running);
      r.device = w.device.label;
      // Killed from outside (or by us): the result is not its fault; left for --resume. So is
      // a collective's: its peers' results are lost with it, and it runs again as a whole.
      const bool outside_kill = !timed_out && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
      if (outside_kill || w.running->c->problem->collective_at(w.running->c->params)) {
        out.lost.push_back(w.running->name);
      } else {
        r.status = timed_out ? Status::timeout : Status::crashed;
        r.reason = timed_out ? fmt::format("timeout: still running after {:g} s (worker on {} killed)", limit_of(w.running), w.device.label)
                             : fmt::format("crashed: the worker on {} ended: {}", w.device.label, how);
        if (!timed_out && !err.empty()) r.reason += ": " + err;
        deliver(std::move(r));
      }
      std::erase_if(w.batch, [&](const PlannedResult* p) { return p == w.running; });
      w.running = nullptr;
    }
    const bool quiet_end = !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0 && w.batch.empty();
    if (!quiet_end)
      out.messages.push_back(fmt::format("worker on {} (pid {}) ended: {}{}", w.device.label, w.pid, how,
                                         err.empty() ? "" : ": " + err));
  };

  bool collective_phase_broken = false;
  for (;;) {
    bool any_alive = false;
    for (auto& w : workers) {
      if (!w.alive) continue;
      int status = 0;
      const pid_t got = waitpid(w.pid, &status, WNOHANG);
      drain(w);
      bool timed_out = false;
      if (got != w.pid && w.running) {
        const double limit = limit_of(w.running);
        if (limit > 0 && std::chrono::duration<double>(Clock::now() - w.started).count() > limit) {
          kill(w.pid, SIGKILL);
          waitpid(w.pid, &status, 0);
          timed_out = true;
        }
      }
      if (got == w.pid || timed_out) {
        const bool in_collective = !w.batch.empty() && w.batch.front()->c->problem->collective_at(w.batch.front()->c->params);
        std::vector<const PlannedResult*> left;
        bury(w, status, timed_out);
        left = w.batch;
        w.batch.clear();
        if (in_collective || collective_phase_broken) {
          // The other ranks cannot finish a collective without this one: the case's
          // remaining results are left for --resume, and every worker restarts (a new
          // communicator) once the others notice.
          for (const auto* p : left) out.lost.push_back(p->name);
          collective_phase_broken = true;
        } else if (!left.empty()) {
          groups.insert(groups.begin() + static_cast<std::ptrdiff_t>(next), left);  // back to the queue's head
        }
        const bool restartable = w.started_env && w.restarts < 2 && next < groups.size();
        if (restartable) {
          ++w.restarts;
          out.messages.push_back(fmt::format("a fresh worker takes {}", w.device.label));
          spawn(w);
        }
      }
      any_alive |= w.alive;
    }
    if (collective_phase_broken) {
      // Drop the collective cases still queued or gathered; the sharded ones go on.
      for (auto& [name, slot] : gathered) out.lost.push_back(name);
      gathered.clear();
      while (next < groups.size() && groups[next].front()->c->problem->collective_at(groups[next].front()->c->params)) {
        for (const auto* p : groups[next]) out.lost.push_back(p->name);
        ++next;
      }
      for (auto& w : workers)
        if (w.alive && !w.batch.empty() && w.batch.front()->c->problem->collective_at(w.batch.front()->c->params)) {
          kill(w.pid, SIGKILL);  // stuck in a collective its peer left
          w.stopped_by_us = true;
        }
    }
    if (!any_alive) break;
    // Hand out work to idle workers.
    const bool all_idle = std::all_of(workers.begin(), workers.end(), [](const Worker& w) { return !w.alive || w.idle; });
    if (next < groups.size() && groups[next].front()->c->problem->collective_at(groups[next].front()->c->params)) {
      const bool everyone = std::all_of(workers.begin(), workers.end(), [](const Worker& w) { return w.alive; });
      if (all_idle && everyone) {
        for (auto& w : workers) send(w, groups[next]);
        ++next;
      } else if (all_idle && !everyone) {
        collective_phase_broken = true;
      }
    } else {
      for (auto& w : workers)
        if (w.alive && w.idle && next < groups.size()) send(w, groups[next++]);
    }
    if (next >= groups.size())
      for (auto& w : workers)
        if (w.alive && w.idle && w.batch.empty()) stop(w);  // end of stdin: it exits
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Anything still queued when every worker is gone was never run.
  for (; next < groups.size(); ++next)
    for (const auto* p : groups[next]) out.lost.push_back(p->name);
  std::remove(id_file.c_str());
  std::sort(out.lost.begin(), out.lost.end());
  out.lost.erase(std::unique(out.lost.begin(), out.lost.end()), out.lost.end());
  return out;
}

}  // namespace harness
