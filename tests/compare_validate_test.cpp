// harness validate: the JSON Schema subset, reports/schema.json, and the report checks.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/error.hpp"
#include "report/schema_validate.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using nlohmann::json;

const std::string kReports = HARNESS_SOURCE_DIR "/tests/data/reports/";

std::vector<std::string> messages(const std::vector<SchemaIssue>& issues) {
  std::vector<std::string> out;
  for (const auto& i : issues) out.push_back(format_issue(i));
  return out;
}

TEST(SchemaValidator, TypesRequiredEnumsConstMinimumItemsRefs) {
  const SchemaValidator v(json::parse(R"({
    "type": "object",
    "required": ["a", "b"],
    "properties": {
      "a": {"type": "integer", "minimum": 0},
      "b": {"enum": ["x", "y"]},
      "c": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/item"}},
      "d": {"const": 1},
      "e": {"type": ["string", "null"]}
    },
    "additionalProperties": {"type": "number"},
    "$defs": {"item": {"type": "object", "required": ["k"], "properties": {"k": {"type": "number"}}}}
  })"));
  EXPECT_TRUE(v.validate(json::parse(R"({"a": 1, "b": "x", "c": [{"k": 1.5}], "d": 1, "e": null, "z": 3})")).empty());
  EXPECT_TRUE(v.validate(json::parse(R"({"a": 1.0, "b": "y"})")).empty()) << "1.0 is an integer";
  const auto m = messages(v.validate(json::parse(
      R"({"a": -1, "b": "q", "c": [{"k": "s"}, {}], "d": 2, "e": 5, "z": "no"})")));
  const std::vector<std::string> expected = {
      "a: -1 is below the minimum 0",
      "b: \"q\" is not one of x, y",
      "c[0].k: expected number, got string",
      "c[1]: missing required key 'k'",
      "d: expected 1, got 2",
      "e: expected string or null, got integer",
      "z: expected number, got string",
  };
  EXPECT_EQ(m, expected);
  EXPECT_EQ(messages(v.validate(json::parse(R"({"a": 0.5})"))),
            (std::vector<std::string>{"missing required key 'b'", "a: expected integer, got number"}));
  EXPECT_EQ(messages(v.validate(json::array())), std::vector<std::string>{"expected object, got array"});
  EXPECT_EQ(messages(v.validate(json::parse(R"({"a": 1, "b": "x", "c": []})"))),
            std::vector<std::string>{"c: expected at least 1 items, got 0"});
}

TEST(SchemaValidator, RejectsKeywordsItDoesNotImplement) {
  EXPECT_THROW(SchemaValidator(json::parse(R"({"type": "object", "patternProperties": {}})")), InputError);
  EXPECT_THROW(SchemaValidator(json::parse(R"({"$ref": "#/$defs/missing"})")), InputError);
  EXPECT_THROW(SchemaValidator(json::parse(R"({"$ref": "http://example.com/s.json"})")), InputError);
  EXPECT_THROW(SchemaValidator(json::parse(R"({"type": "float"})")), InputError);
  EXPECT_NO_THROW(SchemaValidator(json::parse(R"({"title": "t", "description": "d", "x-anything": 1})")));
}

TEST(SchemaValidator, IssuesAreCapped) {
  const SchemaValidator v(json::parse(R"({"type": "array", "items": {"type": "string"}})"));
  EXPECT_EQ(v.validate(json(std::vector<int>(100, 1)), 10).size(), 10u);
}

TEST(ReportSchema, ShippedFileIsTheEmbeddedOne) {
  const json on_disk = json::parse(test::read_file(HARNESS_SOURCE_DIR "/reports/schema.json"));
  EXPECT_EQ(on_disk, embedded_report_schema()) << "rebuild: reports/schema.json changed";
  EXPECT_EQ(on_disk["x-harness-schema-version"], 2);
  EXPECT_EQ(on_disk["properties"]["schema_version"]["enum"], json({1, 2}));  // version 1 reports stay valid
  EXPECT_NO_THROW(SchemaValidator{on_disk});
}

TEST(ReportSchema, SyntheticReportsAreValid) {
  for (const char* name : {"gemm_base.json", "gemm_rerun.json", "gemm_slow.json", "gemm_failed.json",
                           "gemm_changed.json", "gemm_other_gpu.json"}) {
    const ReportValidation v = validate_report_file(kReports + name);
    EXPECT_TRUE(v.ok()) << name << ": " << (v.issues.empty() ? "" : format_issue(v.issues[0]));
    EXPECT_EQ(v.schema_version, 1);
    EXPECT_GT(v.results, 0u);
  }
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = test::temp_path(name);
  std::ofstream(path) << text;
  return path;
}

TEST(ReportSchema, ViolationsAreFound) {
  json r = json::parse(test::read_file(kReports + "gemm_base.json"));
  r["results"][0]["status"] = "done";
  r["results"][1].erase("stats");
  r["results"][2]["samples_s"][0] = "fast";
  r["results"][3]["memory"]["workspace_peak_bytes"] = -5;
  r["environment"].erase("gpu");
  const ReportValidation v = validate_report_file(write_temp("bad.json", r.dump()));
  const auto m = messages(v.issues);
  const std::vector<std::string> expected = {
      "environment: missing required key 'gpu'",
      "results[0].status: \"done\" is not one of passed, failed, skipped, error, crashed, timeout",
      "results[1]: missing required key 'stats'",
      "results[2].samples_s[0]: expected number, got string",
      "results[3].memory.workspace_peak_bytes: -5 is below the minimum 0",
  };
  EXPECT_EQ(m, expected);
}

// The integrity record of issue 33 (re-check, roof, timed region): optional, typed.
TEST(ReportSchema, IntegrityFieldsAreTyped) {
  json r = json::parse(test::read_file(kReports + "gemm_base.json"));
  r["results"][0]["integrity"] = {{"recheck", "passed"}, {"suspicious", true}, {"suspicious_reason", "why"},
                                  {"outside_timed_region", false}, {"roof_time_s", 1e-6}};
  r["results"][1]["integrity"] = {{"recheck", "maybe"}, {"suspicious", "yes"}, {"outside_timed_region", false}};
  r["results"][2]["integrity"] = {{"recheck", "failed"}, {"suspicious", false}};
  const auto m = messages(validate_report_file(write_temp("integrity.json", r.dump())).issues);
  const std::vector<std::string> expected = {
      "results[1].integrity.recheck: \"maybe\" is not one of passed, failed, not_run",
      "results[1].integrity.suspicious: expected boolean, got string",
      "results[2].integrity: missing required key 'outside_timed_region'",
  };
  EXPECT_EQ(m, expected);
}

TEST(ReportSchema, ConsistencyOfSummaryAndSampleCounts) {
  json r = json::parse(test::read_file(kReports + "gemm_base.json"));
  r["summary"]["passed"] = 1;
  r["results"][0]["stats"]["count"] = 3;
  const auto m = messages(validate_report_file(write_temp("inconsistent.json", r.dump())).issues);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NE(m[0].find("summary.passed: says 1, but 34 results have status 'passed'"), std::string::npos) << m[0];
  EXPECT_NE(m[1].find("results[0].stats.count: says 3, but samples_s holds 30 samples"), std::string::npos) << m[1];
}

TEST(ReportSchema, NewerVersionTruncatedAndForeignFilesAreClearErrors) {
  json r = json::parse(test::read_file(kReports + "gemm_base.json"));
  r["schema_version"] = 3;
  auto message = [](const std::string& path) {
    try {
      validate_report_file(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string newer = message(write_temp("newer.json", r.dump()));
  EXPECT_NE(newer.find("schema version 3 is newer"), std::string::npos) << newer;
  const std::string text = test::read_file(kReports + "gemm_base.json");
  const std::string truncated = message(write_temp("truncated.json", text.substr(0, text.size() / 2)));
  EXPECT_NE(truncated.find("truncated"), std::string::npos) << truncated;
  EXPECT_EQ(truncated.find('\n'), std::string::npos) << "one line";
  EXPECT_NE(message(kReports + "gbench_base.json").find("not a harness report"), std::string::npos);
  EXPECT_NE(message(kReports + "no_such_file.json").find("cannot open"), std::string::npos);
  // A schema file that is older than the report is an error too.
  json old_schema = embedded_report_schema();
  old_schema["x-harness-schema-version"] = 0;
  const std::string schema_path = write_temp("old_schema.json", old_schema.dump());
  try {
    validate_report_file(kReports + "gemm_base.json", schema_path);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("newer than the schema"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace harness
