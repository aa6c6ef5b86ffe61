// The end of a run's console (issue 34): after the progress lines, only the results that
// did not pass or are marked (skipped ones one row per reason), not the whole table again;
// the table with --table, and when some results (resumed from a journal) were never on
// screen.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

#include "run/console.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

Result make(const std::string& variant, Status status, const std::string& reason = "") {
  Result r;
  r.problem = "stream";
  r.variant = variant;
  r.name = "stream/" + variant;
  r.status = status;
  r.reason = reason;
  return r;
}

std::vector<Result> mixed() {
  std::vector<Result> rs = {make("cpu", Status::passed), make("cuda", Status::skipped, "no CUDA device"),
                            make("cuda2", Status::skipped, "no CUDA device"), make("cuda3", Status::skipped, "no CUDA device"),
                            make("broken", Status::failed, "check failed: 3 of 1000 elements differ"),
                            make("cheat", Status::passed)};
  rs.back().integrity.suspicious = "median 1 us is 0.01x the roof time";
  return rs;
}

// What the console printed: the progress lines of `shown` (the results this run ran),
// then the end of the run over all of `results`.
std::string console_text(const std::vector<Result>& results, std::size_t shown, bool quiet = false,
                         bool table = false) {
  std::FILE* f = std::tmpfile();
  Console console(f, quiet, false);
  console.full_table(table);
  for (std::size_t i = 0; i < shown; ++i) console.result(results[i], i + 1, results.size());
  console.summary(results);
  std::string out;
  std::rewind(f);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

using test::count;

TEST(ConsoleEnd, OnlyWhatDidNotPassOrIsMarkedAfterTheProgressLines) {
  const auto rs = mixed();
  const std::string text = console_text(rs, rs.size());
  EXPECT_EQ(text.find("result  "), std::string::npos) << text;  // no table header
  EXPECT_EQ(count(text, "stream/cpu "), 1u) << text;              // its progress line only
  EXPECT_NE(text.find("\nNot passed or marked (5 of 6; --table lists every result):\n"
                      "stream/cuda  (+2 more)  skipped  no CUDA device\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("stream/broken           failed   check failed: 3 of 1000 elements differ\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("stream/cheat            suspect  suspicious: median 1 us is 0.01x the roof time\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n6 results: 2 passed, 1 failed, 3 skipped, 0 errors\n"), std::string::npos) << text;
}

// A skip reason repeated on consecutive progress lines is printed once; a new reason in
// full again.
TEST(ConsoleEnd, AProgressLineDoesNotRepeatTheReasonAbove) {
  const auto rs = mixed();
  const std::string text = console_text(rs, rs.size());
  auto line = [&](const std::string& start) {
    const auto at = text.find(start);
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_TRUE(line("[2/6]").ends_with("  no CUDA device")) << text;
  EXPECT_TRUE(line("[3/6]").ends_with("  (the same reason as above)")) << text;
  EXPECT_TRUE(line("[4/6]").ends_with("  (the same reason as above)")) << text;
  EXPECT_TRUE(line("[5/6]").ends_with("  check failed: 3 of 1000 elements differ")) << text;
}

TEST(ConsoleEnd, NothingToRecapWhenEveryResultPassed) {
  const std::vector<Result> rs = {make("cpu", Status::passed), make("cpu2", Status::passed)};
  const std::string text = console_text(rs, rs.size());
  EXPECT_EQ(text.find("Not passed"), std::string::npos) << text;
  EXPECT_EQ(text.find("result  "), std::string::npos) << text;
  EXPECT_EQ(count(text, "stream/cpu "), 1u) << text;
}

TEST(ConsoleEnd, TheWholeTableWhenSomeResultsWereNotOnScreen) {
  // The first two resumed from a journal: this run printed no line for them.
  const auto rs = mixed();
  const std::string text = console_text(rs, 0);
  EXPECT_NE(text.find("result          status         median"), std::string::npos) << text;
  EXPECT_NE(text.find("stream/cuda     skipped  no CUDA device\nstream/cuda2    skipped  (the same reason)\n"),
            std::string::npos)
      << text;
}

TEST(ConsoleEnd, TableOnRequestEvenUnderQuiet) {
  const auto rs = mixed();
  for (bool quiet : {false, true}) {
    const std::string text = console_text(rs, rs.size(), quiet, true);
    EXPECT_NE(text.find("result          status         median"), std::string::npos) << text;
    EXPECT_EQ(text.find("Not passed"), std::string::npos) << text;
  }
  // --quiet alone: the failures' progress lines and the counts.
  const std::string quiet = console_text(rs, rs.size(), true);
  EXPECT_EQ(quiet.find("result  "), std::string::npos) << quiet;
  EXPECT_EQ(quiet.find("Not passed"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("failed  stream/broken"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("6 results: 2 passed, 1 failed, 3 skipped, 0 errors"), std::string::npos) << quiet;
}

}  // namespace
}  // namespace harness
