// --resume completes the run that wrote the journal and only that one (issue 34): another
// suite, an edited suite, another --seed, --filter or --variants is an input error before
// any work; a journal from before the header is resumed with a warning.
#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace harness {
namespace {

using test::run_command;
const std::string kExe = HARNESS_EXE;
const std::string kTiny = "tests/data/suites/tiny.yaml";

// A finished run of tiny.yaml (--seed 42, no filter): its journal.
std::string tiny_journal(const std::string& name) {
  const std::string out = test::temp_path(name);
  EXPECT_EQ(run_command(kExe + " run " + kTiny + " --quiet --out " + out).exit_code, 0);
  return out + ".journal.jsonl";
}

std::size_t lines(const std::string& path) {
  const std::string text = test::read_file(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(ResumeCheck, TheJournalStartsWithTheRunItBelongsTo) {
  const std::string journal = tiny_journal("header.json");
  std::ifstream in(journal);
  std::string first;
  std::getline(in, first);
  const auto header = nlohmann::json::parse(first);
  EXPECT_EQ(header["event"], "run");
  EXPECT_EQ(header["seed"], 42);
  EXPECT_EQ(header["suites"][0]["path"], kTiny);
  EXPECT_EQ(header["suites"][0]["hash"].get<std::string>().rfind("fnv1a64:", 0), 0u);
  test::remove_report(journal.substr(0, journal.size() - 14));
}

TEST(ResumeCheck, AnotherSuiteOrSeedOrFilterIsRefusedBeforeAnyWork) {
  const std::string journal = tiny_journal("mismatch.json");
  const std::size_t before = lines(journal);
  auto r = run_command(kExe + " run tests/data/suites/resumable.yaml --resume " + journal);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, "harness: error: --resume " + journal + ": it was written by a run of " + kTiny +
                          "; this run is tests/data/suites/resumable.yaml\n");
  r = run_command(kExe + " run " + kTiny + " --seed 7 --resume " + journal);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, "harness: error: --resume " + journal + ": it was written by a run of " + kTiny +
                          " with --seed 42; this run is " + kTiny + " with --seed 7\n");
  r = run_command(kExe + " run " + kTiny + " --filter 'op:copy' --variants cpu --resume " + journal);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, "harness: error: --resume " + journal + ": it was written by a run of " + kTiny +
                          " without --filter without --variants; this run is " + kTiny +
                          " with --filter op:copy with --variants cpu\n");
  EXPECT_EQ(lines(journal), before);  // nothing ran, nothing was appended
  // The same run is resumed: everything was done.
  r = run_command(kExe + " run " + kTiny + " --resume " + journal);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("8 of 8 results already done"), std::string::npos) << r.output;
  test::remove_report(journal.substr(0, journal.size() - 14));
}

TEST(ResumeCheck, AnEditedSuiteIsRefused) {
  const std::string suite = test::temp_path("edited.yaml");
  std::ofstream(suite) << test::read_file(kTiny);
  const std::string out = test::temp_path("edited.json");
  ASSERT_EQ(run_command(kExe + " run " + suite + " --quiet --out " + out).exit_code, 0);
  std::ofstream(suite, std::ios::app) << "# edited\n";
  const auto r = run_command(kExe + " run " + suite + " --resume " + out + ".journal.jsonl");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("harness: error: --resume " + out + ".journal.jsonl: " + suite +
                               " has changed since the journal was written (content fnv1a64:", 0), 0u) << r.output;
  test::remove_report(out);
  std::remove(suite.c_str());
}

TEST(ResumeCheck, AnOlderJournalWithoutHeaderIsResumedWithAWarning) {
  const std::string journal = tiny_journal("old.json");
  // Drop the header line, as a harness before issue 34 wrote it; and the last result.
  std::string text = test::read_file(journal);
  text = text.substr(text.find('\n') + 1);
  text = text.substr(0, text.rfind('\n', text.size() - 2) + 1);
  std::ofstream(journal, std::ios::trunc) << text;
  const auto r = run_command(kExe + " run " + kTiny + " --resume " + journal);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("harness: warning: --resume " + journal + ": the journal was written by an older harness and "
                          "does not say which suite and seed it ran; it cannot be checked against this run\n"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("7 of 8 results already done"), std::string::npos) << r.output;
  test::remove_report(journal.substr(0, journal.size() - 14));
}

}  // namespace
}  // namespace harness
