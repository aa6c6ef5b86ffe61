// Ctrl-C during `harness run` (issue 34): the first interrupt stops after the current
// result with the report of everything finished (marked interrupted, valid) and the
// command that completes it, exit 130; the second stops at once; under --isolate the
// terminal's Ctrl-C also ends the child, whose death is not recorded as a crash.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace harness {
namespace {

using test::run_command;
const std::string kExe = HARNESS_EXE;
const std::string kSuite = "tests/data/suites/interruptible.yaml";

// `command` started through sh (exec'd: the pid is the harness's), output to `log`; in a
// process group of its own when `group` (as a terminal's foreground job).
pid_t start(const std::string& command, const std::string& log, bool group) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (group) ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

std::size_t lines(const std::string& path) {
  const std::string text = test::read_file(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Waits until the journal holds `n` lines (the header, then results).
bool wait_lines(const std::string& journal, std::size_t n) {
  for (int i = 0; i < 800; ++i) {
    if (lines(journal) >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

// The exit code, or -1 when it did not end within `seconds` (then it is killed).
int wait_exit(pid_t pid, double seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Interrupt, CtrlCWritesTheFinishedResultsAndSaysHowToComplete) {
  const std::string out = test::temp_path("interrupted.json");
  const std::string journal = out + ".journal.jsonl";
  const std::string log = out + ".log";
  const pid_t pid = start(kExe + " run " + kSuite + " --seed 7 --out " + out, log, false);
  ASSERT_TRUE(wait_lines(journal, 2)) << test::read_file(log);  // the header and one result
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  EXPECT_EQ(wait_exit(pid, 10), 130) << test::read_file(log);
  const std::string output = test::read_file(log);
  EXPECT_NE(output.find("harness: interrupted: stopping after the current result (interrupt again to stop at once)"),
            std::string::npos) << output;

  const auto report = nlohmann::json::parse(test::read_file(out));
  EXPECT_EQ(report["interrupted"], true);
  const std::size_t done = report["results"].size();
  EXPECT_GE(done, 1u);
  EXPECT_LT(done, 8u) << "the run finished before the interrupt; the test proves nothing";
  EXPECT_EQ(lines(journal), done + 1);  // every finished result is journaled, after the header
  const std::string resume = "harness run " + kSuite + " --seed 7 --resume " + journal;
  EXPECT_NE(output.find("interrupted: " + std::to_string(done) + " of 8 results done; the report is " + out +
                        "; complete it with: " + resume + "\n"),
            std::string::npos) << output;
  const auto valid = run_command(kExe + " validate " + out);
  EXPECT_EQ(valid.exit_code, 0) << valid.output;

  // The printed command completes it: the report is whole and no longer interrupted.
  const auto r = run_command(kExe + resume.substr(7) + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto whole = nlohmann::json::parse(test::read_file(out));
  EXPECT_EQ(whole["results"].size(), 8u);
  EXPECT_FALSE(whole.contains("interrupted"));
  test::remove_report(out);
  std::remove(log.c_str());
}

TEST(Interrupt, TheSecondCtrlCEndsAHungResult) {
  const std::string out = test::temp_path("interrupted-hang.json");
  const std::string journal = out + ".journal.jsonl";
  const std::string log = out + ".log";
  const pid_t pid = start(kExe + " run --plugin " HARNESS_BINARY_DIR "/plugins/broken_plugin.so "
                          "tests/data/suites/broken_cpu.yaml --variants cpu_wrong,cpu_hang --timeout 60 --out " + out,
                          log, false);
  ASSERT_TRUE(wait_lines(journal, 2)) << test::read_file(log);
  // Let cpu_hang start (an interrupt between two results stops at once, rightly).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the first interrupt waits for the running result\n" << test::read_file(log);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  EXPECT_EQ(wait_exit(pid, 5), 130) << test::read_file(log);
  const std::string output = test::read_file(log);
  EXPECT_NE(output.find("harness: interrupted again: stopped at once; no report written; the finished results are in " +
                        journal + " (complete the run with --resume)"),
            std::string::npos) << output;
  EXPECT_FALSE(std::ifstream(out).good());
  EXPECT_EQ(lines(journal), 2u);  // the finished result stays for --resume
  std::remove(journal.c_str());
  std::remove(log.c_str());
}

TEST(Interrupt, UnderIsolateTheChildKilledByTheSameCtrlCIsNotACrash) {
  const std::string out = test::temp_path("interrupted-isolated.json");
  const std::string journal = out + ".journal.jsonl";
  const std::string log = out + ".log";
  const pid_t pid = start(kExe + " run " + kSuite + " --isolate --out " + out, log, true);
  ASSERT_TRUE(wait_lines(journal, 2)) << test::read_file(log);
  ASSERT_EQ(::kill(-pid, SIGINT), 0);  // the whole foreground group, as a terminal does
  EXPECT_EQ(wait_exit(pid, 10), 130) << test::read_file(log);
  const auto report = nlohmann::json::parse(test::read_file(out));
  EXPECT_EQ(report["interrupted"], true);
  EXPECT_LT(report["results"].size(), 8u);
  for (const auto& r : report["results"]) EXPECT_EQ(r["status"], "passed") << r["name"];
  EXPECT_EQ(lines(journal), report["results"].size() + 1);
  test::remove_report(out);
  std::remove(log.c_str());
}

}  // namespace
}  // namespace harness
