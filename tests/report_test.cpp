#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "harness/error.hpp"
#include "measure/stats.hpp"
#include "report/report.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

Result sample_result() {
  Result r;
  r.name = "stream/cpu/op:copy/n:8";
  r.case_name = "c";
  r.problem = "stream";
  r.variant = "cpu";
  r.backend = "cpu";
  r.params.set("op", std::string("copy"));
  r.params.set("n", std::int64_t{8});
  r.status = Status::passed;
  r.work = {0, 64};
  CheckResult c;
  c.passed = true;
  c.elements = 8;
  r.check = c;
  Timing t;
  t.samples = {1e-6, 2e-6, 3e-6};
  t.stats = compute_stats(t.samples);
  t.stop_reason = "converged";
  r.timing = t;
  r.gbytes_per_s = 64 / 2e-6 * 1e-9;
  return r;
}

TEST(Report, RoundTripThroughAnAtomicWrite) {
  Suite suite;
  suite.name = "s";
  const auto report = make_report({{"date", "x"}, {"host", "h"}}, suite, {sample_result()});
  const std::string path = test::temp_path("report.json");
  write_file_atomically(path, report.dump(2));
  const auto back = read_report(path);
  EXPECT_EQ(back["schema"], kReportSchema);
  EXPECT_EQ(back["schema_version"], kReportSchemaVersion);
  ASSERT_EQ(back["results"].size(), 1u);
  const auto& r = back["results"][0];
  EXPECT_EQ(r["status"], "passed");
  EXPECT_EQ(r["params"]["n"], 8);
  EXPECT_EQ(r["samples_s"].size(), 3u);
  EXPECT_DOUBLE_EQ(r["stats"]["median_s"].get<double>(), 2e-6);
  EXPECT_EQ(back["summary"]["passed"], 1);
  // Google Benchmark-compatible aggregates.
  bool median_found = false;
  for (const auto& b : back["benchmarks"])
    if (b["aggregate_name"] == "median") {
      median_found = true;
      EXPECT_EQ(b["run_name"], "stream/cpu/op:copy/n:8");
      EXPECT_DOUBLE_EQ(b["real_time"].get<double>(), 2000.0);
      EXPECT_EQ(b["time_unit"], "ns");
    }
  EXPECT_TRUE(median_found);
  std::remove(path.c_str());
}

std::string read_error(const std::string& text) {
  const std::string path = test::temp_path("bad.json");
  write_file_atomically(path, text);
  try {
    read_report(path);
  } catch (const InputError& e) {
    std::remove(path.c_str());
    std::string msg = e.what();
    return msg.substr(path.size() + 2);
  }
  std::remove(path.c_str());
  return "(no error)";
}

TEST(Report, BadReportsAreClearErrors) {
  EXPECT_EQ(read_error(R"({"schema": "harness-report", "schema_version": 99, "results": []})"),
            "report schema version 99 is newer than this harness understands (2); update the harness");
  EXPECT_NE(read_error(R"({"schema": "harness-report", "schema_vers)").find("not valid JSON (truncated or corrupt?)"),
            std::string::npos);
  EXPECT_EQ(read_error(R"({"schema": "other"})"), "not a harness report (schema 'other')");
  // A gzip header with nothing after it: truncated, said as such (or, built without zlib,
  // how to decompress it), never "not valid JSON".
  const std::string gz = read_error(std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8));
#if HARNESS_HAVE_ZLIB
  EXPECT_EQ(gz.rfind("gzip-compressed but ", 0), 0u) << gz;
  EXPECT_NE(gz.find("(truncated or corrupt?)"), std::string::npos) << gz;
#else
  EXPECT_EQ(gz.rfind("gzip-compressed, and this harness was built without zlib: decompress it first (gunzip -k ", 0),
            0u) << gz;
#endif
  EXPECT_EQ(read_error(R"({"schema": "harness-report", "schema_version": 1})"), "report has no 'results' array");
}

// Reports kept gzip-compressed (as reports/baselines keeps them) read as they are: one member,
// two members concatenated (cat a.gz b.gz), and a stream cut short is a located error.
TEST(Report, GzipCompressedReportsReadAsTheyAre) {
#if !HARNESS_HAVE_ZLIB
  GTEST_SKIP() << "built without zlib: gzip-compressed reports are an error that says how to decompress them";
#else
  Suite suite;
  suite.name = "s";
  const std::string text = make_report({{"date", "x"}, {"host", "h"}}, suite, {sample_result()}).dump(2);
  const std::string path = test::temp_path("report_gz.json");
  write_file_atomically(path, text);
  ASSERT_EQ(std::system(("gzip -f -n " + path).c_str()), 0);
  const std::string gz = path + ".gz";
  const auto back = read_report(gz);
  EXPECT_EQ(back["results"][0]["status"], "passed");
  const std::string plain = test::temp_path("report_plain.json");
  write_file_atomically(plain, text);
  EXPECT_EQ(back.dump(), read_report(plain).dump());

  // The same report split in two gzip members: inflated whole.
  const std::string half1 = test::temp_path("half1"), half2 = test::temp_path("half2");
  write_file_atomically(half1, text.substr(0, text.size() / 2));
  write_file_atomically(half2, text.substr(text.size() / 2));
  const std::string two = test::temp_path("two_members.json.gz");
  ASSERT_EQ(std::system(("gzip -c -n " + half1 + " > " + two + " && gzip -c -n " + half2 + " >> " + two).c_str()), 0);
  EXPECT_EQ(read_report(two).dump(), back.dump());

  // Cut short: the error names the file and says what is wrong.
  const std::string bytes = test::read_file(gz);
  const std::string cut = test::temp_path("cut.json.gz");
  write_file_atomically(cut, bytes.substr(0, bytes.size() / 2));
  try {
    read_report(cut);
    ADD_FAILURE() << "a truncated gzip stream was read";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(cut + ": gzip-compressed but ", 0), 0u) << msg;
  }
  for (const auto& p : {gz, plain, half1, half2, two, cut}) std::remove(p.c_str());
#endif
}

TEST(Report, UnwritablePathIsAnInputError) {
  EXPECT_THROW(write_file_atomically("/proc/no/such/dir/report.json", "{}"), InputError);
}

TEST(Journal, AppendsOneLinePerResult) {
  const std::string path = test::temp_path("journal.jsonl");
  {
    Journal j(path);
    j.append(result_to_json(sample_result()));
    j.append(result_to_json(sample_result()));
  }
  const std::string text = test::read_file(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(nlohmann::json::parse(text.substr(0, text.find('\n')))["variant"], "cpu");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace harness
