// Crash and hang containment, crash-safe journals and --resume (CPU side; the GPU side
// is in the gpu-labelled tests and scripts/gpu-round.sh).
#include <signal.h>

#include <chrono>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace harness {
namespace {

using test::run_command;
const std::string kExe = HARNESS_EXE;
const std::string kBroken = " --plugin " HARNESS_BINARY_DIR "/plugins/broken_plugin.so ";

std::map<std::string, std::string> statuses(const nlohmann::json& report) {
  std::map<std::string, std::string> out;
  for (const auto& r : report["results"]) out[r["variant"]] = r["status"].get<std::string>() + ": " + r["reason"].get<std::string>();
  return out;
}

TEST(Isolate, EveryFailureIsClassifiedAndTheGoodVariantIsMeasured) {
  const std::string out = test::temp_path("broken.json");
  const auto r = run_command(kExe + " run --isolate" + kBroken + "tests/data/suites/broken_cpu.yaml --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const auto report = nlohmann::json::parse(test::read_file(out));
  const auto s = statuses(report);
  EXPECT_EQ(s.at("cpu_wrong").rfind("failed: check failed", 0), 0u) << s.at("cpu_wrong");
  EXPECT_EQ(s.at("cpu_throws"), "error: broken/cpu_throws throws on purpose");
  EXPECT_EQ(s.at("cpu_abort"), "crashed: crashed: SIGABRT (Aborted)");
  EXPECT_EQ(s.at("cpu_segfault"), "crashed: crashed: SIGSEGV (Segmentation fault)");
  EXPECT_EQ(s.at("cpu_hang"), "timeout: timeout: still running after 3 s (killed)");
  EXPECT_EQ(s.at("cpu"), "passed: ");
  EXPECT_NE(r.output.find("6 results: 1 passed, 1 failed, 0 skipped, 1 errors, 2 crashed, 1 timed out"), std::string::npos);
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

TEST(Watchdog, WithoutIsolateAHangEndsTheRunCleanlyWithAReport) {
  const std::string out = test::temp_path("hang.json");
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_command(kExe + " run" + kBroken + "tests/data/suites/broken_cpu.yaml --variants cpu_wrong,cpu_hang,cpu --timeout 1 --out " + out);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("broken/cpu_hang/n:1000 timed out; report with the finished results: " + out), std::string::npos) << r.output;
  const auto report = nlohmann::json::parse(test::read_file(out));
  ASSERT_EQ(report["results"].size(), 2u);  // the finished one and the hung one; `cpu` never started
  EXPECT_EQ(report["results"][0]["status"], "failed");
  EXPECT_EQ(report["results"][1]["status"], "timeout");
  EXPECT_NE(report["results"][1]["reason"].get<std::string>().find("use --isolate"), std::string::npos);
  std::remove(out.c_str());
  std::remove((out + ".journal.jsonl").c_str());
}

TEST(Resume, KillNineThenResumeGivesTheSameEntriesAsAnUninterruptedRun) {
  const std::string suite = "tests/data/suites/resumable.yaml";
  const std::string full = test::temp_path("full.json");
  ASSERT_EQ(run_command(kExe + " run " + suite + " --quiet --out " + full).exit_code, 0);

  const std::string out = test::temp_path("killed.json");
  const std::string journal = out + ".journal.jsonl";
  const auto pid_text = run_command(kExe + " run " + suite + " --quiet --out " + out + " >/dev/null 2>&1 & echo $!").output;
  const pid_t pid = std::stoi(pid_text);
  // Wait until a few results are journaled (after the header line), then kill -9 in the
  // middle of the run.
  for (int i = 0; i < 400; ++i) {
    const std::string j = test::read_file(journal);
    if (std::count(j.begin(), j.end(), '\n') >= 1 + 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string before = test::read_file(journal);
  const auto done_before = std::count(before.begin(), before.end(), '\n') - 1;  // less the header
  EXPECT_GE(done_before, 3);
  EXPECT_LT(done_before, 8) << "the run finished before the kill; the test proves nothing";
  EXPECT_FALSE(std::ifstream(out).good()) << "no report is written before the end";

  const auto r = run_command(kExe + " run " + suite + " --resume " + journal);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("resuming " + journal + ": " + std::to_string(done_before) + " of 8 results already done"),
            std::string::npos) << r.output;
  const auto resumed = nlohmann::json::parse(test::read_file(out));
  const auto uninterrupted = nlohmann::json::parse(test::read_file(full));
  ASSERT_EQ(resumed["results"].size(), uninterrupted["results"].size());
  for (std::size_t i = 0; i < resumed["results"].size(); ++i) {
    EXPECT_EQ(resumed["results"][i]["name"], uninterrupted["results"][i]["name"]);
    EXPECT_EQ(resumed["results"][i]["status"], uninterrupted["results"][i]["status"]);
    EXPECT_EQ(resumed["results"][i]["check"], uninterrupted["results"][i]["check"]);  // same inputs, same seed
  }
  // The results finished before the kill were not run again.
  const std::string after = test::read_file(journal);
  EXPECT_EQ(std::count(after.begin(), after.end(), '\n'), 1 + 8);
  for (const auto& f : {full, out, full + ".journal.jsonl", journal}) std::remove(f.c_str());
}

TEST(Resume, ATornLastLineIsIgnoredAndGarbageIsAnError) {
  const std::string journal = test::temp_path("torn.journal.jsonl");
  {
    std::ofstream j(journal);
    j << "{\"name\": \"x\", \"problem\": \"stream\"";  // cut mid-line, no newline
  }
  // The torn entry is ignored; everything is run.
  auto r = run_command(kExe + " run tests/data/suites/tiny.yaml --quiet --variants cpu --resume " + journal);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  {
    std::ofstream j(journal);
    j << "garbage\n{}\n";
  }
  r = run_command(kExe + " run tests/data/suites/tiny.yaml --resume " + journal);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find(journal + ":1: not a journal line (invalid JSON)"), std::string::npos) << r.output;
  std::remove(journal.c_str());
  std::remove(test::temp_path("torn.journal").c_str());
}

}  // namespace
}  // namespace harness

namespace harness {
namespace {

// issue 6's demo, end to end on the CPU: the same suite twice, the second time with the
// broken plugin's correct variant doing its work three times; compare flags it (exit 1).
TEST(CompareDemo, ADeliberatelySlowedVariantIsARegression) {
  const std::string base = test::temp_path("slow-base.json");
  const std::string slow = test::temp_path("slow-cand.json");
  const std::string run = kExe + " run" + kBroken + "tests/data/suites/slowdown.yaml --variants cpu --quiet --out ";
  ASSERT_EQ(run_command(run + base).exit_code, 0);
  ASSERT_EQ(run_command("HARNESS_BROKEN_SLOWDOWN=3 " + run + slow).exit_code, 0);
  const auto r = run_command(kExe + " compare " + base + " " + slow);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("SLOWER"), std::string::npos) << r.output;
  for (const auto& f : {base, slow}) {
    std::remove(f.c_str());
    std::remove((f + ".journal.jsonl").c_str());
  }
}

}  // namespace
}  // namespace harness
