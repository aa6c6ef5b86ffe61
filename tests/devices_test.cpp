// `harness run --devices`: device lists, the sharding order, the merge of collective
// results, and the launcher end to end with CPU workers (--devices cpu:N): every result
// carries its device, a worker killed mid-run loses only what it was running, --resume
// finishes the run.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "run/devices.hpp"
#include "suite/suite.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using test::run_command;
const std::string kExe = HARNESS_EXE;
const std::string kSuite = " tests/data/suites/resumable.yaml ";

TEST(ParseDevices, ListsAllAndCpuWorkers) {
  const test::ScopedEnv unset("CUDA_VISIBLE_DEVICES", nullptr);
  const auto two = parse_devices("0,1", 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].label, "cuda:1");
  EXPECT_EQ(two[1].visible, "1");
  EXPECT_EQ(parse_devices("all", 3).size(), 3u);
  const auto cpu = parse_devices("cpu:3", 0);
  ASSERT_EQ(cpu.size(), 3u);
  EXPECT_EQ(cpu[2].label, "cpu:2");
  EXPECT_EQ(cpu[2].visible, "");
  EXPECT_EQ(cpu[2].index, -1);
}

// A launcher limited to some GPUs hands its workers those GPUs (a 2-rank job on GPUs 2
// and 3 of a 4-GPU host: CUDA_VISIBLE_DEVICES=2,3 harness run --devices all ...).
TEST(ParseDevices, WorkersSeeTheGpusThisProcessSees) {
  const test::ScopedEnv visible("CUDA_VISIBLE_DEVICES", "2,3");
  const auto all = parse_devices("all", 2);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].visible, "2");
  EXPECT_EQ(all[1].visible, "3");
  EXPECT_EQ(all[1].label, "cuda:1");
  EXPECT_EQ(parse_devices("1", 2)[0].visible, "3");
}

TEST(ParseDevices, BadListsAreClearErrors) {
  auto message = [](const std::string& spec, int gpus) {
    try {
      parse_devices(spec, gpus);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("7", 2), "--devices 7: no CUDA device 7: this machine has 2 (0 to 1)");
  EXPECT_EQ(message("0,0", 2), "--devices 0,0: device 0 is listed twice");
  EXPECT_NE(message("gpu1", 2).find("'gpu1' is not a device index"), std::string::npos);
  EXPECT_NE(message("all", 0).find("this machine has no CUDA device"), std::string::npos);
  EXPECT_NE(message("cpu:0", 0).find("cpu:N needs a worker count"), std::string::npos);
  EXPECT_EQ(message("", 2), "--devices: empty list; expected all, a list like 0,1 or cpu:N");
}

TEST(DeviceIndex, ADeviceTheMachineLacksIsAnInputErrorOnlyWhereThereAreGpus) {
  try {
    check_device_index(7, 2);
    ADD_FAILURE() << "no error for --device 7 on a machine with 2 GPUs";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--device 7: no CUDA device 7: this machine has 2 (0 to 1)");
  }
  EXPECT_NO_THROW(check_device_index(1, 2));
  EXPECT_NO_THROW(check_device_index(7, 0));  // no GPU at all: CUDA skipped, CPU measured
}

Result with_status(const std::string& backend, Status s) {
  Result r;
  r.backend = backend;
  r.status = s;
  return r;
}

TEST(DeviceIndex, AGpuRunWhoseDeviceCouldNotBeUsedMeasuredNothing) {
  const std::vector<Result> skipped = {with_status("cuda", Status::skipped), with_status("cpu", Status::passed),
                                       with_status("cuda", Status::skipped)};
  const auto why = unusable_device_failure(skipped, 1, 0, false, "cudaGetDeviceProperties failed", false);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "nothing was measured on the GPU: all 2 CUDA results were skipped because device 0 could not be used: "
                  "cudaGetDeviceProperties failed (--allow-skips accepts such a run)");
  EXPECT_FALSE(unusable_device_failure(skipped, 1, 0, false, "x", true));   // --allow-skips
  EXPECT_FALSE(unusable_device_failure(skipped, 0, 0, false, "no CUDA device", false));  // no GPU machine
  EXPECT_FALSE(unusable_device_failure(skipped, 1, 0, true, "", false));    // the device was usable
  std::vector<Result> one_ran = skipped;
  one_ran[0].status = Status::passed;  // e.g. resumed from a journal
  EXPECT_FALSE(unusable_device_failure(one_ran, 1, 0, false, "x", false));
  EXPECT_FALSE(unusable_device_failure({with_status("cpu", Status::passed)}, 1, 0, false, "x", false));  // no CUDA result
}

TEST(DevicesCli, DeviceBeyondTheMachineIsAnInputErrorWhereThereAreGpus) {
  const auto r = run_command(kExe + " run" + kSuite + "--quiet --device 7 --dry-run");
  if (test::have_device()) {
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("harness: error: --device 7: no CUDA device 7: this machine has"), std::string::npos)
        << r.output;
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.output;  // no GPU: CUDA variants skipped, CPU ones measured (documented)
  }
  // --allow-skips is accepted (it only matters on a GPU machine whose device is unusable).
  const auto allow = run_command(kExe + " run" + kSuite + "--quiet --allow-skips --dry-run");
  EXPECT_EQ(allow.exit_code, 0) << allow.output;
}

TEST(ShardOrder, LargestEstimatedWorkFirstOneGroupPerCase) {
  const Suite suite = parse_suite(
      "suite: t\ncases:\n"
      "  - {name: small, problem: stream, params: {op: copy, n: 1000}, variants: [cpu]}\n"
      "  - {name: large, problem: stream, params: {op: triad, n: 100000000}, variants: [cpu, cuda]}\n"
      "  - {name: mid, problem: stream, params: {op: add, n: 10000000}, variants: [cpu]}\n",
      "t.yaml", Registry::instance());
  RunOptions options;
  const auto planned = plan(suite, options);
  const auto groups = shard_order(planned);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].front()->c->name, "large");
  EXPECT_EQ(groups[0].size(), 2u);  // both variants of the case travel together
  EXPECT_EQ(groups[1].front()->c->name, "mid");
  EXPECT_EQ(groups[2].front()->c->name, "small");
  EXPECT_GT(estimated_seconds({0, 1e12}), estimated_seconds({1e12, 0}));  // 0.5 s of bytes vs 20 ms of FLOPs
}

Result rank_result(double median, Status status = Status::passed) {
  Result r;
  r.name = "nccl_all_reduce/nccl/bytes:1024";
  r.status = status;
  r.reason = status == Status::passed ? "" : "check failed";
  // Built in place: copying a one-sample Timing trips GCC 13's -Warray-bounds (a false positive).
  r.timing.emplace();
  r.timing->samples.push_back(median);
  r.timing->stats.median = median;
  r.extra = {{"bytes", 1e9}, {"bus_factor", 1.5}};
  return r;
}

TEST(MergeCollective, MeanTimeAndNcclTestsBandwidthsWithEveryRank) {
  const Result m = merge_collective({rank_result(0.010), rank_result(0.030)}, {"cuda:0", "cuda:1"});
  EXPECT_EQ(m.device, "cuda:0,cuda:1");
  EXPECT_EQ(m.status, Status::passed);
  EXPECT_DOUBLE_EQ(m.extra["time_s"].get<double>(), 0.020);
  EXPECT_DOUBLE_EQ(m.extra["time_max_s"].get<double>(), 0.030);
  EXPECT_DOUBLE_EQ(m.extra["algbw_gbps"].get<double>(), 50.0);      // 1e9 B / 20 ms
  EXPECT_DOUBLE_EQ(m.extra["busbw_gbps"].get<double>(), 75.0);      // x 1.5
  EXPECT_DOUBLE_EQ(m.extra["busbw_slowest_gbps"].get<double>(), 50.0);  // 1e9 B / 30 ms x 1.5
  ASSERT_EQ(m.extra["ranks"].size(), 2u);
  EXPECT_DOUBLE_EQ(m.extra["ranks"][1]["algbw_gbps"].get<double>(), 1e9 / 0.030 / 1e9);
  EXPECT_EQ(m.extra["ranks"][1]["device"], "cuda:1");
  const Result bad = merge_collective({rank_result(0.010), rank_result(0.010, Status::failed)}, {"cuda:0", "cuda:1"});
  EXPECT_EQ(bad.status, Status::failed);
  EXPECT_EQ(bad.reason, "rank 1 (cuda:1): check failed");
}

// Samples are batches of K ops after one barrier each: the job's samples are the ranks'
// means batch by batch, so its statistics (console, compare) are the job's time per op.
TEST(MergeCollective, TheJobsSamplesAreTheRanksBatchMeans) {
  Result a = rank_result(0.002), b = rank_result(0.002);
  a.timing->samples = {0.001, 0.003, 0.002, 0.002};
  b.timing->samples = {0.003, 0.001, 0.002, 0.004};
  a.timing->launches_per_sample = b.timing->launches_per_sample = 65;
  a.timing->stats.median = 0.002;
  b.timing->stats.median = 0.0025;
  a.work.bytes = b.work.bytes = 1e9;
  const Result m = merge_collective({a, b}, {"cuda:0", "cuda:1"});
  ASSERT_TRUE(m.timing);
  EXPECT_EQ(m.timing->samples, (std::vector<double>{0.002, 0.002, 0.002, 0.003}));
  EXPECT_EQ(m.timing->stats.count, 4u);
  EXPECT_DOUBLE_EQ(m.timing->stats.median, 0.002);
  EXPECT_DOUBLE_EQ(m.gbytes_per_s, 500.0);  // the job's rate, not rank 0's
  EXPECT_DOUBLE_EQ(m.extra["time_s"].get<double>(), 0.002);
  EXPECT_DOUBLE_EQ(m.extra["time_max_s"].get<double>(), 0.003);  // slowest per batch: 3, 3, 2, 4 ms
  EXPECT_EQ(m.extra["ops_per_sample"].get<std::size_t>(), 65u);
  EXPECT_EQ(m.extra["samples"].get<std::size_t>(), 4u);
  EXPECT_DOUBLE_EQ(m.extra["ranks"][1]["median_s"].get<double>(), 0.0025);  // each rank's own median
}

std::multiset<std::string> names(const nlohmann::json& report) {
  std::multiset<std::string> out;
  for (const auto& r : report["results"]) out.insert(r["name"].get<std::string>());
  return out;
}

TEST(DevicesCli, CpuWorkersShardTheSuiteAndTheReportNamesEveryDevice) {
  const std::string full = test::temp_path("one.json");
  ASSERT_EQ(run_command(kExe + " run" + kSuite + "--quiet --out " + full).exit_code, 0);
  const std::string out = test::temp_path("sharded.json");
  const auto r = run_command(kExe + " run" + kSuite + "--devices cpu:2 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 workers: cpu:0 cpu:1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[8/8] passed"), std::string::npos) << r.output;
  const auto report = nlohmann::json::parse(test::read_file(out));
  const auto one = nlohmann::json::parse(test::read_file(full));
  EXPECT_EQ(names(report), names(one));  // the same results as one process
  for (const auto& res : report["results"]) {
    const std::string d = res.value("device", "");
    EXPECT_TRUE(d == "cpu:0" || d == "cpu:1") << res["name"] << " device '" << d << "'";
  }
  ASSERT_EQ(report["environment"]["devices"].size(), 2u);
  std::set<std::string> envs;
  for (const auto& e : report["environment"]["devices"]) envs.insert(e["device"].get<std::string>());
  EXPECT_EQ(envs, (std::set<std::string>{"cpu:0", "cpu:1"}));
  // A finished run leaves no worker journals behind.
  EXPECT_TRUE(worker_journals(out + ".journal.jsonl").empty());
  for (const auto& p : {full, out}) {
    std::remove(p.c_str());
    std::remove((p + ".journal.jsonl").c_str());
  }
}

TEST(DevicesCli, AKilledWorkerLosesOnlyItsRunningResultAndResumeCompletes) {
  const std::string out = test::temp_path("killed-worker.json");
  const std::string journal = out + ".journal.jsonl";
  // The test hook kills cpu:1's worker with SIGKILL as its second result starts.
  const auto r = run_command("HARNESS_TEST_WORKER_DIE=cpu:1:2 " + kExe + " run" + kSuite + "--devices cpu:2 --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("worker on cpu:1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("SIGKILL"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 result not run (a worker was lost)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("harness: complete the run with: harness run" + kSuite + "--devices cpu:2 --resume " + journal),
            std::string::npos) << r.output;
  const auto partial = nlohmann::json::parse(test::read_file(out));
  EXPECT_EQ(partial["results"].size(), 7u);  // every other result, from both workers
  for (const auto& res : partial["results"]) EXPECT_EQ(res["status"], "passed") << res["name"];
  EXPECT_FALSE(worker_journals(journal).empty());  // kept until the run is complete

  const auto resumed = run_command(kExe + " run --resume " + journal + " --devices cpu:2" + kSuite);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("7 of 8 results already done"), std::string::npos) << resumed.output;
  const auto report = nlohmann::json::parse(test::read_file(out));
  ASSERT_EQ(report["results"].size(), 8u);
  const auto all = names(report);
  EXPECT_EQ(all.size(), std::set<std::string>(all.begin(), all.end()).size());  // each result once
  EXPECT_TRUE(worker_journals(journal).empty());
  std::remove(out.c_str());
  std::remove(journal.c_str());
}

// Collective cases run on every worker in step and merge into one result per name; on CPU
// workers they skip (no device), which exercises the lockstep hand-out and the merge.
TEST(DevicesCli, CollectiveCasesRunOnEveryWorkerAndMergeIntoOneResult) {
  const std::string out = test::temp_path("collective.json");
  const auto r = run_command(kExe + " run suites/nccl.yaml --filter 'bytes:(8|64)/' --devices cpu:2 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto report = nlohmann::json::parse(test::read_file(out));
  ASSERT_EQ(report["results"].size(), 40u);  // 20 cases x 2 sizes, once each (not once per rank)
  for (const auto& res : report["results"]) {
    EXPECT_EQ(res["device"], "cpu:0,cpu:1");
    ASSERT_EQ(res["extra"]["ranks"].size(), 2u);
    EXPECT_EQ(res["extra"]["ranks"][1]["device"], "cpu:1");
  }
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

TEST(DevicesCli, ARankLostInACollectiveLeavesTheRestForResume) {
  const std::string out = test::temp_path("collective-killed.json");
  const std::string journal = out + ".journal.jsonl";
  const std::string run = " run suites/nccl.yaml --filter 'all_reduce/nccl/bytes:(8|64)/' --devices cpu:2";
  const auto r = run_command("HARNESS_TEST_WORKER_DIE=cpu:1:3 " + kExe + run + " --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("6 results not run (a worker was lost)"), std::string::npos) << r.output;
  EXPECT_EQ(nlohmann::json::parse(test::read_file(out))["results"].size(), 2u);
  const auto resumed = run_command(kExe + run + " --resume " + journal);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("2 of 8 results already done"), std::string::npos) << resumed.output;
  EXPECT_EQ(nlohmann::json::parse(test::read_file(out))["results"].size(), 8u);
  std::remove(out.c_str());
  std::remove(journal.c_str());
}

// A rank started by mpirun / srun writes its own report: {rank} in --out, else .rank<r>.
TEST(DevicesCli, RanksOfMpirunOrSrunWriteOneReportEach) {
  const std::string base = test::temp_path("ranks");
  const std::string filter = " --filter 'stream/cpu/op:copy/n:1000$' ";
  auto r = run_command("OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 " + kExe + " run" + kSuite + filter + "--out " + base + ".{rank}.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("report: " + base + ".1.json"), std::string::npos) << r.output;
  r = run_command("SLURM_PROCID=3 SLURM_NTASKS=4 " + kExe + " run" + kSuite + filter + "--out " + base + ".json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("report: " + base + ".rank3.json"), std::string::npos) << r.output;
  for (const auto& p : {base + ".1.json", base + ".rank3.json"}) {
    EXPECT_FALSE(test::read_file(p).empty()) << p;
    std::remove(p.c_str());
    std::remove((p + ".journal.jsonl").c_str());
  }
}

TEST(DevicesCli, BadDevicesAreInputErrorsBeforeAnyWork) {
  const auto r = run_command(kExe + " run" + kSuite + "--devices 7");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  if (test::have_device())
    EXPECT_NE(r.output.find("--devices 7: no CUDA device 7: this machine has"), std::string::npos) << r.output;
  else
    EXPECT_NE(r.output.find("--devices 7: no CUDA device 7: this machine has none"), std::string::npos) << r.output;
  const auto both = run_command(kExe + " run" + kSuite + "--devices cpu:2 --device 1");
  EXPECT_NE(both.exit_code, 0);
  const auto iso = run_command(kExe + " run" + kSuite + "--devices cpu:2 --isolate");
  EXPECT_EQ(iso.exit_code, 2) << iso.output;
  EXPECT_NE(iso.output.find("cannot go with --isolate"), std::string::npos) << iso.output;
  const auto fake = run_command("HARNESS_FAKE_DEVICES=3 " + kExe + " run" + kSuite + "--devices all --dry-run");
  EXPECT_EQ(fake.exit_code, 0) << fake.output;
}

}  // namespace
}  // namespace harness
