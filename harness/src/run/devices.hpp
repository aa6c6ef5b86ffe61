#pragma once
// --devices: one worker process per device. The parent (the launcher) plans the run,
// starts one worker per device (the same executable, pinned with CUDA_VISIBLE_DEVICES,
// in a hidden worker mode), and hands out work one case at a time from a queue sorted by
// estimated work, largest first: a worker that is free takes the next case, so the slowest
// device does not hold the run. Every worker journals its results (its events file next to
// the report); the launcher copies each result into the run's journal as it arrives and
// merges everything into one report whose results carry the device they ran on.
//
// Collective cases (Problem::collective(): NCCL) run on every worker at once, in the same
// order, before the sharded ones; their per-rank results merge into one result (see
// merge_collective).
//
// A worker that dies loses nothing already journaled: the result it was running is
// recorded as crashed (killed by SIGKILL: left for --resume instead), the rest of its case
// goes back to the queue, and a fresh worker takes its device (up to 2 restarts).
//
// The workers are the process pool's children (run/pool.hpp: the protocol, the child's
// side, the event reader); here is the launcher's policy.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"

namespace harness {

struct WorkerDevice {
  std::string label;    // "cuda:1" or "cpu:0": the `device` field of its results
  std::string visible;  // CUDA_VISIBLE_DEVICES of its worker ("" for a CPU worker)
  int index = -1;       // the physical CUDA index (-1 for a CPU worker)
};

// `spec`: "all", "0,1,3", or "cpu:N" (N CPU-only workers, for tests and CPU suites; also
// what "all" means when HARNESS_FAKE_DEVICES=N is set). `gpu_count`: CUDA devices visible
// to the launcher. Throws InputError for a bad or unavailable device.
std::vector<WorkerDevice> parse_devices(const std::string& spec, int gpu_count);

// --device N: an input error (before any work) where the CUDA runtime reports devices and N
// is not one of them. With no CUDA device at all (gpu_count 0) it passes: the run goes on,
// CUDA variants skipped, CPU ones measured.
void check_device_index(int device, int gpu_count);

// A run on a GPU machine (gpu_count >= 1) whose device could not be used and whose every
// CUDA result was therefore skipped measured nothing it was asked to on the GPU: the error
// to print (exit 2), or nullopt (no GPU on the machine, the device usable, no CUDA result,
// one of them not skipped, or allow_skips: --allow-skips).
std::optional<std::string> unusable_device_failure(const std::vector<Result>& results, int gpu_count, int device,
                                                   bool device_available, const std::string& unavailable_reason,
                                                   bool allow_skips);

// The estimated seconds of one result at its work: a roofline on a nominal device
// (50 TFLOP/s, 2 TB/s), plus a fixed 1 ms so that tiny cases still order by count.
double estimated_seconds(const Work& w);

// Groups of planned results (one group per case, in plan order within a group) in the
// order the launcher hands them out: collective cases first in plan order, then the rest
// by estimated work (all the group's results), largest first.
std::vector<std::vector<const PlannedResult*>> shard_order(const std::vector<PlannedResult>& planned);

// One collective result from every rank's: rank 0's result whose samples are the per-batch
// means over the ranks (measure/collective.hpp, combine_ranks), and extra.ranks =
// [{rank, device, median_s, algbw_gbps, busbw_gbps, status}] where algbw = extra.bytes /
// time and busbw = algbw * extra.bus_factor (the problem's nccl-tests factor); extra also
// gets the job's time_s (median of the means), time_max_s (of the slowest rank's),
// algbw_gbps, busbw_gbps, busbw_slowest_gbps, ops_per_sample and samples. Any rank not
// passed makes the merged result that rank's status and reason.
Result merge_collective(const std::vector<Result>& per_rank, const std::vector<std::string>& devices);

struct LaunchOptions {
  std::vector<std::string> argv;  // the worker's command line (the run's, minus launcher options)
  double timeout_override = 0;
  std::string journal_path;       // the run's journal; workers journal to <journal>.<label>
  bool quiet = false;
};

struct LaunchOutcome {
  std::vector<Result> results;             // every result received, each with its device
  nlohmann::json environments = nlohmann::json::array();  // one per worker that started
  std::vector<std::string> lost;           // names left unrun (a worker was killed)
  std::vector<std::string> messages;       // what happened to workers, for the console
};

LaunchOutcome launch_workers(const std::vector<WorkerDevice>& devices, const std::vector<PlannedResult>& planned,
                             const LaunchOptions& options, const RunObserver& observer);

// Results journaled by the workers of a run (<journal>.<label> files), for --resume.
std::vector<std::string> worker_journals(const std::string& journal_path);

}  // namespace harness
