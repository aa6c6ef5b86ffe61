// Hostile inputs beyond syntax (issue 8): sizes whose byte counts overflow 64-bit
// arithmetic, zero and negative dimensions, sweeps that explode, keys that are not names,
// truncated and wrong-schema reports. Each is one clear line and the documented exit code
// (2: bad input, nothing run), never a crash, a wrapped size or an exception of a library.
// The files live in tests/data/hostile/ and seed the fuzzers (tests/fuzz/).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "compare/compare.hpp"
#include "harness/checked.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "report/report.hpp"
#include "render/report_render.hpp"
#include "report/schema_validate.hpp"
#include "suite/suite.hpp"
#include "test_support.hpp"

namespace harness {
namespace {

using test::run_command;

const std::string kExe = HARNESS_EXE;
const std::string kHostile = HARNESS_SOURCE_DIR "/tests/data/hostile/";
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }
std::size_t lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

// A problem with unbounded parameters, as a plugin may declare them: the suite loader's
// sweep arithmetic must hold at the ends of int64.
class UnboundedProblem final : public Problem {
 public:
  std::string name() const override { return "hostile_unbounded"; }
  std::string description() const override { return "unbounded parameters (hostile_test)"; }
  std::vector<ParamSpec> params() const override {
    return {int_param("i", 1, std::nullopt, std::nullopt, "any integer"),
            float_param("x", 1.0, std::nullopt, std::nullopt, "any number")};
  }
  std::unique_ptr<Instance> make_instance(const Params&, std::uint64_t) const override { return nullptr; }
  Work work(const Params&) const override { return {}; }
  Tolerance tolerance(const Params&) const override { return {}; }
  std::string reference_variant(const Params&) const override { return "cpu"; }
};
HARNESS_REGISTER_PROBLEM(UnboundedProblem);
HARNESS_REGISTER_VARIANT(hostile_unbounded, cpu, cpu, "does nothing", [](Instance&, LaunchContext&) {});

std::string load_error(const std::string& file) {
  try {
    load_suite(kHostile + "suites/" + file, Registry::instance());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

Suite parse(const std::string& yaml) { return parse_suite(yaml, "t.yaml", Registry::instance()); }
std::string parse_error(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

Params with(const std::string& problem, std::initializer_list<std::pair<const char*, ParamValue>> values) {
  Params p;
  for (const auto& [k, v] : values) p.set(k, v);
  return with_defaults(Registry::instance().find_problem(problem)->params(), p);
}

const Problem& problem(const std::string& name) { return *Registry::instance().find_problem(name); }
const Variant& variant(const std::string& p, const std::string& v) { return *Registry::instance().find_variant(p, v); }

// ---- checked arithmetic ---------------------------------------------------------------

TEST(Checked, ProductsAndSumsThatDoNotFitAreEmpty) {
  EXPECT_EQ(checked_mul(std::int64_t{1} << 31, std::int64_t{1} << 31), std::size_t{1} << 62);
  EXPECT_FALSE(checked_mul(std::size_t{1} << 32, std::size_t{1} << 32));
  EXPECT_FALSE(checked_mul(-1, 4));
  EXPECT_EQ(checked_mul(0, kInt64Max), 0u);
  EXPECT_FALSE(checked_add(std::numeric_limits<std::size_t>::max(), 1));
  EXPECT_EQ(checked_product(2147483647, 2147483647, 2), std::size_t{2147483647} * 2147483647u * 2u);
  EXPECT_FALSE(checked_product(2147483647, 2147483647, 2147483647));
  EXPECT_EQ(checked_product(), 1u);
  try {
    (void)size_product("gemm A", 2147483647, 2147483647, 2147483647);
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "size overflows 64-bit arithmetic: gemm A");
  }
  EXPECT_THROW((void)size_sum("x", std::numeric_limits<std::size_t>::max(), 1), InputError);
}

// ---- sizes whose byte counts overflow -----------------------------------------------------

TEST(Overflow, GemmAtIntMaxIsRefusedByTheRangeAndItsByteCountNeverWraps) {
  EXPECT_EQ(load_error("gemm_int_max.yaml"),
            kHostile + "suites/gemm_int_max.yaml:5:17: value 2147483647 of 'M' is out of range: expected integer in [1, 131072]");
  // Past the range check (a caller of the Problem API): an error, not a wrapped size.
  const Params p = with("gemm", {{"M", std::int64_t{2147483647}}, {"N", std::int64_t{2147483647}}, {"K", std::int64_t{2147483647}}});
  EXPECT_THROW((void)memory_need(problem("gemm"), p), InputError);
  EXPECT_EQ(problem("gemm").reject(p).value_or(""), "a matrix would exceed 2^34 elements (64 GiB)");
  const Work w = problem("gemm").work(p);  // in double: large, finite
  EXPECT_GT(w.flops, 1e28);
  // The largest accepted shape has an exact byte count.
  const Params big = with("gemm", {{"M", std::int64_t{131072}}, {"N", std::int64_t{131072}}, {"K", std::int64_t{131072}}});
  EXPECT_EQ(memory_need(problem("gemm"), big).device, std::size_t{3} * 131072 * 131072 * 4);
}

TEST(Overflow, StreamSizesBeyondInt64OrTheRangeAreOneLine) {
  EXPECT_EQ(load_error("stream_huge.yaml"),
            kHostile + "suites/stream_huge.yaml:4:17: 'n' expects an integer, got '99999999999999999999'");
  EXPECT_EQ(load_error("stream_above_range.yaml"),
            kHostile + "suites/stream_above_range.yaml:4:17: value 9223372036854775807 of 'n' is out of range: expected "
                       "integer in [1, 17179869184]");
  EXPECT_THROW((void)memory_need(problem("stream"), with("stream", {{"n", kInt64Max}})), InputError);
  EXPECT_EQ(memory_need(problem("stream"), with("stream", {{"n", std::int64_t{1} << 34}})).device, std::size_t{12} << 34);
}

TEST(Overflow, AttentionNaiveScoresPastTwoToTheSixtyFourAreRefusedAtLoad) {
  const std::string e = load_error("attention_overflow.yaml");
  EXPECT_TRUE(has(e, "attention_overflow.yaml:6:13: size overflows 64-bit arithmetic: naive attention workspace")) << e;
  EXPECT_TRUE(has(e, "(batch=1 heads=16384 kv_heads=0 seq_len=16777216 head_dim=4")) << e;
  EXPECT_EQ(lines(e), 0u);
  // The workspace functions themselves throw rather than wrap.
  const Params p = with("attention", {{"heads", std::int64_t{16384}}, {"seq_len", std::int64_t{16777216}},
                                      {"head_dim", std::int64_t{4}}});
  EXPECT_THROW((void)variant("attention", "naive").workspace_bytes(p), InputError);
  EXPECT_THROW((void)variant("attention_backward", "naive").workspace_bytes(p), InputError);
  // One step below: exact.
  const Params q = with("attention", {{"heads", std::int64_t{8192}}, {"seq_len", std::int64_t{16777216}},
                                      {"head_dim", std::int64_t{4}}});
  EXPECT_EQ(variant("attention", "naive").workspace_bytes(q), std::size_t{1} << 63);
  EXPECT_FALSE(problem("attention").reject(q).has_value());
  EXPECT_TRUE(problem("attention_backward").reject(q).has_value());  // twice the scores
}

TEST(Overflow, TransformerActivationsPastTwoToTheSixtyFourAreRefusedAtLoad) {
  const std::string e = load_error("transformer_overflow.yaml");
  EXPECT_TRUE(has(e, "transformer_overflow.yaml:4:13: size overflows 64-bit arithmetic: train_transformer activations")) << e;
  const Params p = with("train_transformer", {{"batch", std::int64_t{1} << 20}, {"seq_len", std::int64_t{1} << 20},
                                              {"heads", std::int64_t{1024}}, {"d_model", std::int64_t{1024}}});
  EXPECT_THROW((void)variant("train_transformer", "naive_attention").workspace_bytes(p), InputError);
}

// ---- zero and negative dimensions ---------------------------------------------------------

TEST(Dimensions, ZeroAndNegativeAreOutOfRange) {
  EXPECT_EQ(load_error("gemm_zero.yaml"),
            kHostile + "suites/gemm_zero.yaml:4:24: value 0 of 'N' is out of range: expected integer in [1, 131072]");
  EXPECT_EQ(load_error("gemm_negative.yaml"),
            kHostile + "suites/gemm_negative.yaml:4:31: value -64 of 'K' is out of range: expected integer in [1, 131072]");
  EXPECT_EQ(load_error("attention_zero_seq.yaml"),
            kHostile + "suites/attention_zero_seq.yaml:4:23: value 0 of 'seq_len' is out of range: expected integer in [1, 16777216]");
  // Past the range check: reject() says so rather than computing with them.
  EXPECT_EQ(problem("gemm").reject(with("gemm", {{"M", std::int64_t{0}}})).value_or(""), "M, N, K must be >= 1 (M=0 N=1024 K=1024)");
  EXPECT_TRUE(problem("attention").reject(with("attention", {{"seq_len", std::int64_t{-1}}})).has_value());
  EXPECT_THROW((void)memory_need(problem("stream"), with("stream", {{"n", std::int64_t{-1}}})), InputError);
}

// ---- sweeps -------------------------------------------------------------------------------

TEST(Sweeps, AnExplodingCartesianProductIsRefusedBeforeItIsBuilt) {
  EXPECT_EQ(load_error("sweep_explosion.yaml"),
            kHostile + "suites/sweep_explosion.yaml:5:13: the parameter sweep expands to more than 100000 cases");
  const std::string e = load_error("alias_bomb.yaml");
  EXPECT_TRUE(has(e, "the suite expands to more than 100000 cases")) << e;
}

TEST(Sweeps, RangesAndPowersOfTwoAtTheEndsOfInt64) {
  // start + step past int64: one value (this was a signed overflow).
  const Suite s = load_suite(kHostile + "suites/range_step_overflow.yaml", Registry::instance());
  ASSERT_EQ(s.cases.size(), 1u);
  EXPECT_EQ(s.cases[0].params.get_int("warmup_steps"), 1);
  // The whole int64 span: refused by its count, without computing stop - start in int64.
  EXPECT_TRUE(has(parse_error("cases: [{problem: hostile_unbounded, params: {i: {range: [-9223372036854775808, 9223372036854775807]}}}]"),
                  "has more than 100000 values"));
  auto values = [](const std::string& sweep) {
    std::vector<std::int64_t> out;
    for (const auto& c : parse("cases: [{problem: hostile_unbounded, params: {i: " + sweep + "}}]").cases)
      out.push_back(c.params.get_int("i"));
    return out;
  };
  EXPECT_EQ(values("{range: [9223372036854775800, 9223372036854775807, 5]}"),
            (std::vector<std::int64_t>{9223372036854775800, 9223372036854775805}));
  EXPECT_EQ(values("{range: [-9223372036854775808, -9223372036854775807, 9223372036854775807]}"),
            (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min()}));
  EXPECT_EQ(values("{pow2: [2305843009213693952, 4611686018427387904]}"),
            (std::vector<std::int64_t>{std::int64_t{1} << 61, std::int64_t{1} << 62}));
  EXPECT_TRUE(has(parse_error("cases: [{problem: hostile_unbounded, params: {x: {range: [-1e308, 1e308, 1e-300]}}}]"),
                  "has more than 100000 values"));
}

// ---- keys that are not names ----------------------------------------------------------------

TEST(Keys, AListOrMapAsAKeyIsALocatedError) {
  EXPECT_EQ(load_error("list_key.yaml"), kHostile + "suites/list_key.yaml:5:7: a key must be a plain name, not a list or a map");
  EXPECT_EQ(load_error("map_key_sweep.yaml"),
            kHostile + "suites/map_key_sweep.yaml:4:18: a key must be a plain name, not a list or a map");
  EXPECT_TRUE(has(parse_error("{[a]: 1}"), "t.yaml:1:2: a key must be a plain name"));
  EXPECT_TRUE(has(parse_error("cases: [{problem: stream, params: {{n: 1}: 5}}]"), "a key must be a plain name"));
}

TEST(Keys, DeepNestingIsAnErrorWithoutExhaustingTheStack) {
  EXPECT_TRUE(has(load_error("deep_nesting.yaml"), "deep_nesting.yaml:3:9: each case is a map")) << load_error("deep_nesting.yaml");
  // Beyond yaml-cpp's depth limit: its DeepRecursion, a located syntax error.
  EXPECT_TRUE(has(load_error("deeper_nesting.yaml"), "deeper_nesting.yaml:3:")) << load_error("deeper_nesting.yaml");
  EXPECT_TRUE(has(load_error("deeper_nesting.yaml"), "YAML syntax error")) << load_error("deeper_nesting.yaml");
}

// Every hostile suite: InputError or a suite, nothing else (the fuzz target's contract).
TEST(Keys, EveryHostileSuiteIsAnInputErrorOrLoads) {
  for (const auto& f : std::filesystem::directory_iterator(kHostile + "suites")) {
    try {
      load_suite(f.path().string(), Registry::instance());
    } catch (const InputError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << f.path() << ": " << e.what();
    }
  }
}

// ---- reports --------------------------------------------------------------------------------

std::string report(const std::string& name) { return kHostile + "reports/" + name; }

TEST(Reports, ReadReportRefusesWhatIsNotAReport) {
  auto error_of = [](const std::string& name) -> std::string {
    try {
      read_report(report(name));
    } catch (const InputError& e) {
      return e.what();
    } catch (const std::exception& e) {
      return std::string("wrong exception: ") + e.what();
    }
    return "(no error)";
  };
  EXPECT_TRUE(has(error_of("truncated.json"), "not valid JSON (truncated or corrupt?)"));
  EXPECT_TRUE(has(error_of("wrong_schema.json"), "not a harness report (schema 'some-other-report')"));
  EXPECT_TRUE(has(error_of("schema_number.json"), "not a harness report ('schema' is not a string)"));
  EXPECT_TRUE(has(error_of("schema_version_string.json"), "report has no valid schema_version"));
  EXPECT_TRUE(has(error_of("newer_version.json"), "report schema version 99 is newer than this harness understands (2)"));
  EXPECT_TRUE(has(error_of("results_not_array.json"), "report has no 'results' array"));
  EXPECT_TRUE(has(error_of("deep_nesting.json"), "JSON nested deeper than 128 levels"));
  EXPECT_TRUE(has(error_of("not_json.json"), "not valid JSON"));
  // Found by fuzz_report: a number beyond double is nlohmann's out_of_range (not a
  // parse_error), which escaped as a library exception (harness validate: exit 1).
  EXPECT_EQ(error_of("number_overflow.json"),
            report("number_overflow.json") + ": not valid JSON (corrupt?): number overflow parsing '0.0001444631e308499'");
  EXPECT_TRUE(has(error_of("empty.json"), "not valid JSON"));
  EXPECT_EQ(error_of("small_valid.json"), "(no error)");
  EXPECT_EQ(error_of("wrong_types.json"), "(no error)");  // a report; wrong inside (validate says where)
}

TEST(Reports, CompareLoaderAndRendererTakeWrongTypesWithoutLibraryExceptions) {
  const auto wrong = read_report(report("wrong_types.json"));
  const Report set = decode_report(wrong, "wrong_types.json");
  EXPECT_EQ(set.results.size(), 2u);
  EXPECT_EQ(compare(set, set, {}).pairs.size(), 2u);
  const std::string md = render_report(set, "md");
  EXPECT_TRUE(has(md, "1e+300 cases")) << md.substr(0, 400);
  try {
    decode_report(read_report(report("gbench_wrong_types.json")), "g.json");
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "g.json: benchmark 'BM_B' has no numeric real_time");
  }
  const Report not_objects = decode_report(read_report(report("results_not_objects.json")), "r.json");
  EXPECT_FALSE(not_objects.errors.empty());
  EXPECT_THROW(compare(not_objects, not_objects, {}), InputError);
}

// `harness compare`, `harness validate` and `harness report` on each broken report: exit 2
// and one line on standard error.
TEST(ReportsCli, BrokenReportsAreExit2AndOneLine) {
  const std::string good = report("small_valid.json");
  for (const char* name : {"truncated.json", "wrong_schema.json", "schema_number.json", "schema_version_string.json",
                           "newer_version.json", "results_not_array.json", "gbench_wrong_types.json",
                           "deep_nesting.json", "not_json.json", "empty.json", "number_overflow.json"}) {
    for (const std::string& command : {kExe + " compare " + good + " " + report(name),
                                      kExe + " compare " + report(name) + " " + good,
                                      kExe + " validate " + report(name), kExe + " report " + report(name)}) {
      const auto r = run_command(command);
      EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
      EXPECT_EQ(lines(r.output), 1u) << command << "\n" << r.output;
      EXPECT_TRUE(has(r.output, "harness: error: ")) << command << "\n" << r.output;
    }
  }
}

TEST(ReportsCli, ResultsThatAreNotObjects) {
  const std::string bad = report("results_not_objects.json");
  auto r = run_command(kExe + " compare " + bad + " " + report("small_valid.json"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, "harness: error: " + bad + ": results[0] is not an object\n");
  r = run_command(kExe + " validate " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r.output, bad + ": results[0]: expected object, got integer")) << r.output;
  r = run_command(kExe + " report " + bad);  // renders what there is: no results
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "0 results: 0 passed")) << r.output;
}

TEST(ReportsCli, WrongTypesInsideAReportAreSchemaIssuesForValidate) {
  auto r = run_command(kExe + " validate " + report("wrong_types.json"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r.output, "results[0].name: expected string")) << r.output;
  r = run_command(kExe + " validate " + report("small_valid.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_command(kExe + " compare " + report("small_valid.json") + " " + report("small_valid.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// ---- the CLI on hostile suites ----------------------------------------------------------------

TEST(SuitesCli, HostileSuitesAreExit2AndOneLineBeforeAnyWork) {
  for (const char* name : {"gemm_int_max.yaml", "gemm_zero.yaml", "gemm_negative.yaml", "stream_huge.yaml",
                           "stream_above_range.yaml", "attention_overflow.yaml", "attention_zero_seq.yaml",
                           "transformer_overflow.yaml", "sweep_explosion.yaml", "alias_bomb.yaml", "list_key.yaml",
                           "map_key_sweep.yaml", "deep_nesting.yaml", "deeper_nesting.yaml"}) {
    const std::string out = test::temp_path("hostile.json");
    const auto r = run_command(kExe + " run " + kHostile + "suites/" + name + " --out " + out);
    EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.output;
    EXPECT_EQ(lines(r.output), 1u) << name << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("harness: error: " + kHostile + "suites/" + name + ":", 0), 0u) << r.output;
    EXPECT_FALSE(std::filesystem::exists(out)) << name;  // nothing was run, nothing written
  }
}

}  // namespace
}  // namespace harness
