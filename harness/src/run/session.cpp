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
#include "run/added_variants.hpp"
#include "run/console.hpp"
#include "run/devices.hpp"
#include "types/environment.hpp"
#include "run/interrupt.hpp"
#include "run/isolation.hpp"
#include "run/pool.hpp"
#include "run/options_text.hpp"
#include "run/resume_check.hpp"
#include "run/runner.hpp"
#include "measure/nvml_sensors.hpp"
#include "core/suggest.hpp"

namespace harness {
namespace {

// What --resume finds done: the run's journal (a later line for the same name wins), then
// what the --devices workers of the interrupted run journaled for results the run's
// journal lacks (the launcher died before copying them). Per-rank results of a collective
// are not kept: the collective runs again.
std::map<std::string, Result> read_resumed(const std::string& journal) {
  std::map<std::string, Result> done;
  for (Result& r : read_journal(journal, true)) done[r.name] = std::move(r);
  for (const auto& path : worker_journals(journal))
    for (Result& r : read_journal(path, false)) {
      const Problem* problem = Registry::instance().find_problem(r.problem);
      if (problem && problem->collective_at(r.params)) continue;
      if (!done.count(r.name)) done[r.name] = std::move(r);
    }
  return done;
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

// --timing, --stopping, --throttle, --steady, --interleave and --interleave-order override every
// case's settings.
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
    if (!args.steady.empty()) c.settings.steady = args.steady == "on";
    if (!args.interleave.empty()) c.settings.interleave = args.interleave == "on";
    if (const auto order = round_order_from_string(args.interleave_order)) c.settings.round_order = *order;
  }
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  return count;
}

// A --variants name that no case of the suite has is a typo, not an empty selection.
void check_variant_names(const std::vector<std::string>& names, const Suite& suite) {
  for (const auto& name : names) {
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
}

// What every way of running shares: the suite (loaded and validated), the options of its
// runner, the plan.
struct Plan {
  Suite suite;
  RunOptions options;
  std::optional<ExternalRank> ext;
  std::string trace_path;
  std::vector<PlannedResult> planned;
};

void make_plan(const SessionOptions& args, Plan& p) {
  Registry& registry = Registry::instance();
  load_plugins(args.plugins, args.plugin_dirs, registry);
  p.suite = load_suites_with_added(args.suites, registry, args.add_variants);
  apply_overrides(args, p.suite);
  RunOptions& options = p.options;
  options.suite_name = p.suite.name;
  options.seed = args.seed;
  options.device = args.device;
  // mpirun / srun without per-rank GPU pinning: the ranks of a host take its GPUs in turn
  // (with --gpus-per-task=1 or a pinned CUDA_VISIBLE_DEVICES each rank sees one: device 0).
  p.ext = external_rank();
  if (p.ext && args.device == 0 && args.pool_child.empty()) {
    const int count = cuda_device_count();
    if (count > 1) options.device = p.ext->local % count;
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
  check_variant_names(options.variants, p.suite);
  p.trace_path = !args.trace.empty() ? args.trace : p.suite.trace;
  if (!p.trace_path.empty() && args.pool_child.empty()) {
    if (args.isolate) throw InputError("--trace: the timeline is recorded in one process; it cannot go with --isolate");
    if (args.no_profile) throw InputError("--trace records the profiling pass; it cannot go with --no-profile");
  }
  std::vector<DuplicateResult> duplicates;
  p.planned = plan(p.suite, options, &duplicates);
  if (!duplicates.empty() && args.pool_child.empty() && !args.quiet)
    fmt::print(stderr, "harness: note: {} result{} in more than one case; each runs once, in its first case (e.g. {} "
                       "in cases '{}' and '{}')\n",
               duplicates.size(), duplicates.size() == 1 ? " is" : "s are", duplicates.front().name,
               duplicates.front().first_case, duplicates.front().other_case);
  if (p.planned.empty()) {
    RunOptions every = options;
    every.filter.reset();
    every.variants.clear();
    const auto all = plan(p.suite, every);
    throw InputError(nothing_selected(args.filter, args.variants, all.empty() ? "" : all.front().name));
  }
}

// Whether NVML gives this run's results their sensors, and why not (environment.nvml).
nlohmann::json nvml_environment(const DeviceInfo& device) {
  if (!nvml_built()) return {{"used", false}, {"note", kNvmlNotBuilt}};
  if (!device.available) return {{"used", false}, {"note", "NVML: not used (no CUDA device)"}};
  const NvmlOpen n = open_nvml(device.index);
  return {{"used", n.source != nullptr}, {"note", n.note}};
}

// A child of the process pool (--isolate or --devices): its work comes on stdin.
int run_child(const SessionOptions& args, const Plan& p) {
  const DeviceInfo device = probe_device(args.device);
  Runner runner(p.options, device);
  nlohmann::json environment = environment_json(device, args.command_line);
  environment["nvml"] = nvml_environment(device);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) environment["cuda_visible_devices"] = visible;
  return run_pool_child(runner, p.planned, args.pool_child, environment);
}

// --devices: the workers, one GPU model only unless --allow-mixed.
std::vector<WorkerDevice> choose_workers(const SessionOptions& args, const Plan& p) {
  if (args.isolate) throw InputError("--devices runs every device's work in its own worker process; it cannot go with --isolate");
  if (!p.trace_path.empty()) throw InputError("--trace: the timeline is recorded in one process; it cannot go with --devices");
  std::vector<WorkerDevice> workers = parse_devices(args.devices, cuda_device_count());
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
  return workers;
}

int dry_run(const Plan& p) {
  for (const auto& r : p.planned) fmt::print("{:<20} {}  ({})\n", r.c->name, r.name, r.c->location);
  fmt::print("{} results in {} cases (dry run: nothing was executed)\n", p.planned.size(), p.suite.cases.size());
  return kExitOk;
}

// Where the report and the journal go: --out, or next to the --resume journal, or the
// default; one report per rank under mpirun / srun ({rank} in --out, else .rank<r>).
std::string report_path(const SessionOptions& args, const Plan& p) {
  std::string out_path = args.out;
  const std::string suffix = ".journal.jsonl";
  if (!args.resume.empty() && out_path.empty() && args.resume.size() > suffix.size() &&
      args.resume.compare(args.resume.size() - suffix.size(), suffix.size(), suffix) == 0)
    out_path = args.resume.substr(0, args.resume.size() - suffix.size());
  if (out_path.empty()) out_path = default_report_path(p.suite.name);
  if (p.ext && args.resume.empty()) {
    if (const auto at = out_path.find("{rank}"); at != std::string::npos) {
      out_path.replace(at, 6, std::to_string(p.ext->rank));
    } else {
      const auto dot = out_path.rfind(".json");
      const std::string tag = fmt::format(".rank{}", p.ext->rank);
      if (dot != std::string::npos && dot + 5 == out_path.size()) out_path.insert(dot, tag);
      else out_path += tag;
    }
  }
  return out_path;
}

// A parent run (plain, --isolate or --devices): resumes, journals, reports.
class Session {
 public:
  Session(const SessionOptions& args, const Plan& p, std::vector<WorkerDevice> workers);
  int run();

 private:
  void print_banner() const;
  void observe();
  void run_workers();
  void run_isolated();
  void run_plain();
  [[noreturn]] void timed_out(const PlannedResult& p, double limit);
  [[noreturn]] void stop_interrupted();
  std::vector<Result> assemble() const;
  int finish();
  void report_lost() const;

  const SessionOptions& args_;
  const Plan& p_;
  std::vector<WorkerDevice> workers_;
  std::map<std::string, Result> resumed_;  // --resume: kept from the journal
  std::string out_path_, journal_path_;
  std::vector<PlannedResult> todo_;
  std::unique_ptr<Journal> journal_;
  DeviceInfo device_;
  Console console_;
  nlohmann::json environment_;
  std::mutex results_mutex_;
  std::vector<Result> fresh_;
  RunObserver observer_;
  std::unique_ptr<Watchdog> watchdog_;
  std::optional<std::string> fatal_;
  std::vector<std::string> lost_;
  std::optional<std::string> resume_warning_;  // --resume of a journal without a header
};

Session::Session(const SessionOptions& args, const Plan& p, std::vector<WorkerDevice> workers)
    : args_(args), p_(p), workers_(std::move(workers)), console_(stdout, args.quiet) {
  // --resume: keep what the journal holds, run the rest, report everything; but only the
  // journal of this same run (suites, seed, --filter, --variants).
  if (!args.resume.empty()) {
    resume_warning_ = check_resume(args, args.resume);
    resumed_ = read_resumed(args.resume);
  }
  out_path_ = report_path(args, p);
  journal_path_ = args.resume.empty() ? out_path_ + ".journal.jsonl" : args.resume;
  for (const auto& r : p.planned)
    if (!resumed_.count(r.name)) todo_.push_back(r);
  // Fail on an unwritable output before measuring anything.
  journal_ = std::make_unique<Journal>(journal_path_, args.resume.empty());
  if (args.resume.empty()) journal_->append(to_json(run_header(args)));
  device_ = probe_device(workers_.empty() ? p.options.device : std::max(workers_.front().index, 0));
  console_.full_table(args.table);
}

void Session::print_banner() const {
  if (args_.quiet) return;
  const std::string& suite = p_.suite.name;
  if (!workers_.empty()) {
    std::vector<std::string> labels;
    for (const auto& w : workers_) labels.push_back(w.label);
    fmt::print("harness {} | {} | {} workers: {}{} | seed {}\n", harness_version(), suite, workers_.size(),
               fmt::join(labels, " "), device_.available && workers_.front().index >= 0 ? " (" + device_.name + ")" : "", args_.seed);
  } else if (device_.available)
    fmt::print("harness {} | {} | {} ({} SMs, {:.0f} GiB) | seed {}{}\n", harness_version(), suite, device_.name,
               device_.sm_count, device_.memory_gib, args_.seed, args_.isolate ? " | isolated" : "");
  else
    fmt::print("harness {} | {} | {}: cuda variants will be skipped | seed {}{}\n", harness_version(), suite,
               device_.unavailable_reason, args_.seed, args_.isolate ? " | isolated" : "");
  if (p_.options.profile && device_.available)
    if (auto tool = outside_profiler())
      fmt::print("note: CUPTI is held by {}; the harness skips its own kernel trace and counters\n", *tool);
  // Without NVML: no power, temperature or throttle reasons; the probe kernel's clock only.
  if (const auto& nvml = environment_["nvml"]; nvml.is_object() && !nvml.value("used", false))
    fmt::print("note: {}; the SM clock comes from the probe kernel\n", nvml.value("note", std::string("NVML: not used")));
  if (resume_warning_) fmt::print(stderr, "harness: warning: {}\n", *resume_warning_);
  if (!resumed_.empty())
    fmt::print("resuming {}: {} of {} results already done\n", args_.resume, p_.planned.size() - todo_.size(), p_.planned.size());
}

// Every result is journaled and printed as it finishes.
void Session::observe() {
  const std::size_t offset = p_.planned.size() - todo_.size();
  observer_.on_start = [this, offset](const std::string& name, std::size_t i, std::size_t) {
    if (interrupt_requested()) stop_interrupted();  // asked for between two results
    console_.start(name, offset + i, p_.planned.size());
    if (watchdog_)
      for (const auto& p : todo_)
        if (p.name == name) watchdog_->arm(&p, args_.timeout > 0 ? args_.timeout : p.c->settings.timeout);
  };
  observer_.on_result = [this, offset](const Result& r, std::size_t i, std::size_t) {
    if (watchdog_) watchdog_->disarm();
    // A pool child that died with the run's Ctrl-C (its process group got it too) did not
    // crash: its result is left for --resume.
    if (interrupt_requested() && r.status == Status::crashed) stop_interrupted();
    journal_->append(result_to_json(r));
    console_.result(r, offset + i, p_.planned.size());
    {
      std::lock_guard lock(results_mutex_);
      fresh_.push_back(r);
    }
    if (interrupt_requested() && fresh_.size() < todo_.size()) stop_interrupted();
  };
}

int Session::run() {
  environment_ = environment_json(device_, args_.command_line);
  environment_["nvml"] = nvml_environment(device_);
  print_banner();
  const InterruptHandlers interrupts(journal_path_.c_str());
  observe();
  if (!workers_.empty()) run_workers();
  else if (args_.isolate) run_isolated();
  else run_plain();
  return finish();
}

void Session::run_workers() {
  LaunchOptions launch{args_.worker_argv, args_.timeout, journal_path_, args_.quiet};
  LaunchOutcome outcome = launch_workers(workers_, todo_, launch, observer_);
  environment_["devices"] = outcome.environments;
  if (!outcome.environments.empty() && outcome.environments.front().contains("gpu"))
    environment_["gpu"] = outcome.environments.front()["gpu"];
  for (const auto& m : outcome.messages) fmt::print(stderr, "harness: {}\n", m);
  lost_ = std::move(outcome.lost);
}

void Session::run_isolated() {
  IsolatedRunner runner({args_.child_argv, args_.timeout});
  runner.run(todo_, observer_);
}

// Without --isolate a hung variant cannot be interrupted: the watchdog writes the report
// of everything finished (the hung result as `timeout`) and ends the process.
void Session::timed_out(const PlannedResult& p, double limit) {
  Result r = unfinished_result(p);
  r.status = Status::timeout;
  r.reason = fmt::format("timeout: still running after {:g} s; the run ends here (use --isolate to kill only the variant and go on)", limit);
  std::lock_guard lock(results_mutex_);
  journal_->append(result_to_json(r));
  console_.result(r, p_.planned.size() - todo_.size() + fresh_.size() + 1, p_.planned.size());
  fresh_.push_back(r);
  write_file_atomically(out_path_, report_text(make_report(environment_, p_.suite, assemble())));
  fmt::print(stderr, "harness: {} timed out; report with the finished results: {}\n", p.name, out_path_);
  std::fflush(nullptr);
  std::_Exit(kExitFailure);
}

// Ctrl-C: the report of everything finished, marked interrupted, and how to complete it.
void Session::stop_interrupted() {
  std::lock_guard lock(results_mutex_);
  const std::vector<Result> results = assemble();
  nlohmann::json report = make_report(environment_, p_.suite, results);
  report["interrupted"] = true;
  write_file_atomically(out_path_, report_text(report));
  fmt::print(stderr, "interrupted: {} of {} results done; the report is {}; complete it with: {}\n", results.size(),
             p_.planned.size(), out_path_, resume_command(args_, journal_path_));
  std::fflush(nullptr);
  std::_Exit(kExitInterrupted);
}

void Session::run_plain() {
  watchdog_ = std::make_unique<Watchdog>([this](const PlannedResult& p, double limit) { timed_out(p, limit); });
  Runner runner(p_.options, device_);
  const std::string& trace_path = p_.trace_path;
  if (!trace_path.empty()) Timeline::global().enable();
  runner.run(todo_, observer_);
  if (!trace_path.empty()) {
    Timeline::global().disable();
    write_file_atomically(trace_path, Timeline::global().to_chrome_trace().dump());
    if (!args_.quiet) fmt::print("trace: {} (open in https://ui.perfetto.dev or `harness report {} --format trace-html`)\n", trace_path, trace_path);
  }
  fatal_ = runner.fatal_cuda_error();
  if (runner.device_peaks()) environment_["device_peaks"] = to_json(*runner.device_peaks());
  watchdog_.reset();
}

// Every result of the plan in plan order: resumed ones and new ones.
std::vector<Result> Session::assemble() const {
  std::map<std::string, const Result*> by_name;
  for (const auto& [n, r] : resumed_) by_name[n] = &r;
  for (const auto& r : fresh_) by_name[r.name] = &r;
  std::vector<Result> all;
  for (const auto& p : p_.planned)
    if (auto it = by_name.find(p.name); it != by_name.end()) all.push_back(*it->second);
  return all;
}

void Session::report_lost() const {
  if (!lost_.empty()) {
    fmt::print(stderr, "harness: {} result{} not run (a worker was lost): {}{}\n"
                       "harness: complete the run with: {}\n",
               lost_.size(), lost_.size() == 1 ? "" : "s", fmt::join(lost_.begin(), lost_.begin() + std::min<std::size_t>(lost_.size(), 5), ", "),
               lost_.size() > 5 ? ", ..." : "", resume_command(args_, journal_path_));
  } else if (!workers_.empty()) {
    // Complete: the workers' own journals are no longer needed.
    for (const auto& path : worker_journals(journal_path_)) std::remove(path.c_str());
    for (const auto& w : workers_) {
      std::string tag = w.label;
      std::replace(tag.begin(), tag.end(), ':', '-');
      std::remove((journal_path_ + "." + tag + ".stderr").c_str());
    }
  }
}

int Session::finish() {
  // Interrupted while nothing was left to wait for (the pool's children ended with it).
  if (interrupt_requested() && fresh_.size() < todo_.size()) stop_interrupted();
  const std::vector<Result> results = assemble();
  write_file_atomically(out_path_, report_text(make_report(environment_, p_.suite, results)));
  console_.summary(results);
  fmt::print("report: {}\n", out_path_);
  if (fatal_)
    fmt::print(stderr, "harness: a CUDA error corrupted the context and ended the run early: {}\n"
                       "harness: the report holds every result finished before it; rerun with --isolate to contain the failing variant\n",
               *fatal_);
  report_lost();
  bool ok = !fatal_ && lost_.empty();
  for (const auto& r : results) ok &= r.status == Status::passed || r.status == Status::skipped;
  // A GPU machine whose device could not be used: every CUDA result skipped is a run that
  // measured nothing, not a pass (a machine without any GPU keeps exit 0).
  if (workers_.empty())
    if (auto why = unusable_device_failure(results, cuda_device_count(), device_.index, device_.available,
                                           device_.unavailable_reason, args_.allow_skips)) {
      fmt::print(stderr, "harness: error: {}\n", *why);
      return kExitBadInput;
    }
  return ok ? kExitOk : kExitFailure;
}

}  // namespace

// Decides how to run (a pool child, a dry run, --devices workers, --isolate children or
// in process) and hands over.
int run_session(const SessionOptions& args) {
  Plan p;
  make_plan(args, p);
  if (!args.pool_child.empty()) return run_child(args, p);
  std::vector<WorkerDevice> workers;
  if (!args.devices.empty()) workers = choose_workers(args, p);
  else check_device_index(p.options.device, cuda_device_count());
  if (args.dry_run) return dry_run(p);
  Session session(args, p, std::move(workers));
  return session.run();
}

}  // namespace harness
