// --devices on real GPUs: a suite sharded over every GPU, and the nccl family: every collective across all visible GPUs through
// `harness run --devices all` (checked on every rank, merged with nccl-tests' figures),
// a missing rank that ends in a clear error instead of a hang, a lost rank mid-suite, and
// the skip of a single rank. Needs 2 GPUs for the multi-rank tests (skips otherwise).
// time_collective on one GPU with a stand-in barrier: the launches and barriers it makes.
#include <chrono>
#include <cmath>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "measure/collective.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using test::gpu_count;
using test::run_command;
const std::string kExe = HARNESS_EXE;

TEST(DevicesGpu, TheSmokeSuiteShardsOverEveryGpuWithTheSameResults) {
  const int n = gpu_count();
  if (n < 2) GTEST_SKIP() << "needs 2 or more GPUs (found " << n << ")";
  const std::string out = test::temp_path("smoke-all.json");
  const auto r = run_command(kExe + " run suites/smoke.yaml --devices all --no-profile --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto report = nlohmann::json::parse(test::read_file(out));
  ASSERT_EQ(report["environment"]["devices"].size(), static_cast<std::size_t>(n));
  std::set<std::string> used;
  for (const auto& res : report["results"]) {
    EXPECT_EQ(res["status"], "passed") << res["name"] << ": " << res["reason"];
    used.insert(res["device"].get<std::string>());
  }
  EXPECT_GE(used.size(), 2u) << "one device did all the work";
  for (const auto& env : report["environment"]["devices"]) EXPECT_FALSE(env["gpu"].is_null()) << env.dump();
  const auto dry = run_command(kExe + " run suites/smoke.yaml --dry-run");
  EXPECT_NE(dry.output.find(std::to_string(report["results"].size()) + " results"), std::string::npos) << dry.output;
  const auto bad = run_command(kExe + " run suites/smoke.yaml --devices " + std::to_string(n));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("no CUDA device " + std::to_string(n) + ": this machine has " + std::to_string(n)),
            std::string::npos) << bad.output;
  test::remove_report(out);
}

TEST(NcclGpu, EveryCollectiveOnEveryGpuIsCheckedAndMergedWithBusBandwidth) {
  const int n = gpu_count();
  if (n < 2) GTEST_SKIP() << "needs 2 or more GPUs (found " << n << ")";
  const std::string out = test::temp_path("nccl.json");
  // Odd-ish and large sizes; bytes:8 leaves fewer elements than ranks for some at n > 2.
  // Every GPU of the machine is a rank (CUDA_VISIBLE_DEVICES=0,1 makes a 4-GPU host a pair).
  const auto r = run_command("NCCL_NVLS_ENABLE=0 " + kExe + " run suites/nccl.yaml --devices all --filter "
                             "'bytes:(8|4096|2097152|134217728)/' --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto report = nlohmann::json::parse(test::read_file(out));
  ASSERT_EQ(report["environment"]["devices"].size(), static_cast<std::size_t>(n));
  std::set<std::string> collectives;
  for (const auto& res : report["results"]) {
    const std::string name = res["name"];
    if (res["status"] == "skipped") {
      EXPECT_NE(res["reason"].get<std::string>().find("less than one element per rank"), std::string::npos) << name;
      continue;
    }
    ASSERT_EQ(res["status"], "passed") << name << ": " << res["reason"];
    const auto& x = res["extra"];
    ASSERT_EQ(x["ranks"].size(), static_cast<std::size_t>(n)) << name;
    const double t = x["time_s"], bytes = x["bytes"], factor = x["bus_factor"];
    EXPECT_GT(t, 0) << name;
    EXPECT_NEAR(x["algbw_gbps"].get<double>(), bytes / t / 1e9, 1e-9 * bytes / t) << name;
    EXPECT_NEAR(x["busbw_gbps"].get<double>(), bytes / t / 1e9 * factor, 1e-9 * bytes / t) << name;
    for (const auto& rank : x["ranks"]) EXPECT_EQ(rank["status"], "passed") << name;
    // nccl-tests' method: the suite's 20 samples, each a batch of K ops after a barrier.
    const std::size_t k = collective_ops_per_sample(bytes);
    EXPECT_EQ(x["ops_per_sample"].get<std::size_t>(), k) << name;
    EXPECT_EQ(res["stats"]["launches_per_sample"].get<std::size_t>(), k) << name;
    EXPECT_EQ(x["samples"].get<std::size_t>(), 20u) << name;
    EXPECT_EQ(res["samples_s"].size(), 20u) << name;
    EXPECT_GE(x["time_max_s"].get<double>(), t * (1 - 1e-9)) << name;  // the slowest rank's, batch by batch
    EXPECT_NEAR(res["stats"]["median_s"].get<double>(), t, 1e-12) << name;  // the job's samples
    collectives.insert(x["collective"].get<std::string>());
  }
  EXPECT_EQ(collectives.size(), 6u);
  test::remove_report(out);
}

// nccl-tests' method without NCCL: a barrier per sample, K launches between one event pair,
// warm-up of max(warmup, K); samples are time per launch (a 64 MiB memset here).
TEST(CollectiveTimingGpu, OneBarrierPerSampleAndKLaunchesBetweenOneEventPair) {
  if (gpu_count() < 1) GTEST_SKIP() << "no CUDA device";
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  void* buf = nullptr;
  const std::size_t bytes = std::size_t{64} << 20;
  ASSERT_EQ(cudaMalloc(&buf, bytes), cudaSuccess);
  int launches = 0, barriers = 0;
  auto launch = [&] {
    ++launches;
    ASSERT_EQ(cudaMemsetAsync(buf, launches & 0xff, bytes, stream), cudaSuccess);
  };
  MeasureSettings settings;
  settings.warmup = 3;
  settings.stopping.rule = StoppingRule::samples;
  settings.stopping.samples = 7;
  auto barrier = [&] {  // the stand-in: the stream idle, as World::barrier leaves it
    ++barriers;
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  };
  const Timing t = time_collective(launch, barrier, stream, settings, 12);
  EXPECT_EQ(barriers, 7);
  EXPECT_EQ(launches, 12 + 7 * 12);  // warm-up max(3, 12), then 7 batches of 12
  EXPECT_EQ(t.launches_per_sample, 12u);
  ASSERT_EQ(t.samples.size(), 7u);
  EXPECT_EQ(t.stop_reason, "sample count reached");
  ASSERT_TRUE(t.clocks);
  EXPECT_EQ(t.clocks->mhz.size(), 7u);
  // One memset alone, timed the same way, within 2x of a sample (a sample is a mean of 12).
  cudaEvent_t a, b;
  ASSERT_EQ(cudaEventCreate(&a), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(a, stream), cudaSuccess);
  for (int i = 0; i < 12; ++i) launch();
  ASSERT_EQ(cudaEventRecord(b, stream), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(b), cudaSuccess);
  float ms = 0;
  ASSERT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
  const double one = static_cast<double>(ms) * 1e-3 / 12;
  EXPECT_GT(t.stats.median, one / 2);
  EXPECT_LT(t.stats.median, one * 2);
  (void)cudaEventDestroy(a);
  (void)cudaEventDestroy(b);
  (void)cudaFree(buf);
  (void)cudaStreamDestroy(stream);
}

TEST(NcclGpu, OneRankAloneSkipsWithTheReason) {
  if (gpu_count() < 1) GTEST_SKIP() << "no CUDA device";
  const std::string out = test::temp_path("nccl-one.json");
  const auto r = run_command(kExe + " run suites/nccl.yaml --filter 'all_reduce/nccl/bytes:4096/dtype:f32/in_place:false' --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("needs at least 2 ranks"), std::string::npos) << r.output;
  test::remove_report(out);
}

TEST(NcclGpu, AMissingRankIsAClearErrorWithinTheDeadline) {
  if (gpu_count() < 1) GTEST_SKIP() << "no CUDA device";
  // Rank 0 of 2 with no rank 1: the communicator never completes.
  const std::string out = test::temp_path("nccl-missing.json");
  const std::string id = test::temp_path("nccl-id");
  const auto [r, seconds] = test::run_rank0_without_rank1(
      kExe + " run suites/nccl.yaml --filter 'all_reduce/nccl/bytes:4096/dtype:f32/in_place:false' --out " + out, id);
  EXPECT_LT(seconds, 60);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("a rank is missing"), std::string::npos) << r.output;
  test::remove_report(out);
  std::remove(id.c_str());
}

TEST(NcclGpu, ARankKilledMidSuiteEndsTheRunWithoutAHangAndResumeCompletes) {
  if (gpu_count() < 2) GTEST_SKIP() << "needs 2 or more GPUs";
  const std::string out = test::temp_path("nccl-killed.json");
  const std::string run = " run suites/nccl.yaml --devices all --filter 'all_reduce/nccl/bytes:(4096|2097152)/'";
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_command("NCCL_NVLS_ENABLE=0 HARNESS_NCCL_TIMEOUT=20 HARNESS_TEST_WORKER_DIE=cuda:1:3 " + kExe + run + " --out " + out);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 120);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("not run (a worker was lost)"), std::string::npos) << r.output;
  const auto resumed = run_command("NCCL_NVLS_ENABLE=0 " + kExe + run + " --resume " + out + ".journal.jsonl");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(nlohmann::json::parse(test::read_file(out))["results"].size(), 8u);
  test::remove_report(out);
}

}  // namespace
}  // namespace harness
