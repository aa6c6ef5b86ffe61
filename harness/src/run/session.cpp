// A whole `harness run` (see session.hpp).
#include "run/session.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "plugin/plugin_loader.hpp"
#include "profile/kernel_trace.hpp"
#include "profile/metrics.hpp"
#include "profile/timeline.hpp"
#include "report/report.hpp"
#include "run/console.hpp"
#include "run/devices.hpp"
#include "types/environment.hpp"
#include "run/isolation.hpp"
#include "run/options_text.hpp"
#include "run/runner.hpp"
#include "core/suggest.hpp"

namespace harness {
namespace {



// Results already in a journal (from an interrupted run), by name; a later line for the
// same name wins. A torn last line (the kill came mid-write) is ignored.
std::map<std::string, Result> read_journal(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open the journal to resume: {}", path, std::strerror(errno)));
  std::map<std::string, Result> done;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      if (in.peek() == EOF) break;  // the last line was cut by the kill
      throw InputError(fmt::format("{}:{}: not a journal line (invalid JSON)", path, number));
    }
    try {
      Result r = result_from_json(j);
      done[r.name] = std::move(r);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}:{}: not a journal entry: {}", path, number, e.what()));
    }
  }
  return done;
}

// What the --devices workers of an interrupted run journaled (event lines), for results
// the run's journal lacks (the launcher died before copying them). Per-rank results of a
// collective are not kept: the collective runs again.
void read_worker_journals(const std::string& journal, std::map<std::string, Result>& done) {
  for (const auto& path : worker_journals(journal)) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object() || j.value("event", "") != "result" || !j.contains("result")) continue;
      try {
        Result r = result_from_json(j["result"]);
        const Problem* problem = Registry::instance().find_problem(r.problem);
        if (problem && problem->collective_at(r.params)) continue;
        if (!done.count(r.name)) done[r.name] = std::move(r);
      } catch (const nlohmann::json::exception&) {
      }
    }
  }
}

// A rank started by mpirun or srun (not by our launcher): its rank, its rank on this host
// and the job's size, from the variables those set (the nccl family reads the same).
struct ExternalRank {
  int rank = 0, local = 0, size = 1;
};
std::optional<ExternalRank> external_rank() {
  if (std::getenv("HARNESS_WORLD_SIZE")) return std::nullopt;  // our own worker
  const char* sets[][3] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
                           {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
                           {"PMI_RANK", "PMI_SIZE", nullptr}};
  for (const auto& v : sets) {
    const char* r = std::getenv(v[0]);
    const char* n = std::getenv(v[1]);
    if (!r || !n) continue;
    ExternalRank e{std::atoi(r), v[2] && std::getenv(v[2]) ? std::atoi(std::getenv(v[2])) : 0, std::atoi(n)};
    if (e.size > 1) return e;
    return std::nullopt;
  }
  return std::nullopt;
}

// Without --isolate a hung variant cannot be interrupted: on timeout the watchdog writes
// the report of everything finished (the hung result as `timeout`) and ends the process.
class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Watchdog(std::function<void(const PlannedResult&, double)> on_expiry) : on_expiry_(std::move(on_expiry)) {
    thread_ = std::thread([this] { loop(); });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void arm(const PlannedResult* p, double limit) {
    std::lock_guard lock(mutex_);
    current_ = p;
    limit_ = limit;
    started_ = Clock::now();
  }
  void disarm() { arm(nullptr, 0); }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (current_ && limit_ > 0 && std::chrono::duration<double>(Clock::now() - started_).count() > limit_)
        on_expiry_(*current_, limit_);  // does not return
    }
  }
  std::function<void(const PlannedResult&, double)> on_expiry_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::thread thread_;
  const PlannedResult* current_ = nullptr;
  double limit_ = 0;
  Clock::time_point started_;
  bool stop_ = false;
};

// --timing, --stopping and --throttle override every case's settings.
void apply_overrides(const SessionOptions& args, Suite& suite) {
  std::optional<TimingMode> timing;
  if (!args.timing.empty()) {
    if (args.timing == "events") timing = TimingMode::events;
    else if (args.timing == "graph") timing = TimingMode::graph;
    else throw InputError(fmt::format("--timing: expected events or graph, got '{}'{}", args.timing,
                                      did_you_mean(args.timing, {"events", "graph"})));
  }
  std::optional<StoppingRule> rule;
  if (!args.stopping.empty()) {
    rule = stopping_rule_from_string(args.stopping);
    if (!rule)
      throw InputError(fmt::format("--stopping: expected noise, entropy or samples, got '{}'{}", args.stopping,
                                   did_you_mean(args.stopping, {"noise", "entropy", "samples"})));
  }
  if (args.throttle && !(*args.throttle > 0 && *args.throttle <= 1))
    throw InputError(fmt::format("--throttle: {:g} is outside (0, 1]: a share of the maximum SM clock", *args.throttle));
  for (auto& c : suite.cases) {
    if (timing) c.settings.timing = *timing;
    if (rule) c.settings.stopping.rule = *rule;
    if (args.throttle) c.settings.throttle = *args.throttle;
  }
}

}  // namespace

int run_session(const SessionOptions& args) {
  Registry& registry = Registry::instance();
  load_plugins(args.plugins, args.plugin_dirs, registry);

  Suite suite = load_suites(args.suites, registry);
  apply_overrides(args, suite);

  RunOptions options;
  options.suite_name = suite.name;
  options.seed = args.seed;
  options.device = args.device;
  // mpirun / srun without per-rank GPU pinning: the ranks of a host take its GPUs in turn
  // (with --gpus-per-task=1 or a pinned CUDA_VISIBLE_DEVICES each rank sees one: device 0).
  const std::optional<ExternalRank> ext = external_rank();
  if (ext && args.device == 0 && args.child_events.empty()) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();
      count = 0;
    }
    if (count > 1) options.device = ext->local % count;
  }
  options.filter = result_filter(args.filter, "--filter");
  options.variants = split_list(args.variants);
  options.profile = !args.no_profile;
  options.metrics = split_list(args.metrics);
  if (options.metrics == std::vector<std::string>{"none"}) {
    options.metrics.clear();
    options.counters = false;  // kernel breakdown only: no counter replay passes
  }
  if (auto why = MetricCollector::validate(options.metrics)) throw InputError("--metrics: " + *why);
  // A --variants name that no case of the suite has is a typo, not an empty selection.
  for (const auto& name : options.variants) {
    bool known = false;
    std::vector<std::string> all;
    for (const auto& c : suite.cases)
      for (const Variant* v : c.variants) {
        known |= v->name == name;
        all.push_back(v->name);
      }
    if (!known)
      throw InputError(fmt::format("--variants: no case of the suite has a variant '{}'{}", name, did_you_mean(name, all)));
  }

  const std::string trace_path = !args.trace.empty() ? args.trace : suite.trace;
  if (!trace_path.empty() && args.child_events.empty()) {
    if (args.isolate) throw InputError("--trace: the timeline is recorded in one process; it cannot go with --isolate");
    if (args.no_profile) throw InputError("--trace records the profiling pass; it cannot go with --no-profile");
  }

  std::vector<PlannedResult> planned = plan(suite, options);
  if (planned.empty()) throw InputError("nothing to run: the filter and --variants select no result");

  if (!args.child_events.empty()) {
    // An isolated child: run exactly the listed results, report through the events file.
    const auto names = read_name_list(args.child_only);
    std::erase_if(planned, [&](const PlannedResult& p) { return std::find(names.begin(), names.end(), p.name) == names.end(); });
    Runner runner(options, probe_device(args.device));
    return run_isolated_child(runner, planned, args.child_events);
  }

  if (!args.worker_events.empty()) {
    // A --devices worker: pinned to its device (CUDA_VISIBLE_DEVICES), so it is device 0.
    const DeviceInfo device = probe_device(0);
    Runner runner(options, device);
    nlohmann::json environment = environment_json(device, args.command_line);
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) environment["cuda_visible_devices"] = visible;
    return run_device_worker(runner, planned, args.worker_events, environment);
  }

  std::vector<WorkerDevice> workers;
  if (!args.devices.empty()) {
    if (args.isolate) throw InputError("--devices runs every device's work in its own worker process; it cannot go with --isolate");
    if (!trace_path.empty()) throw InputError("--trace: the timeline is recorded in one process; it cannot go with --devices");
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();
      count = 0;
    }
    workers = parse_devices(args.devices, count);
    // Timings are compared across results: one GPU model only, unless asked.
    std::map<std::string, std::vector<std::string>> models;
    for (const auto& w : workers)
      if (w.index >= 0) models[probe_device(w.index).name].push_back(w.label);
    if (models.size() > 1 && !args.allow_mixed) {
      std::string list;
      for (const auto& [name, labels] : models) list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", name, fmt::join(labels, ", "));
      throw InputError(fmt::format("--devices {}: the devices are of different models: {}; their timings are not comparable "
                                   "(pass --allow-mixed to run anyway)", args.devices, list));
    }
  }

  if (args.dry_run) {
    for (const auto& p : planned)
      fmt::print("{:<20} {}  ({})\n", p.c->name, p.name, p.c->location);
    fmt::print("{} results in {} cases (dry run: nothing was executed)\n", planned.size(), suite.cases.size());
    return kExitOk;
  }

  // --resume: keep what the journal holds, run the rest, report everything.
  std::map<std::string, Result> resumed;
  std::string journal_path;
  std::string out_path = args.out;
  if (!args.resume.empty()) {
    resumed = read_journal(args.resume);
    read_worker_journals(args.resume, resumed);
    journal_path = args.resume;
    const std::string suffix = ".journal.jsonl";
    if (out_path.empty() && args.resume.size() > suffix.size() &&
        args.resume.compare(args.resume.size() - suffix.size(), suffix.size(), suffix) == 0)
      out_path = args.resume.substr(0, args.resume.size() - suffix.size());
  }
  if (out_path.empty()) out_path = default_report_path(suite.name);
  // One report per rank under mpirun / srun: {rank} in --out, else .rank<r> before .json.
  if (ext && args.resume.empty()) {
    if (const auto at = out_path.find("{rank}"); at != std::string::npos) {
      out_path.replace(at, 6, std::to_string(ext->rank));
    } else {
      const auto dot = out_path.rfind(".json");
      const std::string tag = fmt::format(".rank{}", ext->rank);
      if (dot != std::string::npos && dot + 5 == out_path.size()) out_path.insert(dot, tag);
      else out_path += tag;
    }
  }
  if (journal_path.empty()) journal_path = out_path + ".journal.jsonl";
  std::vector<PlannedResult> todo;
  for (const auto& p : planned)
    if (!resumed.count(p.name)) todo.push_back(p);

  // Fail on an unwritable output before measuring anything.
  Journal journal(journal_path);

  const DeviceInfo device = probe_device(workers.empty() ? options.device : std::max(workers.front().index, 0));
  Console console(stdout, args.quiet);
  if (!args.quiet) {
    if (!workers.empty()) {
      std::vector<std::string> labels;
      for (const auto& w : workers) labels.push_back(w.label);
      fmt::print("harness {} | {} | {} workers: {}{} | seed {}\n", harness_version(), suite.name, workers.size(),
                 fmt::join(labels, " "), device.available && workers.front().index >= 0 ? " (" + device.name + ")" : "", args.seed);
    } else if (device.available)
      fmt::print("harness {} | {} | {} ({} SMs, {:.0f} GiB) | seed {}{}\n", harness_version(), suite.name, device.name,
                 device.sm_count, device.memory_gib, args.seed, args.isolate ? " | isolated" : "");
    else
      fmt::print("harness {} | {} | {}: cuda variants will be skipped | seed {}{}\n", harness_version(), suite.name,
                 device.unavailable_reason, args.seed, args.isolate ? " | isolated" : "");
    if (options.profile && device.available)
      if (auto tool = outside_profiler())
        fmt::print("note: CUPTI is held by {}; the harness skips its own kernel trace and counters\n", *tool);
    if (!resumed.empty())
      fmt::print("resuming {}: {} of {} results already done\n", args.resume, planned.size() - todo.size(), planned.size());
  }

  nlohmann::json environment = environment_json(device, args.command_line);
  // Every result of the plan in plan order: resumed ones and new ones.
  auto assemble = [&](const std::vector<Result>& fresh) {
    std::map<std::string, const Result*> by_name;
    for (const auto& [n, r] : resumed) by_name[n] = &r;
    for (const auto& r : fresh) by_name[r.name] = &r;
    std::vector<Result> all;
    for (const auto& p : planned)
      if (auto it = by_name.find(p.name); it != by_name.end()) all.push_back(*it->second);
    return all;
  };

  std::mutex results_mutex;
  std::vector<Result> fresh;
  std::size_t offset = planned.size() - todo.size();
  RunObserver observer;
  std::unique_ptr<Watchdog> watchdog;
  observer.on_start = [&](const std::string& name, std::size_t i, std::size_t) {
    console.start(name, offset + i, planned.size());
    if (watchdog)
      for (const auto& p : todo)
        if (p.name == name) watchdog->arm(&p, args.timeout > 0 ? args.timeout : p.c->settings.timeout);
  };
  observer.on_result = [&](const Result& r, std::size_t i, std::size_t) {
    if (watchdog) watchdog->disarm();
    journal.append(result_to_json(r));
    console.result(r, offset + i, planned.size());
    std::lock_guard lock(results_mutex);
    fresh.push_back(r);
  };

  std::optional<std::string> fatal;
  std::vector<std::string> lost;
  if (!workers.empty()) {
    LaunchOptions launch{args.worker_argv, args.timeout, journal_path, args.quiet};
    LaunchOutcome outcome = launch_workers(workers, todo, launch, observer);
    environment["devices"] = outcome.environments;
    if (!outcome.environments.empty() && outcome.environments.front().contains("gpu"))
      environment["gpu"] = outcome.environments.front()["gpu"];
    for (const auto& m : outcome.messages) fmt::print(stderr, "harness: {}\n", m);
    lost = std::move(outcome.lost);
  } else if (args.isolate) {
    IsolatedRunner runner({args.child_argv, args.timeout});
    runner.run(todo, observer);
  } else {
    watchdog = std::make_unique<Watchdog>([&](const PlannedResult& p, double limit) {
      Result r = unfinished_result(p);
      r.status = Status::timeout;
      r.reason = fmt::format("timeout: still running after {:g} s; the run ends here (use --isolate to kill only the variant and go on)", limit);
      std::lock_guard lock(results_mutex);
      journal.append(result_to_json(r));
      console.result(r, offset + fresh.size() + 1, planned.size());
      fresh.push_back(r);
      write_file_atomically(out_path, report_text(make_report(environment, suite, assemble(fresh))));
      fmt::print(stderr, "harness: {} timed out; report with the finished results: {}\n", p.name, out_path);
      std::fflush(nullptr);
      std::_Exit(kExitFailure);
    });
    Runner runner(options, device);
    if (!trace_path.empty()) Timeline::global().enable();
    runner.run(todo, observer);
    if (!trace_path.empty()) {
      Timeline::global().disable();
      write_file_atomically(trace_path, Timeline::global().to_chrome_trace().dump());
      if (!args.quiet) fmt::print("trace: {} (open in https://ui.perfetto.dev or `harness report {} --format trace-html`)\n", trace_path, trace_path);
    }
    fatal = runner.fatal_cuda_error();
    if (runner.device_peaks()) environment["device_peaks"] = to_json(*runner.device_peaks());
    watchdog.reset();
  }

  const std::vector<Result> results = assemble(fresh);
  write_file_atomically(out_path, report_text(make_report(environment, suite, results)));
  console.summary(results);
  fmt::print("report: {}\n", out_path);
  if (fatal)
    fmt::print(stderr, "harness: a CUDA error corrupted the context and ended the run early: {}\n"
                       "harness: the report holds every result finished before it; rerun with --isolate to contain the failing variant\n",
               *fatal);

  if (!lost.empty()) {
    fmt::print(stderr, "harness: {} result{} not run (a worker was lost): {}{}\n"
                       "harness: complete the run with: harness run --resume {} --devices {} {}\n",
               lost.size(), lost.size() == 1 ? "" : "s", fmt::join(lost.begin(), lost.begin() + std::min<std::size_t>(lost.size(), 5), ", "),
               lost.size() > 5 ? ", ..." : "", journal_path, args.devices, fmt::join(args.suites, " "));
  } else if (!workers.empty()) {
    // Complete: the workers' own journals are no longer needed.
    for (const auto& path : worker_journals(journal_path)) std::remove(path.c_str());
    for (const auto& w : workers) {
      std::string tag = w.label;
      std::replace(tag.begin(), tag.end(), ':', '-');
      std::remove((journal_path + "." + tag + ".stderr").c_str());
    }
  }

  bool ok = !fatal && lost.empty();
  for (const auto& r : results) ok &= r.status == Status::passed || r.status == Status::skipped;
  return ok ? kExitOk : kExitFailure;
}


}  // namespace harness
