// The one report model: a schema 1 baseline and the same results written as schema 2
// decode alike; parameter order round-trips; samples are written one array per line;
// compare and render work on the committed (schema 1) baselines.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "compare/compare.hpp"
#include "report/report.hpp"
#include "report/report_model.hpp"
#include "render/report_render.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using nlohmann::json;

const std::string kBaselines = HARNESS_SOURCE_DIR "/reports/baselines/h200/";

// The large committed baselines are .json.gz: read where the harness is built with zlib.
#if HARNESS_HAVE_ZLIB
#define SKIP_WITHOUT_ZLIB() (void)0
#else
#define SKIP_WITHOUT_ZLIB() GTEST_SKIP() << "built without zlib: the committed baseline is .json.gz"
#endif

std::vector<std::string> names_of(const Params& p) {
  std::vector<std::string> out;
  for (const auto& [n, v] : p.entries()) out.push_back(n);
  return out;
}

void expect_same_result(const Result& a, const Result& b) {
  SCOPED_TRACE(a.name);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.case_name, b.case_name);
  EXPECT_EQ(a.problem, b.problem);
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.params, b.params);  // values and order
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.reference, b.reference);
  EXPECT_EQ(a.work.flops, b.work.flops);
  EXPECT_EQ(a.work.bytes, b.work.bytes);
  EXPECT_EQ(a.gflops, b.gflops);
  EXPECT_EQ(a.gbytes_per_s, b.gbytes_per_s);
  EXPECT_EQ(a.intensity, b.intensity);
  EXPECT_EQ(a.io_device_bytes, b.io_device_bytes);
  EXPECT_EQ(a.workspace_peak_bytes, b.workspace_peak_bytes);
  EXPECT_EQ(a.settings.min_samples, b.settings.min_samples);
  EXPECT_EQ(a.settings.cache, b.settings.cache);
  ASSERT_EQ(a.check.has_value(), b.check.has_value());
  if (a.check) {
    EXPECT_EQ(a.check->passed, b.check->passed);
    EXPECT_EQ(a.check->elements, b.check->elements);
    EXPECT_EQ(a.check->max_abs_error, b.check->max_abs_error);
    EXPECT_EQ(a.check->rel_l2_error, b.check->rel_l2_error);
    EXPECT_EQ(a.check->tolerance.abs, b.check->tolerance.abs);
    EXPECT_EQ(a.check->worst, b.check->worst);
  }
  ASSERT_EQ(a.timing.has_value(), b.timing.has_value());
  if (a.timing) {
    EXPECT_EQ(a.timing->samples, b.timing->samples);
    EXPECT_EQ(a.timing->stats.count, b.timing->stats.count);
    EXPECT_EQ(a.timing->stats.median, b.timing->stats.median);
    EXPECT_EQ(a.timing->stats.mean, b.timing->stats.mean);
    EXPECT_EQ(a.timing->stats.rel_noise, b.timing->stats.rel_noise);
    EXPECT_EQ(a.timing->noise_reached, b.timing->noise_reached);
    EXPECT_EQ(a.timing->stop_reason, b.timing->stop_reason);
  }
  EXPECT_EQ(a.profile, b.profile);
  EXPECT_EQ(a.extra, b.extra);
}

TEST(ReportModel, SchemaOneBaselineAndRewrittenSchemaTwoDecodeAlike) {
  SKIP_WITHOUT_ZLIB();
  const Report v1 = read_report_model(kBaselines + "gemm.json.gz");
  EXPECT_EQ(v1.schema_version, 1);
  EXPECT_TRUE(v1.is_harness_report());
  ASSERT_FALSE(v1.results.empty());
  // Schema 1 has no param_order: the decoder takes the order from the result names.
  EXPECT_EQ(names_of(v1.results[0].params), (std::vector<std::string>{"M", "N", "K", "alpha", "beta"}));

  Suite suite;
  suite.name = v1.suite.name.value_or("");
  const std::string path = test::temp_path("model_v2.json");
  write_file_atomically(path, report_text(make_report(v1.environment.raw, suite, v1.results)));
  const Report v2 = read_report_model(path);
  EXPECT_EQ(v2.schema_version, kReportSchemaVersion);
  EXPECT_EQ(v2.environment.raw, v1.environment.raw);
  ASSERT_EQ(v2.results.size(), v1.results.size());
  for (std::size_t i = 0; i < v1.results.size(); ++i) expect_same_result(v1.results[i], v2.results[i]);
  std::remove(path.c_str());
}

TEST(ReportModel, ParameterOrderRoundTrips) {
  Result r;
  r.name = "attention/flash/seq_len:128/heads:8/dim:64/causal:true";
  r.problem = "attention";
  r.variant = "flash";
  r.params.set("seq_len", std::int64_t{128});
  r.params.set("heads", std::int64_t{8});
  r.params.set("dim", std::int64_t{64});
  r.params.set("causal", true);
  r.params.set("alpha", 0.5);
  r.status = Status::skipped;
  const json j = result_to_json(r);
  EXPECT_EQ(j["param_order"], json({"seq_len", "heads", "dim", "causal", "alpha"}));
  EXPECT_EQ(result_from_json(j).params, r.params);
  // Schema 1 (no param_order): the name's order, then the rest in key order.
  json v1 = j;
  v1.erase("param_order");
  EXPECT_EQ(names_of(result_from_json(v1).params),
            (std::vector<std::string>{"seq_len", "heads", "dim", "causal", "alpha"}));
}

TEST(ReportModel, SamplesAreOneLinePerArrayAndTheTextRoundTrips) {
  SKIP_WITHOUT_ZLIB();
  const Report v1 = read_report_model(kBaselines + "gemm.json.gz");
  Suite suite;
  const json report = make_report(v1.environment.raw, suite, v1.results);
  const std::string text = report_text(report);
  EXPECT_EQ(json::parse(text), report);
  std::istringstream in(text);
  std::string line;
  std::size_t sample_lines = 0;
  while (std::getline(in, line)) {
    if (line.find("\"samples_s\": [") == std::string::npos) continue;
    ++sample_lines;
    EXPECT_NE(line.find(']'), std::string::npos) << "samples_s spans lines: " << line.substr(0, 80);
  }
  EXPECT_EQ(sample_lines, v1.results.size());
  // Objects and arrays of objects stay indented like dump(2).
  EXPECT_NE(text.find("{\n  \"benchmarks\": [\n    {\n"), std::string::npos);
  EXPECT_EQ(report_text(json::object()), "{}\n");
}

TEST(ReportModel, CompareAndRenderReadTheSchemaOneBaselines) {
  SKIP_WITHOUT_ZLIB();
  const Report gemm = read_report_model(kBaselines + "gemm.json.gz");
  const Comparison c = compare(gemm, gemm, {});
  ASSERT_EQ(c.pairs.size(), gemm.results.size());
  for (const auto& p : c.pairs) EXPECT_EQ(p.verdict, Verdict::same) << p.name;
  EXPECT_FALSE(c.regression);
  const std::string md = render_report(gemm, "md");
  EXPECT_NE(md.find("| variant | M | N | K | alpha | beta | status |"), std::string::npos);
  for (const char* name : {"attention-memory.json", "attention-target.json", "transformer.json", "pytorch-transformer.json"}) {
    const Report r = read_report_model(kBaselines + name);
    EXPECT_TRUE(r.errors.empty()) << name;
    EXPECT_FALSE(render_report(r, "html").empty()) << name;
    EXPECT_FALSE(compare(r, r, {}).regression) << name;
  }
}

TEST(ReportModel, GoogleBenchmarkJsonBecomesResults) {
  const json g = {{"context", {{"date", "d"}, {"host_name", "h"}}},
                  {"benchmarks",
                   {{{"name", "BM_X/8"}, {"run_type", "iteration"}, {"real_time", 2.0}, {"time_unit", "ms"}},
                    {{"name", "BM_X/8"}, {"run_type", "iteration"}, {"real_time", 4.0}, {"time_unit", "ms"}}}}};
  const Report r = decode_report(g, "g.json");
  EXPECT_EQ(r.format, kGoogleBenchmarkFormat);
  EXPECT_EQ(r.environment.host.value_or(""), "h");
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_EQ(r.results[0].status, Status::passed);
  ASSERT_TRUE(r.results[0].timing);
  EXPECT_DOUBLE_EQ(r.results[0].timing->stats.median, 3e-3);
}

}  // namespace
}  // namespace harness
