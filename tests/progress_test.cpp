// The terminal's running line with elapsed time and ETA (issue 34), through the Console
// as a person sees it, with a fake clock and a forced terminal; plain lines without one.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "run/console.hpp"
#include "run/progress.hpp"

namespace harness {
namespace {

Result passed(const std::string& name) {
  Result r;
  r.name = name;
  r.problem = "stream";
  r.variant = "cpu";
  r.status = Status::passed;
  return r;
}

std::string read_all(std::FILE* f) {
  std::string out;
  std::rewind(f);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return out;
}

TEST(Progress, ClockText) {
  EXPECT_EQ(clock_text(0.4), "0s");
  EXPECT_EQ(clock_text(45), "45s");
  EXPECT_EQ(clock_text(62), "1m02s");
  EXPECT_EQ(clock_text(190), "3m10s");
  EXPECT_EQ(clock_text(7500), "2h05m");
}

TEST(Progress, TheRunningLineGainsElapsedTimeAndAnEtaOnATerminal) {
  auto now = std::make_shared<double>(100);
  std::FILE* f = std::tmpfile();
  Console console(f, false, true, Progress([now] { return *now; }));
  console.start("gemm/tiled M=4096", 1, 4);
  *now += 20;
  console.result(passed("a"), 1, 4);
  *now += 1;
  console.start("gemm/tiled M=8192", 2, 4);
  const std::string text = read_all(f);
  // Before any result finished: no mean, no ETA.
  EXPECT_NE(text.find("[1/4] running  gemm/tiled M=4096  0s elapsed"), std::string::npos) << text;
  // 20 s per result; three left counting the running one, 1 s of it gone.
  EXPECT_NE(text.find("[2/4] running  gemm/tiled M=8192  21s elapsed, ~59s left"), std::string::npos) << text;
  std::fclose(f);
}

TEST(Progress, PlainLinesWhenNotATerminal) {
  std::FILE* f = std::tmpfile();
  Console console(f, false, false);
  console.start("gemm/tiled M=4096", 1, 4);
  console.result(passed("a"), 1, 4);
  const std::string text = read_all(f);
  EXPECT_EQ(text.find("running"), std::string::npos) << text;
  EXPECT_EQ(text.find("elapsed"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_NE(text.find("[1/4] passed"), std::string::npos) << text;
  std::fclose(f);
}

}  // namespace
}  // namespace harness
