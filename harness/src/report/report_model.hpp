#pragma once
// The one report model: a report file decoded once into typed structs, read by
// `harness compare`, `harness report` and `harness validate`.
//
// decode_report accepts a harness report (schema "harness-report", versions 1 and 2) and
// Google Benchmark JSON, whose runs become Results (name, problem = the name up to its
// first '/', samples = the iterations or, with aggregates only, the median). Every result
// goes through result_from_json, the single decoder of one result.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/measure.hpp"
#include "types/result.hpp"

namespace harness {

inline constexpr const char* kGoogleBenchmarkFormat = "google-benchmark";

struct GpuInfo {
  std::optional<std::string> name, compute_capability;
  double sm_count = 0, memory_gib = 0, sm_clock_max_mhz = 0, memory_clock_mhz = 0;
};

// The device peaks a report states (environment.device_peaks): DRAM, FP32 and the
// tensor-core roofs by input type ({"bf16", 989000}, ...).
struct ReportPeaks {
  double dram_gbytes_per_s = 0, fp32_gflops = 0;
  std::vector<std::pair<std::string, double>> tensor_gflops;
  // The compute roof of a result of `dtype` ({gflops, "bf16 tensor"}, else FP32's).
  std::pair<double, std::string> compute(const std::string& dtype) const;
};

// The environment of a harness report (for Google Benchmark JSON: its "context", with
// date and host_name). Absent fields stay nullopt / 0.
struct Environment {
  std::optional<std::string> date, host, cpu, cuda_driver, cuda_runtime, harness_version, git_commit,
      command_line, gpu_unavailable_reason;
  double cpu_threads = 0;
  std::optional<GpuInfo> gpu;          // nullopt: no GPU
  std::optional<ReportPeaks> peaks;    // "device_peaks" (or "peaks") with a positive value
  nlohmann::json raw = nlohmann::json::object();  // as written, for display and key-by-key comparison
};

struct SuiteInfo {
  std::optional<std::string> name, file, description;
  std::optional<double> cases;
  std::optional<MeasureSettings> settings;  // the suite's measurement settings
};

struct Report {
  int schema_version = 0;   // 0 for Google Benchmark JSON
  std::string path;
  std::string format;       // kReportSchema ("harness-report") or kGoogleBenchmarkFormat
  Environment environment;
  SuiteInfo suite;
  std::vector<Result> results;        // in file order
  std::vector<std::string> warnings;  // "3 result(s) were measured while the GPU throttled"
  // Entries that could not be decoded ("results[0] is not an object"), without the path;
  // the results decoded from the others are kept.
  std::vector<std::string> errors;
  // The files of a report merged from several (merge_reports); empty otherwise.
  std::vector<std::string> merged_from;
  // Parameters only some of the merged reports' results have, at one value, left out of
  // the pairing (merge_align.hpp): "graph=true (only in train.json)".
  std::vector<std::string> merge_notes;
  // A merged report's warnings of its own (its GPUs differ: different_gpus); the
  // environment lines and `harness report`'s standard error show them.
  std::vector<std::string> merge_warnings;
  bool is_harness_report() const;
};

// Decodes a report as read_report returns it. Throws InputError when it is neither a
// harness report nor Google Benchmark JSON, or for a Google Benchmark entry without a
// usable time (messages start with `path`).
Report decode_report(const nlohmann::json& report, const std::string& path);
// read_report + decode_report.
Report read_report_model(const std::string& path);

// Several harness reports as one (`harness report --merge`), e.g. the engine's run and
// reports/pytorch_transformer.py's of the same configurations: the results of all in the
// order given, the first report's environment and settings, the suite names joined with
// " + ", warnings and errors of all, merged_from = the paths; the results aligned by
// align_merged_results (report/merge_align.hpp). Throws InputError for none.
Report merge_reports(const std::vector<Report>& reports);

// Reports side by side (merged, or a history) whose GPUs differ: their timings are not
// comparable. "the reports ran on different GPUs: NVIDIA H100 80GB HBM3 (a.json), NVIDIA
// H200 (b.json, c.json); their timings are not comparable"; nothing when all name one
// GPU (a report without one counts as "no GPU").
std::optional<std::string> different_gpus(const std::vector<Report>& reports);

}  // namespace harness
