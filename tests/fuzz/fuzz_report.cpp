// libFuzzer target: everything that reads a report or a journal line, on arbitrary bytes.
//   - read_report (harness compare / report / validate): returns a checked report or throws
//     harness::InputError;
//   - compare's loader and the comparison itself (harness compare): InputError only;
//   - the renderers (harness report --format md/csv/html) on any report read_report accepts;
//   - validate_report_file (harness validate): InputError only;
//   - result_from_json (journals: --resume, --isolate children): documented to throw
//     nlohmann::json::exception on a malformed entry, which its callers turn into InputError.
// Anything else (another exception, a crash, UB, a leak) is a bug.
//
//   build/fuzz/tests/fuzz/fuzz_report -max_total_time=60 CORPUS_DIR tests/data/reports
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "compare/compare.hpp"
#include "render/compare_text.hpp"
#include "harness/error.hpp"
#include "report/report.hpp"
#include "render/report_render.hpp"
#include "report/schema_validate.hpp"

namespace {

// read_report and validate_report_file take a path: one scratch file per process.
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/harness-fuzz-report-" + std::to_string(::getpid()) + ".json";
  }();
  return path;
}

void write_scratch(const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(scratch_path().c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

struct RemoveScratch {
  ~RemoveScratch() { std::remove(scratch_path().c_str()); }
} remove_scratch;

void journal_entry(const nlohmann::json& j) {
  try {
    const harness::Result r = harness::result_from_json(j);
    (void)harness::result_to_json(r).dump();
  } catch (const nlohmann::json::exception&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The bytes as one journal line.
  const auto line = nlohmann::json::parse(data, data + size, nullptr, false);
  if (!line.is_discarded()) journal_entry(line);

  write_scratch(data, size);
  try {
    (void)harness::validate_report_file(scratch_path());
  } catch (const harness::InputError&) {
  }

  nlohmann::json report;
  try {
    report = harness::read_report(scratch_path());
  } catch (const harness::InputError&) {
    return 0;
  }
  if (report.contains("results") && report["results"].is_array())
    for (const auto& r : report["results"]) journal_entry(r);

  try {
    const harness::Report set = harness::decode_report(report, scratch_path());
    const harness::Comparison c = harness::compare(set, set, harness::CompareOptions{});
    for (const char* format : {"text", "md", "json"}) (void)harness::render_comparison(c, format);
  } catch (const harness::InputError&) {
  }

  if (report.value("schema", "") == harness::kReportSchema) {
    for (const char* format : {"md", "csv", "html"}) {
      try {
        (void)harness::render_report(harness::decode_report(report, scratch_path()), format);
      } catch (const harness::InputError&) {
      }
    }
  }
  return 0;
}
