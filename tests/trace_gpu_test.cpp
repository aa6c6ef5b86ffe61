// `harness run suites/trace.yaml --trace`: on a GPU, the timeline of a real run must pass
// check_trace against the report of the same run (nesting, kernels inside their variant
// ranges after the clock alignment, kernel counts equal to the breakdown, flows), and
// every profiled cuda result keeps its compact kernel timeline for the HTML report.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "report/trace_check.hpp"
#include "report/report_model.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using nlohmann::json;

std::string fmt_command(const std::string& dir, const std::string& report, const std::string& trace) {
  return "mkdir -p '" + dir + "' && '" HARNESS_EXE "' run suites/trace.yaml --quiet --metrics none --out '" + report +
         "' --trace '" + trace + "'";
}

// GPU: a real run with --trace; the trace must pass the checker against its own report.
TEST(TraceGpu, SuiteRunWithTraceIsConsistent) {
  if (!test::have_device()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = HARNESS_BINARY_DIR "/trace_gpu_test";
  const std::string report = dir + "/trace.json", trace = dir + "/timeline.json";
  const auto r = test::run_command(fmt_command(dir, report, trace));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Report rep = read_report_model(report);
  const json t = json::parse(test::read_file(trace));
  const TraceCheck c = check_trace(t, rep);
  for (const auto& p : c.problems) ADD_FAILURE() << p;
  EXPECT_GT(c.kernels, 0u);
  EXPECT_GT(c.results_compared, 0u);
  EXPECT_GE(c.flows, c.kernels);  // each kernel has its launch call
  for (const Result& res : rep.results) {
    if (res.status != Status::passed || res.backend != "cuda") continue;
    EXPECT_TRUE(res.profile["kernels"].contains("timeline")) << res.name;
  }
}

}  // namespace
}  // namespace harness
