// The timeline of `harness run --trace`: the Chrome trace the Timeline writes and the
// checker that compares it with the report of the same run (nesting, alignment of the
// GPU clock onto the host clock, kernel counts against the breakdown, flows). CPU:
// synthetic timelines, good and broken. The real run is trace_gpu_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "profile/nvtx.hpp"
#include "profile/timeline.hpp"
#include "report/trace_check.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "report/report_model.hpp"
#include "suite/suite.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using nlohmann::json;

Params shape(long long n) {
  Params p;
  p.set("M", n);
  p.set("N", n);
  p.set("K", n);
  return p;
}

// A report whose one result (gemm/tiled at 64^3) counts `calls` launches per run over
// `runs` runs.
Report report_with(double calls, int runs) {
  Report rep;
  rep.format = "harness-report";
  Result r;
  r.problem = "gemm";
  r.variant = "tiled";
  r.params = shape(64);
  r.status = Status::passed;
  r.profile = {{"kernels", {{"runs", runs}, {"kernels", json::array({{{"name", "tiled"}, {"calls", calls}}})}}}};
  rep.results.push_back(r);
  return rep;
}

GpuActivity kernel(std::int64_t start, std::int64_t end, std::uint32_t corr, const std::string& variant) {
  GpuActivity a;
  a.name = "kernels::gemm::tiled<32>";
  a.start_ns = start;
  a.end_ns = end;
  a.stream_id = 7;
  a.correlation_id = corr;
  a.grid[0] = 2, a.grid[1] = 2, a.grid[2] = 1;
  a.block[0] = 32, a.block[1] = 32, a.block[2] = 1;
  a.registers = 40;
  a.static_smem = 8192;
  a.variant_range = variant;
  return a;
}

// A synthetic run on the real Timeline: suite > case > variant > profile, and inside
// the profile range three traced runs of one kernel each (host clock: the GPU stamps are
// given on a clock 1e12 ns ahead, and the offset maps them back).
json synthetic_trace(int kernels, std::int64_t shift_last_ns = 0) {
  Timeline& t = Timeline::global();
  t.enable();
  const std::string vname = nvtx_variant_name("gemm", "tiled", shape(64));
  {
    NvtxRange suite("trace-test", NvtxPhase::suite);
    NvtxRange c(nvtx_case_name("square", "gemm", shape(64)), NvtxPhase::case_);
    NvtxRange v(vname, NvtxPhase::variant);
    { NvtxRange check("check", NvtxPhase::check); }
    NvtxRange profile("profile", NvtxPhase::profile);
    const std::int64_t offset = 1'000'000'000'000;
    std::vector<GpuActivity> gpu;
    std::vector<ApiCall> calls;
    const std::int64_t now = t.now_ns();
    for (int i = 0; i < kernels; ++i) {
      // Inside the profile range: it stays open until after this block's stamps.
      const std::int64_t s = now + 10 + 30 * i + (i == kernels - 1 ? shift_last_ns : 0);
      auto k = kernel(s, s + 20, 100 + i, vname);
      gpu.push_back(k);
      calls.push_back({"cudaLaunchKernel", s - 5, s - 2, static_cast<std::uint32_t>(100 + i)});
    }
    // What KernelTrace hands over is on the host clock already (it subtracts the
    // offset); add_gpu only keeps the offset for the record.
    t.add_gpu(gpu, calls, offset);
    // Keep the ranges open past the last kernel.
    while (t.now_ns() < now + 30 * kernels + 200) {
    }
  }
  t.disable();
  return t.to_chrome_trace();
}

std::size_t count_ph(const json& trace, const std::string& ph, const std::string& cat = "") {
  std::size_t n = 0;
  for (const auto& e : trace["traceEvents"])
    if (e.value("ph", "") == ph && (cat.empty() || e.value("cat", "") == cat)) ++n;
  return n;
}

TEST(Timeline, WritesRangesGpuTracksFlowsAndKernelArgs) {
  const json trace = synthetic_trace(3);
  EXPECT_EQ(count_ph(trace, "X", "suite"), 1u);
  EXPECT_EQ(count_ph(trace, "X", "case"), 1u);
  EXPECT_EQ(count_ph(trace, "X", "variant"), 1u);
  EXPECT_EQ(count_ph(trace, "X", "check"), 1u);
  EXPECT_EQ(count_ph(trace, "X", "profile"), 1u);
  EXPECT_EQ(count_ph(trace, "X", "kernel"), 3u);
  EXPECT_EQ(count_ph(trace, "X", "api"), 3u);
  EXPECT_EQ(count_ph(trace, "s"), 3u);
  EXPECT_EQ(count_ph(trace, "f"), 3u);
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") != "kernel") continue;
    EXPECT_EQ(e["pid"], 2);
    EXPECT_EQ(e["tid"], 7);
    EXPECT_EQ(e["args"]["grid"], json::array({2, 2, 1}));
    EXPECT_EQ(e["args"]["block"], json::array({32, 32, 1}));
    EXPECT_EQ(e["args"]["registers_per_thread"], 40);
    EXPECT_EQ(e["args"]["static_smem_bytes"], 8192);
    EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 0.02);  // 20 ns in microseconds
  }
  EXPECT_EQ(trace["otherData"]["clock_offsets_ns"], json::array({1'000'000'000'000}));
  bool stream_named = false;
  for (const auto& e : trace["traceEvents"])
    stream_named |= e.value("ph", "") == "M" && e["args"].value("name", "") == "stream 7";
  EXPECT_TRUE(stream_named);
}

TEST(TraceCheck, AcceptsAConsistentTrace) {
  const json trace = synthetic_trace(3);
  const TraceCheck c = check_trace(trace, report_with(1, 3));
  EXPECT_TRUE(c.ok()) << (c.problems.empty() ? "" : c.problems.front());
  EXPECT_EQ(c.kernels, 3u);
  EXPECT_EQ(c.flows, 3u);
  EXPECT_EQ(c.results_compared, 1u);
  EXPECT_EQ(c.ranges, 5u);
}

TEST(TraceCheck, CountsMustMatchTheBreakdown) {
  const json trace = synthetic_trace(3);
  const TraceCheck c = check_trace(trace, report_with(2, 3));  // the report says 6 launches
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.problems.front().find("3 kernels on the timeline, the report's breakdown counts 6"), std::string::npos)
      << c.problems.front();
}

TEST(TraceCheck, KernelOutsideItsVariantRange) {
  // The last kernel lands a second later than its launch: a bad clock offset.
  const json trace = synthetic_trace(3, 1'000'000'000);
  const TraceCheck c = check_trace(trace, report_with(1, 3));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.problems.front().find("lies outside its variant range"), std::string::npos) << c.problems.front();
}

TEST(TraceCheck, RangesThatDoNotNest) {
  const json events = json::array({
      {{"ph", "X"}, {"pid", 1}, {"tid", 1}, {"name", "s"}, {"cat", "suite"}, {"ts", 0}, {"dur", 100}},
      {{"ph", "X"}, {"pid", 1}, {"tid", 1}, {"name", "c"}, {"cat", "case"}, {"ts", 10}, {"dur", 50}},
      {{"ph", "X"}, {"pid", 1}, {"tid", 1}, {"name", "v"}, {"cat", "variant"}, {"ts", 40}, {"dur", 40}},  // past c
      {{"ph", "X"}, {"pid", 1}, {"tid", 1}, {"name", "t"}, {"cat", "timed"}, {"ts", 20}, {"dur", 5}},     // in c, not v
  });
  const TraceCheck c = check_trace({{"traceEvents", events}}, Report{});
  ASSERT_EQ(c.problems.size(), 2u);
  EXPECT_NE(c.problems[0].find("timed range 't' sits in a case range instead of a variant range"), std::string::npos)
      << c.problems[0];
  EXPECT_NE(c.problems[1].find("range 'v' [40.000, 80.000] us overlaps 'c'"), std::string::npos) << c.problems[1];
}

TEST(TraceCheck, FlowWithoutStartAndNotATrace) {
  const json events = json::array({{{"ph", "f"}, {"pid", 2}, {"tid", 1}, {"id", 5}, {"ts", 1}}});
  const TraceCheck c = check_trace({{"traceEvents", events}}, Report{});
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0], "flow 5 ends but never starts");
  EXPECT_FALSE(check_trace(json::object(), Report{}).ok());
}

TEST(TraceSetting, SuiteLevelJsonPathOnly) {
  const std::string cases = "cases:\n  - {name: a, problem: stream, params: {op: copy, n: 8}, variants: [cpu]}\n";
  auto parse = [](const std::string& yaml) { return parse_suite(yaml, "t.yaml", Registry::instance()); };
  EXPECT_EQ(parse("suite: t\nsettings: {trace: out/t.json}\n" + cases).trace, "out/t.json");
  EXPECT_EQ(parse("suite: t\n" + cases).trace, "");
  try {
    parse("suite: t\nsettings: {trace: t.txt}\n" + cases);
    FAIL() << "accepted a trace path without .json";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.yaml:2:19: 'trace' = 't.txt'"), std::string::npos) << e.what();
  }
  try {
    parse("suite: t\ncases:\n  - {name: a, problem: stream, params: {op: copy, n: 8}, settings: {trace: a.json}}\n");
    FAIL() << "accepted a case-level trace";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'trace' is a suite setting"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace harness
