// --devices: the launcher and its workers (see devices.hpp).
#include "run/devices.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
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
#include "measure/collective.hpp"
#include "measure/stats.hpp"
#include "report/report.hpp"
#include "run/pool.hpp"
#include "core/suggest.hpp"

namespace harness {

namespace {

using Clock = std::chrono::steady_clock;

// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's pick for port 0), for
// torch.distributed's env:// rendezvous among the workers; 0 where none could be had. Free
// when this returns, so another process could take it first: torchrun picks its port the
// same way.
int free_local_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

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

// The CUDA_VISIBLE_DEVICES entry of this process's device i: a worker must see the GPU
// that index i names here, also when this process was itself limited to some GPUs
// (CUDA_VISIBLE_DEVICES=2,3 and --devices 0,1: the workers get 2 and 3).
std::string visible_entry(int i) {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    const auto entries = split(v, ',');
    if (i >= 0 && static_cast<std::size_t>(i) < entries.size()) return entries[static_cast<std::size_t>(i)];
  }
  return std::to_string(i);
}

struct Worker {
  WorkerDevice device;
  int rank = 0;
  ChildProcess proc;
  std::string events_path, stderr_path;
  std::unique_ptr<EventReader> events;
  bool alive = false, idle = false, started_env = false;
  bool stopped_by_us = false;  // killed because a peer left the collective it was in
  int restarts = 0;
  std::vector<const PlannedResult*> batch;  // the case it is working on, what is left of it
  const PlannedResult* running = nullptr;
  Clock::time_point started;
};

}  // namespace

void check_device_index(int device, int gpu_count) {
  if (gpu_count >= 1 && (device < 0 || device >= gpu_count))
    throw InputError(fmt::format("--device {}: no CUDA device {}: this machine has {} (0 to {})", device, device,
                                 gpu_count, gpu_count - 1));
}

std::optional<std::string> unusable_device_failure(const std::vector<Result>& results, int gpu_count, int device,
                                                   bool device_available, const std::string& unavailable_reason,
                                                   bool allow_skips) {
  if (allow_skips || gpu_count < 1 || device_available) return std::nullopt;
  std::size_t cuda = 0;
  for (const auto& r : results) {
    if (r.backend != "cuda") continue;
    ++cuda;
    if (r.status != Status::skipped) return std::nullopt;
  }
  if (cuda == 0) return std::nullopt;
  return fmt::format("nothing was measured on the GPU: all {} CUDA result{} skipped because device {} could not be "
                     "used: {} (--allow-skips accepts such a run)",
                     cuda, cuda == 1 ? " was" : "s were", device, unavailable_reason.empty() ? "unknown reason" : unavailable_reason);
}

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
    for (int i = 0; i < gpu_count; ++i) out.push_back({fmt::format("cuda:{}", i), visible_entry(i), i});
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
    out.push_back({fmt::format("cuda:{}", i), visible_entry(i), i});
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

namespace {
// The job's figures from the ranks' batches (measure/collective.hpp): the merged samples
// are the per-batch means over ranks (nccl-tests' -a 1), so the console, compare and the
// statistics see the job's time per op; extra.time_s is their median, extra.time_max_s the
// median of the slowest rank's (-a 3), each with its algbw and busbw.
void add_job_figures(Result& merged, const RankCombination& c, double bytes, double factor) {
  if (c.mean.empty()) return;
  Timing& t = *merged.timing;
  t.samples = c.mean;
  t.stats = compute_stats(t.samples);
  t.noise_reached = t.stats.has_noise() && t.stats.rel_noise <= merged.settings.noise;
  if (t.stats.median > 0) {
    merged.gflops = merged.work.flops / t.stats.median * 1e-9;
    merged.gbytes_per_s = merged.work.bytes / t.stats.median * 1e-9;
  }
  const Bandwidth job = collective_bandwidth(bytes, c.time_s, factor);
  const Bandwidth slowest = collective_bandwidth(bytes, c.time_max_s, factor);
  merged.extra["time_s"] = c.time_s;
  merged.extra["time_max_s"] = c.time_max_s;
  merged.extra["ops_per_sample"] = t.launches_per_sample;
  merged.extra["samples"] = c.mean.size();
  if (job.algbw_gbps > 0) {
    merged.extra["algbw_gbps"] = job.algbw_gbps;
    merged.extra["busbw_gbps"] = job.busbw_gbps;
    merged.extra["busbw_slowest_gbps"] = slowest.busbw_gbps;
  }
}
}  // namespace

Result merge_collective(const std::vector<Result>& per_rank, const std::vector<std::string>& devices) {
  if (per_rank.empty()) throw std::logic_error("merge_collective: no ranks");
  Result merged = per_rank.front();
  const double bytes = merged.extra.is_object() ? merged.extra.value("bytes", 0.0) : 0.0;
  const double factor = merged.extra.is_object() ? merged.extra.value("bus_factor", 0.0) : 0.0;
  nlohmann::json ranks = nlohmann::json::array();
  std::vector<std::vector<double>> samples;
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
      const Bandwidth bw = collective_bandwidth(bytes, t, factor);
      e["median_s"] = t;
      if (bw.algbw_gbps > 0) {
        e["algbw_gbps"] = bw.algbw_gbps;
        e["busbw_gbps"] = bw.busbw_gbps;
      }
      samples.push_back(r.timing->samples);
    }
    ranks.push_back(std::move(e));
  }
  merged.device = where;
  if (!merged.extra.is_object()) merged.extra = nlohmann::json::object();
  merged.extra["ranks"] = std::move(ranks);
  merged.extra["world_size"] = per_rank.size();
  if (samples.size() == per_rank.size() && merged.timing) add_job_figures(merged, combine_ranks(samples), bytes, factor);
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

namespace {

bool is_collective(const PlannedResult* p) { return p->c->problem->collective_at(p->c->params); }
bool batch_is_collective(const Worker& w) { return !w.batch.empty() && is_collective(w.batch.front()); }

// The launcher's state: its workers, the queue of cases, the collective results being
// gathered, and what it tells the caller.
class Launcher {
 public:
  Launcher(const std::vector<WorkerDevice>& devices, const std::vector<PlannedResult>& planned,
           const LaunchOptions& options, const RunObserver& observer);
  LaunchOutcome run();

 private:
  void spawn(Worker& w);
  void send(Worker& w, const std::vector<const PlannedResult*>& batch);
  void deliver(Result r);
  void gather(const Worker& w, Result r);
  void drain(Worker& w);
  void bury(Worker& w, int status, bool timed_out);
  void check(Worker& w);
  void drop_collectives();
  void hand_out();
  double limit_of(const PlannedResult* p) const {
    return options_.timeout_override > 0 ? options_.timeout_override : p->c->settings.timeout;
  }

  const std::vector<PlannedResult>& planned_;
  const LaunchOptions& options_;
  const RunObserver& observer_;
  LaunchOutcome out_;
  std::vector<Worker> workers_;
  std::string id_file_;
  int torch_port_;  // MASTER_PORT for the workers (0: none found, not set)
  std::size_t index_ = 0;
  std::vector<std::vector<const PlannedResult*>> groups_;
  std::size_t next_ = 0;
  std::map<std::string, const PlannedResult*> by_name_;
  // Collective results in flight: name -> result per rank.
  std::map<std::string, std::vector<std::optional<Result>>> gathered_;
  bool collective_phase_broken_ = false;
};

Launcher::Launcher(const std::vector<WorkerDevice>& devices, const std::vector<PlannedResult>& planned,
                   const LaunchOptions& options, const RunObserver& observer)
    : planned_(planned), options_(options), observer_(observer), workers_(devices.size()),
      id_file_(options.journal_path + ".ncclid"), torch_port_(free_local_port()) {
  for (std::size_t i = 0; i < devices.size(); ++i) {
    workers_[i].device = devices[i];
    workers_[i].rank = static_cast<int>(i);
    std::string tag = devices[i].label;
    std::replace(tag.begin(), tag.end(), ':', '-');
    workers_[i].events_path = options.journal_path + "." + tag;
    workers_[i].stderr_path = workers_[i].events_path + ".stderr";
  }
  groups_ = shard_order(planned);
  for (const auto& p : planned) by_name_[p.name] = &p;
}

void Launcher::spawn(Worker& w) {
  { std::ofstream touch(w.events_path, std::ios::app); }
  std::vector<std::pair<std::string, std::string>> env = {
      {"CUDA_VISIBLE_DEVICES", w.device.visible},
      {"HARNESS_DEVICE_LABEL", w.device.label},
      {"HARNESS_WORKER_GENERATION", std::to_string(w.restarts)},
      {"HARNESS_RANK", std::to_string(w.rank)},
      {"HARNESS_WORLD_SIZE", std::to_string(workers_.size())},
      {"HARNESS_NCCL_ID_FILE", id_file_},
      // torchrun's variables, for a Python variant's torch.distributed (env:// rendezvous,
      // rank 0 hosts the store). LOCAL_RANK is the index of the worker's GPU among those it
      // sees: 0, its only one (an outer torchrun's value would name a GPU it cannot see).
      {"RANK", std::to_string(w.rank)},
      {"WORLD_SIZE", std::to_string(workers_.size())},
      {"LOCAL_RANK", "0"},
      {"MASTER_ADDR", "127.0.0.1"}};
  if (torch_port_ > 0) env.emplace_back("MASTER_PORT", std::to_string(torch_port_));
  w.proc = spawn_child(options_.argv, w.events_path, w.stderr_path, env);
  w.alive = true;
  w.idle = true;
  w.stopped_by_us = false;
  w.running = nullptr;
  w.batch.clear();
  w.events = std::make_unique<EventReader>(w.events_path);
  w.events->skip_to_end();  // earlier lines belong to an earlier worker (or run) on this device
}

void Launcher::send(Worker& w, const std::vector<const PlannedResult*>& batch) {
  w.batch = batch;
  w.idle = false;
  w.started = Clock::now();
  if (!send_batch(w.proc, batch))
    out_.messages.push_back(fmt::format("{}: could not hand out work: {}", w.device.label, std::strerror(errno)));
}

void Launcher::deliver(Result r) {
  ++index_;
  if (observer_.on_result) observer_.on_result(r, index_, planned_.size());
  out_.results.push_back(std::move(r));
}

// A rank's result of a collective waits for every rank's, then they merge into one.
void Launcher::gather(const Worker& w, Result r) {
  auto& slot = gathered_[r.name];
  slot.resize(workers_.size());
  slot[w.rank] = std::move(r);
  if (!std::all_of(slot.begin(), slot.end(), [](const auto& x) { return x.has_value(); })) return;
  std::vector<Result> ranks;
  std::vector<std::string> labels;
  for (std::size_t k = 0; k < slot.size(); ++k) {
    ranks.push_back(*slot[k]);
    labels.push_back(workers_[k].device.label);
  }
  gathered_.erase(ranks.front().name);
  deliver(merge_collective(ranks, labels));
}

// Reads a worker's new events.
void Launcher::drain(Worker& w) {
  EventHandlers h;
  h.on_environment = [&](nlohmann::json env) {
    env["device"] = w.device.label;
    env["rank"] = w.rank;
    if (!w.started_env) out_.environments.push_back(std::move(env));
    w.started_env = true;
  };
  h.on_start = [&](const std::string& name) {
    for (const auto* p : w.batch)
      if (p->name == name) w.running = p;
    w.started = Clock::now();
    if (w.running && observer_.on_start)
      observer_.on_start(fmt::format("{} [{}]", w.running->name, w.device.label), index_ + 1, planned_.size());
  };
  h.on_result = [&](Result r) {
    r.device = w.device.label;
    std::erase_if(w.batch, [&](const PlannedResult* p) { return p->name == r.name; });
    w.running = nullptr;
    const auto found = by_name_.find(r.name);
    if (found != by_name_.end() && is_collective(found->second)) gather(w, std::move(r));
    else deliver(std::move(r));
  };
  h.on_idle = [&] {
    w.idle = true;
    w.running = nullptr;
  };
  w.events->read(h);
}

// A worker ended or was killed: account for the result it was running (the rest of its
// batch stays in w.batch for the caller to requeue or give up).
void Launcher::bury(Worker& w, int status, bool timed_out) {
  w.alive = false;
  close_input(w.proc);
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
    if (outside_kill || is_collective(w.running)) {
      out_.lost.push_back(w.running->name);
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
    out_.messages.push_back(fmt::format("worker on {} (pid {}) ended: {}{}", w.device.label, w.proc.pid, how,
                                        err.empty() ? "" : ": " + err));
}

// Whether a live worker ended or outlived its limit; if so its leftovers are requeued (or
// lost, inside a collective) and a fresh worker takes its device.
void Launcher::check(Worker& w) {
  int status = 0;
  const pid_t got = waitpid(w.proc.pid, &status, WNOHANG);
  drain(w);
  bool timed_out = false;
  if (got != w.proc.pid && w.running) {
    const double limit = limit_of(w.running);
    if (limit > 0 && std::chrono::duration<double>(Clock::now() - w.started).count() > limit) {
      kill(w.proc.pid, SIGKILL);
      waitpid(w.proc.pid, &status, 0);
      timed_out = true;
    }
  }
  if (got != w.proc.pid && !timed_out) return;
  const bool in_collective = batch_is_collective(w);
  bury(w, status, timed_out);
  std::vector<const PlannedResult*> left = w.batch;
  w.batch.clear();
  if (in_collective || collective_phase_broken_) {
    // The other ranks cannot finish a collective without this one: the case's remaining
    // results are left for --resume, and every worker restarts (a new communicator) once
    // the others notice.
    for (const auto* p : left) out_.lost.push_back(p->name);
    collective_phase_broken_ = true;
  } else if (!left.empty()) {
    groups_.insert(groups_.begin() + static_cast<std::ptrdiff_t>(next_), left);  // back to the queue's head
  }
  if (w.started_env && w.restarts < 2 && next_ < groups_.size()) {
    ++w.restarts;
    out_.messages.push_back(fmt::format("a fresh worker takes {}", w.device.label));
    spawn(w);
  }
}

// Drop the collective cases still queued or gathered; the sharded ones go on.
void Launcher::drop_collectives() {
  for (auto& [name, slot] : gathered_) out_.lost.push_back(name);
  gathered_.clear();
  while (next_ < groups_.size() && is_collective(groups_[next_].front())) {
    for (const auto* p : groups_[next_]) out_.lost.push_back(p->name);
    ++next_;
  }
  for (auto& w : workers_)
    if (w.alive && batch_is_collective(w)) {
      kill(w.proc.pid, SIGKILL);  // stuck in a collective its peer left
      w.stopped_by_us = true;
    }
}

// Hands out work to idle workers: a collective case to all at once, else a case each.
void Launcher::hand_out() {
  const bool all_idle = std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return !w.alive || w.idle; });
  if (next_ < groups_.size() && is_collective(groups_[next_].front())) {
    const bool everyone = std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.alive; });
    if (all_idle && everyone) {
      for (auto& w : workers_) send(w, groups_[next_]);
      ++next_;
    } else if (all_idle && !everyone) {
      collective_phase_broken_ = true;
    }
  } else {
    for (auto& w : workers_)
      if (w.alive && w.idle && next_ < groups_.size()) send(w, groups_[next_++]);
  }
  if (next_ >= groups_.size())
    for (auto& w : workers_)
      if (w.alive && w.idle && w.batch.empty()) close_input(w.proc);  // end of stdin: it exits
}

LaunchOutcome Launcher::run() {
  std::remove(id_file_.c_str());
  for (auto& w : workers_) spawn(w);
  for (;;) {
    bool any_alive = false;
    for (auto& w : workers_) {
      if (w.alive) check(w);
      any_alive |= w.alive;
    }
    if (collective_phase_broken_) drop_collectives();
    if (!any_alive) break;
    hand_out();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Anything still queued when every worker is gone was never run.
  for (; next_ < groups_.size(); ++next_)
    for (const auto* p : groups_[next_]) out_.lost.push_back(p->name);
  std::remove(id_file_.c_str());
  std::sort(out_.lost.begin(), out_.lost.end());
  out_.lost.erase(std::unique(out_.lost.begin(), out_.lost.end()), out_.lost.end());
  return std::move(out_);
}

}  // namespace

LaunchOutcome launch_workers(const std::vector<WorkerDevice>& devices, const std::vector<PlannedResult>& planned,
                             const LaunchOptions& options, const RunObserver& observer) {
  return Launcher(devices, planned, options, observer).run();
}

}  // namespace harness
